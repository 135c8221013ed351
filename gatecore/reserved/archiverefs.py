"""The reserved stage, the archive: `refs/gate/archive`, and deleting what it keeps refused.

Archiving is two pushes, and each ref update stands on its own, so that whatever subset of
a push git applies after the hook accepted it (a push without `--atomic`, a ref locked by
another process), nothing is lost:

1. **The archive grows.** An update of `refs/gate/archive` adds exactly one commit, whose
   only parent is the archive's value on the server (none when it is created), and whose
   tree differs from its parent's only by added entries in the documented layout
   (`gatecore.records.archive`: `kind/aa/bb/rest`, regular files of at most 256 bytes, no empty or
   foreign directories). An entry only ever refuses more (an attempt id, a generation, a
   receipt), so an archive update that lands alone is harmless.
2. **Refs go once the archive on the server holds them.** An attempt's ledger ref is deleted
   only when the attempt is closed on the server and the archive the server *already* holds
   has its id, its generation and every receipt of its receipt history; its generation claim
   only when the archive holds that generation; its receipt ref only when the archive holds
   the attempt and every receipt of that ref's history. An archive update in the same push
   counts for nothing: git may refuse it and apply the deletions.

The closed chain is read without re-judging its seals against today's keyring: each record
was verified when it was pushed, and a key retired since (the rotation docs/ci.md describes)
must not keep the attempt's refs forever. Deletions are refused anywhere else
(`GATE-LEDGER-DELETE`, `GATE-REVIEW-RECEIPT-REF`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import GateError
from ..findings import Violation
from ..git.gitmodel import MODE_BLOB, MODE_TREE
from ..git.refs import ATTEMPTS_PREFIX, GENERATIONS_PREFIX, RECEIPTS_PREFIX, RefUpdate
from ..records.archive import ARCHIVE_REF, KINDS, claim_digest
from ..records.ledger import read_state
from .context import ReservedContext, violation

MAX_ENTRY_BYTES = 256
MAX_PROBLEMS = 10
_SHARD = re.compile(rb"[0-9a-f]{2}")
_REST = re.compile(rb"[0-9a-f]{60}")
_KINDS = frozenset(k.encode() for k in KINDS)
_OPEN = "(open)"


def check_archive(ctx: ReservedContext, updates: Sequence[RefUpdate]) -> list[Violation]:
    """The update of `refs/gate/archive`, if the push has one."""
    u = next((u for u in updates if u.ref == ARCHIVE_REF), None)
    if u is None:
        return []
    try:
        return _archive_update(ctx, u)
    except GateError as exc:
        return [violation(exc.code, u, exc.detail)]


def _archive_update(ctx: ReservedContext, u: RefUpdate) -> list[Violation]:
    if u.is_delete:
        return [violation("GATE-LEDGER-DELETE", u, "the archive is never deleted")]
    if ctx.objects.type_of(u.new) != "commit":
        return [violation("GATE-LEDGER-ARCHIVE", u, "the archive ref points at a commit")]
    commit = ctx.objects.commit(u.new)
    if list(commit.parent_ids) != ([] if u.is_create else [u.old]):
        return [violation("GATE-LEDGER-ARCHIVE", u, "an archive update adds one commit whose only parent is the "
                                                    "archive on the server (none when it is created)")]
    old_tree = None if u.is_create else ctx.objects.commit(u.old).tree_id
    out: list[Violation] = []
    _layout(ctx, u, old_tree, commit.tree_id, 0, b"", out)
    return out


def _layout(ctx: ReservedContext, u: RefUpdate, old: str | None, new: str, depth: int, path: bytes,
            out: list[Violation]) -> None:
    """Compare one level of the archive's tree with its parent's, descending only where they differ."""
    before = {} if old is None else ctx.objects.tree(old)
    after = ctx.objects.tree(new)
    if not after:
        out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{_shown(path) or 'the root'} is an empty directory"))
    for name in before.keys() - after.keys():
        out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{_shown(path + name)}: archive entries are only added, "
                                                       "never removed"))
    for name, (mode, oid) in sorted(after.items()):
        if len(out) >= MAX_PROBLEMS:
            return
        prev = before.get(name)
        if prev == (mode, oid):
            continue
        where = path + name
        leaf = depth == 3
        name_ok = (name in _KINDS if depth == 0 else _SHARD.fullmatch(name) if depth < 3 else _REST.fullmatch(name))
        if not name_ok or mode != (MODE_BLOB if leaf else MODE_TREE):
            out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{_shown(where)} is not an archive entry "
                                                           "(kind/aa/bb/sha256-rest, a regular file)"))
        elif leaf and prev is not None:
            out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{_shown(where)}: archive entries are only added, never "
                                                           "changed"))
        elif leaf:
            kind, size = ctx.objects.reader.header(oid)
            if kind != "blob" or size > MAX_ENTRY_BYTES:
                out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{_shown(where)} is over {MAX_ENTRY_BYTES} bytes"))
        else:
            _layout(ctx, u, None if prev is None or prev[0] != MODE_TREE else prev[1], oid, depth + 1, where + b"/",
                    out)


def _shown(path: bytes) -> str:
    return path.decode("utf-8", "replace")


def deletion(ctx: ReservedContext, u: RefUpdate) -> list[Violation]:
    """The deletion of an attempt's ledger ref, generation claim or receipt ref: allowed only
    when the archive on the server already keeps refused what the ref kept refused."""
    try:
        missing = _not_archived(ctx, u)
    except GateError as exc:
        return [violation(exc.code, u, exc.detail)]
    if not missing:
        return []
    code = "GATE-REVIEW-RECEIPT-REF" if u.ref.startswith(RECEIPTS_PREFIX) else "GATE-LEDGER-DELETE"
    if missing == _OPEN:
        return [violation(code, u, "only closed attempts are archived, and their refs deleted")]
    return [violation(code, u, f"deleted only once {ARCHIVE_REF} on the server holds {missing} "
                               "(gate ledger archive: it archives in one push and deletes in the next)")]


def _not_archived(ctx: ReservedContext, u: RefUpdate) -> str:
    """What the server's archive lacks for this deletion ('' if nothing)."""
    archive = ctx.archive
    if u.ref.startswith(GENERATIONS_PREFIX):
        return "" if archive.holds("generations", claim_digest(u.ref)) else "the generation"
    attempt = u.ref[len(ATTEMPTS_PREFIX if u.ref.startswith(ATTEMPTS_PREFIX) else RECEIPTS_PREFIX):]
    missing = []
    if u.ref.startswith(ATTEMPTS_PREFIX):
        state = read_state(ctx.objects, u.old, None, ctx.now, attempt)  # verified when pushed: see above
        if not state.closed:
            return _OPEN
        if not archive.generation(state.workspace_generation):
            missing.append("its generation")
    if not archive.attempt(attempt):
        missing.insert(0, "the attempt's id")
    digests = [opened.payload_digest for opened in ctx.history(attempt)]
    if not all(d is not None and archive.receipt(d) for d in digests):
        missing.append("every receipt of its history")
    return ", ".join(missing)
