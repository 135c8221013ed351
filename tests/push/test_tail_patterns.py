"""`**/T1/../Tk` patterns through real pushes (trees searched for the run's names and every
subdirectory: `FrozenChecker.name_patterns`): a run of two segments written in other spellings, at
depth, below a directory named only of code points HFS+ ignores, under a rule scoped to one branch
beside literal and unprunable patterns, in SHA-1 and SHA-256 repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitutil import HUMAN
from support.server import Server
from support.verdicts import refused

from gatecore.git.refs import display

POLICY = """\
mode = "enforce"
[[freeze]]
name = "copilot"
paths = ["**/.github/copilot/**", "**/a/b"]
authors = ["*@agents.example.com"]
refs = ["refs/heads/main"]
[[freeze]]
name = "ci"
paths = ["ci/**", "**/*.lock"]
authors = ["*@agents.example.com"]
"""
AGENT = ("Agent Smith", "bot-7@agents.example.com")


@pytest.fixture(params=["sha1", "sha256"])
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Server:
    s = Server(tmp_path, policy=POLICY, object_format=request.param)
    s.work.write("README", "base\n")
    s.work.write("docs/.github/copilot/keep.yml", "x\n")
    s.work.commit("base", identity=HUMAN)
    assert s.push("main").returncode == 0
    return s


@pytest.mark.parametrize("path", [
    "docs/.GitHub./Copilot /rules.yml",
    "x/y/.github/copilot",  # the run's end, a file
    "a/a/a/b",  # the run starts in one directory and goes on in a subdirectory
    "\u200c/a/B.",  # below a directory that normalises to an empty segment
])
def test_an_agents_write_under_a_tail_is_refused_on_the_rules_branch_only(server: Server, path: str) -> None:
    server.work.write(path, "evil\n")
    server.work.commit("agent", identity=AGENT)
    out = server.push("HEAD:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert "rule=freeze[0]:copilot" in out.stderr and f"path={display(path)}" in out.stderr, out.stderr
    assert server.push("HEAD:refs/heads/feature").returncode == 0  # the rule is main's only


def test_a_directory_swapped_for_a_file_at_a_tail_is_refused(server: Server) -> None:
    server.work.git("rm", "-rq", "docs/.github/copilot")
    server.work.write("docs/.github/copilot", "now a file\n")
    server.work.commit("agent", identity=AGENT)
    out = server.push("HEAD:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert "path=docs/.github/copilot/keep.yml rule=" in out.stderr, out.stderr  # (deleted)
    assert "path=docs/.github/copilot rule=" in out.stderr, out.stderr  # (added, a file)
