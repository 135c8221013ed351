"""The in-process tier decides as the hook does: the same pushes, of the same objects, into a real
gated server (`git push`, the installed pre-receive hook) and into an `EngineServer` holding the
same refs (`tests/engine/`'s harness), give the same exit status, the same codes, and the same
refs afterwards. What `tests/engine/` checks in process is only worth as much as this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.attacks import SEAL_ATTACKS
from support.engine import EngineServer
from support.gitutil import HUMAN
from support.lab import AGENT_PUSH, RUNNER, Lab
from support.verdicts import codes_of

from gatecore.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX

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


CASES: dict[str, Callable[[Lab], Push]] = {
    "human-branch": lambda lab: ((_branch(lab, lab.change(lab.fresh("h"), identity=HUMAN)),), None),
    "agent-frozen-write": lambda lab: ((_branch(lab, lab.change(lab.fresh("f"), {"ci/deploy.yml": "x"})),),
                                       AGENT_PUSH),
    "good-review": _review,
    "stale-review": _stale_review,
    "substituted-seal": lambda lab: _review(lab, data=SEAL_ATTACKS["substitution"][0]),
    "launder-through-review": lambda lab: _review(lab, {"ci/deploy.yml": "y"}),
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
def test_the_engine_decides_as_the_hook(pair: tuple[Lab, EngineServer], case: str) -> None:
    lab, engine = pair
    refspecs, pusher = CASES[case](lab)
    engine.mirror(lab.snapshot())
    by_engine = engine.push(*refspecs, pusher_env=pusher)
    by_hook = lab.server.push(*refspecs, pusher_env=pusher)
    assert (by_hook.returncode, codes_of(by_hook)) == (by_engine.returncode, codes_of(by_engine)), \
        by_hook.stderr + "\n---\n" + by_engine.output
    assert engine.refs() == lab.snapshot()
