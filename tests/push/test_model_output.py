"""The runner reads what it needs from a model's output, through
`gate review record`: verdict and reasons taken, other members ignored and named, one fenced
JSON block read, anything else refused naming the file and why; a receipt made from a
chatty answer is accepted by the server like any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import cli
from support.lab import RUNNER, Lab

ANSWER = {"verdict": "pass", "reasons": ["small, tested change"]}


def record(lab: Lab, tmp_path: Path, output: str, name: str) -> tuple[object, Path, str]:
    attempt = lab.open()
    head = lab.change(f"mo-{attempt}")
    source = tmp_path / f"{name}.out"
    source.write_text(output)
    receipt = tmp_path / f"{name}.receipt.json"
    out = cli("review", "record", "--repo", str(lab.work.path), "--attempt", attempt, "--head", head,
              "--base", lab.base, "--model-output", str(source), "--key", str(lab.root / "keys" / "runner-1.key"),
              "--out", str(receipt), "--remote", lab.remote(), env=RUNNER)
    return out, receipt, attempt


def test_members_the_runner_does_not_take_are_ignored_and_named(lab: Lab, tmp_path: Path) -> None:
    output = json.dumps({**ANSWER, "confidence": 0.9, "notes": {"depth": [1.5, None]}})
    out, receipt, attempt = record(lab, tmp_path, output, "extra")
    assert out.returncode == 0, out.stderr  # once: "number '0.9' is not an integer"
    assert f"{tmp_path / 'extra.out'}: ignored (the runner takes verdict and reasons only): confidence, notes" \
        in out.stderr
    doc = lab.receipt_doc(receipt)
    assert (doc["verdict"], doc["reasons"]) == ("pass", ANSWER["reasons"]) and "confidence" not in doc
    assert lab.push_review(attempt, receipt).ok  # the server accepts it like any receipt


def test_an_answer_fenced_in_markdown_is_read_from_its_block(lab: Lab, tmp_path: Path) -> None:
    output = f"Here is my review.\n\n```json\n{json.dumps(ANSWER, indent=2)}\n```\n\nLet me know.\n"
    out, receipt, _ = record(lab, tmp_path, output, "fenced")
    assert out.returncode == 0, out.stderr
    assert f"{tmp_path / 'fenced.out'}: read the answer from its fenced block" in out.stderr
    assert lab.receipt_doc(receipt)["reasons"] == ANSWER["reasons"]


@pytest.mark.parametrize("output,why", [
    ("I think this is fine.", "neither a JSON object nor text with one fenced JSON block"),
    (f"```json\n{json.dumps(ANSWER)}\n```\nor\n```json\n{json.dumps({**ANSWER, 'verdict': 'fail'})}\n```\n",
     "2 fenced blocks: which one is the answer? (give one)"),
    ('{"verdict": "pass", "verdict": "fail", "reasons": ["x"]}', "verdict given twice: which one is the answer?"),
    ('{"verdict": "pass", "reasons": "fine"}', "reasons: "),
    ('{"verdict": "PASS", "reasons": ["fine"]}', "verdict: "),
    ('{"reasons": ["fine"]}', "no verdict (the answer needs verdict and reasons)"),
    ("[1, 2]", "neither a JSON object"),
    ('{"verdict": "pass", "reasons": ["x"]', "not JSON: "),
])
def test_anything_else_is_refused_naming_the_file_and_why(lab: Lab, tmp_path: Path, output: str, why: str) -> None:
    out, receipt, _ = record(lab, tmp_path, output, "bad")
    assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr, out.stderr
    assert f"model output {tmp_path / 'bad.out'}: {why}" in out.stderr, out.stderr
    assert not receipt.exists()
