"""The gate installed in every layout the installer accepts pushes past the second process's threshold.

A big push's trees are searched by two processes (`gatecore/checks/frozenbatch.py`): the hook and a
worker it starts. The worker must run the hook's own code wherever push-gate's packages sit:

* **site-packages**: the packages in the interpreter's own site-packages (`pip install`);
* **user**: in the user's site-packages (`pip install --user`), which `python -I` does not read;
* **target**: in a directory of their own (`pip install --target DIR`), on `PYTHONPATH` for the
  installer only;
* **source**: a source tree, the installer run from its top directory (`python -m gatecore.cli`).

Each layout is laid out here as pip lays it out (the three package directories in the layout's
directory; no network, no build), in an interpreter that holds the gate's dependencies but no
other push-gate, so nothing is importable by name that the layout does not put there. Started by
module name, as it once was, the worker found no `gatecore` in three of the four layouts and every
such push was refused (`GATE-GIT-UNREADABLE`: "No module named 'gatecore'").

The history is an agent's: a root of 900 files (about 45 KB a tree) and 2,700 commits that each
change one of them, so that the first batch of 1,024 commits searches more than
`SCAN_AFTER_BYTES`, the second starts the worker and the third is split with it (the in-process
test below proves the threshold is crossed, so the pushes are not vacuous).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, ROOT, WorkRepo, git
from support.server import POLICY

PACKAGES = ("gatecore", "server", "hooks")
FILES = 900
COMMITS = 2_700
LAYOUTS = ("site-packages", "user", "target", "source")


def _history(path: Path) -> WorkRepo:
    """The agent's history (module docstring), written by fast-import."""
    work = WorkRepo(path)
    who = f"{AGENT[0]} <{AGENT[1]}>"
    human = f"{HUMAN[0]} <{HUMAN[1]}>"
    out = [b"blob\nmark :1\ndata 2\nx\n"]
    when = 1_700_000_000
    # (the base, with the frozen directory, is a human's)
    first = [b"commit refs/heads/main\ncommitter %s %d +0000\ndata 4\nbase\n" % (human.encode(), when)]
    first += [b"M 100644 :1 src/file-%06d-abcdefghij.txt\n" % i for i in range(3)]
    first += [b"M 100644 :1 file-%06d-abcdefghij.txt\n" % i for i in range(FILES)]
    first += [b"M 100644 :1 ci/deploy.yml\n"]
    out.append(b"".join(first))
    for n in range(1, COMMITS):
        data = b"%d\n" % n
        out.append(b"commit refs/heads/main\nauthor %s %d +0000\ncommitter %s %d +0000\ndata 7\nchange\n"
                   b"M 100644 inline file-%06d-abcdefghij.txt\ndata %d\n%s\n"
                   % (who.encode(), when + n, who.encode(), when + n, n % FILES, len(data), data))
    git(work.path, "fast-import", "--quiet", input=b"".join(out) + b"done\n")
    git(work.path, "reset", "-q", "--hard", "main")
    return work


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> WorkRepo:
    return _history(tmp_path_factory.mktemp("history") / "work")


def _venv(where: Path, system_site: bool = False) -> Path:
    """An interpreter that finds the gate's dependencies (the test environment's site-packages,
    through a .pth file, whose own .pth files - an editable push-gate's among them - are not read)
    and no push-gate."""
    args = [sys.executable, "-m", "venv", "--without-pip", str(where)]
    subprocess.run(args + (["--system-site-packages"] if system_site else []), check=True)
    own = next(where.glob("lib/python3*/site-packages"))
    deps = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    (own / "zz-gate-dependencies.pth").write_text(f"{deps}\n")
    return where / "bin" / "python"


def _lay_out(into: Path) -> None:
    for name in PACKAGES:
        shutil.copytree(ROOT / name, into / name, ignore=shutil.ignore_patterns("__pycache__"))


