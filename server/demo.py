"""`gate demo`: the product in one command, in a temporary directory, nothing to configure.

It creates a bare repository, installs the gate with throwaway keys, shows an agent's
write to a frozen file rejected, replays the incident (a passing receipt from model A
pushed after the attempt failed over to model B: rejected, naming model_id), accepts the
fresh receipt model B produces, and says where the audit log is.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from gatecore.adapters.config import load_keyfile
from gatecore.adapters.files import write_private
from gatecore.configschema import generate_key
from gatecore.trusted.attempts import append_record
from gatecore.trusted.bootstrap import bootstrap
from gatecore.trusted.review import push_review, record_review

from .install import install

POLICY = """\
mode = "enforce"

[[freeze]]
name = "governance"
paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]

[trusted]
pushers = ["gate-runner"]
"""

HUMAN = {"GIT_AUTHOR_NAME": "Hana Human", "GIT_AUTHOR_EMAIL": "hana@example.com",
         "GIT_COMMITTER_NAME": "Hana Human", "GIT_COMMITTER_EMAIL": "hana@example.com", "REMOTE_USER": "hana"}
AGENT = {"GIT_AUTHOR_NAME": "Agent 7", "GIT_AUTHOR_EMAIL": "agent-7@agents.example.com",
         "GIT_COMMITTER_NAME": "Agent 7", "GIT_COMMITTER_EMAIL": "agent-7@agents.example.com",
         "REMOTE_USER": "agent-7"}
RUNNER = {"REMOTE_USER": "gate-runner"}


def _say(text: str = "") -> None:
    print(text, flush=True)


def _remote_lines(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.startswith("remote: ") and "gate-json" not in ln]
    return "\n".join("    " + ln.rstrip() for ln in lines)


class _Demo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bare = root / "server.git"
        self.work = root / "work"
        self.base_env = {k: v for k, v in os.environ.items()
                         if not k.startswith(("GIT_", "GL_", "GITEA_", "GITHUB_", "REMOTE_USER"))}

    def git(self, *args: str, who: dict[str, str] | None = None, cwd: Path | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**self.base_env, **(who or HUMAN)}
        out = subprocess.run(["git", *args], cwd=cwd or self.work, env=env, capture_output=True, text=True,
                             check=False)
        if check and out.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {out.stderr}")
        return out

    def commit(self, files: dict[str, str], message: str, who: dict[str, str]) -> str:
        for rel, text in files.items():
            p = self.work / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        self.git("add", "-A", who=who)
        self.git("commit", "-q", "-m", message, who=who)
        return self.git("rev-parse", "HEAD").stdout.strip()


def keep_note(root: Path) -> bool:
    return not root.name.startswith("gate-demo-")


def run_demo(keep: Path | None = None) -> int:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        if any(keep.iterdir()):
            print(f"{keep} is not empty; give an empty or new directory", flush=True)
            return 2
        return _run(keep.resolve())
    with tempfile.TemporaryDirectory(prefix="gate-demo-") as tmp:
        return _run(Path(tmp))


def _run(root: Path) -> int:
    d = _Demo(root)
    ok = True
    _say("gate demo: frozen files and bound review receipts, enforced at push time")
    _say(f"working in {root}" + ("" if keep_note(root) else " (removed at exit; --keep DIR keeps it)"))
    _say()

    # 1. The server: a bare repository with the gate installed and throwaway keys.
    d.git("init", "-q", "--bare", "-b", "main", str(d.bare), cwd=root)
    keys = root / "keys"
    keys.mkdir(mode=0o700)
    entries = []
    for key_id, purpose in (("orchestrator-1", "attempt"), ("runner-1", "receipt")):
        made = generate_key("ed25519", key_id, purpose)
        write_private(keys / f"{key_id}.key", made.keyfile_text)
        entries.append(made.keyring_entry)
    (root / "keyring.toml").write_text("\n".join(entries))
    (root / "policy.toml").write_text(POLICY)
    install(d.bare, root / "policy.toml", root / "keyring.toml", "git", "demo/repo")
    _say("1. server: bare repository with the gate's pre-receive hook, policy and keyring")
    _say("   policy: identities *@agents.example.com / pusher agent-* may not write ci/**, gate.toml, ...")
    _say("           only the account gate-runner may write refs/gate/* and refs/heads/review/runner/*")
    _say()

    d.git("init", "-q", "-b", "main", str(d.work), cwd=root)
    base = d.commit({"README": "demo\n", "ci/deploy.yml": "deploy: production\n", "src/app.py": "print(1)\n"},
                    "initial import", HUMAN)
    d.git("push", "-q", str(d.bare), "main")

    # 2. An agent writes a frozen file.
    d.commit({"ci/deploy.yml": "deploy: production\nskip_review: true\n"}, "agent: tweak CI", AGENT)
    out = d.git("push", str(d.bare), "main", who=AGENT, check=False)
    _say("2. an agent commits a change to ci/deploy.yml and pushes it:")
    _say(_remote_lines(out.stderr))
    ok &= out.returncode != 0 and "GATE-FROZEN-PATH" in out.stderr
    _say(f"   -> {'rejected' if out.returncode else 'ACCEPTED (wrong!)'}")
    _say()
    d.git("reset", "-q", "--hard", base)

    # 3. The incident.
    d.git("checkout", "-q", "-b", "feature")
    head = d.commit({"src/app.py": "print(2)\n"}, "agent: improve app", AGENT)
    ws = root / "workspace"
    ws.mkdir()
    now = int(time.time())
    boot = bootstrap(ws, now)
    prompt = root / "prompt.txt"
    prompt.write_text("Review this change. Reply with JSON: verdict, reasons.\n")
    attempt_key = load_keyfile(keys / "orchestrator-1.key")
    receipt_key = load_keyfile(keys / "runner-1.key")
    remote = str(d.bare)
    # The trusted side pushes as gate-runner (its environment, given to its git commands).
    append_record(d.work, boot.attempt_id, attempt_key, "opened", remote, now, repository="demo/repo",
                  workspace="ws-1", workspace_generation=boot.workspace_generation,
                  prompt_sha256=hashlib.sha256(prompt.read_bytes()).hexdigest(), env=RUNNER)
    append_record(d.work, boot.attempt_id, attempt_key, "model-selected", remote, now, model_id="model-a",
                  env=RUNNER)
    _say("3. the incident, replayed")
    _say(f"   bootstrap: WORKSPACE_GEN={boot.workspace_generation} ATTEMPT_ID={boot.attempt_id}")
    _say("   ledger: attempt opened, model-a selected (pushed to refs/gate/attempts/)")
    verdict = json.dumps({"verdict": "pass", "reasons": ["small, tested change"]}).encode()
    stale = record_review(d.work, boot.attempt_id, None, head, verdict, receipt_key,
                          boot.scoring_dir / "receipt.json", remote, None, 3600, now, env=RUNNER)
    _say(f"   model-a scores the change and writes a passing receipt: {stale.relative_to(root)}")
    append_record(d.work, boot.attempt_id, attempt_key, "failover", remote, now, model_id="model-b",
                  note="model-a offline", env=RUNNER)
    _say("   model-a goes offline; the orchestrator records a failover to model-b")
    _say("   the retry finds receipt.json already on disk and pushes it without scoring:")
    result = push_review(d.work, boot.attempt_id, stale, remote, now, env=RUNNER)
    _say(_remote_lines(result.output))
    ok &= not result.ok and "GATE-BIND-MODEL" in result.output and "field=model_id" in result.output
    _say(f"   -> {'rejected: the receipt names model-a, the ledger has model-b' if not result.ok else 'ACCEPTED'}")
    _say()

    # 4. The fresh receipt.
    fresh = record_review(d.work, boot.attempt_id, None, head, verdict, receipt_key,
                          boot.scoring_dir / "receipt-model-b.json", remote, None, 3600, now, env=RUNNER)
    result = push_review(d.work, boot.attempt_id, fresh, remote, now, env=RUNNER)
    _say("4. model-b scores the change itself; its receipt is bound to this attempt, model and diff:")
    ok &= result.ok
    _say(f"   -> {'accepted: refs/heads/review/runner/' + boot.attempt_id if result.ok else 'REJECTED (wrong!)'}")
    if not result.ok:
        _say(_remote_lines(result.output))
    _say()

    audit = d.bare / "gate" / "audit.log"
    lines = audit.read_text().splitlines()
    _say(f"5. audit log: {audit} ({len(lines)} push decisions); the last one:")
    _say("   " + lines[-1])
    _say()
    _say("every rejection carries a code; `gate explain GATE-BIND-MODEL` says what it means.")
    _say("demo " + ("passed: every push was decided as it should be" if ok else "FAILED: see above"))
    return 0 if ok else 1
