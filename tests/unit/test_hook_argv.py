"""The hooks read their command lines without argparse (`hooks.argv`): the same reading as their
argparse parsers give, on the forms the hand reader takes and on those it hands to argparse."""

from __future__ import annotations

import pytest

from hooks import agent_check, frozen_commit, frozen_message
from hooks.argv import read_options

CASES = [
    [], ["msg"], ["a", "b"], ["--policy", "p.toml"], ["--policy=p.toml"], ["--policy="], ["--policy", ""],
    ["--policy", "p.toml", "msg"], ["msg", "--policy", "p.toml"], ["--policy", "a", "--policy", "b"],
    ["--pol", "p.toml"], ["--policy=a=b"], ["--", "msg"], ["-"], ["--policy", "x", "--", "-msg"],
]


@pytest.mark.parametrize("argv", CASES)
@pytest.mark.parametrize("module", [frozen_commit, frozen_message])
def test_the_commit_hooks_read_as_argparse_reads(argv: list[str], module: object) -> None:
    parsed = vars(module.parser().parse_args(argv))  # type: ignore[attr-defined]
    assert read_options(argv, ("--policy",), module.parser, "filenames") == (  # type: ignore[attr-defined]
        {"--policy": parsed["policy"]}, parsed["filenames"])


@pytest.mark.parametrize("argv", [[], ["--agent", "claude"], ["--agent=codex", "--policy", "p"], ["--ag", "gemini"],
                                  ["--policy", "a", "--agent", "cursor"]])
def test_the_agents_check_reads_as_argparse_reads(argv: list[str]) -> None:
    parsed = vars(agent_check.parser().parse_args(argv))
    assert agent_check.arguments(argv) == (parsed["agent"], parsed["policy"])


@pytest.mark.parametrize("argv", [["--policy"], ["--policy", "-x"], ["--nope"], ["--help"]])
def test_what_argparse_refuses_or_answers_it_still_does(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        read_options(argv, ("--policy",), frozen_commit.parser, "filenames")
    assert ended.value.code == (0 if argv == ["--help"] else 2)
    said = capsys.readouterr()
    assert "usage: gate-frozen-commit" in (said.out if argv == ["--help"] else said.err)
