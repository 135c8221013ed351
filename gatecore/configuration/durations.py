"""Durations as the command line takes them: `30d`, `12h`, `90m`, `3600s` or `0` (pure)."""

from __future__ import annotations

import re

from ..errors import GateError

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse(text: str, flag: str) -> int:
    """Seconds; GATE-INPUT-ARGUMENT naming `flag` when `text` is not a duration."""
    m = re.fullmatch(r"(\d{1,7})([smhd]?)", text.strip())
    if m is None:
        raise GateError("GATE-INPUT-ARGUMENT", f"{flag} {text!r} is not a duration such as 30d, 12h or 0")
    return int(m.group(1)) * UNITS[m.group(2) or "s"]
