"""BRIEF section 7 through real pushes: every attack that comes in through `git push`.

Each test pushes into a bare repository with the gate installed (file://, `conftest.Server`),
expects its specific GATE- code, and checks that a rejection changed neither the refs nor the
ledger. The trusted side (ledger records, receipts) is built with `gatecore.runner` and
`gatecore.keyfiles.generate`, the way `server/demo.py` does; the pusher is chosen with
`REMOTE_USER` (trusted runner account `runner-1`, agent account `agent-1`).

One server is shared by the module (a server install and its base push cost more than most
attacks); every test uses attempt ids and branches of its own and compares the whole ref
map before and after. `Lab` is also used by test_faults.py and test_load.py.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import AGENT, HUMAN, Server, WorkRepo, gate, git

from gatecore import envelope, keyfiles, runner, strictjson
from gatecore.keys import SigningKey
from gatecore.namespaces import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from gatecore.seal import sign

#: Secondary variants of attacks a default test already covers run with GATE_LONG_TESTS=1.
LONG = pytest.mark.skipif(os.environ.get("GATE_LONG_TESTS") != "1", reason="variant: set GATE_LONG_TESTS=1")


def more(*values: Any) -> Any:
    """A parametrize entry that only runs in the long run."""
    return pytest.param(*values, marks=LONG)


RUNNER_USER = "runner-1"
AGENT_USER = "agent-1"
RUNNER = {"REMOTE_USER": RUNNER_USER}
AGENT_PUSH = {"REMOTE_USER": AGENT_USER}
PROMPT = b"Review this change. Reply with JSON: verdict, reasons.\n"
PROMPT_SHA = hashlib.sha256(PROMPT).hexdigest()
VERDICT = json.dumps({"verdict": "pass", "reasons": ["small, tested change"]}).encode()
ZERO = "0" * 40
SUB_COMMIT = "5" * 40  # the pinned commit of the vendor/sub submodule (never fetched)

#: conftest.POLICY, plus .gitmodules and a non-ASCII frozen path.
LAB_POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml", "vendor/sub", ".gitmodules", "docs/café.md"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[trusted]
pushers = ["runner-*"]
"""
GITMODULES = '[submodule "sub"]\n\tpath = vendor/sub\n\turl = https://example.com/sub.git\n'

#: key id -> (algorithm, purpose, extra keyring lines replacing "revoked = false")
KEYS: dict[str, tuple[str, str, str]] = {
    "orch-1": ("ed25519", "attempt", "revoked = false\n"),
    "runner-1": ("ed25519", "receipt", "revoked = false\n"),
    "runner-hmac": ("hmac-sha256", "receipt", "revoked = false\n"),
    "runner-revoked": ("ed25519", "receipt", "revoked = true\n"),
    "runner-expired": ("ed25519", "receipt",
                       "not_before = 2020-01-01T00:00:00Z\nnot_after = 2021-01-01T00:00:00Z\nrevoked = false\n"),
    "runner-future": ("ed25519", "receipt", "not_before = 2999-01-01T00:00:00Z\nrevoked = false\n"),
    "orch-expired": ("ed25519", "attempt",
                     "not_before = 2020-01-01T00:00:00Z\nnot_after = 2021-01-01T00:00:00Z\nrevoked = false\n"),
    "orch-revoked": ("ed25519", "attempt", "revoked = true\n"),
}


def key_material(keys_dir: Path) -> tuple[str, dict[str, SigningKey]]:
    """Fresh keys for KEYS: the keyring text and the signing keys by id."""
    entries, signing = [], {}
    keys_dir.mkdir(parents=True, exist_ok=True)
    for key_id, (alg, purpose, tail) in KEYS.items():
        made = keyfiles.generate(alg, key_id, purpose)
        path = keys_dir / f"{key_id}.key"
        keyfiles.write_private(path, made.keyfile_text)
        signing[key_id] = keyfiles.load_keyfile(path)
        entries.append(made.keyring_entry.replace("revoked = false\n", tail))
    return "\n".join(entries), signing


@contextlib.contextmanager
def pushing_as(user: str) -> Iterator[None]:
    """The trusted side's own `git push` calls (gatecore.runner) run with REMOTE_USER=user."""
    saved = {k: v for k, v in os.environ.items() if k == "REMOTE_USER" or k.startswith("GIT_")}
    for k in saved:
        del os.environ[k]
    os.environ["REMOTE_USER"] = user
    try:
        yield
    finally:
        os.environ.pop("REMOTE_USER", None)
        os.environ.update(saved)


class Lab:
    """A gate-protected server with keys, a base commit on main, and the trusted side's tools."""

    def __init__(self, root: Path, policy: str = LAB_POLICY, extra: tuple[str, ...] = ()) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.keyring_text, self.keys = key_material(root / "keys")
        self.server = Server(root, policy=policy, keyring=self.keyring_text, extra=extra)
        self.work = self.server.work
        self.work.write("README", "hello\n")
        self.work.write("ci/deploy.yml", "deploy: true\n")
        self.work.write("src/app.py", "print('hi')\n")
        self.work.write("vendor/readme", "vendored\n")
        self.work.write(".gitmodules", GITMODULES)
        self.work.write("docs/café.md", "menu\n")
        self.work.git("add", "-A")
        self.work.git("update-index", "--add", "--cacheinfo", f"160000,{SUB_COMMIT},vendor/sub")
        self.work.git("commit", "-q", "-m", "base", identity=HUMAN)
        self.base = self.work.head()
        out = self.server.push("main")
        assert out.returncode == 0, out.stderr
        self.n = 0
        self.receipts = root / "receipts"
        self.pool: list[str] = []

    # --- names -------------------------------------------------------------------------
    def fresh(self, prefix: str = "a") -> str:
        self.n += 1
        return f"{prefix}{self.n}-{os.urandom(3).hex()}"

    def remote(self) -> str:
        return self.server.url

    # --- the ledger ----------------------------------------------------------------------
    def append(self, attempt: str, kind: str, key: str = "orch-1", remote: bool = True,
               **fields: Any) -> runner.PushResult | None:
        with pushing_as(RUNNER_USER):
            _state, result = runner.append_record(self.work.path, attempt, self.keys[key], kind,
                                                  self.remote() if remote else None, **fields)
        return result

    def open(self, attempt: str | None = None, generation: str | None = None, model: str | None = "model-a",
             repository: str = "demo/repo") -> str:
        """Open an attempt on the server (and select its model): returns the attempt id."""
        if attempt is None and generation is None and model == "model-a" and repository == "demo/repo":
            if not self.pool:
                self.open_many(8)
            return self.pool.pop()
        attempt = attempt or self.fresh()
        result = self.append(attempt, "opened", repository=repository, workspace=f"ws-{attempt}",
                             workspace_generation=generation or f"g-{attempt}", prompt_sha256=PROMPT_SHA)
        assert result is not None and result.ok, result
        if model is not None:
            result = self.append(attempt, "model-selected", model_id=model)
            assert result is not None and result.ok, result
        return attempt

    def open_many(self, n: int) -> None:
        """Open n attempts (model-a) with one push of their ledger refs; they go to the pool."""
        made = [self.fresh("p") for _ in range(n)]
        for attempt in made:
            self.append(attempt, "opened", remote=False, repository="demo/repo", workspace=f"ws-{attempt}",
                        workspace_generation=f"g-{attempt}", prompt_sha256=PROMPT_SHA)
            self.append(attempt, "model-selected", remote=False, model_id="model-a")
        out = self.server.push(*(f"{ATTEMPTS_PREFIX}{a}:{ATTEMPTS_PREFIX}{a}" for a in made), pusher_env=RUNNER)
        assert out.returncode == 0, out.stderr
        self.pool.extend(made)

    def ledger_tip(self, attempt: str) -> str | None:
        return self.server.ref(ATTEMPTS_PREFIX + attempt)

    # --- changes -------------------------------------------------------------------------
    def change(self, name: str, files: dict[str, str] | None = None, identity: tuple[str, str] = AGENT,
               start: str | None = None, edit: Callable[[WorkRepo], None] | None = None) -> str:
        """A commit by `identity` on a new local branch `name` from `start` (default: the base)."""
        self.work.git("checkout", "-q", "-f", "-B", name, start or self.base)
        self.work.git("clean", "-q", "-fdx")
        if edit is not None:
            edit(self.work)
        for rel, text in (files if files is not None else {f"src/{name}.py": f"print({name!r})\n"}).items():
            self.work.write(rel, text)
        head = self.work.commit(f"change {name}", identity=identity)
        self.work.git("checkout", "-q", "--detach")
        return head

    # --- receipts ------------------------------------------------------------------------
    def record(self, attempt: str, head: str, base: str | None = None, key: str = "runner-1",
               old: str | None = None, ttl: int = 3600, output: bytes = VERDICT) -> Path:
        out = self.receipts / f"{attempt}-{os.urandom(4).hex()}.json"
        with pushing_as(RUNNER_USER):
            return runner.record_review(self.work.path, attempt, base or self.base, head, output,
                                        self.keys[key], out, self.remote(), old, ttl)

    def push_review(self, attempt: str, receipt_file: Path) -> runner.PushResult:
        with pushing_as(RUNNER_USER):
            return runner.push_review(self.work.path, attempt, receipt_file, self.remote())

    def receipt_doc(self, receipt_file: Path) -> dict[str, Any]:
        doc = strictjson.loads(envelope.parse(receipt_file.read_bytes()).payload)
        assert isinstance(doc, dict)
        return doc

    def seal(self, doc: dict[str, Any], key: str = "runner-1", payload_type: str = envelope.PAYLOAD_RECEIPT,
             payload: bytes | None = None) -> bytes:
        k = self.keys[key]
        if envelope.PURPOSE_OF_PAYLOAD.get(payload_type) != k.purpose:  # attacks seal across purposes
            k = replace(k, purpose=envelope.PURPOSE_OF_PAYLOAD[payload_type])
        return envelope.encode(sign(k, payload_type, strictjson.dumps(doc) if payload is None else payload))

    def receipt_commit(self, attempt: str, data: bytes, mode: str = "100644", name: str = "receipt.json",
                       receipt_ref: str | None = None) -> str:
        """A receipt commit (tree: exactly `name` holding `data`) on top of the server's receipt ref."""
        import pygit2

        receipt_ref = receipt_ref or RECEIPTS_PREFIX + attempt
        repo = pygit2.Repository(str(self.work.path))
        parent = self.server.ref(receipt_ref)
        if parent is not None and parent not in repo:
            git(self.work.path, "fetch", "-q", self.remote(), f"+{receipt_ref}:{receipt_ref}")
        builder = repo.TreeBuilder()
        builder.insert(name, repo.create_blob(data), int(mode, 8))
        sig = pygit2.Signature("gate ledger", "ledger@gate.invalid")
        return str(repo.create_commit(None, sig, sig, f"gate receipt {attempt}\n", builder.write(),
                                      [] if parent is None else [pygit2.Oid(hex=parent)]))

    def push_receipt_bytes(self, attempt: str, data: bytes, head: str, pusher: str = RUNNER_USER,
                           review_ref: str | None = None, receipt_ref: str | None = None,
                           mode: str = "100644", name: str = "receipt.json") -> subprocess.CompletedProcess[str]:
        """Like runner.push_review, for bytes push_review would refuse to send: one atomic push
        of `head` to the review ref and a receipt commit holding `data` to the receipt ref."""
        review_ref = review_ref or REVIEW_PREFIX + attempt
        receipt_ref = receipt_ref or RECEIPTS_PREFIX + attempt
        commit = self.receipt_commit(attempt, data, mode, name, receipt_ref)
        return self.server.push(f"+{head}:{review_ref}", f"{commit}:{receipt_ref}",
                                pusher_env={"REMOTE_USER": pusher}, extra=("--atomic",))

    def good_doc(self, attempt: str, head: str, base: str | None = None, **changes: Any) -> dict[str, Any]:
        """The receipt the runner would seal for base..head now (then `changes`, None drops a field)."""
        path = self.record(attempt, head, base)
        doc = self.receipt_doc(path)
        path.unlink()
        doc.update(changes)
        return {k: v for k, v in doc.items() if v is not None}

    # --- state ---------------------------------------------------------------------------
    def snapshot(self) -> dict[str, str]:
        return self.server.refs()


