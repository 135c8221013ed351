"""Command lines the hooks read without argparse.

git and pre-commit start a hook on every commit and push, and an agent's hook runs before every
tool call; argparse costs each start 5 ms (with `gettext`, `locale` and `shutil`, which its help
formatter imports when a parser is built). The forms a hook is run with (`--name VALUE`,
`--name=VALUE`, `--flag`, plain arguments) are read here; anything else (`--help`, an abbreviated
option, a value starting with `-`, `--`, plain arguments on both sides of an option, a usage error)
goes to the hook's argparse parser, so its reading and its messages are argparse's.
`tests/unit/test_hook_argv.py` holds the two readings equal.
"""

from __future__ import annotations

from types import SimpleNamespace

TYPE_CHECKING = False  # (typing's, as mypy reads it: the hooks import nothing of typing)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence


def read_options(argv: Sequence[str], names: Sequence[str], flags: Sequence[str] = (),
                 plain: int | None = 0) -> tuple[dict[str, str | bool | None], list[str]] | None:
    """({--name: its value, or None; --flag: True or False}, the plain arguments) of `argv`, where each
    of `names` takes one value (the last given counts), each of `flags` none, and at most `plain`
    plain arguments are taken (None: any number). None for a command line this reader leaves to
    argparse."""
    values: dict[str, str | bool | None] = {**dict.fromkeys(names), **dict.fromkeys(flags, False)}
    given: list[str] = []
    rest = list(argv)
    interrupted = False  # an option after plain arguments: argparse gave those every positional it has
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if name in names and (eq or (rest and not rest[0].startswith("-"))):
            values[name] = value if eq else rest.pop(0)
            interrupted = bool(given)
        elif arg in flags:
            values[arg] = True
            interrupted = bool(given)
        elif not arg.startswith("-") and (plain is None or len(given) < plain) and not interrupted:
            given.append(arg)
        else:  # (plain arguments on both sides of an option: argparse's "unrecognized arguments")
            return None
    return values, given


def namespace(argv: Sequence[str], parser: Callable[[], argparse.ArgumentParser], names: Sequence[str],
              flags: Sequence[str] = (), positional: Sequence[str] = ()) -> SimpleNamespace:
    """`parser().parse_args(argv)`, as a namespace of the same attributes, read by `read_options`
    where it can: `positional` are the parser's optional plain arguments (`nargs="?"`), in order."""
    got = read_options(argv, names, flags, len(positional))
    if got is None:  # --help, an abbreviation, a usage error: argparse reads it (and exits where it should)
        return SimpleNamespace(**vars(parser().parse_args(list(argv))))
    values, given = got
    read = {name.lstrip("-").replace("-", "_"): value for name, value in values.items()}
    return SimpleNamespace(**read, **{p: given[i] if i < len(given) else None for i, p in enumerate(positional)})


def options_and_files(argv: Sequence[str], parser: Callable[[], argparse.ArgumentParser],
                      names: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
    """({--name: value or None}, the plain arguments) of a parser whose plain arguments are one list
    (`filenames`, `nargs="*"`): `read_options`, else argparse's reading."""
    got = read_options(argv, names, plain=None)
    if got is None:
        read = vars(parser().parse_args(list(argv)))
        return {n: read[n.lstrip("-").replace("-", "_")] for n in names}, list(read["filenames"])
    values, given = got
    return {n: v for n, v in values.items() if not isinstance(v, bool)}, given
