"""One reading of tree entry names: the name search (`treediff.NameSearch` + `checked_entries`)
and the whole parse (`grammar.parse_tree`) agree on every tree, whatever its names hold.

The search skips, by their first byte, the names that cannot be a frozen one; the whole parse
refuses a name holding `/` (git fsck's fullPathname: a reader that joins names reads `x/../ci` as
`ci`), an empty name, `.` and `..` (hasDot, hasDotdot). A tree the search reads differently from
the whole parse would let a frozen write through the fast path that the careful one refuses. So,
for trees in git's order (order and duplicates outside the names found are git fsck's, as
docs/security.md says), on hostile names (`/`, NUL-free bytes of every kind, dots and spaces,
frozen names in every case, bytes outside ASCII), the search either reads the tree whole (None)
or finds exactly the entries the whole parse holds under those names, and refuses exactly when
the whole parse refuses.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatecore.errors import GateError
from gatecore.git.grammar import parse_tree
from gatecore.git.treediff import NameSearch, checked_entries

FROZEN = ("ci", "gate.toml", ".github")
SEARCH = NameSearch(FROZEN)
ID = b"\x11" * 20

#: Pieces names are made of: frozen names in other cases, separators, dots and spaces, bytes
#: outside ASCII, a lone byte of any value but NUL.
_PIECES = st.one_of(
    st.sampled_from([b"ci", b"CI", b"Ci", b"gate.toml", b"GATE.TOML", b".github", b".GitHub", b"/", b"//", b".",
                     b"..", b" ", b". .", b"x", b"40000 ", b"100644 ", "\u00e9".encode(), "\u212a".encode(), b"\xff",
                     b"-", b"a/b", b"../", b"/ci", b"ci/"]),
    st.binary(min_size=1, max_size=1).filter(lambda b: b != b"\0"),
)
_NAMES = st.lists(_PIECES, min_size=0, max_size=4).map(b"".join)
_MODES = st.sampled_from([b"100644", b"100755", b"120000", b"160000", b"40000", b"040000", b"100664", b"0"])


def _sorted_tree(entries: dict[bytes, bytes]) -> bytes:
    """The raw tree of `entries` (name -> mode text) in git's order (directories sort with a '/')."""
    def key(name: bytes) -> bytes:
        return name + b"/" if int(entries[name], 8) & 0o170000 == 0o040000 else name

    return b"".join(entries[n] + b" " + n + b"\0" + ID for n in sorted(entries, key=key))


def _matters(name: bytes) -> bool:
    """What the search looks for: a frozen name in any case with trailing dots and spaces, or a
    name of dots and spaces starting with a dot (`.` and `..` are refused wherever it looks)."""
    base = name.rstrip(b". ")
    if not base:
        return name.startswith(b".")
    return base.isascii() and base.lower().decode("ascii") in FROZEN


def _searched(data: bytes) -> list[tuple[int, bytes, bytes]] | str | None:
    found = SEARCH.find(data, 20)
    if found is None:
        return None  # read whole: the whole parse decides
    try:
        return checked_entries("t", found)
    except GateError as exc:
        return exc.code


def _parsed(data: bytes) -> list[tuple[int, bytes, bytes]] | str:
    try:
        entries = parse_tree("1" * 40, data)
    except GateError as exc:
        return exc.code
    return [(mode, name, bytes.fromhex(oid)) for name, (mode, oid) in entries.items() if _matters(name)]


def _agree(data: bytes) -> None:
    searched = _searched(data)
    if searched is not None:
        assert searched == _parsed(data), data


@settings(max_examples=int(os.environ.get("GATE_FUZZ_EXAMPLES", "400")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_NAMES, _MODES, max_size=8))
def test_hostile_names_read_alike_searched_or_parsed_whole(entries: dict[bytes, bytes]) -> None:
    _agree(_sorted_tree(entries))


def test_a_slash_after_the_first_byte_is_refused_by_both_readings() -> None:
    """`x/../ci` at the root: a name no frozen name starts like, holding `/` after its first byte
    (the search passed over it as harmless; the whole parse refuses it)."""
    for name in (b"x/../ci", b"x/", b"README/ci", b"\x7f/ci"):
        data = _sorted_tree({name: b"40000", b"ci": b"100644"})
        assert _parsed(data) == "GATE-GIT-MALFORMED"
        assert _searched(data) in (None, "GATE-GIT-MALFORMED")
        _agree(data)


def test_names_of_dots_and_empty_names_read_alike() -> None:
    for names in ({b".": b"40000"}, {b"..": b"100644"}, {b"...": b"100644"}, {b". ": b"40000"}, {b"": b"100644"},
                  {b"ci": b"40000", b".": b"100644"}):
        _agree(_sorted_tree(names))
