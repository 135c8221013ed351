"""Codex's `apply_patch` envelope: which files a patch adds, updates, deletes and moves.

The grammar (openai/codex, codex-rs/apply-patch, checked 2026-12-06):

    *** Begin Patch
    *** Add File: PATH          followed by `+` lines, the new file
    *** Update File: PATH       followed by an optional `*** Move to: NEW` and `@@` hunks
    *** Delete File: PATH
    *** End Patch

Paths are relative to the call's directory (or absolute). A move is checked at both ends: the
old path deleted, the new one added. A header is read as Codex reads it, trimmed (an indented
`*** Add File:` is a file it adds), and the wrapper Codex takes off (`<<'EOF'` ... `EOF`) is taken
off. A patch without its `*** Begin Patch` line, or naming no file, is refused
(`GATE-AGENT-PAYLOAD`): the gate does not guess what it would do.
"""

from __future__ import annotations

from ..errors import GateError
from .toolcall import ADD, DELETE, MODIFY, PathWrite

_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_WRAPPERS = ("<<EOF", "<<'EOF'", '<<"EOF"')
_ADD, _UPDATE, _DELETE, _MOVE = "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "


def patch_writes(patch: str) -> tuple[PathWrite, ...]:
    """What `patch` writes, in the order it names the files."""
    lines = [line.rstrip("\r") for line in patch.strip().split("\n")]
    if len(lines) >= 4 and lines[0] in _WRAPPERS and lines[-1].endswith("EOF"):
        lines = lines[1:-1]  # Codex's lenient reading: a heredoc written into the argument
    if not lines or lines[0].strip() != _BEGIN:
        raise GateError("GATE-AGENT-PAYLOAD", f"the patch does not start with {_BEGIN!r}")
    out: list[PathWrite] = []
    for i, raw in enumerate(lines):
        line = raw.strip()  # (Codex trims a hunk's header before reading it: an indented one counts)
        for marker, kind in ((_ADD, ADD), (_UPDATE, MODIFY), (_DELETE, DELETE)):
            if line.startswith(marker):
                path = line[len(marker):].strip()
                if not path:
                    raise GateError("GATE-AGENT-PAYLOAD", f"line {i + 1} of the patch names no file")
                moved = lines[i + 1][len(_MOVE):].strip() if kind == MODIFY and i + 1 < len(lines) and \
                    lines[i + 1].startswith(_MOVE) else None
                if moved is not None:
                    out += [PathWrite(path, DELETE), PathWrite(moved, ADD)]
                else:
                    out.append(PathWrite(path, kind))
    if not out:
        raise GateError("GATE-AGENT-PAYLOAD", "the patch names no file to add, update or delete")
    return tuple(out)
