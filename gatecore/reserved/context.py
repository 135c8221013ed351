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
from typing import TYPE_CHECKING

from ..checks.binding import Opened, open_bytes, open_commit, receipt_chain
from ..configuration.policy import Policy
from ..errors import GateError
from ..findings import Violation
from ..git.objects import Objects
from ..git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, RefUpdate, ServerRefs, display
from ..records.archive import ARCHIVE_REF, Archive
from ..records.ledger import AttemptState, read_state
from ..signing.keys import Keyring
from ..valueclass import field, valueclass

if TYPE_CHECKING:
    from ..signing.allowedsigners import AllowedSigners
    from .approvalrefs import ApprovalContext

NO_KEYRING = ("no keyring is installed for this repository, and this push needs one (refs/gate/*, review refs): "
              "install one with gate server install GIT_DIR --keyring FILE (docs/ci.md)")


def violation(code: str, u: RefUpdate, detail: str, attempt: str | None = None, field: str | None = None,
              commit: str | None = None) -> Violation:
    return Violation(code, display(u.raw_ref), detail, commit=commit, attempt_id=attempt, field=field)


def _no_signers() -> AllowedSigners | None:
    return None


@valueclass
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
    _opened: dict[str, Opened] = field(default_factory=dict, init=False, repr=False)  # by receipt commit

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

    def opened(self, commit: str) -> Opened:
        """The receipt a receipt commit holds, opened once per push however many checks read it."""
        if commit not in self._opened:
            self._opened[commit] = open_commit(self.objects, commit)
        return self._opened[commit]

    def receipt(self, attempt: str) -> Opened:
        """The receipt this push brings for the attempt (`Opened.data` None: its receipt ref is not
        in the push, or does not point at a commit)."""
        u = self.push.get(RECEIPTS_PREFIX + attempt)
        if u is None or u.is_delete or self.objects.type_of(u.new) != "commit":
            return open_bytes(None)
        return self.opened(u.new)

    def history(self, attempt: str) -> Iterator[Opened]:
        """Every receipt in the attempt's receipt chain on the server, newest first
        (`binding.receipt_chain`: one line of commits)."""
        for commit in receipt_chain(self.objects, self.server.get(RECEIPTS_PREFIX + attempt)):
            yield self.opened(commit)

    def approvals(self) -> ApprovalContext:
        """How approvals are verified in this push: the same keyring, clock and server refs."""
        from .approvalrefs import ApprovalContext

        return ApprovalContext(self.objects, self.policy, self.repository_id, self.now, self.server.get,
                               lambda: self.keyring, self.load_signers)