_REJECTED_LINE = re.compile(r"gate: push rejected: (GATE-[A-Z0-9-]+):")


def codes_of(out: subprocess.CompletedProcess[str] | runner.PushResult) -> set[str]:
    """The codes the gate itself reported: its gate-json lines and its 'push rejected: CODE:' lines
    (not any GATE- text elsewhere, such as source lines quoted in a traceback)."""
    text = out.stdout + out.stderr if isinstance(out, subprocess.CompletedProcess) else out.output
    codes = set()
    for raw in text.splitlines():
        line = raw.removeprefix("remote: ").removeprefix("GL-HOOK-ERR: ").rstrip()
        if line.startswith("gate-json: "):
            doc = json.loads(line[len("gate-json: "):])
            if "code" in doc:
                codes.add(doc["code"])
        elif m := _REJECTED_LINE.match(line):
            codes.add(m.group(1))
    return codes


def declined(out: subprocess.CompletedProcess[str]) -> bool:
    """git reports that the pre-receive hook refused the push (whatever the hook printed)."""
    return out.returncode != 0 and "pre-receive hook declined" in out.stdout + out.stderr


def refused(out: subprocess.CompletedProcess[str] | runner.PushResult, code: str) -> bool:
    """A push the hook declined, naming `code`."""
    if isinstance(out, runner.PushResult):
        return not out.ok and code in codes_of(out) and "pre-receive hook declined" in out.output
    return declined(out) and code in codes_of(out)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("attacks"))


@pytest.fixture(scope="module")
def victim(lab: Lab) -> dict[str, Any]:
    """One open attempt (model-a) with an agent change reviewed by nobody yet: attacks on its
    review ref are all rejected, so they can share it."""
    attempt = lab.open()
    head = lab.change(f"victim-{attempt}")
    return {"attempt": attempt, "head": head, "doc": lab.good_doc(attempt, head)}


def assert_refused(lab: Lab, before: dict[str, str], out: subprocess.CompletedProcess[str] | runner.PushResult,
                   *codes: str) -> None:
    """The push was declined by the hook naming every code, and no ref (ledger included) moved."""
    for code in codes:
        assert refused(out, code), (code, out)
    assert lab.snapshot() == before


# --- the flow works (so that every rejection below is meaningful) ------------------------

def test_a_fresh_bound_receipt_is_accepted(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"fresh-{attempt}")
    result = lab.push_review(attempt, lab.record(attempt, head))
    assert result.ok, result.output
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head
    assert lab.server.audit()[-1]["attempt_ids"] == [attempt]


def test_the_bare_crafted_receipt_path_accepts_a_good_receipt(lab: Lab) -> None:
    """push_receipt_bytes (used for malformed receipts below) accepts what the runner seals."""
    attempt = lab.open()
    head = lab.change(f"crafted-{attempt}")
    out = lab.push_receipt_bytes(attempt, lab.seal(lab.good_doc(attempt, head)), head)
    assert out.returncode == 0, out.stderr
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head


# --- stale, swapped and mis-bound receipts -----------------------------------------------

def test_the_incident_stale_receipt_after_failover_is_rejected(lab: Lab) -> None:
    """Model A scores, the attempt fails over to model B, the retry pushes A's receipt."""
    attempt = lab.open(model="model-a")
    head = lab.change(f"incident-{attempt}")
    stale = lab.record(attempt, head)
    assert lab.append(attempt, "failover", model_id="model-b", note="model-a offline").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    out = lab.push_review(attempt, stale)
    assert_refused(lab, before, out, "GATE-BIND-MODEL", "GATE-BIND-LEDGER")
    assert "field=model_id" in out.output
    fresh = lab.push_review(attempt, lab.record(attempt, head))
    assert fresh.ok, fresh.output


def test_receipt_of_a_superseded_attempt_is_rejected(lab: Lab) -> None:
    """A retry opens a new attempt for the same change; the old attempt's receipt is pushed for it."""
    old = lab.open()
    head = lab.change(f"superseded-{old}")
    old_receipt = lab.record(old, head).read_bytes()
    new = lab.open()
    before = lab.snapshot()
    out = lab.push_receipt_bytes(new, old_receipt, head)
    assert_refused(lab, before, out, "GATE-BIND-ATTEMPT", "GATE-BIND-GENERATION", "GATE-BIND-REF",
                   "GATE-BIND-LEDGER")


