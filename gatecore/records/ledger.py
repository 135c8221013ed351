"""The attempt ledger: sealed, append-only records kept in the repository itself.

Each attempt has a ref `refs/gate/attempts/<attempt-id>` pointing at a chain of commits;
each commit holds one file, `record.json`: an envelope of payload type
`application/vnd.gate.attempt.v1+json`, sealed with a key of purpose `attempt`. Records
go `opened` (generation, workspace, prompt digest; who wrote the change: `author_model`,
`author_vendor`, and who started the attempt: `initiator`), `model-selected`, `failover`...,
`closed`; each names its predecessor by the SHA-256 of its envelope bytes, so a chain can
be neither reordered nor re-parented without breaking a seal. Because the ledger lives
under a ref, it replicates with the repository wherever the platform puts it.

The gate validates every update of these refs (`gatecore.reserved`); the current state of an
attempt is what the last record leaves on record. This module is the record model, the
state machine and the reading of a chain (pure; the trusted side writes records in
`trusted/attempts.py`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any

from .. import strictjson
from ..errors import GateError
from ..findings import Failure
from ..git.grammar import Commit
from ..git.objects import Objects, single_file
from ..signing import envelope as env_mod
from ..signing.keys import Keyring, SigningKey
from ..signing.seal import sign, verify
from ..valueclass import asdict, replace, valueclass
from .fields import ATTEMPT_ID, GENERATION, INITIATOR, MODEL_ID, REF_NAME, REPOSITORY_ID, SHA256_HEX, TIME, VENDOR
from .schema import Member, choice, describe, integer, read, text

RECORD_FILE = "record.json"
RECEIPT_FILE = "receipt.json"  # the one file of a receipt commit (refs/gate/receipts/<id>)
MAX_CHAIN = 1000
LEDGER_NAME, LEDGER_EMAIL = "gate ledger", "ledger@gate.invalid"

KINDS = ("opened", "model-selected", "failover", "closed")


@valueclass(frozen=True, slots=True)
class AttemptRecord:
    """One ledger record's members (docs/ci.md); `parse_record` is the only way in."""

    version: int
    attempt_id: str
    seq: int
    kind: str
    repository: str
    time: int
    prev: str | None = None
    workspace: str | None = None
    workspace_generation: str | None = None
    prompt_sha256: str | None = None
    target: str | None = None  # opened only: the branch a review of this attempt goes onto
    model_id: str | None = None
    note: str | None = None
    # opened only, optional (docs/ci.md): the agent that wrote the change, and who started the attempt
    author_model: str | None = None
    author_vendor: str | None = None
    initiator: str | None = None

    def as_doc(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


MEMBERS = (
    Member("version", integer(1, 1)),
    Member("attempt_id", ATTEMPT_ID),
    Member("seq", integer(0, MAX_CHAIN - 1)),
    Member("kind", choice(*KINDS)),
    Member("prev", SHA256_HEX, optional=True),
    Member("repository", REPOSITORY_ID),
    Member("time", TIME),
    Member("workspace", text(256, 1, pattern=re.compile(r"[\x21-\x7e]+")), optional=True),
    Member("workspace_generation", GENERATION, optional=True),
    Member("prompt_sha256", SHA256_HEX, optional=True),
    Member("target", REF_NAME, optional=True),
    Member("model_id", MODEL_ID, optional=True),
    Member("note", text(500), optional=True),
    Member("author_model", MODEL_ID, optional=True),
    Member("author_vendor", VENDOR, optional=True),
    Member("initiator", INITIATOR, optional=True),
)


def _shape(rec: AttemptRecord) -> str | None:
    """What is wrong with the record's combination of members, or None."""
    opened = (rec.workspace, rec.workspace_generation, rec.prompt_sha256)
    if rec.kind == "opened":
        if None in opened or rec.model_id is not None:
            return "an opened record has workspace, workspace_generation, prompt_sha256, no model_id"
        if rec.seq != 0 or rec.prev is not None:
            return "an opened record is the first of its chain"
        if rec.author_vendor is not None and rec.author_model is None:
            return "author_vendor goes with the author_model it is the vendor of"
        return None
    if any(v is not None for v in (*opened, rec.target, rec.author_model, rec.author_vendor, rec.initiator)):
        return f"a {rec.kind} record does not restate the opened fields"
    if rec.seq == 0 or rec.prev is None:
        return f"a {rec.kind} record follows another record"
    if (rec.kind in ("model-selected", "failover")) != (rec.model_id is not None):
        return "model-selected and failover records, and only they, name a model_id"
    return None


def parse_record(doc: Any) -> tuple[AttemptRecord | None, list[tuple[str, str]]]:
    """A record from a parsed JSON document, or (member, problem) for each problem."""
    values, problems = read(doc, MEMBERS)
    if problems:
        return None, problems
    rec = AttemptRecord(**values)
    shape = _shape(rec)
    return (None, [("record", shape)]) if shape is not None else (rec, [])


@valueclass(frozen=True, slots=True)
class AttemptState:
    """What the ledger has on record for an attempt after its last record."""

    attempt_id: str
    repository: str
    workspace: str
    workspace_generation: str
    prompt_sha256: str
    target: str | None  # the branch reviews go onto (None: the server's HEAD)
    root: str  # the commit of the opened record (refs/gate/generations/<G> points at it)
    model_id: str | None
    model_record: str | None  # sha256 of the envelope that put model_id on record
    closed: bool
    seq: int
    head: str  # sha256 of the last envelope
    updated: int  # the time of the last record
    models: tuple[str, ...]  # every model on record, in order
    author_model: str | None = None  # the model that wrote the change (None: not recorded)
    author_vendor: str | None = None  # its vendor, as the orchestrator recorded it
    initiator: str | None = None  # who started the attempt


def record_digest(envelope_bytes: bytes) -> str:
    return hashlib.sha256(envelope_bytes).hexdigest()


def apply(state: AttemptState | None, rec: AttemptRecord, digest: str,
          commit: str = "") -> tuple[AttemptState | None, list[Failure]]:
    """The state after one more record (held by `commit`), or failures saying why it cannot follow."""
    bad = []
    if state is None:
        if rec.kind != "opened":
            return None, [Failure("GATE-LEDGER-SEQUENCE", "kind", "a chain starts with an opened record")]
        assert rec.workspace and rec.workspace_generation and rec.prompt_sha256
        return AttemptState(rec.attempt_id, rec.repository, rec.workspace, rec.workspace_generation,
                            rec.prompt_sha256, rec.target, commit, None, None, False, 0, digest, rec.time, (),
                            rec.author_model, rec.author_vendor, rec.initiator), []
    if rec.seq != state.seq + 1:
        bad.append(Failure("GATE-LEDGER-SEQUENCE", "seq", f"expected seq {state.seq + 1}, got {rec.seq}"))
    if rec.prev != state.head:
        bad.append(Failure("GATE-LEDGER-SEQUENCE", "prev", "does not name the previous record"))
    if rec.attempt_id != state.attempt_id or rec.repository != state.repository:
        bad.append(Failure("GATE-LEDGER-ATTEMPT", "attempt_id", "record belongs to another attempt or repository"))
    if state.closed:
        bad.append(Failure("GATE-LEDGER-SEQUENCE", "kind", "the attempt is closed; nothing may follow"))
    if rec.kind == "opened":
        bad.append(Failure("GATE-LEDGER-SEQUENCE", "kind", "an attempt is opened once"))
    if rec.kind == "model-selected" and state.model_id is not None:
        bad.append(Failure("GATE-LEDGER-SEQUENCE", "kind", "the model is already selected; record a failover"))
    if rec.kind == "failover" and (state.model_id is None or rec.model_id == state.model_id):
        bad.append(Failure("GATE-LEDGER-SEQUENCE", "model_id", "a failover moves from the model on record to another"))
    if bad:
        return None, bad
    moved = replace(state, seq=rec.seq, head=digest, updated=rec.time)
    if rec.kind in ("model-selected", "failover"):
        assert rec.model_id is not None
        return replace(moved, model_id=rec.model_id, model_record=digest, models=(*state.models, rec.model_id)), []
    return replace(moved, closed=True), []


def open_record(data: bytes, keyring: Keyring | None, now: int) -> tuple[AttemptRecord | None, list[Failure]]:
    """Unseal and parse one record envelope (keyring None: parse without verifying, trusted side only)."""
    try:
        env = env_mod.parse(data)
    except GateError as exc:
        return None, [Failure(exc.code, "envelope", exc.detail)]
    failures = [] if keyring is None else verify(env, keyring, env_mod.PAYLOAD_ATTEMPT, now)
    if keyring is None and env.payload_type != env_mod.PAYLOAD_ATTEMPT:
        failures.append(Failure("GATE-SEAL-PAYLOAD-TYPE", "payloadType", "not an attempt record"))
    try:
        doc = strictjson.loads(env.payload, code="GATE-LEDGER-RECORD")
    except GateError as exc:
        return None, [*failures, Failure(exc.code, "record", exc.detail)]
    rec, problems = parse_record(doc)
    if rec is None:
        newer = from_newer(doc, problems)
        if newer is not None:
            return None, [*failures, newer]
        return None, [*failures, *(Failure("GATE-LEDGER-RECORD", member, problem) for member, problem in problems)]
    return (rec if not failures else None), failures


def from_newer(doc: Any, problems: list[tuple[str, str]]) -> Failure | None:
    """GATE-LEDGER-NEWER when what is wrong with a record is only what a newer push-gate writes:
    members this one does not know, or a higher record version (docs/upgrading.md: servers first)."""
    from .. import __version__

    unknown = [member for member, problem in problems if problem == "is not a known member"]
    version = doc.get("version") if isinstance(doc, dict) else None
    later = type(version) is int and version > 1
    if not unknown and not later:
        return None
    what = ", ".join([*([f"record version {version}"] if later else []), *(f"member {m}" for m in unknown)])
    return Failure("GATE-LEDGER-NEWER", "record", f"{what} is unknown to push-gate {__version__}: a newer push-gate "
                                                  "wrote this record; upgrade push-gate here first (docs/upgrading.md)")


@valueclass(frozen=True, slots=True)
class ChainEntry:
    commit: str
    envelope: bytes


def line_of_commits(objects: Objects, tip: str | None, stop: str | None, code: str,
                    what: str) -> Iterator[tuple[str, Commit]]:
    """The commits from `tip` back to `stop` (exclusive; None: the root), newest first: one line
    of commits (a merge is refused, never walked by its first parent: that would drop earlier
    records out of the chain), at most `MAX_CHAIN`. Each refusal is `code`, naming the `what`
    (ledger, receipt) of the chain. The one walk of a ledger or receipt chain."""
    current, seen = tip, 0
    while current is not None and current != stop:
        seen += 1
        if seen > MAX_CHAIN:
            raise GateError(code, f"{what} history longer than {MAX_CHAIN} commits")
        if objects.type_of(current) != "commit":
            raise GateError(code, f"{current[:12]} is not a {what} commit")
        info = objects.commit(current)
        if len(info.parent_ids) > 1:
            raise GateError(code, f"{what} commit {current[:12]} is a merge")
        yield current, info
        current = info.parent_ids[0] if info.parent_ids else None


def read_entries(objects: Objects, tip: str, stop: str | None) -> list[ChainEntry]:
    """Ledger commits from `stop` (exclusive; None: the root) to `tip`, oldest first.

    Raises GateError(GATE-LEDGER-RECORD / GATE-LEDGER-REWRITE) on a malformed chain.
    """
    out: list[ChainEntry] = []
    reached: str | None = tip  # where the walk ended: `stop`, or None at the root
    for commit, info in line_of_commits(objects, tip, stop, "GATE-LEDGER-RECORD", "ledger"):
        out.append(ChainEntry(commit, single_file(objects, info.tree_id, RECORD_FILE, "GATE-LEDGER-RECORD")))
        reached = info.parent_ids[0] if info.parent_ids else None
    if reached != stop:
        raise GateError("GATE-LEDGER-REWRITE", "the new records do not extend the existing chain")
    out.reverse()
    return out


def fold(entries: list[ChainEntry], keyring: Keyring | None, now: int, attempt_id: str,
         start: AttemptState | None = None) -> tuple[AttemptState | None, list[Failure]]:
    """Verify and apply records in order; stops at the first bad record."""
    state = start
    for e in entries:
        rec, failures = open_record(e.envelope, keyring, now)
        if rec is None:
            return None, [Failure(f.code, f.field, f"record {e.commit[:12]}: {f.detail}") for f in failures]
        if rec.attempt_id != attempt_id:
            return None, [Failure("GATE-LEDGER-ATTEMPT", "attempt_id",
                                  f"record {e.commit[:12]} is for attempt {rec.attempt_id!r}")]
        state, failures = apply(state, rec, record_digest(e.envelope), e.commit)
        if state is None:
            return None, [Failure(f.code, f.field, f"record {e.commit[:12]}: {f.detail}") for f in failures]
    return state, []


def read_state(objects: Objects, tip: str, keyring: Keyring | None, now: int, attempt_id: str) -> AttemptState:
    state, failures = fold(read_entries(objects, tip, None), keyring, now, attempt_id)
    if state is None:
        f = failures[0] if failures else Failure("GATE-LEDGER-UNREADABLE", "ledger", "empty chain")
        raise GateError(f.code, f.detail)
    return state


def make_record(key: SigningKey, state: AttemptState | None, *, attempt_id: str, kind: str, repository: str,
                now: int, workspace: str | None = None, workspace_generation: str | None = None,
                prompt_sha256: str | None = None, target: str | None = None, model_id: str | None = None,
                note: str | None = None, author_model: str | None = None, author_vendor: str | None = None,
                initiator: str | None = None) -> bytes:
    """Seal the next record of a chain; validates it the way the gate will."""
    if key.purpose != "attempt":
        raise GateError("GATE-CONFIG-KEYFILE", f"key {key.id} is for {key.purpose}, not attempt records")
    doc = {
        "version": 1, "attempt_id": attempt_id, "seq": 0 if state is None else state.seq + 1, "kind": kind,
        "prev": None if state is None else state.head, "repository": repository, "time": now,
        "workspace": workspace, "workspace_generation": workspace_generation, "prompt_sha256": prompt_sha256,
        "target": target, "model_id": model_id, "note": note, "author_model": author_model,
        "author_vendor": author_vendor, "initiator": initiator,
    }
    rec, problems = parse_record(doc)
    if rec is None:
        raise GateError("GATE-INPUT-ARGUMENT", f"attempt record: {describe(problems)}")
    _, failures = apply(state, rec, "0" * 64)
    if failures:
        raise GateError(failures[0].code, failures[0].detail)
    payload = strictjson.dumps(rec.as_doc())
    return env_mod.encode(sign(key, env_mod.PAYLOAD_ATTEMPT, payload))
