"""What the runner reads from a model's output: the verdict and the reasons, nothing else (pure).

The model is asked for JSON, `{"verdict": "pass", "reasons": ["..."]}`. The runner takes
those two members; every other receipt field it computes itself (docs/ci.md). When the runner
calls the model itself (`gatecore.records.modelcall`), the answer also carries the run's `challenge`,
and may say which model served it (`served_model`): both are read, and checked there. Any other
member (`confidence`, `notes`, a model's own `score`) is ignored whatever it holds - a
float there is no reason to refuse - and named in a note, so nothing is dropped in silence.
Models often wrap their answer in Markdown: a text that is not itself a JSON object but
holds exactly one fenced block (three backticks, with or without `json`) is read from that
block. Everything else is refused naming the file and why: no JSON object, two or more
fenced blocks (which one is the answer?), `verdict` or `reasons` given twice, missing or of
the wrong form (checked by the receipt schema's own members, `receipt.MEMBERS`). The sealed
receipt is validated as a whole again before it is sealed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import GateError
from ..valueclass import valueclass
from .receipt import MEMBERS

_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)\n[ \t]*```[ \t]*$", re.M | re.S)
_TAKEN = ("verdict", "reasons")
#: Read when present: the runner's challenge echoed (`gatecore.records.modelcall`), and the model that served.
_OPTIONAL = ("challenge", "served_model")
_CHECKS = {m.name: m.check for m in MEMBERS if m.name in (*_TAKEN, "served_model")}


@valueclass(frozen=True, slots=True)
class Answer:
    verdict: str
    reasons: list[str]
    ignored: tuple[str, ...]  # the other members, by name
    fenced: bool  # read from a fenced block
    challenge: str | None = None  # the challenge the answer carries (`gate review run` checks it)
    served_model: str | None = None  # the model the answer says served it

    def notes(self, origin: str) -> list[str]:
        out = []
        if self.fenced:
            out.append(f"{origin}: read the answer from its fenced block")
        if self.ignored:
            out.append(f"{origin}: ignored (the runner takes verdict and reasons only): {', '.join(self.ignored)}")
        return out


def _refuse(origin: str, why: str) -> GateError:
    return GateError("GATE-INPUT-ARGUMENT", f"model output {origin}: {why}")


def _parse(text: str, origin: str) -> dict[str, Any]:
    objects: list[list[tuple[str, Any]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        objects.append(items)
        return dict(items)

    try:
        value = json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError) as exc:
        raise _refuse(origin, f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _refuse(origin, f"the answer is a JSON {type(value).__name__}, not an object with verdict and reasons")
    top = [k for k, _ in objects[-1]]  # the outermost object is built last
    twice = sorted({k for k in top if k in (*_TAKEN, *_OPTIONAL) and top.count(k) > 1})
    if twice:
        raise _refuse(origin, f"{', '.join(twice)} given twice: which one is the answer?")
    return value


def read(data: bytes, origin: str) -> Answer:
    """The verdict and reasons of a model's output (`origin`: the file, for messages)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refuse(origin, f"not UTF-8 text (byte {exc.start})") from None
    fenced = False
    if not text.strip().startswith("{"):
        blocks = _FENCE.findall(text)
        if len(blocks) != 1:
            raise _refuse(origin, "neither a JSON object nor text with one fenced JSON block" if not blocks else
                          f"{len(blocks)} fenced blocks: which one is the answer? (give one)")
        text, fenced = blocks[0], True
    doc = _parse(text, origin)
    for name in _TAKEN:
        check = _CHECKS[name]
        if name not in doc:
            raise _refuse(origin, f"no {name} (the answer needs verdict and reasons)")
        problem = check(doc[name])
        if problem is not None:
            raise _refuse(origin, f"{name}: {problem}")
    challenge = doc.get("challenge")
    if challenge is not None and not isinstance(challenge, str):
        raise _refuse(origin, "challenge: not a string")
    served = doc.get("served_model")
    if served is not None and (problem := _CHECKS["served_model"](served)) is not None:
        raise _refuse(origin, f"served_model: {problem}")
    return Answer(doc["verdict"], list(doc["reasons"]), tuple(k for k in doc if k not in (*_TAKEN, *_OPTIONAL)),
                  fenced, challenge, served)


def canonical(answer: Answer) -> bytes:
    """The answer as the runner passes it on: the two members only."""
    return json.dumps({"verdict": answer.verdict, "reasons": answer.reasons}, ensure_ascii=False).encode("utf-8")
