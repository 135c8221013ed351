"""A work tree for the agents' check: a repository whose HEAD commits a policy, a frozen `ci/deploy.yml`
and an ordinary `src/app.py`, with the identity git records set in its configuration (the tests of
`gate agents check` in tests/offline and tests/unit)."""

from __future__ import annotations

from pathlib import Path

from .gitutil import git

#: The agent the check's tests commit as (its email is one `*@agents.example.com` restricts).
BOT = ("Agent Bot", "bot@agents.example.com")


def agent_project(path: Path, policy: str, identity: tuple[str, str] = BOT) -> Path:
    """`path` made a repository holding `policy` as `.gate/policy.toml`, committed by `identity`."""
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
    return path
