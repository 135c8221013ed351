"""A bare repository with the gate installed, and a work repository that pushes to it.

The installation runs `gate server install` in this process (`support.cli`: the command line's own
code, without an interpreter start per server); the tests of the installed entry point run it as a
process (`support.gitutil.gate`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from .cli import cli
from .gitutil import HUMAN, WorkRepo, git

POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml", "vendor/sub"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[trusted]
pushers = ["runner-*"]
"""

#: Agents as the built-in catalogue knows them (`@known-agents`: emails, names, trailers, bot accounts)
#: and `@agent-config` among the frozen paths (tests/push/test_agent_identity.py, the differential).
IDENTITY_POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", ".pre-commit-config.yaml", "@agent-config"]
authors = ["@known-agents", "*@agents.example.com"]
names = ["@known-agents"]
trailers = ["@known-agents"]
pushers = ["@known-agents", "agent-*"]
"""

#: `POLICY` on ci/** with maintainers who approve an agent's write there (docs/approvals.md), and
#: `admin` as the trusted pusher.
APPROVALS_POLICY = (POLICY.replace('paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml", "vendor/sub"]',
                                   'paths = ["ci/**"]')
                    .replace('pushers = ["runner-*"]', 'pushers = ["admin"]')
                    + '[approvals]\napprovers = ["alice", "release-*"]\n')


class Server:
    def __init__(self, root: Path, policy: str = POLICY, keyring: str | None = None,
                 platform: str = "git", extra: tuple[str, ...] = (), object_format: str | None = None,
                 init_env: dict[str, str] | None = None) -> None:
        """`object_format`: None for git's default (sha1, or a format test's: support.formats);
        `init_env`: for `git init` (`GIT_REFERENCE_BACKEND`: refs at a path of their own)."""
        self.root = root
        self.bare = root / "server.git"
        fmt = [] if object_format is None else [f"--object-format={object_format}"]
        git(root, "init", "-q", "--bare", "-b", "main", *fmt, str(self.bare), env=init_env)
        self.policy_file = root / "policy.toml"
        self.policy_file.write_text(policy)
        args = ["server", "install", str(self.bare), "--policy", str(self.policy_file), "--platform", platform,
                "--repository-id", "demo/repo", *extra]
        if keyring is not None:
            (root / "keyring.toml").write_text(keyring)
            args += ["--keyring", str(root / "keyring.toml")]
        out = cli(*args)
        assert out.returncode == 0, out.stdout + out.stderr
        self.gate_dir = self.bare / "gate"
        self.work = WorkRepo(root / "work", object_format)
        self.work.git("remote", "add", "origin", f"file://{self.bare}")

    @property
    def url(self) -> str:
        return f"file://{self.bare}"

    def push(self, *refspecs: str, pusher_env: dict[str, str] | None = None, identity: tuple[str, str] = HUMAN,
             url: str | None = None, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        return git(self.work.path, "push", "--porcelain", *extra, url or self.url, *refspecs, identity=identity,
                   check=False, env=pusher_env or {})

    def ref(self, name: str) -> str | None:
        out = git(self.bare, "rev-parse", "--verify", "-q", name, check=False)
        return out.stdout.strip() if out.returncode == 0 else None

    def refs(self) -> dict[str, str]:
        out = git(self.bare, "for-each-ref", "--format=%(refname) %(objectname)").stdout
        return dict(line.split(" ") for line in out.splitlines())

    snapshot = refs

    def settle(self) -> None:
        """Wait until no post-receive of this repository is running (see `settle`)."""
        settle(self.bare)

    def audit(self, event: str = "decision") -> list[dict[str, object]]:
        """The audit log's lines of one event: the gate's decisions, or (post-receive) what landed."""
        self.settle()
        path = self.gate_dir / "audit.log"
        lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [d for d in lines if d.get("event") == event]

    def landed(self, count: int) -> list[dict[str, object]]:
        """The "landed" lines, once there are `count` of them (post-receive writes them in the
        background: wait for the line, not for a time)."""
        return wait_for_landed(self.gate_dir / "audit.log", count)

    def install(self, *args: str) -> None:
        out = cli("server", "install", str(self.bare), *args)
        assert out.returncode == 0, out.stdout + out.stderr


def _post_receive_running(bare: Path) -> bool:
    """Is a post-receive hook of `bare` (the hook's shell, or the `server.postreceive` process it
    left in the background) still running? git runs hooks with the repository as their cwd."""
    import os

    here = os.path.realpath(bare)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"post-receive" not in cmdline and b"server.postreceive" not in cmdline:
                continue
            if os.path.realpath(f"/proc/{pid}/cwd") == here:
                return True
        except OSError:  # gone, or not ours to read
            continue
    return False


def settle(bare: Path, patience: float = 300.0) -> None:
    """Wait until the post-receive hooks of `bare` have finished. The installed post-receive runs
    in the background (the push does not wait for its "landed" line), so a test that compares the
    audit log's bytes, or replaces the file, first waits for it: for the processes to end, not for
    a time. git has forked the background process before the push returns, so it is visible here."""
    import time

    until = time.monotonic() + patience
    while _post_receive_running(bare):
        if time.monotonic() > until:
            raise AssertionError(f"a post-receive hook of {bare} still runs after {patience:.0f} s")
        time.sleep(0.02)


def wait_for_landed(log: Path, count: int, patience: float = 120.0) -> list[dict[str, object]]:
    import time

    until = time.monotonic() + patience
    while True:
        lines = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        landed = [d for d in lines if d.get("event") == "landed"]
        if len(landed) >= count or time.monotonic() > until:
            return landed
        time.sleep(0.02)


def seeded(root: Path, policy: str = POLICY, make: type[Any] | None = None, **kw: object) -> Any:
    """A server whose main holds README, ci/deploy.yml and src/app.py, pushed by a human (`make`:
    the kind of server, `Server` by default, or `support.engine.EngineServer`)."""
    s = (make or Server)(root, policy, **kw)
    s.work.write("README", "hello\n")
    s.work.write("ci/deploy.yml", "deploy: true\n")
    s.work.write("src/app.py", "print('hi')\n")
    s.work.commit("base", identity=HUMAN)
    out = s.push("main")
    assert out.returncode == 0, out.stderr
    return s