@pytest.mark.parametrize("field,value,code", [
    ("model_id", "model-b", "GATE-BIND-MODEL"),
    ("workspace_generation", "g-rolled-back", "GATE-BIND-GENERATION"),
    more("prompt_sha256", "e" * 64, "GATE-BIND-PROMPT"),
    more("diff_sha256", "d" * 64, "GATE-BIND-DIFF"),
    ("repository", "other/repo", "GATE-BIND-REPOSITORY"),
    ("ref", "refs/heads/review/runner/someone-else", "GATE-BIND-REF"),
    ("old_commit", "c" * 40, "GATE-BIND-OLD-COMMIT"),
    ("ledger_record", None, "GATE-BIND-LEDGER"),
    ("base_commit", "9" * 40, "GATE-BIND-BASE-COMMIT"),
])
def test_validly_sealed_receipt_with_one_field_off_is_rejected(lab: Lab, victim: dict[str, Any], field: str,
                                                               value: Any, code: str) -> None:
    doc = {**victim["doc"], field: value}
    doc = {k: v for k, v in doc.items() if v is not None}
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(doc), victim["head"])
    assert_refused(lab, before, out, code)


def test_receipt_for_another_repository_issued_by_its_runner_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """The runner of another repository (same keys) binds its own repository id."""
    attempt = victim["attempt"]
    path = lab.receipts / f"other-repo-{attempt}.json"
    with pushing_as(RUNNER_USER):
        runner.record_review(lab.work.path, attempt, lab.base, victim["head"], VERDICT, lab.keys["runner-1"],
                             path, lab.remote(), None, 3600, repository_id="other/repo")
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, path), "GATE-BIND-REPOSITORY")


def test_diff_changed_after_scoring_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """The receipt scored one commit; the review ref is pushed to an amended one."""
    amended = lab.change(f"amended-{victim['attempt']}", {"src/sneak.py": "import os\n"},
                         start=victim["head"])
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), amended)
    assert_refused(lab, before, out, "GATE-BIND-DIFF", "GATE-BIND-NEW-COMMIT", "GATE-BIND-NEW-TREE")


def test_receipt_for_an_old_commit_of_the_ref_is_rejected(lab: Lab) -> None:
    """Receipt issued when the review ref was absent; by push time it points elsewhere."""
    attempt = lab.open()
    first = lab.change(f"old1-{attempt}")
    second = lab.change(f"old2-{attempt}", {"src/two.py": "2\n"}, start=first)
    early = lab.record(attempt, second)  # old_commit: zeros (the ref does not exist yet)
    assert lab.push_review(attempt, lab.record(attempt, first)).ok
    before = lab.snapshot()
    out = lab.push_receipt_bytes(attempt, early.read_bytes(), second)
    assert_refused(lab, before, out, "GATE-BIND-OLD-COMMIT")


def test_receipt_replayed_after_the_ref_moved_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    one = lab.change(f"replay1-{attempt}")
    two = lab.change(f"replay2-{attempt}", {"src/two.py": "2\n"}, start=one)
    r1 = lab.record(attempt, one)
    assert lab.push_review(attempt, r1).ok
    assert lab.push_review(attempt, lab.record(attempt, two)).ok
    before = lab.snapshot()
    # The client's own lease refuses to send it; a raw push reaches the gate.
    assert not lab.push_review(attempt, r1).ok
    out = lab.push_receipt_bytes(attempt, r1.read_bytes(), one)
    assert_refused(lab, before, out, "GATE-BIND-OLD-COMMIT")


def test_receipt_replayed_after_the_review_ref_was_deleted_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    one = lab.change(f"redo1-{attempt}")
    two = lab.change(f"redo2-{attempt}", {"src/two.py": "2\n"}, start=one)
    r1 = lab.record(attempt, one)
    assert lab.push_review(attempt, r1).ok
    assert lab.push_review(attempt, lab.record(attempt, two)).ok  # a later review supersedes r1
    assert lab.server.push(f":{REVIEW_PREFIX}{attempt}", pusher_env=RUNNER).returncode == 0  # cleanup
    before = lab.snapshot()
    out = lab.push_review(attempt, r1)  # r1 says old_commit = zeros: true again
    assert not out.ok
    assert codes_of(out) & {"GATE-RECEIPT-REUSED"}
    assert lab.snapshot() == before


# --- verdicts and reasons through a push ----------------------------------------------

@pytest.mark.parametrize("changes,code", [
    ({"verdict": "PASS"}, "GATE-RECEIPT-VERDICT"),
    ({"reasons": ["  ", "\t\n"]}, "GATE-RECEIPT-REASONS"),
    more({"attempt_id": "../../etc/passwd"}, "GATE-RECEIPT-FIELD"),
    ({"approved_by": "admin"}, "GATE-RECEIPT-FIELD"),
])
def test_receipt_content_attacks_are_rejected(lab: Lab, victim: dict[str, Any], changes: dict[str, Any],
                                              code: str) -> None:
    doc = {k: v for k, v in {**victim["doc"], **changes}.items() if v is not None}
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], lab.seal(doc), victim["head"]), code)


def test_a_fail_verdict_from_the_runner_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    path = lab.record(victim["attempt"], victim["head"],
                      output=json.dumps({"verdict": "fail", "reasons": ["breaks the build"]}).encode())
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(victim["attempt"], path), "GATE-VERDICT-FAIL")


@pytest.mark.parametrize("mangle,code", [
    (lambda t: t[:-1] + ',"verdict":"fail"}', "GATE-RECEIPT-MALFORMED"),  # duplicate key
    pytest.param(lambda t: t.replace('"version":1', '"version":1.0'), "GATE-RECEIPT-MALFORMED", marks=LONG),
    (lambda t: t.replace('"version":1', '"version":NaN'), "GATE-RECEIPT-MALFORMED"),  # also 1e400: offline
], ids=["duplicate-key", "float", "nan"])
def test_json_traps_in_a_sealed_payload_are_rejected(lab: Lab, victim: dict[str, Any],
                                                     mangle: Callable[[str], str], code: str) -> None:
    text = strictjson.dumps(victim["doc"]).decode()
    data = lab.seal({}, payload=mangle(text).encode())
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], data, victim["head"]), code)


# --- seals -------------------------------------------------------------------------------

def _envelope_doc(data: bytes) -> dict[str, Any]:
    doc = json.loads(data)
    assert isinstance(doc, dict)
    return doc


