"""A work tree for the agents' check: a repository whose HEAD commits a policy, a frozen `ci/deploy.yml`
and an ordinary `src/app.py`, with the identity git records set in its configuration (the tests of
`gate agents check` in tests/offline and tests/unit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .gitutil import git

#: The agent the check's tests commit as (its email is one `*@agents.example.com` restricts).
BOT = ("Agent Bot", "bot@agents.example.com")


#: policy text -> the files a first check wrote in `.git/gate` (`warm`)
_WARMED: dict[str, dict[str, bytes]] = {}


def agent_project(path: Path, policy: str, identity: tuple[str, str] = BOT, warm: bool = False) -> Path:
    """`path` made a repository holding `policy` as `.gate/policy.toml`, committed by `identity`.

    `warm`: as after the check's first run, the policy's validated form in the client hooks' cache
    (`.git/gate`): that run validates the policy, which imports pydantic (some 160 ms); a test that
    asks many questions of many new repositories asks them as an agent's session does, of a
    repository the check has run in already. The first repository with a policy gets it by running
    the check once; the others get a copy of what that run wrote (the cache names the policy's blob,
    which is the same in each)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", identity[0])
    git(path, "config", "user.email", identity[1])
    (path / ".gate").mkdir()
    (path / ".gate" / "policy.toml").write_text(policy)
    (path / "ci").mkdir()
    (path / "ci" / "deploy.yml").write_text("stages: [deploy]\n")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print(1)\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    if warm:
        _warm(path, policy)
    return path


def _warm(path: Path, policy: str) -> None:
    cache = path / ".git" / "gate"
    files = _WARMED.get(policy)
    if files is None:
        payload = {"hook_event_name": "PreToolUse", "cwd": str(path), "tool_name": "Write",
                   "tool_input": {"file_path": str(path / "src" / "app.py"), "content": ""}}
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        subprocess.run([str(Path(sys.executable).parent / "gate"), "agents", "check", "--agent", "claude"],
                       input=json.dumps(payload), capture_output=True, text=True, cwd=path, env=env, check=False)
        files = _WARMED[policy] = {f.name: f.read_bytes() for f in cache.iterdir()} if cache.is_dir() else {}
        return
    cache.mkdir(exist_ok=True)
    for name, data in files.items():
        (cache / name).write_bytes(data)
