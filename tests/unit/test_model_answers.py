"""The runner's own check of a model's answer (`gatecore.records.modelcall.read_answer`), the shapes a
commit names its models in (`gatecore.checks.authorship.named_models`), and what `[review] model_run`
asks of a receipt (`binding.model_run_failures`): pure, every case.

`tests/push/test_model_call.py` runs the same through `gate review run` and a real server."""

from __future__ import annotations

import json

import pytest

from gatecore.adapters.config import load_model_names
from gatecore.checks.authorship import named_models
from gatecore.checks.binding import model_run_failures
from gatecore.configuration.modelnames import ModelNames
from gatecore.errors import GateError
from gatecore.records import modelcall
from gatecore.records.receipt import parse_payload
from gatecore.selftest import Kit

CHALLENGE = modelcall.challenge("n" * 32, "a1", "g1", "1" * 64, "claude-sonnet-4-5")
ANSWER = {"verdict": "pass", "reasons": ["fine"]}
NAMES = ModelNames.from_plain(load_model_names().plain)  # the runner's reading: the packaged table


def _read(answer: object, model: str = "claude-sonnet-4-5") -> modelcall.RunAnswer:
    data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
    return modelcall.read_answer(data, CHALLENGE, model, "the model's command", NAMES)


def test_the_challenge_binds_every_value_and_the_nonce() -> None:
    base = ("n" * 32, "a1", "g1", "1" * 64, "claude-sonnet-4-5")
    others = {modelcall.challenge(*base[:i], "x", *base[i + 1:]) for i in range(len(base))}
    assert CHALLENGE not in others and len(others) == len(base)


def test_the_request_carries_the_prompt_the_change_and_the_challenge() -> None:
    text = modelcall.request("Review this.\n", "+x\n", challenge=CHALLENGE, attempt="a1", generation="g1",
                             model="m", diff_sha256="1" * 64).decode()
    assert text.startswith("Review this.\n") and f"challenge: {CHALLENGE}\n" in text and text.endswith("+x\n")


def test_this_runs_answer_is_taken() -> None:
    got = _read({**ANSWER, "challenge": CHALLENGE})
    assert (got.answer.verdict, got.answer.reasons, got.served_model) == ("pass", ["fine"], None)
    wrapped = _read({"answer": "```json\n" + json.dumps({**ANSWER, "challenge": CHALLENGE}) + "\n```",
                     "served_model": "anthropic/claude-sonnet-4.5"})
    assert wrapped.served_model == "anthropic/claude-sonnet-4.5" and wrapped.answer.fenced
    listed = _read({"answer": json.dumps({**ANSWER, "challenge": CHALLENGE}),
                    "served_model": ["claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5"]})
    assert listed.served_model == "claude-sonnet-4-5-20250929"  # every one the model on record
    assert _read({"answer": json.dumps({**ANSWER, "challenge": CHALLENGE}), "served_model": []}).served_model is None


@pytest.mark.parametrize("answer,code", [
    (ANSWER, "GATE-REVIEW-CHALLENGE"),
    ({**ANSWER, "challenge": "0" * 64}, "GATE-REVIEW-CHALLENGE"),
    ({**ANSWER, "challenge": CHALLENGE.upper()}, "GATE-REVIEW-CHALLENGE"),
    ({"answer": json.dumps({**ANSWER, "challenge": CHALLENGE}), "served_model": "gpt-5"},
     "GATE-REVIEW-SERVED-MODEL"),
    ({**ANSWER, "challenge": CHALLENGE, "served_model": "claude-opus-4-1"}, "GATE-REVIEW-SERVED-MODEL"),
    # every model a tool reports counts, not the first (issue 44): a fallback for part of the answer
    ({"answer": json.dumps({**ANSWER, "challenge": CHALLENGE}),
      "served_model": ["claude-sonnet-4-5", "claude-3-5-haiku-20241022"]}, "GATE-REVIEW-SERVED-MODEL"),
    ({"answer": json.dumps({**ANSWER, "challenge": CHALLENGE}), "served_model": ["claude-sonnet-4-5", 3]},
     "GATE-INPUT-ARGUMENT"),
    ({"answer": 3}, "GATE-INPUT-ARGUMENT"),
    ({**ANSWER, "challenge": 7}, "GATE-INPUT-ARGUMENT"),
    (b"", "GATE-INPUT-ARGUMENT"),
])
def test_anything_else_is_refused(answer: object, code: str) -> None:
    with pytest.raises(GateError) as caught:
        _read(answer)
    assert caught.value.code == code


