"""What a hook process adds around the judgement, held against the in-process tier.

`tests/engine/` judges pushes with `gatecore.pipeline.judge`, the very call the pre-receive hook
makes (`server/prereceive.py`, stage 4): the judgement is the same code, not a copy. What the
engine cannot see is what only a process around that call adds, and that is what this file
checks, on the same pushes of the same objects into a real gated server (`git push`, the
installed hook) and into an `EngineServer` holding the same refs:

* the quarantine: the objects a push brings reach the hook only through git's quarantine (the
  engine reads them through alternates): the same exit status and codes for pushes whose
  decision rests on objects only the push carries (a frozen write, a receipt commit);
* the transport: git lands an accepted push, and the server's refs are then the engine's;
* the audit line: what the hook writes for each push is what the judgement said;
* chained hooks: a hook the gate runs in front of refuses what the judgement accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.attacks import SEAL_ATTACKS
from support.engine import EngineServer
from support.gitutil import HUMAN, gate
from support.lab import AGENT_PUSH, RUNNER, Lab
from support.verdicts import codes_of

from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX

Push = tuple[tuple[str, ...], dict[str, str] | None]  # refspecs, the pusher's environment


def _branch(lab: Lab, head: str) -> str:
    return f"{head}:refs/heads/parity/{lab.fresh()}"


def _review(lab: Lab, files: dict[str, str] | None = None,
            data: Callable[[Lab, dict[str, Any]], bytes] = lambda lab, doc: lab.seal(doc)) -> Push:
    """A review of a new change with the receipt `data` makes of the runner's, pushed by the runner."""
    attempt = lab.open()
    head = lab.change(f"parity-{attempt}", files)
    commit = lab.receipt_commit(attempt, data(lab, lab.good_doc(attempt, head)))
    return (f"+{head}:{REVIEW_PREFIX}{attempt}", f"{commit}:{RECEIPTS_PREFIX}{attempt}"), RUNNER


def _stale_review(lab: Lab) -> Push:
    attempt = lab.open()
    head = lab.change(f"parity-stale-{attempt}")
    stale = lab.record(attempt, head).read_bytes()
    assert lab.append(attempt, "failover", model_id="model-b").ok  # type: ignore[union-attr]
    commit = lab.receipt_commit(attempt, stale)
    return (f"+{head}:{REVIEW_PREFIX}{attempt}", f"{commit}:{RECEIPTS_PREFIX}{attempt}"), RUNNER


#: Pushes whose decision rests on objects only the push brings (through the quarantine), or on
#: the server's refs as the transport left them.
CASES: dict[str, Callable[[Lab], Push]] = {
    "human-branch": lambda lab: ((_branch(lab, lab.change(lab.fresh("h"), identity=HUMAN)),), None),
    "agent-frozen-write": lambda lab: ((_branch(lab, lab.change(lab.fresh("f"), {"ci/deploy.yml": "x"})),),
                                       AGENT_PUSH),
    "good-review": _review,
    "stale-review": _stale_review,
    "substituted-seal": lambda lab: _review(lab, data=SEAL_ATTACKS["substitution"][0]),
    "review-without-receipt": lambda lab: ((f"{lab.change(lab.fresh('r'))}:{REVIEW_PREFIX}{lab.open()}",), RUNNER),
    "agent-at-the-ledger": lambda lab: ((f":{ATTEMPTS_PREFIX}{lab.open()}",), AGENT_PUSH),
}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lab, EngineServer]:
    lab = Lab(tmp_path_factory.mktemp("parity"))
    lab.open_many(8)
    engine = EngineServer(tmp_path_factory.mktemp("parity-engine"), keyring=lab.keyring_text, work=lab.work)
    return lab, engine


@pytest.mark.parametrize("case", list(CASES))
def test_the_hook_process_adds_nothing_to_the_judgement(pair: tuple[Lab, EngineServer], case: str) -> None:
    """Through the quarantine and the transport, the same exit status and codes; the same refs
    afterwards; and the hook's audit line says what the judgement said."""
    lab, engine = pair
    refspecs, pusher = CASES[case](lab)
    engine.mirror(lab.snapshot())
    by_engine = engine.push(*refspecs, pusher_env=pusher)
    by_hook = lab.server.push(*refspecs, pusher_env=pusher)
    assert (by_hook.returncode, codes_of(by_hook)) == (by_engine.returncode, codes_of(by_engine)), \
        by_hook.stderr + "\n---\n" + by_engine.output
    assert engine.refs() == lab.snapshot()
    line = lab.server.audit()[-1]
    assert {k: line[k] for k in ("decision", "exit", "codes", "attempt_ids")} == \
        {k: v for k, v in by_engine.audit().items() if k != "approvals"}


def test_a_chained_hook_refuses_what_the_judgement_accepts(tmp_path: Path) -> None:
    """The one decision the process makes on its own: a hook the gate was chained in front of
    (`gate server install --chain`) runs after an accepted judgement, and its refusal is the push's
    (GATE-HOOK-CHAINED), in the audit line too."""
    lab = Lab(tmp_path / "lab")
    (tmp_path / "engine").mkdir()
    engine = EngineServer(tmp_path / "engine", keyring=lab.keyring_text, work=lab.work)
    hook = lab.server.bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\ncat > /dev/null\nexit 1\n")
    hook.chmod(0o755)
    out = gate("server", "install", str(lab.server.bare), "--chain")
    assert out.returncode == 0, out.stderr
    refspec = _branch(lab, lab.change(lab.fresh("c"), identity=HUMAN))
    engine.mirror(lab.snapshot())
    assert engine.push(refspec).ok
    by_hook = lab.server.push(refspec)
    assert by_hook.returncode == 1 and codes_of(by_hook) == {"GATE-HOOK-CHAINED"}, by_hook.stderr
    assert lab.server.audit()[-1]["codes"] == ["GATE-HOOK-CHAINED"]
