"""How much one push may ask of the gate: ref updates and new commits (pure).

A pre-receive hook does work in proportion to what it is given: a check per updated ref (a
type read, an ancestry question, a tree comparison for a rewind) and a read per new commit.
An agent in a loop can push a million tags or a generated history of a million commits;
`[limits] max_ref_updates` and `max_new_commits` (docs/policy.md, Limits) bound both, for
every pusher, and each has its own code. Both are checked before the work they bound:

* the ref updates are counted from the hook's input, before any ref is judged
  (`check_ref_updates`: one `len`);
* new commits are counted as the walk yields them (`bounded`): past the limit the walk is
  closed (git's `rev-list` is killed, its remaining output never read) and the push is
  rejected. Nothing is read after the commit that crossed the limit.

Either refusal is a `GateError`: the gate stopped before it finished judging, so it cannot
say the push is fine in any mode (`evaluate` included), as with the deadline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import GateError
from ..valueclass import field, valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")


@valueclass
class Progress:
    """How far a push's walks went: the new commits checked, and which exclusion each rule scope's
    walk used (`pushcheck`: "pushed" or "all-refs"); when a limit stopped a walk, how many commits
    it had read (the `read` of a `LimitReached`). The caller keeps it, so that a push the limits or the
    deadline stop half way is audited with what was read before it stopped."""

    commits_checked: int = 0
    walks: list[str] = field(default_factory=list)
    commits_read: int | None = None  # set when a limit stopped the walk: the commits it had read

    def stopped(self, exc: BaseException) -> None:
        """Note how far the walk went, if `exc` is a limit that stopped it."""
        if isinstance(exc, LimitReached):
            self.commits_read = exc.read


class LimitReached(GateError):
    """A limit refused the push part way: `read` is how many new commits the walk had read (the
    one past the limit included; 0 for the ref-update limit, which refuses before any walk)."""

    def __init__(self, code: str, detail: str, read: int) -> None:
        super().__init__(code, detail)
        self.read = read


def check_ref_updates(count: int, limit: int) -> None:
    """GATE-LIMIT-REFS when a push updates more than `limit` refs."""
    if count > limit:
        raise LimitReached("GATE-LIMIT-REFS", f"the push updates {count} refs; this server takes at most {limit} "
                                              "in one push ([limits] max_ref_updates)", 0)


def bounded(items: Iterable[T], limit: int, what: str = "") -> Iterator[T]:
    """`items` as they come, at most `limit` of them: the next one raises GATE-LIMIT-COMMITS
    and closes `items` (a walk's generator ends its git process) before anything more is read.
    `what` says which walk it was (a rule scope), for the message."""
    seen = 0
    source = iter(items)
    try:
        for item in source:
            seen += 1
            if seen > limit:
                raise LimitReached("GATE-LIMIT-COMMITS", f"the push brings more than {limit} new commits{what}; "
                                                         "the gate stopped reading there ([limits] max_new_commits)",
                                   seen)
            yield item
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
