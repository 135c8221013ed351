"""push-gate's own versions, compared (docs/upgrading.md, "Versions").

A build is a release `X.Y.Z` or a build between releases `X.Y.Z.devN+g<commit>[.dirty]`
(hatch_build.py makes both); builds of earlier commits all said `0.1.0`. PEP 440 orders them:
`0.1.1.dev3+g...` is after `0.1.0` and before `0.1.1`. Two builds at the same place in that
order from different commits (`0.1.1.dev3+gaaa` and `0.1.1.dev3+gbbb`: two branches) are
neither older nor newer. Pure: doctor uses it to say which of two builds is older.
"""

from __future__ import annotations

import re

FORM = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:\.dev(\d+))?(?:\+([a-z0-9]+(?:\.[a-z0-9]+)*))?")


def _key(version: str) -> tuple[tuple[int, int, int, float], str] | None:
    m = FORM.fullmatch(version)
    if m is None:
        return None
    major, minor, patch, dev, local = m.groups()
    # a dev build comes before the release it leads to
    return (int(major), int(minor), int(patch), float("inf") if dev is None else int(dev)), local or ""


def order(a: str, b: str) -> int | None:
    """-1 when `a` is older than `b`, 1 when newer, 0 when they are the same version; None when
    either is not a push-gate version, or they are builds of different commits at the same place."""
    ka, kb = _key(a), _key(b)
    if ka is None or kb is None:
        return None
    if ka[0] != kb[0]:
        return -1 if ka[0] < kb[0] else 1
    return 0 if ka[1] == kb[1] else None


def moved(before: str, after: str, dry_run: bool = False) -> str:
    """How `gate server upgrade` names what it did to a repository whose hook `before` wrote, run
    with `after`: "upgraded from push-gate A to B", "rolled back from push-gate B to A" (the
    environment holds the older build: docs/upgrading.md, "Rolling back"), "re-installed push-gate
    A (the version already installed)", or, when neither build is known to be the older, "moved
    from push-gate A to B"; `dry_run`: "would upgrade from ...", and so on."""
    how = order(before, after)
    if how == 0:
        return f"{'would re-install' if dry_run else 're-installed'} push-gate {after} (the version already installed)"
    verb = {-1: ("upgraded", "would upgrade"), 1: ("rolled back", "would roll back")}.get(
        how if how is not None else 2, ("moved", "would move"))[dry_run]
    return f"{verb} from push-gate {before} to {after}"
