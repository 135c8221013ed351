"""What every check of the reserved stage shares: the push, the server's refs, the policy,
the keyring and the clock, as plain values (`ReservedContext`).

The pre-receive hook builds one per push (`server/prereceive.py`), the client's receipt hook
one per pre-push run (`hooks/receipt_push.py`); a test can build one from a dict of refs and
an in-memory `GitReader`. Nothing here reads the machine: the keyring is loaded once by the
caller and passed in, `now` is read once by the caller, and the server's refs come through
`ServerRefs`, each read once and then fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..archive import ARCHIVE_REF, Archive
from ..errors import GateError
from ..findings import Violation
from ..keys import Keyring
from ..ledger import MAX_CHAIN, RECEIPT_FILE, AttemptState, read_state
from ..objects import Objects, single_file
from ..policy import Policy
from ..refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, RefUpdate, display

if TYPE_CHECKING:
    from ..allowedsigners import AllowedSigners
    from .approvals import ApprovalContext

NO_KEYRING = ("no keyring is installed for this repository, and this push needs one (refs/gate/*, review refs): "
              "install one with gate server install GIT_DIR --keyring FILE (docs/ci.md)")


def violation(code: str, u: RefUpdate, detail: str, attempt: str | None = None, field: str | None = None,
              commit: str | None = None) -> Violation:
    return Violation(code, display(u.raw_ref), detail, commit=commit, attempt_id=attempt, field=field)


class ServerRefs:
    """The server's value of each ref a check consults, read once and then fixed
    (`ServerRefs(refs.get)` for a dict of refs)."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        self._seen: dict[str, str | None] = {}

    def get(self, name: str) -> str | None:
        if name not in self._seen:
            self._seen[name] = self._read(name)
        return self._seen[name]


def _no_signers() -> AllowedSigners | None:
    return None


@dataclass
class ReservedContext:
    """What the reserved stage's checks share."""

    objects: Objects  # the pushed objects and the repository's (the server: through the quarantine)
    policy: Policy
    pusher: str  # the authenticated pusher ('' unknown)
    repository_id: str
    now: int  # read once per push by the caller
    push: Mapping[str, RefUpdate]  # every update of the push, by ref name
    server: ServerRefs  # the server's refs (the client: the remote's, as ls-remote gave them)
    keyring: Keyring | None  # loaded once by the caller; None: none installed (`keyring_problem` says why)
    head_branch: Callable[[], str | None]  # the branch the server's HEAD names (the default target)
    #: The push rules' violations (`pushcheck`): approvals may lift GATE-FROZEN-PATH ones.
    rule_violations: Sequence[Violation] = ()
    keyring_problem: str = NO_KEYRING
    load_signers: Callable[[], AllowedSigners | None] = _no_signers  # SSH-signed approvals, read when one is
    _archive: Archive | None = field(default=None, init=False, repr=False)

    def require_keyring(self) -> Keyring:
        """The keyring, for a check that needs one (GATE-CONFIG-KEYRING if there is none)."""
        if self.keyring is None:
            raise GateError("GATE-CONFIG-KEYRING", self.keyring_problem)
        return self.keyring

    @property
    def zero(self) -> str:
        return self.objects.zero_id

    @property
    def archive(self) -> Archive:
        """The archive as the server holds it (closed attempts folded away, still consulted)."""
        if self._archive is None:
            self._archive = Archive(self.objects, self.server.get(ARCHIVE_REF))
        return self._archive

    def state(self, attempt: str) -> AttemptState | None:
        """The attempt's state as the server's ledger holds it now (None: no ledger ref)."""
        tip = self.server.get(ATTEMPTS_PREFIX + attempt)
        return None if tip is None else read_state(self.objects, tip, self.require_keyring(), self.now, attempt)

    def receipt_history(self, attempt: str) -> Iterator[bytes]:
        """The envelope bytes of every receipt in the attempt's receipt chain on the server, newest
        first. A chain is one line of commits (a merge in it is refused, never walked by its first
        parent: that would drop earlier receipts out of the reuse check and the archive)."""
        current = self.server.get(RECEIPTS_PREFIX + attempt)
        seen = 0
        while current is not None:
            seen += 1
            if seen > MAX_CHAIN:
                raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt history longer than {MAX_CHAIN}")
            info = self.objects.commit(current)
            if len(info.parent_ids) > 1:
                raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt commit {current[:12]} of {attempt} is a merge")
            yield self.receipt_at(current)
            current = info.parent_ids[0] if info.parent_ids else None

    def receipt_at(self, commit: str) -> bytes:
        """The envelope bytes a receipt commit holds."""
        return single_file(self.objects, self.objects.commit(commit).tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF",
                           "GATE-RECEIPT-TOO-LARGE")

    def approvals(self) -> ApprovalContext:
        """How approvals are verified in this push: the same keyring, clock and server refs."""
        from .approvals import ApprovalContext

        return ApprovalContext(self.objects, self.policy, self.repository_id, self.now, self.server.get,
                               lambda: self.keyring, self.load_signers)
