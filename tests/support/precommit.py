"""The client hooks as a user runs them: this project as a hook repository (`repo:`/`rev:`), a
`.pre-commit-config.yaml`, `pre-commit install`, real `git commit` and `git push`; what the hooks
and the server answered (`Verdict`); the trusted side in a clone with the hooks installed
(`Review`); both push hooks as git's own pre-push hook. The fixtures that build them are in
`tests/client/conftest.py`."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatecore.trusted import attempts
from gatecore.trusted.runner import push_review, record_review

from .gitutil import AGENT, HUMAN, WorkRepo, git, git_env
from .lab import BASIC_KEYS, key_material, now
from .server import POLICY, Server

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
HOOK_IDS = ("gate-frozen-files", "gate-frozen-files-msg", "gate-frozen-files-push", "gate-review-receipt")
REVIEW = "refs/heads/review/runner/"
RECEIPTS = "refs/gate/receipts/"
FETCH_LEDGER = "git fetch origin '+refs/gate/*:refs/gate/*'"

#: The server's `POLICY`, with the client's own configuration frozen too.
CLIENT_POLICY = POLICY.replace('"vendor/sub"]', '"vendor/sub", ".gate/policy.toml", ".gate/keyring.toml"]')



@dataclass(frozen=True)
class HookRepo:
    path: Path
    rev: str


def pc_env(pc_home: Path, **extra: str) -> dict[str, str]:
    return {"PRE_COMMIT_HOME": str(pc_home), "PRE_COMMIT_COLOR": "never", **extra}


def config_yaml(hook_repo: HookRepo, receipt_args: tuple[str, ...] = ("--repository-id", "demo/repo"),
                push_args: tuple[str, ...] = ()) -> str:
    def args(values: tuple[str, ...]) -> str:
        return f"\n    args: [{', '.join(values)}]" if values else ""

    return (f"default_install_hook_types: [pre-commit, commit-msg, pre-push]\n"
            f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n  hooks:\n"
            f"  - id: gate-frozen-files\n    verbose: true\n"
            f"  - id: gate-frozen-files-msg\n    verbose: true\n"
            f"  - id: gate-frozen-files-push\n    verbose: true{args(push_args)}\n"
            f"  - id: gate-review-receipt\n    verbose: true{args(receipt_args)}\n")


def install_client(w: WorkRepo, hook_repo: HookRepo, pc_home: Path, policy: str = CLIENT_POLICY,
                   keyring: str | None = None, **config: tuple[str, ...]) -> None:
    """Commit the client policy and the hook configuration (as a human) and install the hooks."""
    w.write(".gate/policy.toml", policy)
    if keyring is not None:
        w.write(".gate/keyring.toml", keyring)
    w.write(".pre-commit-config.yaml", config_yaml(hook_repo, **config))
    git(w.path, "add", "-A")
    git(w.path, "commit", "-q", "--no-verify", "-m", "client hooks", identity=HUMAN)
    out = subprocess.run([*PRE_COMMIT, "install"], cwd=w.path, env=git_env(HUMAN, **pc_env(pc_home)),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@dataclass(frozen=True)
class Verdict:
    exit: int
    codes: frozenset[str]

    @property
    def rejected(self) -> bool:
        return self.exit != 0


def text(out: subprocess.CompletedProcess[str]) -> str:
    return out.stdout + out.stderr


EXIT_RE = re.compile(r"^- exit code: (\d+)$", re.M)


def client_verdict(out: subprocess.CompletedProcess[str]) -> Verdict:
    """What the client hooks said: the worst hook exit code, the codes of their gate-json lines."""
    output = out.stdout + out.stderr
    codes = set()
    for line in output.splitlines():
        if line.startswith("gate-json: "):
            doc = json.loads(line[len("gate-json: "):])
            if "code" in doc:
                codes.add(doc["code"])
    return Verdict(max((int(x) for x in EXIT_RE.findall(output)), default=0), frozenset(codes))


def server_verdict(server: Server) -> Verdict:
    last: dict[str, Any] = server.audit()[-1]
    return Verdict(int(last["exit"]), frozenset(last["codes"]))


def push_both(server: Server, *refspecs: str, env: dict[str, str], extra: tuple[str, ...] = ()) -> tuple[
        Verdict, Verdict, subprocess.CompletedProcess[str]]:
    """Push with the client hooks; if they stop it, push again without them. (client, server, output)."""
    seen = len(server.audit())
    out = server.push(*refspecs, pusher_env=env, url="origin", extra=extra)
    client = client_verdict(out)
    if len(server.audit()) == seen:
        assert client.rejected, out.stdout + out.stderr
        assert "pre-receive hook declined" not in out.stderr
        server.push(*refspecs, pusher_env=env, url="origin", extra=(*extra, "--no-verify"))
    assert len(server.audit()) == seen + 1
    return client, server_verdict(server), out


def commit(w: WorkRepo, message: str, identity: tuple[str, str], env: dict[str, str],
           *extra: str) -> subprocess.CompletedProcess[str]:
    return git(w.path, "commit", "-m", message, *extra, identity=identity, env=env, check=False)


PASS = json.dumps({"verdict": "pass", "reasons": ["small and tested"]}).encode()


class Review:
    """The trusted side (orchestrator and runner) in a clone with the client hooks installed."""

    def __init__(self, root: Path, hook_repo: HookRepo, pc_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.keyring, keys = key_material(root / "keys", BASIC_KEYS)
        self.server = Server(root, policy=CLIENT_POLICY, keyring=self.keyring)
        self.attempt_key = keys["orch-1"]
        self.receipt_key = keys["runner-1"]
        self.pc_home = pc_home
        w = self.server.work
        self.repo = w.path
        w.write("README", "base\n")
        w.write("src/app.py", "print(1)\n")
        w.commit("base", identity=HUMAN)
        install_client(w, hook_repo, pc_home, keyring=self.keyring)
        self.base = w.head()
        for var, value in {**pc_env(pc_home), "REMOTE_USER": "runner-1", "GATE_PUSHER": "runner-1"}.items():
            monkeypatch.setenv(var, value)
        assert self.server.push("main", url="origin", extra=("--no-verify",)).returncode == 0  # setup, not a test
        git(self.repo, "checkout", "-q", "-b", "feature")
        w.write("src/app.py", "print(2)\n")
        self.head = w.commit("agent change", identity=AGENT)
        self.prompt_sha = hashlib.sha256(b"Review the change.\n").hexdigest()
        self.scoring = root / "scoring"
        self.monkeypatch = monkeypatch

    def open(self, attempt: str, model: str = "model-a", generation: str = "gen-1") -> None:
        for kind, extra in (("opened", {"repository": "demo/repo", "workspace": "ws-1",
                                        "workspace_generation": generation, "prompt_sha256": self.prompt_sha}),
                            ("model-selected", {"model_id": model})):
            _, res = attempts.append_record(self.repo, attempt, self.attempt_key, kind, "origin", now(), **extra)
            assert res is not None and res.ok, res.output if res else ""

    def failover(self, attempt: str, model: str) -> None:
        _, res = attempts.append_record(self.repo, attempt, self.attempt_key, "failover", "origin", now(),
                                        model_id=model)
        assert res is not None and res.ok, res.output

    def record(self, attempt: str, name: str, output: bytes = PASS) -> Path:
        return record_review(self.repo, attempt, self.base, self.head, output, self.receipt_key,
                                    self.scoring / attempt / name, "origin", None, 3600, now())

    def push_review(self, attempt: str, receipt: Path) -> tuple[Verdict, Verdict, str]:
        """The runner's own push (gate review push), with the client hooks; then without them if stopped."""
        seen = len(self.server.audit())
        result = push_review(self.repo, attempt, receipt, "origin", now())
        client = client_verdict(subprocess.CompletedProcess([], 0, result.output, ""))
        if len(self.server.audit()) == seen:
            assert not result.ok and client.rejected, result.output
            self.monkeypatch.setenv("SKIP", ",".join(HOOK_IDS))
            push_review(self.repo, attempt, receipt, "origin", now())
            self.monkeypatch.delenv("SKIP")
        assert len(self.server.audit()) == seen + 1
        return client, server_verdict(self.server), result.output


def install_as_git_hook(w: WorkRepo) -> None:
    """Both push hooks as git's own pre-push hook, reading git's input (every ref, deletions too)."""
    hook = w.path / ".git" / "hooks" / "pre-push"
    hook.write_text(f"""#!/bin/sh
input=$(cat)
run() {{
  printf '%s' "$input${{input:+
}}" | "{sys.executable}" -m "$@"
  rc=$?
  if [ "$rc" -ne 0 ]; then echo "hook-exit: $rc" >&2; exit "$rc"; fi
}}
run hooks.frozen_push "$1" "$2"
run hooks.receipt_push --repository-id demo/repo "$1" "$2"
""")
    hook.chmod(0o755)


def git_hook_verdict(out: subprocess.CompletedProcess[str]) -> Verdict:
    codes = {json.loads(line[len("gate-json: "):]).get("code") for line in out.stderr.splitlines()
             if line.startswith("gate-json: ")}
    status = re.search(r"^hook-exit: (\d+)$", out.stderr, re.M)
    return Verdict(int(status.group(1)) if status else 0, frozenset(c for c in codes if c))
