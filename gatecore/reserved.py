"""Checks for the reserved namespaces: the attempt ledger (refs/gate/attempts/*), receipt
refs (refs/gate/receipts/*) and review refs (refs/heads/review/runner/*)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .failure import Violation
from .gitrepo import GitRepo
from .keys import Keyring
from .policy import Policy
from .refupdates import RefUpdate, display


class ReservedChecker:
    def __init__(self, repo: GitRepo, policy: Policy, pusher: str, keyring: Callable[[], Keyring],
                 repository_id: str, now: int, push: Sequence[RefUpdate]) -> None:
        self.repo = repo
        self.policy = policy
        self.pusher = pusher
        self.keyring = keyring
        self.repository_id = repository_id
        self.now = now
        self.push = push

    def check(self, updates: Sequence[RefUpdate]) -> list[Violation]:
        return [Violation("GATE-REF-RESERVED", display(u.raw_ref), "this namespace is written by the trusted side only")
                for u in updates]
