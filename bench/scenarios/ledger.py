"""The ledger: opening, review and plain pushes with 50, 5,000 and 50,000 attempts on record, open or
archived (the records made by bench/ledger.py)."""

from __future__ import annotations

import functools
from pathlib import Path

from .. import hooks
from .core import BenchCore, Case, PushSpec, _k


class Ledgers(BenchCore):
    def _ledger(self, attempts: int, archived: bool, path: Path) -> None:
        from ..ledger import build

        build(self.git, path, attempts, archived)

    def ledger(self) -> list[Case]:
        """Opening, review and plain pushes with 50, 5,000 and 50,000 attempts on record (bench/ledger.py)."""
        from .. import ledger

        cases = []
        for family in ("open", "archived"):
            for n in self.sizes.ledger_attempts:
                path = self.cache.get("ledger", {"attempts": n, "archived": family == "archived"},
                                      functools.partial(self._ledger, n, family == "archived"))
                seeded = ledger.Seeded.load(path)
                installers = {"none": hooks.installer("none", self.policy, seeded.keyring, None),
                              "gate": hooks.installer("gate", self.policy, seeded.keyring, None)}
                for push in ("open", "review", "plain"):
                    where = f"{_k(n)} attempts {'archived' if family == 'archived' else 'open'}"
                    spec = PushSpec("ledger", f"ledger: {push} push, {where}", seeded.template, seeded.client,
                                    seeded.refspecs[push], ("none", "gate"), atomic=push != "plain",
                                    env={"REMOTE_USER": "gate-runner"} if push != "plain" else None, size=n,
                                    note=f"{family}:{push}", short=f"ledger: {push}, {where}")
                    cases.append(self.push_case(spec, installers))
        return cases