def _installed(tmp: Path, layout: str) -> tuple[list[str], dict[str, str], Path]:
    """(the installer's command, its environment, its working directory) for push-gate laid out so."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTHON"))}
    cwd = tmp
    if layout == "site-packages":
        python = _venv(tmp / "venv")
        _lay_out(next((tmp / "venv").glob("lib/python3*/site-packages")))
    elif layout == "user":
        python = _venv(tmp / "venv", system_site=True)
        user_site = subprocess.run([str(python), "-c", "import site; print(site.getusersitepackages())"],
                                   env={**env, "PYTHONUSERBASE": str(tmp / "userbase")}, capture_output=True,
                                   text=True, check=True).stdout.strip()
        assert user_site.startswith(str(tmp / "userbase")), user_site
        _lay_out(Path(user_site))
        env["PYTHONUSERBASE"] = str(tmp / "userbase")
    elif layout == "target":
        python = _venv(tmp / "venv")
        _lay_out(tmp / "target")
        env["PYTHONPATH"] = str(tmp / "target")
    else:
        python = _venv(tmp / "venv")
        _lay_out(tmp / "src")
        shutil.copy(ROOT / "pyproject.toml", tmp / "src" / "pyproject.toml")
        cwd = tmp / "src"
    alone = subprocess.run([str(python), "-I", "-c", "import gatecore"], capture_output=True, text=True, cwd=tmp,
                           check=False)
    # by name, only a site-packages install is found by the hook's isolated interpreter
    assert (alone.returncode == 0) == (layout == "site-packages"), (layout, alone.stderr)
    return [str(python), "-m", "gatecore.cli"], env, cwd


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_big_legitimate_push_is_accepted_in_every_install_layout(tmp_path: Path, history: WorkRepo,
                                                                   layout: str) -> None:
    gate, env, cwd = _installed(tmp_path, layout)
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    (tmp_path / "policy.toml").write_text(POLICY)
    out = subprocess.run([*gate, "server", "install", str(bare), "--policy", str(tmp_path / "policy.toml")],
                         capture_output=True, text=True, env=env, cwd=cwd, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    hook = (bare / "hooks" / "pre-receive").read_text()
    assert f"-I {tmp_path}" in hook, hook  # the layout's own launch.py, by its path
    pushed = history.git("push", f"file://{bare}", "main", check=False)
    assert pushed.returncode == 0, pushed.stderr[-3000:]
    assert git(bare, "rev-parse", "main").stdout.strip() == history.head()


def test_the_big_push_reaches_the_second_process(tmp_path: Path, history: WorkRepo) -> None:
    """What the hook does with the history above, in process: the push judged by the engine's one
    composition (`pipeline.judge`) with the second process handed in as the hook hands it in
    (`PushInput.scan`); the worker is started and searches half of a batch (else the pushes above
    would prove nothing about it)."""
    from gatecore.adapters.config import load_policy
    from gatecore.adapters.gitstream import GitStream
    from gatecore.checks.frozenbatch import ScanOnDemand
    from gatecore.git.objects import Objects
    from gatecore.git.refs import RefUpdate, ServerRefs
    from gatecore.pipeline import Push, PushInput, judge
    from server.prereceive import tree_scanner

    (tmp_path / "policy.toml").write_text(POLICY)
    policy = load_policy(tmp_path / "policy.toml", cached=False)
    git_dir = history.path / ".git"
    reader = GitStream(str(git_dir))
    scan = ScanOnDemand(lambda: tree_scanner(str(git_dir)))  # as the hook composes it
    asked: list[int] = []

    def counted(pairs, names, id_bytes):  # type: ignore[no-untyped-def]
        asked.append(len(pairs))
        return scan(pairs, names, id_bytes)

    try:
        inp = PushInput(objects=Objects(reader), policy=policy, pusher="", now=0, repository_id="layouts",
                        server=ServerRefs(reader.ref_target), existing={}, scan=counted)
        judged = judge(inp, Push([RefUpdate("0" * 40, history.head(), b"refs/heads/main")]))
    finally:
        scan.close()
        reader.close()
    assert judged.violations == [] and judged.commits_checked == COMMITS
    assert scan.started and asked[0] == 0 and max(asked) >= 256, asked