def _raw(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


def _substituted(lab: Lab, doc: dict[str, Any]) -> bytes:
    env = _envelope_doc(lab.seal(doc))
    env["payload"] = base64.b64encode(strictjson.dumps({**doc, "model_id": "model-z"})).decode()
    return _raw(env)


def _sig(lab: Lab, doc: dict[str, Any], key: str, fn: Callable[[bytes], bytes]) -> bytes:
    env = _envelope_doc(lab.seal(doc, key))
    env["signatures"][0]["sig"] = base64.b64encode(fn(base64.b64decode(env["signatures"][0]["sig"]))).decode()
    return _raw(env)


def _stranger(lab: Lab, doc: dict[str, Any], key_id: str) -> bytes:
    from gatecore.keys import ephemeral_pair

    priv, _pub = ephemeral_pair("ed25519", key_id, "receipt")
    return envelope.encode(sign(priv, envelope.PAYLOAD_RECEIPT, strictjson.dumps(doc)))


def _alg_confusion(lab: Lab, doc: dict[str, Any]) -> bytes:
    """HMAC-SHA256 keyed with runner-1's Ed25519 public key (read from the server keyring)."""
    import tomllib

    ring = tomllib.loads(lab.keyring_text)
    pub = next(k for k in ring["key"] if k["id"] == "runner-1")["public_key"]
    key = SigningKey("runner-1", "hmac-sha256", "receipt", base64.b64decode(pub))
    return envelope.encode(sign(key, envelope.PAYLOAD_RECEIPT, strictjson.dumps(doc)))


def _with(lab: Lab, doc: dict[str, Any], where: str, **extra: Any) -> bytes:
    env = _envelope_doc(lab.seal(doc))
    (env if where == "top" else env["signatures"][0]).update(extra)
    return _raw(env)


SEAL_ATTACKS: dict[str, tuple[Callable[[Lab, dict[str, Any]], bytes], tuple[str, ...]]] = {
    "substitution": (_substituted, ("GATE-SEAL-BAD-SIGNATURE",)),
    "empty-sig": (lambda lab, d: _sig(lab, d, "runner-1", lambda s: b""), ("GATE-SEAL-BAD-SIGNATURE",)),
    "truncated-hmac-tag": (lambda lab, d: _sig(lab, d, "runner-hmac", lambda s: s[:16]),
                           ("GATE-SEAL-BAD-SIGNATURE",)),
    "unsealed-bare-payload": (lambda lab, d: strictjson.dumps(d), ("GATE-SEAL-MALFORMED",)),
    "wrong-key-trusted-id": (lambda lab, d: _stranger(lab, d, "runner-1"), ("GATE-SEAL-BAD-SIGNATURE",)),
    "unknown-key-id": (lambda lab, d: _stranger(lab, d, "runner-9"), ("GATE-SEAL-UNKNOWN-KEY",)),
    "alg-confusion": (_alg_confusion, ("GATE-SEAL-BAD-SIGNATURE",)),
    "smuggled-alg-in-signature": (lambda lab, d: _with(lab, d, "sig", alg="none"), ("GATE-SEAL-MALFORMED",)),
    "expired-key": (lambda lab, d: lab.seal(d, "runner-expired"), ("GATE-SEAL-KEY-EXPIRED",)),
    "not-yet-valid-key": (lambda lab, d: lab.seal(d, "runner-future"), ("GATE-SEAL-KEY-EXPIRED",)),
    "revoked-key": (lambda lab, d: lab.seal(d, "runner-revoked"), ("GATE-SEAL-KEY-REVOKED",)),
    "attempt-key-seals-receipt": (lambda lab, d: lab.seal(d, "orch-1"), ("GATE-SEAL-KEY-PURPOSE",)),
    "receipt-as-attempt-type": (lambda lab, d: lab.seal(d, "orch-1", envelope.PAYLOAD_ATTEMPT),
                                ("GATE-SEAL-PAYLOAD-TYPE",)),
    "expired-receipt": (lambda lab, d: lab.seal({**d, "issued_at": int(time.time()) - 7200,
                                                "expires_at": int(time.time()) - 3600}),
                        ("GATE-RECEIPT-EXPIRED",)),
    "receipt-from-the-future": (lambda lab, d: lab.seal({**d, "issued_at": int(time.time()) + 3600,
                                                        "expires_at": int(time.time()) + 7200}),
                                ("GATE-RECEIPT-NOT-YET-VALID",)),
    "padded-past-the-cap": (lambda lab, d: lab.seal(d) + b" " * 70000, ("GATE-RECEIPT-TOO-LARGE",)),
}


SEAL_VARIANTS = ("smuggled-alg-in-signature", "not-yet-valid-key", "receipt-from-the-future", "padded-past-the-cap",
                 "attempt-key-seals-receipt")


@pytest.mark.parametrize("name", [more(n) if n in SEAL_VARIANTS else n for n in SEAL_ATTACKS])
def test_seal_and_validity_attacks_are_rejected(lab: Lab, victim: dict[str, Any], name: str) -> None:
    build, codes = SEAL_ATTACKS[name]
    data = build(lab, victim["doc"])
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], data, victim["head"]), *codes)


def test_a_huge_receipt_blob_is_rejected_by_size_before_reading(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], b"{" + b" " * (8 << 20) + b"}", victim["head"])
    assert_refused(lab, before, out, "GATE-RECEIPT-TOO-LARGE")


def test_an_attempt_record_pushed_as_a_receipt_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """Payload type confusion: the attempt's own (validly sealed) ledger record as receipt.json."""
    tip = lab.ledger_tip(victim["attempt"])
    record = git(lab.work.path, "show", f"{tip}:record.json").stdout.encode()
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], record, victim["head"])
    assert_refused(lab, before, out, "GATE-SEAL-PAYLOAD-TYPE")


@pytest.mark.parametrize("mode,name", [("120000", "receipt.json"), more("100644", "Receipt.json")])
def test_receipt_commit_of_the_wrong_shape_is_rejected(lab: Lab, victim: dict[str, Any], mode: str,
                                                       name: str) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], mode=mode, name=name)
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


# --- missing pieces and ledger states -------------------------------------------------------

def test_review_ref_without_a_receipt_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    out = lab.server.push(f"{victim['head']}:{REVIEW_PREFIX}{victim['attempt']}", pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-RECEIPT-MISSING")


def test_receipt_ref_without_its_review_ref_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    commit = lab.receipt_commit(victim["attempt"], lab.seal(victim["doc"]))
    before = lab.snapshot()
    out = lab.server.push(f"{commit}:{RECEIPTS_PREFIX}{victim['attempt']}", pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


def test_review_for_an_attempt_without_a_ledger_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    doc = {**victim["doc"], "attempt_id": "never-opened", "ref": REVIEW_PREFIX + "never-opened"}
    out = lab.push_receipt_bytes("never-opened", lab.seal(doc), victim["head"])
    assert_refused(lab, before, out, "GATE-LEDGER-MISSING")


def test_review_before_a_model_is_on_record_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    attempt = lab.open(model=None)
    doc = {**victim["doc"], "attempt_id": attempt, "ref": REVIEW_PREFIX + attempt}
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(attempt, lab.seal(doc), victim["head"]),
                   "GATE-LEDGER-NO-MODEL")


def test_review_of_a_closed_attempt_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"closed-{attempt}")
    receipt = lab.record(attempt, head)
    assert lab.append(attempt, "closed", note="gave up").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, receipt), "GATE-LEDGER-CLOSED")


# --- who may push the reserved namespaces ---------------------------------------------------

@pytest.mark.parametrize("pusher", [AGENT_USER, more("hana")])
def test_only_the_runner_may_push_a_review_even_with_a_valid_receipt(lab: Lab, victim: dict[str, Any],
                                                                     pusher: str) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], pusher=pusher)
    assert_refused(lab, before, out, "GATE-REVIEW-PUSHER")


@pytest.mark.parametrize("refspec_kind", ["ledger-create", more("ledger-append"), "ledger-delete", "receipt",
                                          more("review-delete"), "other-gate-ref"])
def test_agent_pushes_to_the_reserved_namespaces_are_rejected(lab: Lab, victim: dict[str, Any],
                                                              refspec_kind: str) -> None:
    attempt = victim["attempt"]
    tip = lab.ledger_tip(attempt)
    forged = lab.change(f"forged-{refspec_kind}", {"record.json": "{}\n"}, start=tip)
    refspec, code = {
        "ledger-create": (f"{forged}:{ATTEMPTS_PREFIX}agent-made", "GATE-LEDGER-PUSHER"),
        "ledger-append": (f"{forged}:{ATTEMPTS_PREFIX}{attempt}", "GATE-LEDGER-PUSHER"),
        "ledger-delete": (f":{ATTEMPTS_PREFIX}{attempt}", "GATE-LEDGER-PUSHER"),
        "receipt": (f"{forged}:{RECEIPTS_PREFIX}{attempt}", "GATE-REVIEW-PUSHER"),
        "review-delete": (f":{REVIEW_PREFIX}{attempt}", "GATE-REVIEW-PUSHER"),
        "other-gate-ref": (f"{forged}:refs/gate/policy", "GATE-REF-RESERVED"),
    }[refspec_kind]
    if refspec_kind == "review-delete":  # give it something to delete
        fresh = lab.open()
        head = lab.change(f"to-delete-{fresh}")
        assert lab.push_review(fresh, lab.record(fresh, head)).ok
        refspec = f":{REVIEW_PREFIX}{fresh}"
    before = lab.snapshot()
    out = lab.server.push(refspec, pusher_env=AGENT_PUSH)
    assert_refused(lab, before, out, code)


def test_runner_cannot_launder_an_agent_frozen_write_through_a_review_ref(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"launder-{attempt}", {"ci/deploy.yml": "deploy: skip-review\n"})
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert_refused(lab, before, out, "GATE-FROZEN-PATH")


# --- the attempt ledger ---------------------------------------------------------------------

def _ledger_state(lab: Lab, attempt: str) -> Any:
    from gatecore.gitrepo import GitRepo

    return runner.attempt_state(GitRepo.at(lab.work.path), attempt)


def _record_doc(lab: Lab, attempt: str, kind: str, **fields: Any) -> dict[str, Any]:
    """The next record of `attempt`'s chain as the orchestrator would write it (then `fields`)."""
    state = _ledger_state(lab, attempt)
    doc: dict[str, Any] = {"version": 1, "attempt_id": attempt, "seq": 0 if state is None else state.seq + 1,
                           "kind": kind, "prev": None if state is None else state.head, "repository": "demo/repo",
                           "time": int(time.time())}
    if kind == "opened":
        doc.update(workspace="ws-x", workspace_generation=f"g-{os.urandom(4).hex()}", prompt_sha256=PROMPT_SHA)
    if kind in ("model-selected", "failover"):
        doc["model_id"] = "model-b"
    doc.update(fields)
    return {k: v for k, v in doc.items() if v is not None}


