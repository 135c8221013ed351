"""Docs that run (the failure it guards against: of 20 shell blocks a user would paste, 13 ran as written). Every fenced
block in README.md and docs/ names its language; every shell block is either run by a test
(`<!-- run: NAME -->`, and a test calls `run_block("NAME", ...)`) or marked `<!-- synopsis -->`
(tests/support/docblocks.py); a new block that is neither fails here. A command run as another
account (`runuser -u ACCOUNT -- PROGRAM`) names the gate by its environment's path: that account's
PATH has no `gate`."""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

from support.cli import cli
from support.docblocks import SHELL, blocks, run_block
from support.gitutil import HUMAN, ROOT, WorkRepo, git


def test_every_block_names_its_language() -> None:
    bare = [b.where for b in blocks() if not b.lang]
    assert not bare, f"fenced blocks without a language (```text for output, ```sh for commands): {bare}"


def test_every_shell_block_is_run_by_a_test_or_marked_a_synopsis() -> None:
    unmarked = [b.where for b in blocks() if b.lang in SHELL and b.run is None and not b.synopsis]
    assert not unmarked, ("shell blocks neither run by a test (<!-- run: NAME --> and run_block(\"NAME\") in a test) "
                          f"nor marked <!-- synopsis -->: {unmarked}")


def test_every_run_name_is_unique_and_run_by_a_test() -> None:
    names = Counter(b.run for b in blocks() if b.run is not None)
    shared = {n: {b.body for b in blocks() if b.run == n} for n, c in names.items() if c > 1}
    assert [n for n, bodies in shared.items() if len(bodies) > 1] == [], "one name, one text (a block two documents show)"
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    called = set(re.findall(r'run_block\(\s*"([a-z0-9-]+)"', tests))
    assert sorted(set(names) - called) == [], "blocks marked run: that no test runs"
    assert sorted(called - set(names)) == [], "tests run blocks that no document has"


def test_commands_run_as_another_account_name_the_gate_by_its_path() -> None:
    bare = []
    for b in blocks():
        for m in re.finditer(r"runuser -u \S+ -- (\S+)", b.body):
            if m.group(1) == "gate":
                bare.append(f"{b.where}: {m.group(0)}")
    assert not bare, f"runuser ... -- gate: the account's PATH has no gate; name /opt/push-gate/bin/gate: {bare}"


def test_one_environment_path_across_the_docs() -> None:
    text = "\n".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    others = sorted(set(re.findall(r"/opt/[\w.-]+(?:/\.venv)?", text)) - {"/opt/push-gate"})
    assert others == [], f"the dedicated environment is /opt/push-gate everywhere: {others}"


def test_the_seeds_flow_on_files_runs_as_written(tmp_path: Path) -> None:
    """docs/receipts.md's "The seed's flow, on files", in a repository with a change on top of main."""
    repo = WorkRepo(tmp_path / "r")
    repo.write("app.py", "print(1)\n")
    repo.commit("base", identity=HUMAN)
    git(repo.path, "checkout", "-q", "-b", "change")
    repo.write("app.py", "print(2)\n")
    repo.commit("change", identity=HUMAN)
    (repo.path / "p.txt").write_text("review this change\n")
    (repo.path / "change.patch").write_text(git(repo.path, "diff", "main", "HEAD").stdout)
    out = run_block("seed-files", {}, repo.path, env={"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert "accept" in out.stdout and "sha256" in out.stdout, out.stdout


def test_the_admins_install_is_one_block_that_works_on_what_dev_build_writes() -> None:
    """README's admin install made the environment with `python3 -m venv` (docs/servers.md says why
    not) and named `push_gate-0.1.0-py3-none-any.whl`, a wheel `./dev build` never writes after the
    release: one block, the same in both documents, made from the system's Python, taking the wheel
    `./dev build` writes by a pattern (tests/install/ runs it on a built wheel)."""
    from fnmatch import fnmatchcase

    from gatecore import __version__

    shown = [b for b in blocks() if b.run == "admin-install"]
    assert sorted(b.file for b in shown) == ["README.md", "docs/servers.md"] and len({b.body for b in shown}) == 1
    body = shown[0].body
    assert "\n/usr/bin/python3 -m venv /opt/push-gate " in "\n" + body and not re.search(r"push_gate-\d", body)
    (wheel,) = re.findall(r"pip install (\S+\.whl)", body)
    assert fnmatchcase(f"dist/push_gate-{__version__}-py3-none-any.whl", wheel)  # the path ./dev build prints
    assert fnmatchcase("dist/push_gate-0.1.0-py3-none-any.whl", wheel)  # and a release's


def test_one_synopsis_of_server_install_naming_every_option_and_platform() -> None:
    """docs/servers.md's synopsis of `gate server install` lacked `git-daemon`, README's named other
    options: every document shows the same one, and it names every option and platform the command
    takes."""
    from server.install import PLATFORMS

    found = []
    for b in blocks():
        lines = b.body.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("gate server install GIT_DIR ["):
                more = [ln for ln in lines[i + 1:] if ln.startswith(" ")]
                found.append((b.where, "\n".join([line, *more])))
    assert sorted({w.split(":")[0] for w, _ in found}) == ["README.md", "docs/servers.md"], found
    texts = {t for _, t in found}
    assert len(texts) == 1, found
    (text,) = texts
    helped = set(re.findall(r"^  (--[a-z-]+)", cli("server", "install", "--help").stdout, re.M))
    assert set(re.findall(r"(--[a-z-]+)", text)) == helped - {"--all", "--replace-policy", "--dry-run", "--help"}
    (platforms,) = re.findall(r"--platform (\S+)\]", text)
    assert platforms.split("|") == ["auto", *PLATFORMS]
    assert "--config-hook repository|system|off]" in text
