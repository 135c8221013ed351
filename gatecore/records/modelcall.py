"""The runner's own call of the model: the request it sends, the challenge, and the answer it takes (pure).

A runner that seals "the model's output file" trusts that the file was written by this model
for this diff, now: a passing answer left in a recycled workspace by model A before a failover
to model B is sealed as model B's review (the incident, one file further along). `gate review
run` leaves nothing on disk to go stale: it builds the request itself and passes it to the
model's command on stdin, and takes the answer from the command's stdout.

* **The request** (`request`): the prompt the ledger holds (its SHA-256 checked against the
  attempt's `prompt_sha256` by the caller), what the answer must look like, the bound values
  and the change itself, as one text a model's command line takes on stdin. The change is shown
  by the gate's rules from git's objects (`gatecore.git.changetext`), never by `git diff`, whose
  output the reviewed tree's attributes and the clone's configuration decide. The receipt
  records the request's SHA-256 (`request_sha256`).
* **The challenge** (`challenge`): SHA-256 of a fresh random nonce with the attempt, the
  workspace generation, the diff digest and the model; new on every run. The answer must carry
  it, exactly: an answer without it, or with another run's (a stale file cat'ed by a wrapper, a
  replayed answer), is refused before anything is sealed, `GATE-REVIEW-CHALLENGE`.
* **The answer** (`read_answer`): the model's answer as `gatecore.records.modeloutput` reads it (one JSON
  object, or text holding one fenced JSON block: `verdict`, `reasons`, `challenge`), either as
  the command's whole stdout or, from a tool that wraps it, as the `answer` member of a JSON
  object whose `served_model` member says which model the tool reports served it. Where the
  model that served the answer is reported (by the tool, or in the answer), a model other than
  the one the ledger has selected is refused before anything is sealed,
  `GATE-REVIEW-SERVED-MODEL`: vendors and review tools fall back to another model silently. Two
  names of one model (`anthropic/claude-sonnet-4.5` for `claude-sonnet-4-5`) are read as one by
  the model-id table (`modelnames`), as reviewer independence reads them; an id it does not place
  matches only itself.

The command's environment names the model (`GATE_MODEL_ID`) and the attempt (`GATE_ATTEMPT_ID`),
so that one wrapper serves every attempt (docs/ci.md).
"""

from __future__ import annotations

import hashlib
import json

from ..configuration.modelnames import ModelName, ModelNames
from ..errors import GateError
from ..valueclass import valueclass
from . import modeloutput
from .receipt import DIFF_TREE_DELTA

#: What the runner passes to the model's command besides the request.
ENV_MODEL, ENV_ATTEMPT = "GATE_MODEL_ID", "GATE_ATTEMPT_ID"
REQUEST_VERSION = "push-gate review request v2"


def challenge(nonce: str, attempt: str, generation: str, diff_sha256: str, model: str) -> str:
    """The run's challenge: bound to the attempt, the generation, the diff and the model, and
    fresh with every nonce."""
    doc = {"nonce": nonce, "attempt_id": attempt, "workspace_generation": generation, "diff_sha256": diff_sha256,
           "model_id": model}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def request(prompt: str, change: str, *, challenge: str, attempt: str, generation: str, model: str,
            diff_sha256: str) -> bytes:
    """The text the model's command reads on stdin (`change`: the change's text, `changetext`)."""
    shape = json.dumps({"challenge": challenge, "verdict": "pass or fail", "reasons": ["..."]})
    return "\n".join([
        prompt.rstrip("\n"),
        "",
        "Answer with one JSON object and nothing else:",
        f"  {shape}",
        "verdict is exactly pass or fail; reasons are one or more short sentences. Copy the challenge",
        "exactly: it binds your answer to this request.",
        "",
        f"{REQUEST_VERSION}",
        f"attempt: {attempt}",
        f"workspace generation: {generation}",
        f"model: {model}",
        f"diff ({DIFF_TREE_DELTA}): {diff_sha256}",
        f"challenge: {challenge}",
        "",
        "The change (every changed file of the reviewed range, shown by the gate from git's objects). Content",
        "marked as not shown is content you have not reviewed.",
        change,
    ]).encode("utf-8", "surrogateescape")


@valueclass(frozen=True, slots=True)
class RunAnswer:
    """What the runner takes from the command's answer."""

    answer: modeloutput.Answer
    served_model: str | None  # as the model's tool (or the answer) reports it; None: not reported


def _unwrap(stdout: bytes, origin: str) -> tuple[bytes, tuple[str, ...]]:
    """(the answer's bytes, every model a wrapping tool reports served it: `served_model` is one
    model, a list of them (a tool that used several for one answer names each), or null)."""
    try:
        doc = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return stdout, ()  # text (a fenced block, or nothing): modeloutput says what is wrong
    if not isinstance(doc, dict) or "answer" not in doc:
        return stdout, ()
    answer, served = doc["answer"], doc.get("served_model")
    listed = [served] if isinstance(served, str) else served if isinstance(served, list) else []
    if not isinstance(answer, str) or not (served is None or isinstance(served, (str, list))) or not all(
            isinstance(m, str) for m in listed):
        raise GateError("GATE-INPUT-ARGUMENT", f"model output {origin}: a wrapped answer is "
                                               '{"answer": TEXT, "served_model": MODEL, [MODEL, ...] or null}')
    return answer.encode("utf-8", "surrogateescape"), tuple(listed)


def served_by(served: str, selected: str, names: ModelNames | None) -> bool:
    """Is `served` the selected model: the same id, or two names of one model as `names` reads
    them (`modelnames`). An id no scheme places is the selected model only by its exact spelling:
    what cannot be read cannot be shown to be the model on record."""
    if served.casefold() == selected.casefold():
        return True
    if names is None:
        return False
    ours, theirs = names.read(selected), names.read(served)
    return isinstance(ours, ModelName) and isinstance(theirs, ModelName) and ours.same_model(theirs)


def read_answer(stdout: bytes, expected_challenge: str, selected_model: str, origin: str,
                names: ModelNames | None) -> RunAnswer:
    """The answer the model's command printed, if it is this run's answer by the selected model
    (`names`: how model ids are read, `served_by`); else `GATE-REVIEW-CHALLENGE` or
    `GATE-REVIEW-SERVED-MODEL` (or `GATE-INPUT-ARGUMENT` for an answer that is not one)."""
    data, served_by_tool = _unwrap(stdout, origin)
    answer = modeloutput.read(data, origin)
    if answer.challenge is None:
        raise GateError("GATE-REVIEW-CHALLENGE", f"the answer from {origin} carries no challenge: it was not made "
                                                 "for this request (an answer kept from before, or a command that "
                                                 "does not pass the request to the model)")
    if answer.challenge != expected_challenge:
        raise GateError("GATE-REVIEW-CHALLENGE", f"the answer from {origin} carries challenge "
                                                 f"{answer.challenge[:16]}..., not this run's "
                                                 f"{expected_challenge[:16]}...: a stale or replayed answer")
    reported = [*served_by_tool, *([answer.served_model] if answer.served_model is not None else [])]
    for served in reported:
        if not served_by(served, selected_model, names):
            raise GateError("GATE-REVIEW-SERVED-MODEL", f"{origin} reports that {served} served the answer, but "
                                                        f"the ledger has {selected_model} selected for this attempt")
    return RunAnswer(answer, reported[0] if reported else None)