def _ledger_commit(lab: Lab, data: bytes, parent: str | None, files: dict[str, tuple[int, bytes]] | None = None,
                   parents: list[str] | None = None) -> str:
    """A ledger commit holding record.json = data (or exactly `files`), on `parent`."""
    import pygit2

    repo = pygit2.Repository(str(lab.work.path))
    builder = repo.TreeBuilder()
    for name, (mode, content) in (files or {"record.json": (0o100644, data)}).items():
        builder.insert(name, repo.create_blob(content), mode)
    sig = pygit2.Signature("gate ledger", "ledger@gate.invalid")
    ps = parents if parents is not None else ([] if parent is None else [parent])
    return str(repo.create_commit(None, sig, sig, "gate attempt\n", builder.write(), [pygit2.Oid(hex=p) for p in ps]))


def _push_ledger(lab: Lab, commit: str, attempt: str, force: bool = False,
                 pusher: dict[str, str] = RUNNER) -> subprocess.CompletedProcess[str]:
    return lab.server.push(f"{'+' if force else ''}{commit}:{ATTEMPTS_PREFIX}{attempt}", pusher_env=pusher)


def _append_raw(lab: Lab, attempt: str, doc: dict[str, Any], key: str = "orch-1",
                payload_type: str = envelope.PAYLOAD_ATTEMPT) -> subprocess.CompletedProcess[str]:
    return _push_ledger(lab, _ledger_commit(lab, lab.seal(doc, key, payload_type), lab.ledger_tip(attempt)), attempt)


def test_ledger_rollback_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    first = git(lab.work.path, "rev-parse", f"{lab.ledger_tip(attempt)}~1").stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, first, attempt, force=True), "GATE-LEDGER-REWRITE")


def test_ledger_rewrite_to_a_parallel_chain_is_rejected(lab: Lab) -> None:
    """A sealed chain of its own (same attempt id) replacing the server's chain."""
    attempt = lab.open()
    doc = _record_doc(lab, attempt, "opened", seq=0, prev=None)
    root = _ledger_commit(lab, lab.seal(doc, "orch-1", envelope.PAYLOAD_ATTEMPT), None)
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, root, attempt, force=True), "GATE-LEDGER-REWRITE")


def test_ledger_deletion_is_rejected_even_for_the_runner(lab: Lab) -> None:
    attempt = lab.open()
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f":{ATTEMPTS_PREFIX}{attempt}", pusher_env=RUNNER),
                   "GATE-LEDGER-DELETE")


def test_ledger_record_for_another_attempt_id_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    # An append whose payload names another attempt.
    doc = _record_doc(lab, attempt, "failover", attempt_id="someone-else")
    before = lab.snapshot()
    assert_refused(lab, before, _append_raw(lab, attempt, doc), "GATE-LEDGER-ATTEMPT")
    # A whole chain opened for attempt X, pushed to attempt Y's ref.
    other = lab.fresh("x")
    lab.append(other, "opened", remote=False, repository="demo/repo", workspace="ws", workspace_generation=f"g-{other}",
               prompt_sha256=PROMPT_SHA)
    tip = git(lab.work.path, "rev-parse", ATTEMPTS_PREFIX + other).stdout.strip()
    assert_refused(lab, before, _push_ledger(lab, tip, "y" + other), "GATE-LEDGER-ATTEMPT")


def test_ledger_for_another_repository_is_rejected(lab: Lab) -> None:
    attempt = lab.fresh()
    before = lab.snapshot()
    out = lab.append(attempt, "opened", repository="other/repo", workspace="ws", workspace_generation=f"g-{attempt}",
                     prompt_sha256=PROMPT_SHA)
    assert out is not None
    assert_refused(lab, before, out, "GATE-LEDGER-ATTEMPT")


