"""What the gate answered: the codes it reported (from its own gate-json and 'push rejected'
lines, never from other text), and whether git says the hook declined. A push the engine
decided in process (`support.engine.Decided`) answers the same questions from its verdict."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Protocol

from gatecore.adapters.gitcmd import PushResult

from .engine import Decided

Outcome = subprocess.CompletedProcess[str] | PushResult | Decided

_REJECTED_LINE = re.compile(r"gate: (?:push|commit) rejected: (GATE-[A-Z0-9-]+):")


def text_of(out: Outcome) -> str:
    return out.stdout + out.stderr if isinstance(out, subprocess.CompletedProcess) else out.output


def codes_of(out: Outcome) -> set[str]:
    if isinstance(out, Decided):
        return set(out.codes)
    codes = set()
    for raw in text_of(out).splitlines():
        line = raw.removeprefix("remote: ").removeprefix("GL-HOOK-ERR: ").rstrip()
        if line.startswith("gate-json: "):
            doc = json.loads(line[len("gate-json: "):])
            if "code" in doc:
                codes.add(doc["code"])
        elif m := _REJECTED_LINE.match(line):
            codes.add(m.group(1))
    return codes


def declined(out: Outcome) -> bool:
    """git reports that the pre-receive hook refused the push (whatever the hook printed)."""
    if isinstance(out, Decided):
        return not out.ok
    ok = out.returncode == 0 if isinstance(out, subprocess.CompletedProcess) else out.ok
    return not ok and "pre-receive hook declined" in text_of(out)


def refused(out: Outcome, code: str) -> bool:
    """A push the hook declined, naming `code`."""
    return declined(out) and code in codes_of(out)


class HasRefs(Protocol):
    def snapshot(self) -> dict[str, str]: ...


def assert_refused(where: HasRefs, before: dict[str, str], out: Outcome, *codes: str) -> None:
    """The push was declined by the hook naming every code, and no ref (ledger included) moved."""
    for code in codes:
        assert refused(out, code), (code, text_of(out))
    assert where.snapshot() == before
