"""Command lines the hooks read without argparse.

git and pre-commit start a hook on every commit and an agent's hook before every tool call;
argparse costs each start 5 ms (with `gettext`, `locale` and `shutil`, which its help formatter
imports when a parser is built). The forms a hook is run with (`--name VALUE`, `--name=VALUE`,
plain arguments) are read here; anything else (`--help`, an abbreviated option, a value starting
with `-`, a usage error) goes to the hook's argparse parser, so its reading and its messages are
argparse's. `tests/unit/test_hook_argv.py` holds the two readings equal.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (typing's, as mypy reads it: the hooks import nothing of typing)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence


def read_options(argv: Sequence[str], names: Sequence[str], parser: Callable[[], argparse.ArgumentParser],
                 positional: str | None = None) -> tuple[dict[str, str | None], list[str]]:
    """({--name: value or None}, the plain arguments) of `argv`, as `parser()` reads it, whose options
    are `names` (each taking one value, the last given counting) and whose plain arguments, if it
    takes any, are the list `positional` names."""
    values: dict[str, str | None] = dict.fromkeys(names)
    plain: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if name in values and (eq or (rest and not rest[0].startswith("-"))):
            values[name] = value if eq else rest.pop(0)
        elif positional is not None and not arg.startswith("-"):
            plain.append(arg)
        else:  # --help, an abbreviation, a usage error: argparse reads it (and exits where it should)
            read = vars(parser().parse_args(list(argv)))
            return ({n: read[n.lstrip("-").replace("-", "_")] for n in names},
                    list(read[positional]) if positional is not None else [])
    return values, plain