@pytest.mark.parametrize("served,selected,same", [
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", True),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", True),
    ("claude-sonnet-4-5@20250929", "anthropic/claude-sonnet-4.5", True),
    ("claude-opus-4-1", "claude-sonnet-4-5", False),
    ("claude-sonnet-4", "claude-sonnet-4-5", False),
    ("gpt-5", "openai/gpt-5", True),
    ("azure/team-deployment", "azure/team-deployment", True),  # placed by no scheme: itself only
    ("azure/team-deployment", "gpt-5", False),
    ("gpt-5", "azure/team-deployment", False),
])
def test_the_served_model_is_read_as_independence_reads_ids(served: str, selected: str, same: bool) -> None:
    """Two names of one model served and on record are one model (the model-id table); an id no
    scheme places is the model on record only spelled alike."""
    assert modelcall.served_by(served, selected, NAMES) is same
    answer = {"answer": json.dumps({**ANSWER, "challenge": CHALLENGE}), "served_model": served}
    if same:
        assert _read(answer, selected).served_model == served
    else:
        with pytest.raises(GateError) as caught:
            _read(answer, selected)
        assert caught.value.code == "GATE-REVIEW-SERVED-MODEL"


@pytest.mark.parametrize("trailers,models", [
    (["Assisted-by: Claude:claude-3-opus coccinelle"], ("claude-3-opus",)),
    (["Generated-by: gpt:gpt-5"], ("gpt-5",)),
    (["Co-authored-by: aider (anthropic/claude-sonnet-4-20250514) <aider@aider.chat>"],
     ("anthropic/claude-sonnet-4-20250514",)),
    (["Assisted-by: Claude"], ()),
    (["Co-authored-by: Claude <noreply@anthropic.com>"], ()),
    ([], ()),
    # every model, never the first alone (issue 44): two trailers, two shapes, one named twice
    (["Assisted-by: Claude:claude-sonnet-4-5", "assisted-BY: Claude:claude-opus-4-1"],
     ("claude-sonnet-4-5", "claude-opus-4-1")),
    (["Co-authored-by: aider (gpt-4o) <aider@aider.chat>", "Generated-by: x:gpt-5", "Assisted-by: y:gpt-4o"],
     ("gpt-4o", "gpt-5")),
])
def test_the_models_trailers_name(trailers: list[str], models: tuple[str, ...]) -> None:
    assert named_models(trailers) == models


def test_model_run_runner_takes_only_the_runners_own_call() -> None:
    kit = Kit()
    doc = kit.doc()
    receipt = parse_payload(json.dumps({**doc, "model_run": "runner", "challenge": CHALLENGE}).encode())[0]
    from_file = parse_payload(json.dumps({**doc, "model_run": "file"}).encode())[0]
    older = parse_payload(json.dumps(doc).encode())[0]
    assert receipt is not None and from_file is not None and older is not None
    assert model_run_failures("runner", receipt) == []
    assert [f.code for f in model_run_failures("runner", from_file)] == ["GATE-REVIEW-MODEL-RUN"]
    assert [f.code for f in model_run_failures("runner", older)] == ["GATE-REVIEW-MODEL-RUN"]
    assert model_run_failures("any", from_file) == []
