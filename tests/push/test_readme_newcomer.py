"""README's "From a clone to a gated repository", run as a newcomer pastes it after `./dev demo`:
a bare repository with the gate installed and checked by doctor, a human's push accepted, an
agent's write of a frozen file refused with its code; nothing but the block and this project's
environment (the block puts `.venv/bin` on PATH, as the README says `./dev demo` made it)."""

from __future__ import annotations

import sys
from pathlib import Path

from support.docblocks import run_block
from support.gitutil import ROOT, git, git_env


def test_the_newcomers_path_runs_as_written(tmp_path: Path) -> None:
    venv_bin = Path(sys.executable).parent
    # a newcomer's shell: no identity in the environment (the block names each commit's with -c)
    env = {k: v for k, v in git_env().items() if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))}
    env["HOME"] = str(tmp_path)  # (and no user's git config)
    # the block names `$PWD/.venv/bin`: this project's environment, wherever the test's python is
    out = run_block("readme-newcomer", {"/tmp/gate-try": str(tmp_path / "try"),
                                        '"$PWD/.venv/bin:$PATH"': f'"{venv_bin}:$PATH"'}, ROOT, env)
    text = out.stdout + out.stderr
    assert "refused, as it should be" in text and "GATE-FROZEN-PATH" in text and "ci/deploy.yml" in text, text
    assert "doctor" in text.lower() or "ok" in text, text
    server = tmp_path / "try" / "project.git"
    log = git(server, "log", "--format=%s", "main").stdout.split("\n")
    assert log[0] == "CI, by a human"  # the human's push landed, the agent's did not
