"""`gate demo`: the product in one command, in a temporary directory, nothing to configure.

It creates a bare repository, installs the gate with throwaway keys, shows an agent's
write to a frozen file rejected and the same write by a human accepted, replays the
incident (a passing receipt from model A pushed after the attempt failed over to model B:
the incident's naive gate would accept it, the gate rejects it naming model_id), then the
same incident one file further along (model A's answer file left in the workspace: sealed
from the file it is accepted; the runner's own call of the model refuses it for want of the
run's challenge, and seals model B's answer), runs the seed's decision table with both gates
on the same receipts, and says where the audit log is and how to get `gate` on PATH. In short
lines: codes and what they name, no hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gatecore.adapters.config import load_keyfile
from gatecore.adapters.files import write_private
from gatecore.configuration.configschema import generate_key
from gatecore.errors import GateError
from gatecore.signing.keys import SigningKey
from gatecore.trusted.attempts import append_record
from gatecore.trusted.bootstrap import Bootstrapped, bootstrap
from gatecore.trusted.runner import push_review, record_review, run_review
from gatecore.valueclass import valueclass

from .install import install

POLICY = """\
mode = "enforce"

[[freeze]]
name = "governance"
paths = ["ci/**", ".gate/**", ".pre-commit-config.yaml"]
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

#: A stand-in for model-b's command line (the demo calls no model): it reads the runner's request
#: on stdin and answers it, copying the challenge as a model told to would.
STAND_IN = """#!{python}
import json, re, sys
challenge = re.search(r"^challenge: ([0-9a-f]{{64}})$", sys.stdin.read(), re.M).group(1)
print(json.dumps({{"challenge": challenge, "verdict": "pass", "reasons": ["small, tested change"]}}))
"""


def _say(text: str = "") -> None:
    print(text, flush=True)


def _gate_lines(text: str) -> list[str]:
    """The gate's verdict in short lines: each rejection's code and what it names (from its gate-json)."""
    out = []
    for raw in text.splitlines():
        line = raw.removeprefix("remote: ").strip()
        if line.startswith("gate-json: "):
            doc = json.loads(line[len("gate-json: "):])
            named = " ".join(f"{k}={doc[k]}" for k in ("field", "path", "identity") if k in doc)
            out.append(f"     {doc.get('code')} {named}".rstrip())
    return out


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


def run_demo(keep: Path | None = None) -> int:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        if any(keep.iterdir()):
            print(f"{keep} is not empty; give an empty or new directory", flush=True)
            return 2
        return _run(keep.resolve(), kept=True)
    with tempfile.TemporaryDirectory(prefix="gate-demo-") as tmp:
        return _run(Path(tmp), kept=False)


def _run(root: Path, kept: bool) -> int:
    d = _Demo(root)
    ok = True
    _say("gate demo: frozen files and bound review receipts, enforced at push time\n"
         f"working in {root}" + ("" if kept else " (removed at exit; --keep DIR keeps it)") + "\n")
    keys, base = _server(d, root)
    ok &= _frozen_files(d, base)
    base = d.git("rev-parse", "HEAD").stdout.strip()
    run = _Attempt.open(d, root, keys)
    ok &= _incident(run, base)
    ok &= _answer_file(run)

    # 5. The seed's decision table: both gates on the same receipts.
    ok &= _decision_table()
    _say()

    _audit(d, kept)
    _say("Every rejection carries a code: gate explain GATE-BIND-MODEL says what it means.")
    _say(_on_path())
    _say("demo " + ("passed: every push was decided as it should be" if ok else "FAILED: see above"))
    return 0 if ok else 1


@valueclass
class _Attempt:
    """The incident's attempt: the agent's change, the workspace, the keys, the ledger opened with
    model-a selected."""

    d: _Demo
    root: Path
    head: str
    ws: Path
    boot: Bootstrapped
    prompt: Path
    attempt_key: SigningKey
    receipt_key: SigningKey
    now: int

    @property
    def attempt(self) -> str:
        return self.boot.attempt_id

    @property
    def remote(self) -> str:
        return str(self.d.bare)

    @classmethod
    def open(cls, d: _Demo, root: Path, keys: Path) -> _Attempt:
        d.git("checkout", "-q", "-b", "feature")
        head = d.commit({"src/app.py": "print(2)\n"}, "agent: improve app", AGENT)
        ws = root / "workspace"
        ws.mkdir()
        now = int(time.time())
        prompt = root / "prompt.txt"
        prompt.write_text("Review this change. Reply with JSON: verdict, reasons.\n")
        run = cls(d, root, head, ws, bootstrap(ws, now), prompt, load_keyfile(keys / "orchestrator-1.key"),
                  load_keyfile(keys / "runner-1.key"), now)
        # The trusted side pushes as gate-runner (its environment, given to its git commands).
        append_record(d.work, run.attempt, run.attempt_key, "opened", run.remote, now, repository="demo/repo",
                      workspace="ws-1", workspace_generation=run.boot.workspace_generation,
                      prompt_sha256=hashlib.sha256(prompt.read_bytes()).hexdigest(), env=RUNNER)
        append_record(d.work, run.attempt, run.attempt_key, "model-selected", run.remote, now, model_id="model-a",
                      env=RUNNER)
        return run


