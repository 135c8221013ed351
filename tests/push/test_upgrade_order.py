"""docs/upgrading.md's order, servers before the trusted side, through real pushes (the failure it
guards against: an older server refused a newer trusted side's records as `GATE-LEDGER-RECORD ...
is not a known member`, never saying that a newer gate wrote them). A record with a member this gate does not
know, or a later record version, sealed by the orchestrator's real key and pushed by the runner,
is refused with GATE-LEDGER-NEWER, whose reason and hint name the fix; the same trusted side
without its new member is accepted."""

from __future__ import annotations

import json
import subprocess

import pytest
from support.gitutil import ROOT
from support.lab import RUNNER, Lab
from support.verdicts import assert_refused, text_of

from gatecore import __version__
from gatecore.git.refs import ATTEMPTS_PREFIX
from gatecore.signing import envelope


def push_record(lab: Lab, attempt: str, doc: dict[str, object]) -> subprocess.CompletedProcess[str]:
    data = lab.seal(doc, "orch-1", envelope.PAYLOAD_ATTEMPT)
    commit = lab.ledger_commit(data, lab.ledger_tip(attempt))
    return lab.server.push(f"{commit}:{ATTEMPTS_PREFIX}{attempt}", pusher_env=RUNNER)


@pytest.mark.parametrize("newer", [{"sandbox": "firecracker"}, {"version": 2}])
def test_a_record_from_a_newer_trusted_side_names_the_fix(lab: Lab, newer: dict[str, object]) -> None:
    attempt = lab.open()
    before = lab.snapshot()
    out = push_record(lab, attempt, lab.record_doc(attempt, "failover", **newer))
    assert_refused(lab, before, out, "GATE-LEDGER-NEWER")
    text = text_of(out)
    assert "GATE-LEDGER-RECORD" not in text, text
    what = "member sandbox" if "sandbox" in newer else "record version 2"
    assert (f"{what} is unknown to push-gate {__version__}: a newer push-gate wrote this record; upgrade "
            "push-gate here first (docs/upgrading.md)") in text, text
    assert "hint: GATE-LEDGER-NEWER: upgrade push-gate here first: servers before the trusted side" in text, text
    bot = [json.loads(line.split("gate-json: ", 1)[1]) for line in text.splitlines() if "gate-json: " in line]
    assert [b["actor"] for b in bot if b["code"] == "GATE-LEDGER-NEWER"] == ["admin"], bot
    # the fix's other half, until the server is upgraded: the trusted side leaves its new member out
    out = push_record(lab, attempt, lab.record_doc(attempt, "failover"))
    assert out.returncode == 0, text_of(out)


def test_upgrading_says_servers_first() -> None:
    text = " ".join((ROOT / "docs" / "upgrading.md").read_text().split())
    assert "Upgrade the servers before the trusted side's job images" in text
    assert "GATE-LEDGER-NEWER" in text
