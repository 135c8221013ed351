"""Commit message trailers, read the way git reads them (pure).

The trailer block is the last paragraph of the message (after the title; `#` comment
lines skipped) when it is all trailers, or holds a git-generated one (`Signed-off-by: `)
and at least one trailer per three other lines. A trailer is `Key: value` where the key is
letters, digits and `-`, optionally followed by spaces; a line starting with whitespace
continues the trailer before it. Before the block is looked for, git drops the end of the
message it ignores (`ignored_log_message_bytes`): everything from a scissors line
(`# ------------------------ >8 ------------------------`), and a trailing run of comment
lines, empty lines and an old `Conflicts:` block with its tab-indented paths (and it reads
the message as a C string: nothing after a NUL counts).

git itself reads trailers two ways: `git interpret-trailers --parse` ends the message at a
`---` patch divider, `git log --format=%(trailers)` does not. `parse` is the first (and is
tested against it). Agents show up here (`Co-authored-by: Claude <noreply@anthropic.com>`,
`Assisted-by: AGENT:MODEL`, `Made-with: Cursor`), and trailers are self-asserted, so they
only ever add restrictions: `signals` is every trailer either reading finds, and that is
what the policy matches (an agent writing `---` in its message does not hide a trailer).

Both readings take the message as the commit object holds it (never as `git log` or
`rev-list` print it: they drop leading blank lines and trailing blanks, which changes where
the title ends, whether a line is a scissors line or a `Conflicts:` block). A commit whose
`encoding` header names another encoding than UTF-8 is also read the way `git log` shows
it: re-encoded to UTF-8 by git itself, through the system's iconv, never by Python's codecs,
which read escape sequences cut short or alone otherwise than glibc does (an ISO-2022-JP
escape inside a key, or a line of escapes alone that vanishes from git's text, hides a
trailer from the raw reading only). `found` is every trailer of every reading.
"""

from __future__ import annotations

import re

_GIT_GENERATED = ("Signed-off-by: ", "(cherry picked from commit ")
#: git's isspace(): Python's str.isspace()/strip() also take \v, \f and Unicode spaces,
#: which would make the gate miss trailers git sees.
_WS = " \t\n\r"
#: (compiled where used, by `re`'s cache: only a message that holds a trailer a rule reads is parsed)
_KEY = r"[A-Za-z0-9-]+[ \t]*:"
_EMAIL = r"<([^<>]*)>"


#: A line any reading could take for a trailer starts so (git's find_separator: key characters,
#: optional blanks, the ':' separator).
_KEYED_LINE = re.compile(rb"^[A-Za-z0-9-]+[ \t]*:", re.MULTILINE)


#: Lines whose reading depends on blanks `rev-list` trims: comments and scissors, `---`,
#: `Conflicts:`, continuations and conflict paths (a leading blank).
_REFLOW_SENSITIVE = re.compile(rb"^(?:[#\t\r ]|---|Conflicts:)", re.MULTILINE)


def reflowed_alike(printed: bytes) -> bool:
    """True when every message that `git rev-list --header` prints as `printed` (its lines with
    trailing blanks trimmed, leading and trailing blank lines dropped, up to a NUL) has the
    trailers `printed` has, in both of git's readings; False when the object's own message
    must be read.

    It must be read when some line starts like a trailer (`Key:`) and either the printed
    message is one paragraph (the object's may start with a blank line: then its title is
    empty and that paragraph can be its trailer block) or some line reads differently with
    blanks at its end or around it (`_REFLOW_SENSITIVE`). Without a `Key:` line no reading
    finds a trailer in either. `tests/unit/test_trailers.py` holds this to git on random
    messages."""
    if b":" not in printed or _KEYED_LINE.search(printed) is None:
        return True
    return b"\n\n" in printed and _REFLOW_SENSITIVE.search(printed) is None


#: A message whose title paragraph ends (git's blank line: only spaces, tabs, CRs), or whose first line is blank.
_PARAGRAPHS = re.compile(rb"[ \t\r]*(?:\n|$)|.*?\n[ \t\r]*\n", re.DOTALL)


def may_have(message: bytes) -> bool:
    """False when the message cannot hold a trailer (a cheap test before `parse`): git reads
    trailers only after the title paragraph, and a trailer has a ':'."""
    return b":" in message and _PARAGRAPHS.match(message) is not None


def _separator(line: str) -> int:
    """Where git's find_separator finds ':' (key chars, then optional spaces), or -1."""
    m = re.match(_KEY, line)
    return m.end() - 1 if m else -1


def _block(lines: list[str]) -> list[str]:
    """The lines of the trailer block (empty: none)."""
    title_end = 0
    while title_end < len(lines) and (lines[title_end].startswith("#") or lines[title_end].strip(_WS)):
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
        if not line.strip(_WS):
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
        elif _separator(line) >= 1 and line[0] not in _WS:
            trailer += 1
            continuation = 0
        elif line[0] in _WS:
            continuation += 1
        else:
            non_trailer += 1 + continuation
            continuation = 0
    return []


