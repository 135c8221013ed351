"""Property-based fuzzing of every parser the gate runs on untrusted or admin-supplied bytes,
and of the receipt decision.

Properties:

* the pre-receive stdin parser, the envelope, receipt, strict JSON, policy and keyring
  parsers raise nothing but the documented `GateError` subclasses (GateError for push
  input, GateError for configuration); `Policy.from_plain` and `keyring_from_plain` accept
  whatever validation produced;
* no input yields an accept unless it is a validly sealed receipt whose every field meets
  the expectations (an oracle written independently of the binder);
* pure helpers keep their promises (display() output is printable ASCII, the tree-delta
  encoding is injective, frozen-path matching survives case and trailing-dot variants).

Example counts: GATE_FUZZ_EXAMPLES (default 60 per target) sets hypothesis' max_examples for
every test here, e.g. `GATE_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py` for the long run
whose figures are in docs/security.md. The differential test against `git check-ref-format`
spawns git once per example and is capped at 2000.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime as dt
import json
import os
import re
import string
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gatecore import strictjson
from gatecore.checks.binding import CLOCK_SKEW_SECONDS, judge_receipt
from gatecore.configuration.configschema import validate_keyring as validate_keyring_bytes
from gatecore.configuration.configschema import validate_policy as validate_bytes
from gatecore.configuration.policy import PathGlob, Policy, normalize_path
from gatecore.errors import GateError
from gatecore.git.digest import DeltaRecord, encode_records
from gatecore.git.refs import display, parse_pre_receive, ref_name_problem
from gatecore.records.receipt import MAX_LIFETIME_SECONDS, canonical_payload, parse_payload
from gatecore.records.receipt import MEMBERS as RECEIPT_MEMBERS
from gatecore.selftest import NOW, Kit
from gatecore.signing import envelope
from gatecore.signing.keys import SigningKey, keyring_from_plain

EXAMPLES = int(os.environ.get("GATE_FUZZ_EXAMPLES", "60"))
#: The default suite draws the same examples every run (a red run is a change, not luck); long runs
#: (GATE_LONG_TESTS=1) and GATE_FUZZ_EXAMPLES draw new ones each time, to find what is not known yet.
RANDOM = os.environ.get("GATE_LONG_TESTS") == "1" or "GATE_FUZZ_EXAMPLES" in os.environ
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not RANDOM,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

KIT = Kit()
GOOD = KIT.fresh()
GOOD_ENV = envelope.parse(GOOD)
BASE_DOC = KIT.doc()

json_scalars = (st.none() | st.booleans() | st.integers(-(2**60), 2**60)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20,
)


def _dumps_any(value: Any) -> bytes:
    return json.dumps(value).encode()


# --- pre-receive stdin -----------------------------------------------------------------------

HEXES = st.sampled_from(["0" * 40, "1" * 40, "a" * 40, "0" * 64, "b" * 64, "A" * 40, "1" * 39, "g" * 40, "", "0x" + "1" * 38])
REF_BYTES = st.binary(max_size=40) | st.sampled_from([
    b"refs/heads/main", b"refs/heads/review/runner/a1", b"refs/gate/attempts/a1", b"refs/heads/a..b",
    b"refs/heads/x.lock", b"refs/heads/.x", b"refs/heads/x/", b"refs/heads/@{u}", b"refs/heads/\xff\xfe",
    b"refs/heads/a b", b"refs/heads/a\x00b", b"refs/heads/a\rb", b"HEAD", b"refs/heads/x.", b"refs//x",
])
LINES = st.lists(st.tuples(HEXES, HEXES, REF_BYTES, st.sampled_from([b" ", b"  ", b"\t"]),
                           st.sampled_from([b"\n", b"\n", b"\r\n", b""])), max_size=6)


def _check_updates(data: bytes, updates: list[Any]) -> None:
    assert data.endswith(b"\n") or not data
    rebuilt = b"".join(f"{u.old} {u.new} ".encode() + u.raw_ref + b"\n" for u in updates)
    assert rebuilt == data  # nothing dropped, nothing invented
    assert len({u.raw_ref for u in updates}) == len(updates)
    assert len({len(u.old) for u in updates} | {len(u.new) for u in updates}) <= 1
    for u in updates:
        assert ref_name_problem(u.raw_ref) is None
        assert not (u.is_create and u.is_delete) or u.is_noop  # both ids zero: a no-op line, kept


@FUZZ
@given(st.binary(max_size=600))
def test_stdin_parser_random_bytes(data: bytes) -> None:
    try:
        updates = parse_pre_receive(data)
    except GateError:
        return
    _check_updates(data, updates)


@FUZZ
@given(LINES)
def test_stdin_parser_structured_lines(lines: list[tuple[str, str, bytes, bytes, bytes]]) -> None:
    data = b"".join(old.encode() + sep + new.encode() + sep + ref + end for old, new, ref, sep, end in lines)
    try:
        updates = parse_pre_receive(data)
    except GateError as exc:
        assert exc.code in ("GATE-INPUT-MALFORMED", "GATE-REF-NAME", "GATE-INPUT-TOO-LARGE")
        return
    _check_updates(data, updates)


REF_ALPHABET = st.sampled_from([*"abcAZ09-_./@{}~^:?*[\\ \x7f\x01é", "..", ".lock", "//", "@{"])


@settings(FUZZ, max_examples=min(EXAMPLES, 2000))
@given(st.lists(REF_ALPHABET, min_size=1, max_size=12).map("".join))
def test_ref_name_rules_match_git_check_ref_format(tail: str) -> None:
    name = ("refs/" + tail).encode("utf-8")
    assume(b"\x00" not in name)
    git_ok = subprocess.run(["git", "check-ref-format", name], capture_output=True).returncode == 0
    assert (ref_name_problem(name) is None) == git_ok, name


@FUZZ
@given(st.binary(max_size=200) | st.text(max_size=80))
def test_display_is_printable_ascii(raw: bytes | str) -> None:
    out = display(raw)
    assert all(0x21 <= ord(ch) <= 0x7E for ch in out)  # no newline, space or escape can be injected


# --- strict JSON and envelopes ------------------------------------------------------------------

def _no_floats_and_small(value: Any, depth: int = 0) -> None:
    assert depth <= strictjson.MAX_DEPTH + 1
    assert not isinstance(value, float)
    if isinstance(value, int) and not isinstance(value, bool):
        assert abs(value) <= 2**53
    if isinstance(value, dict):
        for v in value.values():
            _no_floats_and_small(v, depth + 1)
    if isinstance(value, list):
        for v in value:
            _no_floats_and_small(v, depth + 1)


@FUZZ
@given(st.binary(max_size=300) | json_values.map(_dumps_any)
       | st.integers(0, 80).map(lambda n: b"[" * n + b"]" * n)
       | st.text(alphabet='{}[]":,0123456789eE.-+ \\untrlfasNIy', max_size=60).map(str.encode))
def test_strict_json_raises_only_its_error(data: bytes) -> None:
    try:
        value = strictjson.loads(data)
    except GateError as exc:
        assert exc.code in ("GATE-RECEIPT-MALFORMED", "GATE-RECEIPT-TOO-LARGE")
        return
    _no_floats_and_small(value)


b64_texts = st.sampled_from(["", "=", "AA==", "AA=", "AAAA", "A", " AAAA", "AAAA\n", "!!!!", "é"]) | st.binary(
    max_size=80).map(lambda b: base64.b64encode(b).decode()) | st.text(max_size=20)
envelope_docs = st.fixed_dictionaries(
    {},
    optional={
        "payloadType": st.sampled_from([envelope.PAYLOAD_RECEIPT, envelope.PAYLOAD_ATTEMPT, "", "x"]) | json_values,
        "payload": b64_texts | json_values,
        "signatures": st.lists(st.fixed_dictionaries({}, optional={"keyid": st.text(max_size=10) | json_values,
                                                                   "sig": b64_texts | json_values,
                                                                   "alg": st.just("none")}), max_size=3)
        | json_values,
        "alg": st.just("hmac-sha256"),
    },
)


@FUZZ
@given(st.binary(max_size=400) | envelope_docs.map(_dumps_any) | json_values.map(_dumps_any))
def test_envelope_parser_raises_only_input_errors(data: bytes) -> None:
    try:
        env = envelope.parse(data)
    except GateError as exc:
        assert exc.code in ("GATE-SEAL-MALFORMED", "GATE-RECEIPT-TOO-LARGE")
        return
    assert envelope.parse(envelope.encode(env)) == env  # canonical: what parsed re-encodes to itself


# --- receipts -----------------------------------------------------------------------------------

FIELDS = [m.name for m in RECEIPT_MEMBERS]
SPECIAL_VALUES = st.sampled_from([
    None, True, False, 0, 1, -1, 2**53, 2**53 + 1, 1.0, "", " ", "pass", "PASS", "Pass", "fail", "\x00", "a" * 64,
    "A" * 64, "0" * 40, "../../x", [], [""], ["  "], ["ok"], ["ok\x01"], {}, {"a": 1}, NOW, NOW + 10**9, -NOW,
])


#: Values a field may validly take that differ from the baseline (not bound by KIT.expected).
VALID_ALTERNATIVES: dict[str, Any] = {
    "reasons": st.lists(st.sampled_from(["ok", "tests pass\n\tand more", "x" * 2000, "é", " a "]), min_size=1,
                        max_size=32),
    "issued_at": st.integers(NOW - MAX_LIFETIME_SECONDS, NOW + CLOCK_SKEW_SECONDS + 5),
    "expires_at": st.integers(NOW - 5, NOW + MAX_LIFETIME_SECONDS),
    "ledger_record": st.sampled_from(["e" * 64, "E" * 64, "e" * 63]),
    "verdict": st.sampled_from(["pass", "fail"]),
}


@st.composite
def mutated_docs(draw: st.DrawFn) -> dict[str, Any]:
    """The good receipt with up to four fields dropped, replaced or nudged."""
    doc = dict(BASE_DOC)
    for field in draw(st.lists(st.sampled_from([*FIELDS, "extra", "alg"]), max_size=4, unique=True)):
        choice = draw(st.integers(0, 5))
        if choice == 0:
            doc.pop(field, None)
        elif choice == 1:
            doc[field] = draw(SPECIAL_VALUES)
        elif choice == 2:
            doc[field] = draw(json_values)
        elif choice == 3:  # a near miss of the good value
            good = BASE_DOC.get(field)
            doc[field] = (good.upper() if isinstance(good, str) else
                          good + draw(st.integers(-5, 5)) if isinstance(good, int) and not isinstance(good, bool)
                          else draw(SPECIAL_VALUES))
        elif field in VALID_ALTERNATIVES:
            doc[field] = draw(VALID_ALTERNATIVES[field])
    return doc


@FUZZ
@given(mutated_docs().map(strictjson.dumps) | st.binary(max_size=300) | json_values.map(_dumps_any))
def test_receipt_parser_never_raises(payload: bytes) -> None:
    receipt, failures = parse_payload(payload)
    assert (receipt is None) == bool(failures)
    for f in failures:
        assert f.code.startswith("GATE-RECEIPT-")
    if receipt is not None:
        assert parse_payload(canonical_payload(receipt)) == (receipt, [])


def _valid_reason(r: object) -> bool:
    return (isinstance(r, str) and 1 <= len(r) <= 2000 and bool(r.strip())
            and not any((ord(c) < 0x20 and c not in "\n\t") or ord(c) == 0x7F for c in r))


def _time(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**40


def oracle_accepts(doc: object) -> bool:
    """Whether a receipt document should be accepted for KIT.expected at NOW - written from the
    receipt schema and decision table in docs/receipts.md, not from the binder."""
    if not isinstance(doc, dict) or not set(doc) <= set(FIELDS):
        return False
    expected = {k: v for k, v in dataclasses.asdict(KIT.expected).items() if v is not None}
    if any(doc.get(k) != v or type(doc.get(k)) is not type(v) for k, v in expected.items()):
        return False
    v = doc.get("version")
    if not (type(v) is int and v == 1) or doc.get("verdict") != "pass":
        return False
    reasons = doc.get("reasons")
    if not isinstance(reasons, list) or not 1 <= len(reasons) <= 32 or not all(_valid_reason(r) for r in reasons):
        return False
    issued, expires = doc.get("issued_at"), doc.get("expires_at")
    if not (_time(issued) and _time(expires)):
        return False
    assert isinstance(issued, int) and isinstance(expires, int)
    if issued > NOW + CLOCK_SKEW_SECONDS or expires <= NOW or not 0 < expires - issued <= MAX_LIFETIME_SECONDS:
        return False
    ledger = doc.get("ledger_record")  # not expected here: absent, null or any well-formed digest
    return ledger is None or (isinstance(ledger, str) and re.fullmatch(r"[0-9a-f]{64}", ledger) is not None)


KEYS: dict[str, SigningKey] = {
    "receipt": KIT.receipt_key, "hmac": KIT.hmac_key, "attempt": KIT.attempt_key, "stranger": KIT.stranger_key,
    "unknown": SigningKey("runner-zz", "ed25519", "receipt", KIT.receipt_key.material),
    # the HMAC key's secret presented under the Ed25519 key's id (algorithm confusion)
    "confused": SigningKey("runner-1", "hmac-sha256", "receipt", KIT.receipt_pub.material),
}
GENUINE = {"receipt", "hmac"}


@FUZZ
@given(mutated_docs(), st.sampled_from(sorted(KEYS)),
       st.sampled_from([envelope.PAYLOAD_RECEIPT, envelope.PAYLOAD_ATTEMPT, "application/json"]))
def test_decision_accepts_only_valid_sealed_receipts(doc: dict[str, Any], key: str, ptype: str) -> None:
    try:
        payload = strictjson.dumps(doc)
    except ValueError:
        return
    data = KIT.seal_bytes(payload, KEYS[key], ptype) if ptype in envelope.PURPOSE_OF_PAYLOAD else \
        envelope.encode(envelope.Envelope(ptype, payload, KEYS[key].id, b"\x00" * 64))
    decision = judge_receipt(data, KIT.expected, KIT.keyring, NOW)
    genuine = key in GENUINE and ptype == envelope.PAYLOAD_RECEIPT
    if decision.accepted:
        assert genuine and oracle_accepts(doc), (key, ptype, doc)
    else:
        assert decision.failures  # a rejection always says why
    if genuine:  # and the converse: a valid, genuinely sealed receipt is never refused
        assert decision.accepted == oracle_accepts(doc), (doc, decision.codes)


@FUZZ
@given(st.binary(max_size=500) | envelope_docs.map(_dumps_any))
def test_decision_never_accepts_unsealed_bytes(data: bytes) -> None:
    decision = judge_receipt(data, KIT.expected, KIT.keyring, NOW)
    assert not decision.accepted and decision.failures


@FUZZ
@given(st.sampled_from(["payloadType", "payload", "keyid", "sig"]),
       st.sampled_from([envelope.PAYLOAD_ATTEMPT, "", "AA==", GOOD_ENV.payload.decode("latin-1")[:20], "runner-hmac",
                        "orchestrator-1", base64.b64encode(bytes(64)).decode(), base64.b64encode(b"x").decode()])
       | st.text(max_size=30), st.booleans())
def test_decision_envelope_member_swaps(member: str, value: str, second: bool) -> None:
    doc = json.loads(GOOD)
    target = doc["signatures"][0] if member in ("keyid", "sig") else doc
    target[member] = value
    if second:  # the same signature twice, or a second one by another key
        doc["signatures"].append(json.loads(KIT.seal(BASE_DOC, KIT.hmac_key))["signatures"][0])
    data = json.dumps(doc).encode()
    decision = judge_receipt(data, KIT.expected, KIT.keyring, NOW)
    if decision.accepted:
        assert envelope.parse(data) == GOOD_ENV


# --- policy -------------------------------------------------------------------------------------

def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if not isinstance(v, float) or v == v else "nan"
    if isinstance(v, dt.datetime | dt.date):
        return v.isoformat()
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def to_toml(doc: dict[str, Any]) -> str:
    """A small TOML writer: scalars first, then [tables] and [[arrays of tables]]."""
    head, tail = [], []
    for k, v in doc.items():
        if isinstance(v, dict):
            tail.append(f"[{_toml_key(k)}]")
            tail += [f"{_toml_key(kk)} = {_toml_value(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for item in v:
                tail.append(f"[[{_toml_key(k)}]]")
                tail += [f"{_toml_key(kk)} = {_toml_value(vv)}" for kk, vv in item.items()]
        else:
            head.append(f"{_toml_key(k)} = {_toml_value(v)}")
    return "\n".join(head + tail) + "\n"


toml_scalars = (st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
                | st.text(max_size=20))
GOOD_PATHS = st.sampled_from(["ci/**", "**", "*", "ci", "CI/Deploy.yml", "a/**/b", "**/x.yml", "gate.toml", "é",
                              "?", "a/*.yml", "[ab]"])
GOOD_REFS = st.sampled_from(["refs/heads/*", "refs/heads/**", "refs/*", "refs/tags/v*", "refs/heads/main"])
GOOD_IDS = st.sampled_from(["agent-*", "*@agents.example.com", "runner-?", "[!h]*", "*", "hana"])
PATTERNS = st.sampled_from(["", "/", "//", ".", "..", " ", "refs/", "refs//x", "[", "x" * 1100, "\x00", "\n"]) \
    | st.text(max_size=12)
FREEZE = st.fixed_dictionaries({"paths": st.lists(GOOD_PATHS | GOOD_PATHS | PATTERNS, min_size=1, max_size=3)},
                               optional={
    "name": st.sampled_from(["governance", "", "bad name", "x" * 70]),
    "authors": st.lists(GOOD_IDS | GOOD_IDS | PATTERNS, max_size=3),
    "pushers": st.lists(GOOD_IDS | GOOD_IDS | PATTERNS, max_size=3),
    "refs": st.lists(GOOD_REFS | GOOD_REFS | PATTERNS, min_size=1, max_size=3),
    "colour": toml_scalars,
})
POLICIES = st.fixed_dictionaries({}, optional={
    "mode": st.sampled_from(["enforce", "evaluate", "enforce", "evaluate", "Enforce", ""]),
    "freeze": st.lists(FREEZE, max_size=3),
    "refs": st.fixed_dictionaries({}, optional={"delete": st.sampled_from(["allow", "deny", "deny-restricted", "x"]),
                                                "force": st.sampled_from(["allow", "deny", "deny-restricted", "nope"])}),
    "trusted": st.fixed_dictionaries({}, optional={"pushers": st.lists(GOOD_IDS | PATTERNS, max_size=3)}),
    "limits": st.fixed_dictionaries({}, optional={
        "deadline_seconds": st.sampled_from([0, 0.001, 4, 4.0, 600, 600.5, -1, True, "4"]),
        "max_violations_shown": st.sampled_from([0, 1, 50, 10001, True, 1.5])}),
    "extra": toml_scalars,
})
PATHS = st.sampled_from(["ci/deploy.yml", "CI/DEPLOY.YML", "ci./x", "src/a.py", "gate.toml", "a/b/c/x.yml", "",
                         "é/\udce9", "x" * 300]) | st.text(max_size=20)


def _policy_or_config_error(data: bytes) -> Policy | None:
    try:
        plain = validate_bytes(data, "fuzz.toml")
    except GateError as exc:
        assert exc.code == "GATE-CONFIG-POLICY"
        return None
    json.dumps(plain)  # the cache stores it as JSON
    return Policy.from_plain(plain)  # validated input never fails here


@FUZZ
@given(POLICIES, st.lists(PATHS, max_size=4), st.text(max_size=20))
def test_policy_parser_and_matching(doc: dict[str, Any], paths: list[str], who: str) -> None:
    policy = _policy_or_config_error(to_toml(doc).encode("utf-8", "surrogatepass"))
    if policy is None:
        return
    for p in paths:
        norm = normalize_path(p)
        for rule in policy.rules:
            rule.matches_path(norm)
            rule.restricted_identity(who, who, who)
            rule.applies_to_ref("refs/heads/" + p)
    policy.pusher_trusted(who)


@FUZZ
@given(st.binary(max_size=300) | st.text(alphabet=string.printable + "é\x00", max_size=200).map(str.encode))
def test_policy_parser_random_bytes(data: bytes) -> None:
    _policy_or_config_error(data)


@FUZZ
@given(st.dictionaries(st.sampled_from(["mode", "freeze", "refs", "trusted", "limits"]), json_values, max_size=5))
def test_policy_from_plain_raises_only_documented_errors(doc: dict[str, Any]) -> None:
    """The hook's road (a cached plain form): anything else than Key/Type/ValueError would
    escape as GATE-HOOK-INTERNAL instead of GATE-CONFIG-POLICY."""
    with contextlib.suppress(KeyError, TypeError, ValueError):
        Policy.from_plain(doc)


@pytest.mark.parametrize("text", ["a = " + "[" * 2000 + "]" * 2000, "a = " + "{b = " * 2000 + "1" + "}" * 2000])
@pytest.mark.parametrize("which", ["policy", "keyring"])
def test_deeply_nested_toml_is_a_config_error(text: str, which: str) -> None:
    validate = validate_bytes if which == "policy" else validate_keyring_bytes
    with pytest.raises(GateError):
        validate(text.encode(), "deep.toml")


@FUZZ
@given(st.lists(st.sampled_from(["ci", "gate.toml", "a", "Ünï", "x y", "é"]), min_size=1, max_size=4),
       st.lists(st.sampled_from(["upper", "dot", "space", "nfd", "same"]), min_size=1, max_size=4))
def test_frozen_paths_survive_case_and_trailing_dot_variants(segments: list[str], variants: list[str]) -> None:
    import unicodedata

    path = "/".join(segments)
    glob = PathGlob.compile(path)
    variant = []
    for i, seg in enumerate(segments):
        how = variants[i % len(variants)]
        variant.append(seg.upper() if how == "upper" else seg + "." if how == "dot" else seg + " " if how == "space"
                       else unicodedata.normalize("NFD", seg) if how == "nfd" else seg)
    v = "/".join(variant)
    assert normalize_path(normalize_path(v)) == normalize_path(v)
    assert glob.matches(normalize_path(v)), (path, v)
    assert glob.matches(normalize_path(v + "/below"))  # a frozen path freezes what is below it


# --- keyrings -------------------------------------------------------------------------------------

B64_32 = base64.b64encode(bytes(range(32))).decode()
GOOD_TIMES = st.sampled_from([dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2027, 1, 1, tzinfo=dt.UTC),
                              dt.datetime(1, 1, 1, tzinfo=dt.UTC),
                              dt.datetime(9999, 12, 31, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=14)))])
BAD_TIMES = st.sampled_from([dt.datetime(2026, 1, 1), dt.date(2026, 1, 1), "2026-01-01T00:00:00Z", 0]) | toml_scalars
GOOD_ENTRY = st.one_of(
    st.fixed_dictionaries({"id": st.sampled_from(["runner-1", "orch-1", "r", "a.b_c-d"]),
                           "algorithm": st.just("ed25519"), "purpose": st.sampled_from(["receipt", "attempt"]),
                           "public_key": st.just(B64_32)},
                          optional={"not_before": GOOD_TIMES, "not_after": GOOD_TIMES, "revoked": st.booleans()}),
    st.fixed_dictionaries({"id": st.sampled_from(["runner-hmac", "h"]), "algorithm": st.just("hmac-sha256"),
                           "purpose": st.sampled_from(["receipt", "attempt"]),
                           "secret": st.sampled_from([B64_32, base64.b64encode(bytes(48)).decode()])},
                          optional={"not_before": GOOD_TIMES, "not_after": GOOD_TIMES, "revoked": st.booleans()}),
)
BAD_FIELDS: dict[str, Any] = {
    "id": st.sampled_from(["-x", "a" * 65, "a b", "é", ""]) | st.text(max_size=8),
    "algorithm": st.sampled_from(["none", "HS256", "ED25519", "hmac-sha256", "ed25519"]),
    "purpose": st.sampled_from(["both", "", "Receipt"]),
    "public_key": st.sampled_from([B64_32[:-1], B64_32 + "=", base64.b64encode(bytes(31)).decode(), "", B64_32,
                                   base64.b64encode(bytes(64)).decode(), B64_32.replace("A", "-")]),
    "secret": st.sampled_from([base64.b64encode(bytes(16)).decode(), "AA==\n", B64_32]),
    "not_before": BAD_TIMES | GOOD_TIMES, "not_after": BAD_TIMES | GOOD_TIMES,
    "revoked": toml_scalars, "alg": st.just("none"),
}


@st.composite
def key_entries(draw: st.DrawFn) -> dict[str, Any]:
    entry = dict(draw(GOOD_ENTRY))
    for field in draw(st.lists(st.sampled_from(sorted(BAD_FIELDS)), max_size=2, unique=True)):
        if draw(st.booleans()):
            entry.pop(field, None)
        else:
            entry[field] = draw(BAD_FIELDS[field])
    return entry


KEY_ENTRY = key_entries()


@FUZZ
@given(st.lists(KEY_ENTRY, max_size=4), st.booleans())
def test_keyring_parser_raises_only_config_errors(entries: list[dict[str, Any]], stray: bool) -> None:
    doc: dict[str, Any] = {"key": entries} if entries else {}
    if stray:
        doc["version"] = 2
    try:
        plain = validate_keyring_bytes(to_toml(doc).encode(), "fuzz-keyring.toml")
    except GateError as exc:
        assert exc.code == "GATE-CONFIG-KEYRING"
        return
    json.dumps(plain)
    ring = keyring_from_plain(plain)
    for key in ring.values():
        assert key.algorithm in ("ed25519", "hmac-sha256") and key.purpose in ("receipt", "attempt")
        assert len(key.material) == 32 if key.algorithm == "ed25519" else len(key.material) >= 32
        assert key.not_before is None or key.not_after is None or key.not_before < key.not_after


@FUZZ
@given(st.binary(max_size=300) | st.text(alphabet=string.printable, max_size=200).map(str.encode))
def test_keyring_parser_random_bytes(data: bytes) -> None:
    with contextlib.suppress(GateError):
        validate_keyring_bytes(data, "fuzz-keyring.toml")


@FUZZ
@given(st.lists(json_values | st.fixed_dictionaries({
    "id": json_values, "algorithm": st.sampled_from(["ed25519", "hmac-sha256"]) | json_values,
    "purpose": st.sampled_from(["receipt", "attempt"]) | json_values, "material": b64_texts | json_values,
    "not_before": json_values, "not_after": json_values, "revoked": json_values}), max_size=3))
def test_keyring_from_plain_raises_only_documented_errors(entries: list[Any]) -> None:
    with contextlib.suppress(KeyError, TypeError, ValueError):
        keyring_from_plain(entries)


# --- the tree-delta encoding ------------------------------------------------------------------------

records = st.builds(DeltaRecord, st.binary(min_size=1, max_size=6), st.sampled_from([0, 0o100644, 0o120000]),
                    st.sampled_from([0, 0o100755, 0o160000]), st.sampled_from(["0" * 40, "a" * 40]),
                    st.sampled_from(["b" * 40, "0" * 40]), st.sampled_from(["", "c" * 64]),
                    st.sampled_from(["", "d" * 64, "dd"]))


@FUZZ
@given(st.lists(records, max_size=4, unique_by=lambda r: r.path),
       st.lists(records, max_size=4, unique_by=lambda r: r.path))
def test_tree_delta_encoding_is_injective(a: list[DeltaRecord], b: list[DeltaRecord]) -> None:
    if encode_records("sha1", a) == encode_records("sha1", b):
        assert sorted(a, key=lambda r: r.path) == sorted(b, key=lambda r: r.path)
    assert encode_records("sha1", a) != encode_records("sha256", a)


def test_gate_errors_are_the_only_documented_escape() -> None:
    """The exception classes the properties above allow are all GateError subclasses."""
    assert issubclass(GateError, GateError) and issubclass(GateError, GateError)
