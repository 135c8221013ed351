"""The client hooks start light: no pygit2, pydantic or typer on their way (git's own processes
read the repository; the policy's validated form is kept in the git directory), and the
receipt hook answers a push with no reserved ref before it imports the engine at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.gitutil import AGENT, WorkRepo, git, git_env

from gatecore.git.refs import GATE_PREFIX, MAX_INPUT_BYTES, REVIEW_PREFIX
from hooks import receipt_push

POLICY = """\
mode = "enforce"

[[freeze]]
paths = ["ci/**"]
authors = ["*@agents.example.com"]
"""
#: Modules a hook run does not need once the policy is cached: the heavy packages, and standard
#: modules whose import costs milliseconds. (`shutil`, 3 ms with bz2 and lzma, which argparse
#: imports for the terminal's width, is below gitlayout's budget for a trick that avoids it.)
HEAVY = ("pygit2", "pydantic", "typer", "click", "tomllib", "datetime")


def test_the_quick_path_knows_the_reserved_namespaces() -> None:
    assert (GATE_PREFIX.encode(), REVIEW_PREFIX.encode()) == receipt_push.RESERVED
    assert MAX_INPUT_BYTES == receipt_push.MAX_INPUT_BYTES


@pytest.mark.parametrize("argv,stdin,env,nothing", [
    (["origin", "url"], b"", {}, True),  # git's input, nothing pushed
    (["origin", "url"], b"refs/heads/a " + b"1" * 40 + b" refs/heads/a " + b"0" * 40 + b"\n", {}, True),
    (["origin", "url"], b"refs/heads/a " + b"1" * 40 + b" refs/heads/review/runner/x " + b"0" * 40 + b"\n", {},
     False),
    (["origin", "url"], b"x " + b"1" * 40 + b" refs/gate/receipts/x " + b"0" * 40 + b"\n", {}, False),
    (["origin", "url"], b"refs/heads/a " + b"1" * 40 + b" refs/heads/a " + b"0" * 40, {}, False),  # no newline
    (["origin", "url"], b"refs/heads/a " + b"1" * 39 + b" refs/heads/a " + b"0" * 40 + b"\n", {}, False),
    (["--repository-id", "x/y", "origin", "url"], b"", {}, True),
    (["--help"], b"", {}, False),
    ([], b"", {}, False),  # a manual run: nothing named
    ([], b"", {"PRE_COMMIT_REMOTE_BRANCH": "refs/heads/review/runner/a"}, False),
    ([], b"", {"PRE_COMMIT_REMOTE_BRANCH": "refs/gate/attempts/a"}, False),
    # a name git would refuse goes to the whole check (GATE-REF-NAME there)
    *[([], b"", {"PRE_COMMIT_REMOTE_BRANCH": f"refs/heads/{bad}"}, False)
      for bad in ("a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a@{1}", "a//b", "a/", "a.",
                  "a.lock", "a.lock/b", ".a", "a/.b", "a\x01", "a\x7f")],
])
def test_what_the_quick_path_answers(argv: list[str], stdin: bytes, env: dict[str, str], nothing: bool) -> None:
    assert receipt_push.nothing_reserved(argv, stdin, env) is nothing


def _imported(cwd: Path, module: str, env: dict[str, str], stdin: bytes = b"") -> tuple[int, set[str], str]:
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", module], cwd=cwd, env=env, input=stdin,
                         capture_output=True, check=False)
    err = out.stderr.decode(errors="replace")
    names = {line.split("|")[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    return out.returncode, names, err


@pytest.fixture
def clone(tmp_path: Path) -> WorkRepo:
    server = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(server))
    w = WorkRepo(tmp_path / "w")
    w.write(".gate/policy.toml", POLICY)
    w.write("src/app.py", "1\n")
    w.commit("base")
    git(w.path, "remote", "add", "origin", str(server))
    git(w.path, "push", "-q", "origin", "main")
    w.write("src/app.py", "2\n")
    git(w.path, "add", "-A")
    return w


def test_the_commit_and_push_hooks_import_no_heavy_module(clone: WorkRepo) -> None:
    env = git_env(AGENT)
    first, names, err = _imported(clone.path, "hooks.frozen_commit", env)
    assert first == 0, err
    assert "pydantic" in names  # the first run validates the committed policy...
    again, names, err = _imported(clone.path, "hooks.frozen_commit", env)
    assert again == 0, err
    assert not {n.split(".")[0] for n in names} & set(HEAVY), sorted(names)  # ...later runs read its cache
    git(clone.path, "commit", "-q", "-m", "agent change", identity=AGENT)
    new = git(clone.path, "rev-parse", "HEAD").stdout.strip()
    base = git(clone.path, "rev-parse", "origin/main").stdout.strip()
    precommit = {**env, "PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": new, "PRE_COMMIT_REMOTE_NAME": "origin",
                 "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main", "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main"}
    code, names, err = _imported(clone.path, "hooks.frozen_push", precommit)
    assert code == 0, err
    assert not {n.split(".")[0] for n in names} & set(HEAVY), sorted(names)


def test_the_receipt_hook_answers_a_plain_push_before_importing_the_engine(clone: WorkRepo) -> None:
    git(clone.path, "commit", "-q", "-m", "agent change", identity=AGENT)
    env = {**git_env(AGENT), "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
           "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main"}
    code, names, err = _imported(clone.path, "hooks.receipt_push", env)
    assert code == 0, err
    assert not any(n.startswith("gatecore") for n in names), sorted(n for n in names if n.startswith("gatecore"))
    # a local receipt ref could travel with the push pre-commit names: the whole check runs
    head = git(clone.path, "rev-parse", "HEAD").stdout.strip()
    git(clone.path, "update-ref", "refs/gate/receipts/a1", head)
    code, names, err = _imported(clone.path, "hooks.receipt_push", env)
    assert "gatecore.reserved" in names, err
    git(clone.path, "pack-refs", "--all")  # packed, not a file under refs/gate/receipts/ any more
    assert not (clone.path / ".git" / "refs" / "gate" / "receipts" / "a1").exists()
    code, names, err = _imported(clone.path, "hooks.receipt_push", env)
    assert "gatecore.reserved" in names, err


#: What an agent's check imports on no road (issue 47's measure, on the road an agent runs before
#: every tool call): `typing` (3 ms), `subprocess` (with `signal`'s enums, `selectors`, `locale`: 2-3 ms;
#: git is started by `spawn`, a directory given by `git -C`), `importlib` (with `warnings`).
AGENT_CHECK_BANNED = (*HEAVY, "typing", "subprocess", "signal", "locale", "importlib", "warnings", "dataclasses",
                      "pathlib", "hashlib")


@pytest.mark.parametrize("path,refused", [("src/new.py", False), ("ci/deploy.yml", True)])
def test_an_agents_check_imports_none_of_the_costly_modules(clone: WorkRepo, path: str, refused: bool) -> None:
    """`gate agents check` on Claude Code's `Write` payload, the policy's validated form cached by a
    first run: allowed and refused alike import nothing of `AGENT_CHECK_BANNED`."""
    import json

    payload = json.dumps({"session_id": "s", "transcript_path": str(clone.path / "t.jsonl"), "cwd": str(clone.path),
                          "permission_mode": "acceptEdits", "hook_event_name": "PreToolUse", "tool_name": "Write",
                          "tool_input": {"file_path": str(clone.path / path), "content": "x\n"}}).encode()
    program = "import sys; from gatecore.cli import main; sys.exit(main(['agents', 'check', '--agent', 'claude']))"
    for _ in range(2):  # (the first run validates and caches the committed policy)
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", program], cwd=clone.path, env=git_env(AGENT),
                             input=payload, capture_output=True, check=False)
    err = out.stderr.decode(errors="replace")
    assert out.returncode == (2 if refused else 0), err[-2000:]
    names = {line.split("|")[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    assert "gatecore.toolcalls.claude" in names, err[-2000:]
    assert not names & set(AGENT_CHECK_BANNED), sorted(names & set(AGENT_CHECK_BANNED))
