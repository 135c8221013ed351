"""The verdict on a push (or a commit): one place where server and client decide.

Violations plus the policy's mode give the exit status and the decision the audit log
records. Evaluate mode softens only the frozen-file and ref rules; the reserved
namespaces (ledger, receipts, review refs), object-reading faults and the doctor's probe
always reject.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..findings import Violation, unique_in_order
from ..valueclass import valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Literal

    from ..configuration.policy import Mode

    Decision = Literal["accept", "reject", "evaluate-reject"]  # what the audit log records

#: The codes evaluate mode reports without rejecting.
EVALUABLE = ("GATE-FROZEN-", "GATE-REF-DELETE", "GATE-REF-FORCE")


@valueclass(frozen=True, slots=True)
class Verdict:
    exit_code: int  # 0 accept (or evaluate mode), 1 reject
    decision: Decision
    codes: tuple[str, ...]

    @property
    def shown_as(self) -> Mode:
        """How the report words it: 'enforce' (rejected) or 'evaluate' (would be rejected)."""
        return "evaluate" if self.decision == "evaluate-reject" else "enforce"


def rejects(violations: Sequence[Violation], mode: str) -> bool:
    """Whether these violations reject the push (or commit) under `mode`."""
    if mode == "enforce":
        return bool(violations)
    return any(not v.code.startswith(EVALUABLE) for v in violations)


def verdict_on(violations: Sequence[Violation], mode: str) -> Verdict:
    """What a push's (or a commit's) violations come to under the policy's mode."""
    codes = tuple(unique_in_order(v.code for v in violations))
    if not violations:
        return Verdict(0, "accept", codes)
    if rejects(violations, mode):
        return Verdict(1, "reject", codes)
    return Verdict(0, "evaluate-reject", codes)