@pytest.mark.parametrize("key,payload_type,code", [
    ("runner-1", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-PURPOSE"),  # forged with a receipt-purpose key
    more("runner-hmac", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-PURPOSE"),
    more("orch-1", envelope.PAYLOAD_RECEIPT, "GATE-SEAL-PAYLOAD-TYPE"),  # a receipt-typed envelope as a record
    ("orch-expired", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-EXPIRED"),
    ("orch-revoked", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-REVOKED"),
])
def test_forged_or_mis_sealed_ledger_records_are_rejected(lab: Lab, key: str, payload_type: str, code: str) -> None:
    attempt = lab.open()
    before = lab.snapshot()
    assert_refused(lab, before, _append_raw(lab, attempt, _record_doc(lab, attempt, "failover"), key, payload_type),
                   code)


def test_a_receipt_pushed_as_a_ledger_record_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """Payload type confusion the other way: a validly sealed receipt as record.json."""
    attempt = lab.open()
    before = lab.snapshot()
    commit = _ledger_commit(lab, lab.seal(victim["doc"]), lab.ledger_tip(attempt))
    out = _push_ledger(lab, commit, attempt)
    assert_refused(lab, before, out, "GATE-SEAL-PAYLOAD-TYPE", "GATE-SEAL-KEY-PURPOSE")


def test_ledger_record_with_a_bad_seal_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    env = _envelope_doc(lab.seal(_record_doc(lab, attempt, "failover"), "orch-1", envelope.PAYLOAD_ATTEMPT))
    env["payload"] = base64.b64encode(strictjson.dumps(_record_doc(lab, attempt, "closed"))).decode()
    before = lab.snapshot()
    out = _push_ledger(lab, _ledger_commit(lab, _raw(env), lab.ledger_tip(attempt)), attempt)
    assert_refused(lab, before, out, "GATE-SEAL-BAD-SIGNATURE")


def test_generation_reuse_by_a_second_attempt_is_rejected(lab: Lab) -> None:
    first = lab.open(lab.fresh(), generation=None)
    gen = _ledger_state(lab, first).workspace_generation
    before = lab.snapshot()
    second = lab.fresh()
    out = lab.append(second, "opened", repository="demo/repo", workspace="ws-again", workspace_generation=gen,
                     prompt_sha256=PROMPT_SHA)
    assert out is not None
    assert_refused(lab, before, out, "GATE-LEDGER-GENERATION-REUSED")


def test_generation_reuse_within_one_push_is_rejected(lab: Lab) -> None:
    gen = f"g-twice-{os.urandom(3).hex()}"
    made = [lab.fresh("twin") for _ in range(2)]
    for attempt in made:
        lab.append(attempt, "opened", remote=False, repository="demo/repo", workspace="ws", workspace_generation=gen,
                   prompt_sha256=PROMPT_SHA)
    before = lab.snapshot()
    out = lab.server.push(*(f"{ATTEMPTS_PREFIX}{a}:{ATTEMPTS_PREFIX}{a}" for a in made), pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-LEDGER-GENERATION-REUSED")


@pytest.mark.parametrize("kind,fields", [
    ("model-selected", {}),  # the model is already selected: must be a failover
    more("failover", {"model_id": "model-a"}),  # a failover to the model on record
    more("closed", {"seq": 5}),  # out of order
    ("closed", {"prev": "0" * 64}),  # does not name its predecessor (re-parented)
])
def test_out_of_sequence_ledger_records_are_rejected(lab: Lab, kind: str, fields: dict[str, Any]) -> None:
    attempt = lab.open()
    doc = _record_doc(lab, attempt, kind, **fields)
    if kind == "opened":
        doc.update(prev=_ledger_state(lab, attempt).head)
    before = lab.snapshot()
    out = _append_raw(lab, attempt, doc)
    assert_refused(lab, before, out, "GATE-LEDGER-SEQUENCE" if kind != "opened" else "GATE-LEDGER-RECORD")


def test_nothing_follows_a_closed_record(lab: Lab) -> None:
    attempt = lab.open()
    assert lab.append(attempt, "closed").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    assert_refused(lab, before, _append_raw(lab, attempt, _record_doc(lab, attempt, "failover")),
                   "GATE-LEDGER-SEQUENCE")


def test_a_chain_that_does_not_start_with_opened_is_rejected(lab: Lab) -> None:
    attempt = lab.fresh()
    doc = {"version": 1, "attempt_id": attempt, "seq": 1, "kind": "model-selected", "prev": "a" * 64,
           "repository": "demo/repo", "time": int(time.time()), "model_id": "model-a"}
    before = lab.snapshot()
    out = _push_ledger(lab, _ledger_commit(lab, lab.seal(doc, "orch-1", envelope.PAYLOAD_ATTEMPT), None), attempt)
    assert_refused(lab, before, out, "GATE-LEDGER-SEQUENCE")


@pytest.mark.parametrize("shape", ["two-files", more("symlink"), "merge", more("tree-target"), more("oversize")])
def test_ledger_commits_of_the_wrong_shape_are_rejected(lab: Lab, shape: str) -> None:
    attempt = lab.open()
    tip = lab.ledger_tip(attempt)
    assert tip is not None
    data = lab.seal(_record_doc(lab, attempt, "failover"), "orch-1", envelope.PAYLOAD_ATTEMPT)
    code = "GATE-LEDGER-RECORD"
    if shape == "two-files":
        commit = _ledger_commit(lab, data, tip, {"record.json": (0o100644, data), "extra": (0o100644, b"x")})
    elif shape == "symlink":
        commit = _ledger_commit(lab, data, tip, {"record.json": (0o120000, b"../../etc/passwd")})
    elif shape == "wrong-name":
        commit = _ledger_commit(lab, data, tip, {"RECORD.json": (0o100644, data)})
    elif shape == "merge":
        commit = _ledger_commit(lab, data, tip, parents=[tip, lab.base])
    elif shape == "oversize":
        commit = _ledger_commit(lab, data + b" " * 70000, tip)
        code = "GATE-RECEIPT-TOO-LARGE"
    else:
        commit = git(lab.work.path, "rev-parse", f"{lab.base}^{{tree}}").stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, commit, attempt, force=shape == "tree-target"), code)


def test_a_ledger_ref_name_that_is_not_an_attempt_id_is_rejected(lab: Lab) -> None:
    attempt = lab.fresh()
    lab.append(attempt, "opened", remote=False, repository="demo/repo", workspace="ws",
               workspace_generation=f"g-{attempt}", prompt_sha256=PROMPT_SHA)
    tip = git(lab.work.path, "rev-parse", ATTEMPTS_PREFIX + attempt).stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, tip, f"nested/{attempt}"), "GATE-LEDGER-ATTEMPT")


def test_a_review_pushed_with_an_invalid_ledger_update_is_rejected(lab: Lab) -> None:
    """One push: a forged failover to model-b, and a model-b receipt that would match it."""
    attempt = lab.open()
    head = lab.change(f"with-ledger-{attempt}")
    forged = _ledger_commit(lab, lab.seal(_record_doc(lab, attempt, "failover"), "runner-1",
                                          envelope.PAYLOAD_ATTEMPT), lab.ledger_tip(attempt))
    doc = lab.good_doc(attempt, head)
    receipt = lab.receipt_commit(attempt, lab.seal({**doc, "model_id": "model-b"}))
    before = lab.snapshot()
    out = lab.server.push(f"{forged}:{ATTEMPTS_PREFIX}{attempt}", f"{head}:{REVIEW_PREFIX}{attempt}",
                          f"{receipt}:{RECEIPTS_PREFIX}{attempt}", pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-SEAL-KEY-PURPOSE", "GATE-LEDGER-UNREADABLE")


def _barrier_hook(lab: Lab, parties: int) -> Path:
    """Chain a pre-receive hook that waits until `parties` pushes reach it: every one of them
    has then been decided by the gate, and none has updated a ref yet."""
    bar = lab.root / f"barrier-{os.urandom(3).hex()}"
    bar.mkdir()
    hook = lab.server.bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\ntouch {bar}/$$\ni=0\n"
                    f"while [ $(ls {bar} | wc -l) -lt {parties} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
                    "exit 0\n")
    hook.chmod(0o755)
    out = gate("server", "install", str(lab.server.bare), "--chain")
    assert out.returncode == 0, out.stderr
    return bar


def test_concurrent_attempts_cannot_share_a_generation(tmp_path: Path) -> None:
    from conftest import git_env

    lab = Lab(tmp_path / "race")
    _barrier_hook(lab, 2)
    made = ["race-1", "race-2"]
    for attempt in made:
        lab.append(attempt, "opened", remote=False, repository="demo/repo", workspace="ws",
                   workspace_generation="g-shared", prompt_sha256=PROMPT_SHA)
    env = git_env(HUMAN, **RUNNER)
    procs = [subprocess.Popen(["git", "push", "--porcelain", lab.remote(), f"{ATTEMPTS_PREFIX}{a}:{ATTEMPTS_PREFIX}{a}"],
                              cwd=lab.work.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for a in made]
    for p in procs:
        p.communicate(timeout=60)
    landed = [a for a in made if lab.ledger_tip(a) is not None]
    assert len(landed) <= 1, f"both attempts were opened with generation g-shared: {landed}"


# --- frozen paths written by an agent -------------------------------------------------------

def _push_new(lab: Lab, head: str, pusher: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Push `head` to a branch of its own (new on every call)."""
    return lab.server.push(f"{head}:refs/heads/f/{head[:12]}-{lab.fresh('b')}", pusher_env=pusher)


def _frozen_refused(lab: Lab, head: str, pusher: dict[str, str] | None = None, path: str | None = None) -> None:
    before = lab.snapshot()
    out = _push_new(lab, head, pusher)
    assert_refused(lab, before, out, "GATE-FROZEN-PATH")
    if path is not None:
        assert f"path={path}" in out.stderr, out.stderr


def _human_branch(lab: Lab, name: str, files: dict[str, str], start: str | None = None) -> str:
    head = lab.change(name, files, identity=HUMAN, start=start)
    assert _push_new(lab, head).returncode == 0
    return head


def test_merge_with_an_evil_resolution_is_rejected(lab: Lab) -> None:
    human = _human_branch(lab, "merge-human", {"src/human.py": "1\n"})
    agent = lab.change("merge-agent", {"src/agent.py": "2\n"})

    def merge(w: WorkRepo) -> None:
        w.git("merge", "-q", "--no-commit", human, identity=AGENT)
        w.write("ci/deploy.yml", "smuggled in the merge\n")

    head = lab.change("merge-evil", {}, start=agent, edit=merge)
    _frozen_refused(lab, head, path="ci/deploy.yml")


@pytest.mark.parametrize("stale_kind", ["stale-branch", "ancestor"])
def test_merge_that_reverts_a_frozen_file_to_a_stale_parent_is_rejected(lab: Lab, stale_kind: str) -> None:
    # A human branch forked before the hardening (or the pre-hardening commit itself) ...
    stale = (_human_branch(lab, f"stale-{stale_kind}", {"src/stale.py": "old work\n"}) if stale_kind == "stale-branch"
             else lab.base)
    # ... then a human hardens the frozen file.
    hardened = _human_branch(lab, f"hardened-{stale_kind}", {"ci/deploy.yml": "deploy: true\nreview: required\n"})
    # The agent's merge of the two, "resolved" with the stale file.
    w = lab.work
    w.git("checkout", "-q", "-f", "--detach", hardened)
    w.git("checkout", stale, "--", "ci/deploy.yml")
    tree = w.git("write-tree").stdout.strip()
    head = w.git("commit-tree", tree, "-p", hardened, "-p", stale, "-m", "merge", identity=AGENT).stdout.strip()
    w.git("checkout", "-q", "-f", "--detach", lab.base)
    assert git(w.path, "show", f"{head}:ci/deploy.yml").stdout == "deploy: true\n"
    _frozen_refused(lab, head)


@pytest.mark.parametrize("kind", ["rename-out", more("rename-in"), "mode", "symlink-at-frozen-path",
                                  "frozen-dir-becomes-symlink", "case-collision-symlink", more("file-to-dir")])
def test_agent_writes_a_frozen_path_indirectly(lab: Lab, kind: str) -> None:
    def edit(w: WorkRepo) -> None:
        p = w.path
        if kind == "rename-out":
            w.git("mv", "ci/deploy.yml", "ci-old.yml")
        elif kind == "rename-in":
            w.git("mv", "src/app.py", "ci/app.py")
        elif kind == "mode":
            (p / "ci/deploy.yml").chmod(0o755)
        elif kind == "delete":
            (p / "ci/deploy.yml").unlink()
        elif kind == "symlink-at-frozen-path":
            w.symlink("ci/deploy.yml", "../src/app.py")
        elif kind == "frozen-dir-becomes-symlink":
            w.git("rm", "-q", "-r", "ci")
            w.write("src/fake-ci/deploy.yml", "deploy: false\n")
            w.symlink("ci", "src/fake-ci")
        elif kind == "symlink-inside-frozen-dir":
            w.symlink("ci/extra.yml", "../src/app.py")
        elif kind == "case-collision-symlink":  # on a case-insensitive checkout CI and ci are one directory
            w.symlink("CI", "src")
        elif kind == "file-to-dir":
            (p / "gate.toml").mkdir()
            w.write("gate.toml/x", "x\n")

    _frozen_refused(lab, lab.change(f"indirect-{kind}", {}, edit=edit))


def test_a_symlink_pointing_into_a_frozen_dir_writes_nothing_frozen(lab: Lab) -> None:
    """`src/ci-link -> ../ci` is not a frozen path, and git will not stage a write through it: the
    tree can only change ci/ by naming ci/ paths, which the gate sees. Accepted, ci/ unchanged."""
    def edit(w: WorkRepo) -> None:
        w.symlink("src/ci-link", "../ci")
        (w.path / "src/ci-link/deploy.yml").write_text("written through the link\n")  # lands in ci/ on disk
        out = w.git("add", "src/ci-link/deploy.yml", check=False)
        assert out.returncode != 0 and "symbolic link" in out.stderr
        w.git("checkout", "--", "ci/deploy.yml")

    head = lab.change("symlink-into-frozen", {}, edit=edit)
    assert _push_new(lab, head).returncode == 0
    base_blob = git(lab.work.path, "rev-parse", f"{lab.base}:ci/deploy.yml").stdout
    assert git(lab.work.path, "rev-parse", f"{head}:ci/deploy.yml").stdout == base_blob
    # ...and a later agent commit that re-points the link at the frozen file's content changes no frozen path
    # either; one that writes ci/ itself is refused as usual.
    _frozen_refused(lab, lab.change("through-ci", {"ci/deploy.yml": "x\n"}, start=head))


@pytest.mark.parametrize("kind", ["url", "case-variant", "gitlink-in-frozen-dir", more("repoint-submodule"),
                                  more("submodule-to-dir")])
def test_gitmodules_games_are_rejected(lab: Lab, kind: str) -> None:
    def edit(w: WorkRepo) -> None:
        if kind == "url":
            w.write(".gitmodules", GITMODULES.replace("example.com", "evil.example.net"))
        elif kind == "symlink":
            w.symlink(".gitmodules", "src/app.py")
        elif kind == "case-variant":  # one file with .gitmodules on case-insensitive checkouts
            w.write(".GitModules", GITMODULES.replace("example.com", "evil.example.net"))
        elif kind == "gitlink-in-frozen-dir":
            w.git("update-index", "--add", "--cacheinfo", f"160000,{'6' * 40},ci/tool")
        elif kind == "repoint-submodule":
            w.git("update-index", "--cacheinfo", f"160000,{'7' * 40},vendor/sub")
        elif kind == "submodule-to-dir":
            w.git("rm", "-q", "--cached", "vendor/sub")
            w.write("vendor/sub/setup.py", "import os\n")
        elif kind == "remove-submodule":
            w.git("rm", "-q", "--cached", "vendor/sub")

    def commit(w: WorkRepo) -> None:
        edit(w)
        if kind in ("gitlink-in-frozen-dir", "repoint-submodule", "remove-submodule"):
            w.git("commit", "-q", "-m", f"agent {kind}", identity=AGENT)

    if kind in ("gitlink-in-frozen-dir", "repoint-submodule", "remove-submodule"):
        # index-only changes: commit them without `git add -A` (which would drop the gitlinks)
        lab.work.git("checkout", "-q", "-f", "-B", f"gm-{kind}", lab.base)
        commit(lab.work)
        head = lab.work.head()
        lab.work.git("checkout", "-q", "--detach")
    else:
        head = lab.change(f"gm-{kind}", {}, edit=edit)
    _frozen_refused(lab, head)


@pytest.mark.parametrize("path", [more("GATE.TOML"), "Gate.Toml. .", "docs/cafe\u0301.md", more("docs/CAFÉ.md"),
                                  more("ci./deploy.yml")])
def test_case_and_unicode_look_alike_paths_are_frozen(lab: Lab, path: str) -> None:
    _frozen_refused(lab, lab.change(f"alike-{hashlib.sha256(path.encode()).hexdigest()[:8]}", {path: "shadow\n"}))


@pytest.mark.parametrize("path", ["gate\u200c.toml", more("c\u200di/deploy.yml")])
def test_hfs_ignorable_code_points_are_frozen(lab: Lab, path: str) -> None:
    _frozen_refused(lab, lab.change(f"hfs-{hashlib.sha256(path.encode()).hexdigest()[:8]}", {path: "shadow\n"}))


@pytest.mark.parametrize("identity,committer,pusher", [
    (HUMAN, AGENT, None),  # human-authored, agent-committed
    (("Agent", "bot-7@agents.exаmple.com"), None, AGENT_PUSH),  # Cyrillic 'а': the pusher still counts
    (HUMAN, None, {"REMOTE_USER": "AGENT-1"}),
    more(HUMAN, None, {"REMOTE_USER": "  agent-1 "}),
], ids=["agent-committer", "look-alike-email-agent-pusher", "upper-case-pusher", "padded-pusher"])
def test_look_alike_identities_are_restricted(lab: Lab, identity: tuple[str, str],
                                              committer: tuple[str, str] | None, pusher: dict[str, str] | None) -> None:
    def edit(w: WorkRepo) -> None:
        w.write("ci/deploy.yml", "deploy: skip\n")
        w.git("add", "-A")
        env = {} if committer is None else {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        w.git("commit", "-q", "-m", "look-alike", identity=identity, env=env)

    lab.work.git("checkout", "-q", "-f", "-B", "look-alike", lab.base)
    edit(lab.work)
    head = lab.work.head()
    lab.work.git("checkout", "-q", "--detach")
    _frozen_refused(lab, head, pusher)


def test_commit_identity_alone_is_self_asserted(lab: Lab) -> None:
    """Documents the limit (docs/security.md): a look-alike author email pushed by an unrestricted
    account is not restricted; only the authenticated pusher is not self-asserted."""
    look_alike = ("Agent", "bot-7@agents.exаmple.com")
    head = lab.change("self-asserted", {"ci/deploy.yml": "x\n"}, identity=look_alike)
    assert _push_new(lab, head, {"REMOTE_USER": "hana"}).returncode == 0
    # The same change through the agent's own account is refused.
    _frozen_refused(lab, lab.change("self-asserted-2", {"ci/deploy.yml": "x\n"}, identity=look_alike), AGENT_PUSH)


# --- ref-name tricks ------------------------------------------------------------------------

@pytest.mark.parametrize("name,pusher,code", [
    (f"{REVIEW_PREFIX}nested/id", RUNNER, "GATE-REF-NAME"),
    more(f"{REVIEW_PREFIX}caf\u00e9", RUNNER, "GATE-REF-NAME"),
    ("refs/gate/doctor/probe-x", RUNNER, "GATE-DOCTOR-PROBE"),
    more("refs/gate/attempts-x", RUNNER, "GATE-REF-RESERVED"),
    ("refs/gate/Attempts/x", AGENT_PUSH, "GATE-REF-RESERVED"),
])
def test_ref_name_tricks_in_the_reserved_namespaces(lab: Lab, name: str, pusher: dict[str, str], code: str) -> None:
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f"{lab.base}:{name}", pusher_env=pusher), code)


def test_case_variant_of_the_review_namespace_is_an_ordinary_branch_still_frozen(lab: Lab) -> None:
    head = lab.change("case-review", {"ci/deploy.yml": "x\n"})
    before = lab.snapshot()
    out = lab.server.push(f"{head}:refs/heads/Review/Runner/x", pusher_env=AGENT_PUSH)
    assert_refused(lab, before, out, "GATE-FROZEN-PATH")


@pytest.mark.parametrize("name", ["refs/heads/review/runner"])
def test_agent_cannot_squat_the_parent_of_the_review_namespace(tmp_path: Path, name: str) -> None:
    server = Server(tmp_path)
    server.work.write("README", "x\n")
    server.work.commit("base")
    assert server.push("main").returncode == 0
    before = server.refs()
    out = server.push(f"main:{name}", pusher_env=AGENT_PUSH)
    assert out.returncode != 0 and codes_of(out) & {"GATE-REF-RESERVED", "GATE-REVIEW-PUSHER"}, out.stderr
    assert server.refs() == before


def test_a_symbolic_ref_into_the_review_namespace_does_not_bypass_the_gate(lab: Lab) -> None:
    attempt = lab.open()
    git(lab.server.bare, "symbolic-ref", "refs/heads/alias", f"{REVIEW_PREFIX}{attempt}")
    try:
        head = lab.change(f"via-alias-{attempt}")
        out = lab.server.push(f"{head}:refs/heads/alias", pusher_env=AGENT_PUSH)
        assert out.returncode != 0
        assert lab.server.ref(REVIEW_PREFIX + attempt) is None
    finally:
        git(lab.server.bare, "symbolic-ref", "--delete", "refs/heads/alias", check=False)
        git(lab.server.bare, "update-ref", "-d", REVIEW_PREFIX + attempt, check=False)


# --- malformed, huge and deep trees ---------------------------------------------------------

def _raw_tree(lab: Lab, entries: list[tuple[str, bytes, str]]) -> str:
    """Write a tree object byte for byte (no sorting, no checks), as a hostile client can."""
    data = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return subprocess.run(["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"], cwd=lab.work.path,
                          input=data, capture_output=True, check=True).stdout.decode().strip()


def _base_entries(lab: Lab) -> list[tuple[str, bytes, str]]:
    out = []
    for line in git(lab.work.path, "ls-tree", "-z", lab.base).stdout.split("\0"):
        if line:
            meta, name = line.split("\t", 1)
            mode, _kind, oid = meta.split()
            out.append((mode.lstrip("0"), name.encode(), oid))
    return out


def test_a_tree_with_duplicate_entries_is_rejected(lab: Lab) -> None:
    evil = git(lab.work.path, "hash-object", "-w", "--stdin", input=b"deploy: EVIL\n").stdout.strip()
    evil_ci = git(lab.work.path, "mktree", input=f"100644 blob {evil}\tdeploy.yml\n".encode()).stdout.strip()
    entries = []
    for mode, name, oid in _base_entries(lab):
        entries += [(mode, name, evil_ci), (mode, name, oid)] if name == b"ci" else [(mode, name, oid)]
    head = git(lab.work.path, "commit-tree", _raw_tree(lab, entries), "-p", lab.base, "-m", "dup",
               identity=AGENT).stdout.strip()
    assert git(lab.work.path, "show", f"{head}:ci/deploy.yml").stdout == "deploy: EVIL\n"
    before = lab.snapshot()
    out = _push_new(lab, head)
    assert out.returncode != 0 and codes_of(out) & {"GATE-GIT-MALFORMED"}
    assert lab.snapshot() == before


def _deep_tree(lab: Lab, depth: int) -> str:
    import pygit2

    repo = pygit2.Repository(str(lab.work.path))
    b = repo.TreeBuilder()
    b.insert("deploy.yml", repo.create_blob(b"deep\n"), pygit2.GIT_FILEMODE_BLOB)
    tree = b.write()
    for _ in range(depth):
        b = repo.TreeBuilder()
        b.insert("d", tree, pygit2.GIT_FILEMODE_TREE)
        tree = b.write()
    return str(tree)


def _commit_with_ci_subtree(lab: Lab, name: str, subtree: str) -> str:
    entries = []
    for mode, ent, oid in _base_entries(lab):
        if ent == b"ci":
            ci = git(lab.work.path, "ls-tree", oid).stdout + f"040000 tree {subtree}\t{name}\n"
            entries.append((mode, ent, git(lab.work.path, "mktree", input=ci.encode()).stdout.strip()))
        else:
            entries.append((mode, ent, oid))
    return git(lab.work.path, "commit-tree", _raw_tree(lab, sorted(entries, key=lambda e: e[1] + b"/")),
               "-p", lab.base, "-m", name, identity=AGENT).stdout.strip()


@pytest.fixture(scope="module")
def deep_commit(lab: Lab) -> str:
    """An agent commit writing ci/deep/d/d/.../deploy.yml, 1200 directories deep."""
    return _commit_with_ci_subtree(lab, "deep", _deep_tree(lab, 1200))


def test_a_deeply_nested_frozen_write_is_rejected(lab: Lab, deep_commit: str) -> None:
    """1200 levels below ci/: rejected (fail closed), whatever the code."""
    head = deep_commit
    before = lab.snapshot()
    out = _push_new(lab, head)
    assert declined(out) and codes_of(out)
    assert lab.snapshot() == before


def test_a_deeply_nested_frozen_write_is_rejected_as_frozen(lab: Lab, deep_commit: str) -> None:
    _frozen_refused(lab, deep_commit)


def test_a_huge_frozen_tree_is_rejected_in_time(lab: Lab) -> None:
    import pygit2

    repo = pygit2.Repository(str(lab.work.path))
    b = repo.TreeBuilder()
    blob = repo.create_blob(b"x\n")
    for i in range(20000):
        b.insert(f"f{i:05d}.yml", blob, pygit2.GIT_FILEMODE_BLOB)
    head = _commit_with_ci_subtree(lab, "many", str(b.write()))
    started = time.monotonic()
    _frozen_refused(lab, head)
    assert time.monotonic() - started < 20
    assert lab.server.audit()[-1]["codes"] == ["GATE-FROZEN-PATH"]


# --- SHA-256 object format ------------------------------------------------------------------

def test_install_into_a_sha256_repository_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "sha256.git"
    git(tmp_path, "init", "-q", "--bare", "--object-format=sha256", "-b", "main", str(bare))
    (tmp_path / "policy.toml").write_text(LAB_POLICY)
    out = gate("server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"))
    assert out.returncode != 0 and "GATE-GIT-OBJECT-FORMAT" in out.stderr
    assert not (bare / "hooks" / "pre-receive").exists() and not (bare / "gate").exists()
    doctor = gate("server", "doctor", str(bare))
    assert doctor.returncode != 0 and "GATE-GIT-OBJECT-FORMAT" in doctor.stdout + doctor.stderr


def test_a_push_into_a_sha256_repository_is_refused(lab: Lab, tmp_path: Path) -> None:
    """The gate's own hook (copied installation) in front of a SHA-256 repository refuses, never passes."""
    import shutil

    from server.install import hook_script

    bare = tmp_path / "sha256.git"
    git(tmp_path, "init", "-q", "--bare", "--object-format=sha256", "-b", "main", str(bare))
    gate_dir = bare / "gate"
    shutil.copytree(lab.server.gate_dir, gate_dir, ignore=shutil.ignore_patterns("audit.log"))
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(hook_script(gate_dir))
    hook.chmod(0o755)
    work = tmp_path / "w"
    git(tmp_path, "init", "-q", "--object-format=sha256", "-b", "main", str(work))
    (work / "ci").mkdir()
    (work / "ci" / "deploy.yml").write_text("x\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "human", identity=HUMAN)
    for pusher, refspec in (({"REMOTE_USER": "hana"}, "main"), (AGENT_PUSH, f"main:{REVIEW_PREFIX}x"),
                            (RUNNER, f"main:{ATTEMPTS_PREFIX}x")):
        out = git(work, "push", "--porcelain", f"file://{bare}", refspec, check=False, env=pusher)
        assert refused(out, "GATE-GIT-OBJECT-FORMAT"), out.stderr
    assert git(bare, "for-each-ref").stdout == ""
    audit = [json.loads(line) for line in (gate_dir / "audit.log").read_text().splitlines()]
    assert len(audit) == 3 and all(a["codes"] == ["GATE-GIT-OBJECT-FORMAT"] for a in audit)


# --- evaluate mode --------------------------------------------------------------------------

def test_evaluate_mode_does_not_open_the_reserved_namespaces(tmp_path: Path) -> None:
    """Rolling out a frozen-file policy in evaluate mode must not make review refs or the ledger
    writable (found by this suite; fixed by EVALUABLE in server/prereceive.py)."""
    server = Server(tmp_path, policy=LAB_POLICY.replace('mode = "enforce"', 'mode = "evaluate"'))
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("agent", identity=AGENT)
    out = server.push("main", pusher_env=AGENT_PUSH)
    assert out.returncode == 0 and "would be rejected" in out.stderr  # what evaluate mode is for
    for ref, code in ((f"{REVIEW_PREFIX}agent-made", "GATE-REVIEW-PUSHER"),
                      (f"{ATTEMPTS_PREFIX}agent-made", "GATE-LEDGER-PUSHER")):
        before = server.refs()
        out = server.push(f"main:{ref}", pusher_env=AGENT_PUSH)
        assert refused(out, code), out.stderr
        assert server.refs() == before
