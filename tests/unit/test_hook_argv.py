"""The hooks read their command lines without argparse (`hooks.argv`): the same reading as their
argparse parsers give, on the forms the hand reader takes and on those it hands to argparse."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hooks import agent_check, frozen_commit, frozen_message, frozen_push, receipt_check
from hooks.argv import namespace, options_and_files, read_options

CASES = [
    [], ["msg"], ["a", "b"], ["--policy", "p.toml"], ["--policy=p.toml"], ["--policy="], ["--policy", ""],
    ["--policy", "p.toml", "msg"], ["msg", "--policy", "p.toml"], ["--policy", "a", "--policy", "b"],
    ["--pol", "p.toml"], ["--policy=a=b"], ["--", "msg"], ["-"], ["--policy", "x", "--", "-msg"],
]


@pytest.mark.parametrize("argv", CASES)
@pytest.mark.parametrize("module", [frozen_commit, frozen_message])
def test_the_commit_hooks_read_as_argparse_reads(argv: list[str], module: object) -> None:
    parser: Callable[[], object] = module.parser  # type: ignore[attr-defined]
    parsed = vars(parser().parse_args(argv))  # type: ignore[attr-defined]
    assert options_and_files(argv, parser, ("--policy",)) == (  # type: ignore[arg-type]
        {"--policy": parsed["policy"]}, parsed["filenames"])


@pytest.mark.parametrize("argv", [[], ["--agent", "claude"], ["--agent=codex", "--policy", "p"], ["--ag", "gemini"],
                                  ["--policy", "a", "--agent", "cursor"]])
def test_the_agents_check_reads_as_argparse_reads(argv: list[str]) -> None:
    parsed = vars(agent_check.parser().parse_args(argv))
    assert agent_check.arguments(argv) == (parsed["agent"], parsed["policy"])


PUSH_CASES = [
    [], ["origin"], ["origin", "ssh://h/r.git"], ["--named-ref-only"], ["origin", "url", "--named-ref-only"],
    ["--repository-id", "org/p", "origin", "url"], ["--repository-id=org/p"], ["--policy", "p", "--policy=q"],
    ["--named"], ["--repo", "x"], ["--", "origin"], ["origin", "--", "url"],
]


@pytest.mark.parametrize("argv", PUSH_CASES)
def test_the_push_hooks_read_as_argparse_reads(argv: list[str]) -> None:
    parsed = vars(frozen_push.parser().parse_args(argv))
    assert vars(namespace(argv, frozen_push.parser, ("--policy", "--repository-id"), ("--named-ref-only",),
                          ("remote", "url"))) == parsed
    if "--named" not in " ".join(argv):
        parsed = vars(receipt_check.parser().parse_args(argv))
        assert vars(namespace(argv, receipt_check.parser, ("--policy", "--keyring", "--repository-id"), (),
                              ("remote", "url"))) == parsed


def test_what_the_hand_reader_leaves_to_argparse() -> None:
    assert read_options(["a", "b", "c"], ("--policy",), plain=2) is None  # argparse: unrecognized arguments
    assert read_options(["--policy"], ("--policy",)) is None
    assert read_options(["--policy", "-x"], ("--policy",)) is None
    assert read_options(["--help"], ("--policy",)) is None
    assert read_options(["--named-ref-only=yes"], (), ("--named-ref-only",)) is None


@pytest.mark.parametrize("argv", [["--policy"], ["--policy", "-x"], ["--nope"], ["--help"], ["a", "b", "c"]])
def test_what_argparse_refuses_or_answers_it_still_does(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        namespace(argv, frozen_push.parser, ("--policy", "--repository-id"), ("--named-ref-only",), ("remote", "url"))
    assert ended.value.code == (0 if argv == ["--help"] else 2)
    said = capsys.readouterr()
    assert "usage: gate-frozen-push" in (said.out if argv == ["--help"] else said.err)


def _argparse_reading(parser: Callable[[], object], argv: list[str]) -> dict[str, object] | int:
    """argparse's reading of `argv`, or the status it exits with (a usage error)."""
    try:
        return dict(vars(parser().parse_args(argv)))  # type: ignore[attr-defined]
    except SystemExit as ended:
        return int(ended.code or 0)


def _hand_reading(read: Callable[..., dict[str, object]], *args: object) -> dict[str, object] | int:
    try:
        return read(*args)
    except SystemExit as ended:
        return int(ended.code or 0)


#: Plain arguments on both sides of an option: argparse (3.11 at least) gives its optional positionals all to the
#: first run of plain arguments, and refuses the later ones ("unrecognized arguments").
INTERLEAVED = [["origin", "--named-ref-only", "url"], ["origin", "--policy", "p", "url"],
               ["origin", "--repository-id=x", "url"], ["--policy", "p", "origin", "--named-ref-only", "url"]]


@pytest.mark.parametrize("argv", INTERLEAVED)
def test_plain_arguments_around_an_option_are_read_as_argparse_reads_them(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    for parser, names, flags in ((frozen_push.parser, ("--policy", "--repository-id"), ("--named-ref-only",)),
                                 (receipt_check.parser, ("--policy", "--keyring", "--repository-id"), ())):
        if "--named-ref-only" in argv and not flags:
            continue
        expected = _argparse_reading(parser, argv)
        got = _hand_reading(lambda *a: vars(namespace(*a)), argv, parser, names, flags, ("remote", "url"))
        assert got == expected, argv


@pytest.mark.parametrize("argv", [["a", "--policy", "p", "b"], ["msg", "--policy=p", "other"]])
@pytest.mark.parametrize("module", [frozen_commit, frozen_message])
def test_files_around_an_option_are_read_as_argparse_reads_them(argv: list[str], module: object,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    parser: Callable[[], object] = module.parser  # type: ignore[attr-defined]
    parsed = _argparse_reading(parser, argv)
    expected = parsed if isinstance(parsed, int) else {"--policy": parsed["policy"], "files": parsed["filenames"]}

    def read() -> dict[str, object]:
        options, files = options_and_files(argv, parser, ("--policy",))  # type: ignore[arg-type]
        return {**options, "files": files}

    assert _hand_reading(read) == expected