VERDICT = json.dumps({"verdict": "pass", "reasons": ["small, tested change"]}).encode()


def _incident(run: _Attempt, base: str) -> bool:
    """Step 3, the incident: model-a's receipt, left on disk, pushed after the failover to
    model-b: the naive gate accepts it, the bound gate refuses it (True when both do)."""
    d, attempt, remote, now = run.d, run.attempt, run.remote, run.now
    _say(f"3. The incident, replayed (attempt {attempt})")
    _say("   ledger: attempt opened, model-a selected")
    stale = record_review(d.work, attempt, None, run.head, VERDICT, run.receipt_key,
                          run.boot.scoring_dir / "receipt.json", remote, None, 3600, now, env=RUNNER)
    _say(f"   model-a scores the change and writes {stale.relative_to(run.ws)} (verdict pass)")
    append_record(d.work, attempt, run.attempt_key, "failover", remote, now, model_id="model-b",
                  note="model-a offline", env=RUNNER)
    _say("   model-a goes offline; the ledger records a failover to model-b")
    _say("   the retry finds receipt.json on disk and pushes it without scoring it:")
    naive = _naive_verdict(d.work, stale, base, run.head)
    _say(f"     naive gate (diff hash and verdict): {'accept' if naive else 'reject'}")
    result = push_review(d.work, attempt, stale, remote, now, env=RUNNER)
    bound_ok = not result.ok and "GATE-BIND-MODEL" in result.output and "field=model_id" in result.output
    _say("     bound gate: " + ("rejected: the receipt names model-a, the ledger model-b" if bound_ok else
                                "ACCEPTED (wrong!)"))
    for line in _gate_lines(result.output):
        _say("  " + line)
    _say()
    return naive and bound_ok


def _answer_file(run: _Attempt) -> bool:
    """Step 4, the incident one file further along: model-a's answer file, sealed as model-b's
    review, is accepted; the runner's own call of the model refuses it, and seals model-b's
    answer to this run's request (True when each is decided so)."""
    d, attempt, remote, now, scoring = run.d, run.attempt, run.remote, run.now, run.boot.scoring_dir
    _say("4. The same incident one file further along: model-a left its answer file, not a receipt")
    left = scoring / "model-a.json"
    left.write_bytes(VERDICT)
    _say(f"   model-a's passing answer is still in {left.relative_to(run.ws)}")
    sealed = record_review(d.work, attempt, None, run.head, left.read_bytes(), run.receipt_key,
                           scoring / "receipt-from-file.json", remote, None, 3600, now, env=RUNNER, origin=str(left))
    file_ok = push_review(d.work, attempt, sealed, remote, now, env=RUNNER).ok
    _say("   sealed from the file (gate review record --model-output), as model-b's review:")
    _say("     bound gate: " + ("accepted: a file cannot say which model wrote it, or for which request"
                                if file_ok else "REJECTED (unexpected)"))
    head = d.commit({"src/app.py": "print(3)\n"}, "agent: improve app again", AGENT)
    _say("   the agent commits again; model-a's answer file is still there")
    stand_in = run.root / "model-b"
    stand_in.write_text(STAND_IN.format(python=sys.executable))
    stand_in.chmod(0o755)
    try:
        run_review(d.work, attempt, None, head, run.prompt, f"cat {shlex.quote(str(left))}", run.receipt_key,
                   scoring / "receipt-stale.json", remote, None, 3600, now, 60.0, env=RUNNER)
        refused = ""
    except GateError as exc:
        refused = exc.code
    call_ok = refused == "GATE-REVIEW-CHALLENGE" and not (scoring / "receipt-stale.json").exists()
    _say("   the runner calls the model itself (gate review run), and the command hands back that file:")
    _say("     " + ("refused before anything is sealed: GATE-REVIEW-CHALLENGE (not this run's answer)"
                    if call_ok else f"SEALED (wrong!) {refused}"))
    fresh = run_review(d.work, attempt, None, head, run.prompt, str(stand_in), run.receipt_key,
                       scoring / "receipt-b.json", remote, None, 3600, now, 60.0, env=RUNNER)
    result = push_review(d.work, attempt, fresh, remote, now, env=RUNNER)
    _say("   model-b answers this run's request, challenge and all; its receipt: "
         + ("accepted" if result.ok else "REJECTED (wrong!)"))
    if not result.ok:
        for line in _gate_lines(result.output):
            _say("  " + line)
    _say()
    return file_ok and call_ok and result.ok


