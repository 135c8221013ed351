"""Commit message trailers, read the way `git interpret-trailers --parse` reads them (pure).

The trailer block is the last paragraph of the message (after the title; before a `---`
patch divider; `#` comment lines skipped) when it is all trailers, or holds a
git-generated one (`Signed-off-by: `) and at least one trailer per three other lines. A
trailer is `Key: value` where the key is letters, digits and `-`, optionally followed by
spaces; a line starting with whitespace continues the trailer before it. Agents show up
here (`Co-authored-by: Claude <noreply@anthropic.com>`, `Assisted-by: AGENT:MODEL`,
`Made-with: Cursor`); trailers are self-asserted, so they only ever add restrictions.
"""

from __future__ import annotations

import re

_GIT_GENERATED = ("Signed-off-by: ", "(cherry picked from commit ")
_KEY = re.compile(r"[A-Za-z0-9-]+[ \t]*:")
_EMAIL = re.compile(r"<([^<>]*)>")


def may_have(message: bytes) -> bool:
    """False when the message cannot hold a trailer (a cheap test before `parse`): git reads
    trailers only after the title paragraph, and a trailer has a ':'."""
    body = message.strip()
    cut = body.find(b"\n\n")
    return cut >= 0 and b":" in body[cut:]


def _separator(line: str) -> int:
    """Where git's find_separator finds ':' (key chars, then optional spaces), or -1."""
    m = _KEY.match(line)
    return m.end() - 1 if m else -1


def _block(lines: list[str]) -> list[str]:
    """The lines of the trailer block (empty: none)."""
    title_end = 0
    while title_end < len(lines) and (lines[title_end].startswith("#") or lines[title_end].strip()):
        title_end += 1
    trailer = non_trailer = continuation = 0
    recognized = False
    only_spaces = True
    for i in range(len(lines) - 1, title_end - 1, -1):
        line = lines[i]
        if line.startswith("#"):
            non_trailer += continuation
            continuation = 0
            continue
        if not line.strip():
            if only_spaces:
                continue
            non_trailer += continuation
            if (recognized and trailer * 3 >= non_trailer) or (trailer and not non_trailer):
                return lines[i + 1:]
            return []
        only_spaces = False
        if line.startswith(_GIT_GENERATED):
            trailer += 1
            continuation = 0
            recognized = True
        elif _separator(line) >= 1 and not line[0].isspace():
            trailer += 1
            continuation = 0
        elif line[0].isspace():
            continuation += 1
        else:
            non_trailer += 1 + continuation
            continuation = 0
    return []


def _unfold(value: str) -> str:
    """git's unfold_value: a newline and the whitespace after it become one space; then trim."""
    return re.sub(r"\n\s*", " ", value).strip()


def parse(message: str) -> list[tuple[str, str]]:
    """(key, value) of every trailer, in order, continuation lines folded in."""
    lines = message.split("\n")
    for n, line in enumerate(lines):
        if line.startswith("---") and (len(line) == 3 or line[3].isspace()):
            lines = lines[:n]
            break
    while lines and not lines[-1].strip():
        lines.pop()
    items: list[str] = []
    last: int | None = None  # the item a continuation line joins: the last one with a separator
    for line in _block(lines):
        if last is not None and line[:1].isspace():
            items[last] += "\n" + line
            continue
        items.append(line)
        last = len(items) - 1 if _separator(line) >= 1 else None
    out: list[tuple[str, str]] = []
    for item in items:
        if item.startswith("#"):
            continue
        sep = _separator(item)
        if sep >= 1:
            out.append((item[:sep].strip(), _unfold(item[sep + 1:])))
    return out


def lines(message: str) -> list[str]:
    """The trailers as `git interpret-trailers --parse` prints them: `Key: value`."""
    return [f"{key}: {value}" for key, value in parse(message)]


def coauthor_emails(trailers: list[tuple[str, str]]) -> list[str]:
    """The emails of every `Co-authored-by` trailer (key compared case-insensitively)."""
    out = []
    for key, value in trailers:
        if key.casefold() == "co-authored-by":
            m = _EMAIL.search(value)
            if m:
                out.append(m.group(1).strip())
    return out
