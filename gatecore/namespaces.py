"""Ref namespaces the gate reserves (pure constants; imported on the hook's start-up path)."""

GATE_PREFIX = "refs/gate/"  # written by the trusted side only
ATTEMPTS_PREFIX = "refs/gate/attempts/"  # the attempt ledger, one ref per attempt
RECEIPTS_PREFIX = "refs/gate/receipts/"  # receipts, pushed with their review ref
DOCTOR_PREFIX = "refs/gate/doctor/"  # gate server doctor's probe (always refused)
REVIEW_PREFIX = "refs/heads/review/runner/"  # reviewed changes, one ref per attempt
#: Refs that would shadow a reserved namespace (git cannot hold both a ref and refs below it).
RESERVED_PARENTS = ("refs/gate", "refs/heads/review", "refs/heads/review/runner")