def _server(d: _Demo, root: Path) -> tuple[Path, str]:
    """Step 1, the server: a bare repository with the gate installed and throwaway keys (the
    directory returned), and a first human push (the commit returned)."""
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
    _say("1. A server: a bare repository with the gate's pre-receive hook, policy and keys.")
    _say("   Agents (*@agents.example.com, pusher agent-*) may not write ci/**.")
    _say("   Only gate-runner writes the ledger and review/runner/* refs.")
    _say()

    d.git("init", "-q", "-b", "main", str(d.work), cwd=root)
    base = d.commit({"README": "demo\n", "ci/deploy.yml": "deploy: production\n", "src/app.py": "print(1)\n"},
                    "initial import", HUMAN)
    d.git("push", "-q", str(d.bare), "main")
    return keys, base


def _frozen_files(d: _Demo, base: str) -> bool:
    """Step 2, frozen files: the agent's write is rejected, the same write by a human accepted
    (True when both are)."""
    ok = True
    change = {"ci/deploy.yml": "deploy: production\nskip_review: true\n"}
    d.commit(change, "agent: tweak CI", AGENT)
    out = d.git("push", str(d.bare), "main", who=AGENT, check=False)
    agent_ok = out.returncode != 0 and "GATE-FROZEN-PATH" in out.stderr
    ok &= agent_ok
    _say("2. Frozen files")
    _say("   agent-7 pushes a change to ci/deploy.yml: " + ("rejected" if agent_ok else "ACCEPTED (wrong!)"))
    for line in _gate_lines(out.stderr):
        _say(line)
    d.git("reset", "-q", "--hard", base)
    d.commit(change, "tweak CI", HUMAN)
    out = d.git("push", str(d.bare), "main", check=False)
    ok &= out.returncode == 0
    _say("   hana (a human) pushes the same change:   " + ("accepted" if out.returncode == 0 else "REJECTED (wrong!)"))
    _say()
    return ok


def _audit(d: _Demo, kept: bool) -> None:
    """Step 6: what the audit log holds, and where it is: named only when it outlives the demo."""
    audit = d.bare / "gate" / "audit.log"
    decisions = [json.loads(line) for line in audit.read_text().splitlines()]
    decisions = [x for x in decisions if x.get("event") == "decision"]
    rejected = sum(x["decision"] != "accept" for x in decisions)
    _say(f"6. Audit log: {len(decisions)} push decisions, {rejected} rejected, one JSON line each")
    if kept:
        _say(f"   in {audit}; in words: gate server audit {shlex.quote(str(d.bare))}")
    else:
        _say("   removed with the demo's directory (gate demo --keep DIR keeps it)")
    _say()


def _naive_verdict(work: Path, receipt: Path, base: str, head: str) -> bool:
    """The incident's gate on this receipt: the diff hash matches and the verdict is pass."""
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.git.digest import tree_delta_digest
    from gatecore.git.objects import Objects
    from gatecore.selftest import naive_accept
    from gatecore.signing import envelope

    doc = json.loads(envelope.parse(receipt.read_bytes()).payload)
    return naive_accept(doc, tree_delta_digest(Objects(GitRepo.at(work)), base, head))


def _decision_table() -> bool:
    """The seed's table (gatecore.selftest): each row's receipt given to both gates."""
    from gatecore.selftest import Kit, run_table

    _say("5. The seed's decision table: both gates on the same receipts (gate selftest runs it too)")
    _say(f"   {'observed state':<48} {'naive gate':<18} bound gate")
    results = run_table(Kit())
    for r in results:
        bound = r.bound_text + ("" if r.decision.accepted else f" ({','.join(r.decision.fields)})")
        _say(f"   {r.row.observed:<48} {r.naive_text:<18} {bound}{'' if r.ok else '  WRONG'}")
    return all(r.ok for r in results)


def _on_path() -> str:
    """Where `gate` is, and how to have it on PATH."""
    import shutil
    import sys

    here = Path(sys.executable).parent
    if shutil.which("gate") == str(here / "gate"):
        return "gate is on your PATH."
    return (f"gate is in {here}; to have it on your PATH:\n"
            f"  export PATH=\"{here}:$PATH\"    (or: . {here / 'activate'})")
