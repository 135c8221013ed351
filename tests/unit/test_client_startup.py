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


def _git_commands(trace: Path) -> list[str]:
    """The git commands a hook started, as each traced its own start (`GIT_TRACE` to a file)."""
    return [line.split("trace: built-in: ", 1)[1] for line in trace.read_text().splitlines()
            if "trace: built-in: git " in line]


def test_the_commit_hook_asks_git_six_questions(clone: WorkRepo, tmp_path: Path) -> None:
    """Issue 47: the staged tree, the two identities, the repository with HEAD's commit and the branch
    (one `rev-parse`), one `cat-file --batch` for the trees (HEAD's first, which name the policy's blob,
    whose validated form the cache names: the blob is not read again) and the commit encoding."""
    env = git_env(AGENT)
    assert _imported(clone.path, "hooks.frozen_commit", env)[0] == 0  # (the first run caches the policy)
    trace = tmp_path / "trace"
    code, _, err = _imported(clone.path, "hooks.frozen_commit", {**env, "GIT_TRACE": str(trace)})
    assert code == 0, err
    ran = _git_commands(trace)
    assert [" ".join(c.split()[:2]) for c in ran] == ["git write-tree", "git var", "git var", "git rev-parse",
                                                      "git cat-file", "git config"], ran
    assert "HEAD^{commit}" in ran[3] and ran[4].endswith("cat-file --batch"), ran


@pytest.mark.parametrize("state", ["branch", "detached", "unborn", "no-policy", "file-named-HEAD", "subdirectory",
                                   "git-directory"])
def test_one_rev_parse_answers_as_the_questions_one_by_one(clone: WorkRepo, state: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`common.at_head`'s one `rev-parse` (or its fallback) answers what `open_repo`, `rev_commit("HEAD")`
    and `current_branch` answer."""
    from hooks import common

    where = clone.path
    if state == "detached":
        clone.git("checkout", "-q", "--detach")
    elif state == "unborn":
        clone.git("checkout", "-q", "--orphan", "fresh")
    elif state == "no-policy":
        clone.git("rm", "-q", ".gate/policy.toml")
        clone.commit("no policy")
    elif state == "file-named-HEAD":
        clone.write("HEAD", "a file\n")
    elif state == "subdirectory":
        where = clone.path / "src"
    elif state == "git-directory":
        where = clone.path / ".git"
    monkeypatch.chdir(where)
    repo, head, branch = common.at_head()
    alone = common.open_repo()
    assert (repo.path, repo.workdir, repo.object_format) == (alone.path, alone.workdir, alone.object_format)
    assert (head, branch) == (common.rev_commit("HEAD"), common.current_branch())
    assert repo.commit_of("HEAD") == head
    repo.close()
    alone.close()


def test_the_quick_path_says_false_where_git_cannot_be_started(clone: WorkRepo, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    """`_no_local_receipts` answers False (the whole check runs) whatever stops it from starting git:
    git not on PATH, a directory named `git` in its place, an environment `posix_spawnp` refuses
    (an entry with an empty name, which a process can be started with and `os.environ` keeps)."""
    import os

    monkeypatch.chdir(clone.path)
    assert receipt_push._no_local_receipts() is True
    (tmp_path / "bin" / "git").mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert receipt_push._no_local_receipts() is False
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert receipt_push._no_local_receipts() is False
    monkeypatch.undo()
    monkeypatch.chdir(clone.path)
    monkeypatch.setattr(os, "environ", {**os.environ, "": "an entry without a name"})
    assert receipt_push._no_local_receipts() is False


def test_the_policys_cache_names_a_committed_file_not_a_symlink_with_its_text(clone: WorkRepo) -> None:
    """The blob id names the bytes, not what HEAD holds at `.gate/policy.toml`: a symlink whose target
    text is the policy's is the same blob. As committed it is not a regular file (GATE-CONFIG-POLICY,
    as the push hooks say, and the commit hook in a fresh clone); a cache that once validated that blob
    as a file must not make the commit hook take the symlink."""
    import shutil

    env = git_env(AGENT)
    assert _imported(clone.path, "hooks.frozen_commit", env)[0] == 0  # the policy's validated form cached
    blob = clone.git("rev-parse", "HEAD:.gate/policy.toml").stdout.strip()
    clone.git("rm", "-q", "--cached", ".gate/policy.toml")
    clone.git("update-index", "--add", "--cacheinfo", f"120000,{blob},.gate/policy.toml")
    clone.git("commit", "-q", "-m", "the policy as a symlink whose target is its text")
    assert clone.git("ls-tree", "HEAD", ".gate/policy.toml").stdout.startswith(f"120000 blob {blob}")
    clone.write("src/app.py", "3\n")
    clone.git("add", "src/app.py")
    cached, _, said = _imported(clone.path, "hooks.frozen_commit", env)
    shutil.rmtree(clone.path / ".git" / "gate")
    fresh, _, said_fresh = _imported(clone.path, "hooks.frozen_commit", env)
    assert fresh == 2 and "GATE-CONFIG-POLICY" in said_fresh and "is not a regular file" in said_fresh, said_fresh
    assert cached == 2 and "GATE-CONFIG-POLICY" in said and "is not a regular file" in said, said[-2000:]


@pytest.mark.parametrize("argv", [["origin", "url", "extra"], ["origin", "--policy", "p", "url"],
                                  ["--policy", "--", "origin", "url"], ["--keyring", "-x", "origin", "url"],
                                  ["origin", "--repository-id=r", "url"], ["--policy"]])
def test_the_quick_path_leaves_what_argparse_refuses_to_the_whole_hook(argv: list[str],
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A command line the hook's parser refuses (exit 2, its usage line) is not answered 0 by the quick
    path, whatever the push: it reads the command line as `hooks.argv` does, or leaves it to argparse."""
    from hooks import receipt_check

    with pytest.raises(SystemExit):
        receipt_check.parser().parse_args(argv)
    assert receipt_push.nothing_reserved(argv, b"", {}) is False
    assert receipt_push.nothing_reserved(argv, b"", {"PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main"}) is False


def test_the_quick_path_says_false_where_git_cannot_be_waited_for(clone: WorkRepo) -> None:
    """A hook started with SIGCHLD ignored (an ignored signal stays ignored across `exec`: a supervisor's
    children) has its children reaped for it, and `waitpid` fails (ECHILD): git's status is unknown, and
    the quick path says False (the whole check runs), not a traceback outside the hook's boundary."""
    program = ("import signal, sys\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
               "from hooks import receipt_push\nprint(receipt_push._no_local_receipts())\n")
    out = subprocess.run([sys.executable, "-c", program], cwd=clone.path, env=git_env(AGENT), capture_output=True,
                         text=True, check=False)
    assert (out.returncode, out.stdout) == (0, "False\n"), out.stderr