def _unfold(value: str) -> str:
    """git's unfold_value: a newline and the whitespace after it become one space; then trim."""
    return re.sub(r"\n[ \t\n\r]*", " ", value).strip(_WS)


_SCISSORS = "# ------------------------ >8 ------------------------"


def _message_lines(message: str, divider: bool) -> tuple[list[str], bool]:
    """The lines git looks for trailers in (find_end_of_log_message): up to a `---` divider
    when `divider`, then without what `ignored_log_message_bytes` ignores; and whether a
    divider ended them (if not, both readings read the same lines)."""
    message = message.split("\0", 1)[0]  # git reads a message as a C string: a NUL ends it
    lines = message.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()  # not a line: the input ends there
    last = len(lines) - 1  # the one line with no newline of its own, unless ends_with_newline

    def terminated(n: int) -> bool:
        return n < last or ends_with_newline

    cut = False
    if divider:
        for n, line in enumerate(lines):
            # "---" followed by whitespace (a line's own newline counts; the input's end does not)
            if line.startswith("---") and (line[3:4] in (" ", "\t", "\r") or (line == "---" and terminated(n))):
                lines, last, ends_with_newline, cut = lines[:n], n - 1, True, True
                break
    for n, line in enumerate(lines):  # wt_status_locate_end: a scissors line ends the message
        if line == _SCISSORS and terminated(n):
            lines, last, ends_with_newline = lines[:n], n - 1, True
            break
    start = 0  # of the trailing ignorable run (0: none, as in git, where a run cannot start at 0)
    conflicts = False
    for n, line in enumerate(lines):
        if line.startswith("#") or (line == "" and terminated(n)):
            start = start or n
        elif line == "Conflicts:" and terminated(n):
            conflicts = True
            start = start or n
        elif conflicts and line.startswith("\t"):
            pass  # a path in the old conflicts block
        elif start:
            start, conflicts = 0, False
    return (lines[:start] if start else lines), cut


def parse(message: str) -> list[tuple[str, str]]:
    """(key, value) of every trailer, in order, continuation lines folded in, as
    `git interpret-trailers --parse` finds them."""
    return _parse_lines(_message_lines(message, divider=True)[0])


def signals(message: str) -> list[tuple[str, str]]:
    """Every trailer that git finds in either reading (`parse`, and `git log --format=%(trailers)`,
    which does not stop at `---`), in order, each once: what restrictions are matched against."""
    lines, cut = _message_lines(message, divider=True)
    found = _parse_lines(lines)
    if cut:  # else the second reading reads the very same lines
        found += [item for item in _parse_lines(_message_lines(message, divider=False)[0]) if item not in found]
    return found


def readings(message: bytes, shown: bytes | None = None) -> list[str]:
    """The texts git reads trailers in: the raw message (bytes that are not UTF-8 shown as
    U+FFFD; left out when it cannot hold a trailer, `may_have`), and, for a commit whose header
    names an encoding other than UTF-8, `shown`: the message as `git log` shows it, re-encoded
    by git itself through iconv (or the raw bytes, where iconv cannot convert them:
    `grammar.with_shown`). Trailers only add restrictions: both are read."""
    texts = [message.decode("utf-8", "replace")] if may_have(message) else []
    if shown is not None and shown != message and may_have(shown):
        texts.append(shown.decode("utf-8", "replace"))
    return texts


def found(message: bytes, shown: bytes | None = None) -> list[tuple[str, str]]:
    """Every trailer any of git's readings finds (`signals`) in any of the texts git reads the
    message as (`readings`), in order, each once: what the policy matches."""
    out: list[tuple[str, str]] = []
    for text in readings(message, shown):
        out += [item for item in signals(text) if item not in out]
    return out


def _parse_lines(lines: list[str]) -> list[tuple[str, str]]:
    lines = list(lines)
    while lines and not lines[-1].strip(_WS):
        lines.pop()
    items: list[str] = []
    last: int | None = None  # the item a continuation line joins: the last one with a separator
    for line in _block(lines):
        if last is not None and line[:1] != "" and line[0] in _WS:
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
            out.append((item[:sep].strip(_WS), _unfold(item[sep + 1:])))
    return out


def lines(message: str) -> list[str]:
    """The trailers as `git interpret-trailers --parse` prints them: `Key: value`."""
    return [f"{key}: {value}" for key, value in parse(message)]


def coauthor_emails(trailers: list[tuple[str, str]]) -> list[str]:
    """The emails of every `Co-authored-by` trailer (key compared case-insensitively)."""
    out = []
    for key, value in trailers:
        if key.casefold() == "co-authored-by":
            m = re.search(_EMAIL, value)
            if m:
                out.append(m.group(1).strip())
    return out
