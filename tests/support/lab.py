"""`Lab`: a gate-protected server with keys, a base commit on main, and the trusted side's tools.

The trusted side is `gatecore.trusted` itself (attempts, review), run with the runner's
account in its git environment (`REMOTE_USER=runner-1`); agents push as `agent-1`. Hostile
objects (receipts the runner would refuse to send, forged ledger records) are built with
`receipt_commit` / `ledger_commit` and pushed raw.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from gatecore import strictjson
from gatecore.adapters.config import load_keyfile
from gatecore.adapters.files import write_private
from gatecore.adapters.gitcmd import PushResult
from gatecore.adapters.gitrepo import GitRepo
from gatecore.configuration.configschema import generate_key
from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
from gatecore.records.ledger import AttemptState
from gatecore.signing import envelope
from gatecore.signing.keys import SigningKey
from gatecore.signing.seal import sign
from gatecore.trusted import attempts, runner

from .gitutil import AGENT, HUMAN, WorkRepo, git
from .server import Server

RUNNER_USER = "runner-1"
AGENT_USER = "agent-1"
RUNNER = {"REMOTE_USER": RUNNER_USER}
AGENT_PUSH = {"REMOTE_USER": AGENT_USER}
PROMPT = b"Review this change. Reply with JSON: verdict, reasons.\n"
PROMPT_SHA = hashlib.sha256(PROMPT).hexdigest()
VERDICT = json.dumps({"verdict": "pass", "reasons": ["small, tested change"]}).encode()
ZERO = "0" * 40
SUB_COMMIT = "5" * 40  # the pinned commit of the vendor/sub submodule (never fetched)

#: The server policy, plus .gitmodules and a non-ASCII frozen path.
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
#: The two keys a deployment has (the others exist for attacks).
BASIC_KEYS = ("orch-1", "runner-1")


def key_material(keys_dir: Path, ids: tuple[str, ...] = tuple(KEYS)) -> tuple[str, dict[str, SigningKey]]:
    """Fresh keys (from `gate keys generate`'s code): the keyring text and the signing keys by id."""
    entries, signing = [], {}
    keys_dir.mkdir(parents=True, exist_ok=True)
    for key_id in ids:
        alg, purpose, tail = KEYS[key_id]
        made = generate_key(alg, key_id, purpose)
        path = keys_dir / f"{key_id}.key"
        write_private(path, made.keyfile_text)
        signing[key_id] = load_keyfile(path)
        entries.append(made.keyring_entry.replace("revoked = false\n", tail))
    return "\n".join(entries), signing


def now() -> int:
    return int(time.time())


def envelope_doc(data: bytes) -> dict[str, Any]:
    """An envelope's JSON members, for attacks that edit them."""
    doc = json.loads(data)
    assert isinstance(doc, dict)
    return doc


def raw_json(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


class Lab:
    """A gate-protected server with keys, a base commit on main, and the trusted side's tools."""

    def __init__(self, root: Path, policy: str = LAB_POLICY, extra: tuple[str, ...] = (),
                 key_ids: tuple[str, ...] = tuple(KEYS)) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.keyring_text, self.keys = key_material(root / "keys", key_ids)
        self.server = self.make_server(root, policy, extra)
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

    def make_server(self, root: Path, policy: str, extra: tuple[str, ...]) -> Server:
        """The server this lab pushes to: a bare repository with the gate installed."""
        return Server(root, policy=policy, keyring=self.keyring_text, extra=extra)

    # --- names and state -------------------------------------------------------------------
    def fresh(self, prefix: str = "a") -> str:
        self.n += 1
        return f"{prefix}{self.n}-{os.urandom(3).hex()}"

    def remote(self) -> str:
        return self.server.url

    def snapshot(self) -> dict[str, str]:
        return self.server.refs()

    def ledger_tip(self, attempt: str) -> str | None:
        return self.server.ref(ATTEMPTS_PREFIX + attempt)

    def state(self, attempt: str) -> AttemptState | None:
        """The attempt as the lab's clone has it (synced by every append)."""
        return attempts.attempt_state(GitRepo.at(self.work.path), attempt, now())

    # --- the ledger --------------------------------------------------------------------------
    def append(self, attempt: str, kind: str, key: str = "orch-1", remote: bool = True,
               **fields: Any) -> PushResult | None:
        _state, result = attempts.append_record(self.work.path, attempt, self.keys[key], kind,
                                                self.remote() if remote else None, now(), env=RUNNER, **fields)
        return result

    def open_fields(self, attempt: str, generation: str | None = None,
                    repository: str = "demo/repo") -> dict[str, Any]:
        return {"repository": repository, "workspace": f"ws-{attempt}",
                "workspace_generation": generation or f"g-{attempt}", "prompt_sha256": PROMPT_SHA}

    def open(self, attempt: str | None = None, generation: str | None = None, model: str | None = "model-a",
             repository: str = "demo/repo") -> str:
        """Open an attempt on the server (and select its model): returns the attempt id."""
        if attempt is None and generation is None and model == "model-a" and repository == "demo/repo":
            if not self.pool:
                self.open_many(8)
            return self.pool.pop()
        attempt = attempt or self.fresh()
        result = self.append(attempt, "opened", **self.open_fields(attempt, generation, repository))
        assert result is not None and result.ok, result
        if model is not None:
            result = self.append(attempt, "model-selected", model_id=model)
            assert result is not None and result.ok, result
        return attempt

    def open_refspecs(self, attempt: str) -> list[str]:
        """The refspecs that open a locally written attempt: its ledger and its generation claim."""
        state = self.state(attempt)
        assert state is not None
        return [f"{ATTEMPTS_PREFIX}{attempt}:{ATTEMPTS_PREFIX}{attempt}",
                f"{state.root}:{generation_ref(state.workspace_generation)}"]

    def open_many(self, n: int) -> None:
        """Open n attempts (model-a) with one push of their ledger refs; they go to the pool."""
        made = [self.fresh("p") for _ in range(n)]
        for attempt in made:
            self.append(attempt, "opened", remote=False, **self.open_fields(attempt))
            self.append(attempt, "model-selected", remote=False, model_id="model-a")
        refspecs = [spec for attempt in made for spec in self.open_refspecs(attempt)]
        out = self.server.push(*refspecs, pusher_env=RUNNER, extra=("--atomic",))
        assert out.returncode == 0, out.stderr
        self.pool.extend(made)

    def record_doc(self, attempt: str, kind: str, **fields: Any) -> dict[str, Any]:
        """The next record of `attempt`'s chain as the orchestrator would write it (then `fields`)."""
        state = self.state(attempt)
        doc: dict[str, Any] = {"version": 1, "attempt_id": attempt, "seq": 0 if state is None else state.seq + 1,
                               "kind": kind, "prev": None if state is None else state.head,
                               "repository": "demo/repo", "time": now()}
        if kind == "opened":
            doc.update(workspace="ws-x", workspace_generation=f"g-{os.urandom(4).hex()}", prompt_sha256=PROMPT_SHA)
        if kind in ("model-selected", "failover"):
            doc["model_id"] = "model-b"
        doc.update(fields)
        return {k: v for k, v in doc.items() if v is not None}

    def ledger_commit(self, data: bytes, parent: str | None, files: dict[str, tuple[int, bytes]] | None = None,
                      parents: list[str] | None = None) -> str:
        """A ledger commit holding record.json = data (or exactly `files`), on `parent`."""
        import pygit2

        repo = pygit2.Repository(str(self.work.path))
        builder = repo.TreeBuilder()
        for name, (mode, content) in (files or {"record.json": (0o100644, data)}).items():
            builder.insert(name, repo.create_blob(content), mode)
        sig = pygit2.Signature("gate ledger", "ledger@gate.invalid")
        ps = parents if parents is not None else ([] if parent is None else [parent])
        return str(repo.create_commit(None, sig, sig, "gate attempt\n", builder.write(),
                                      [pygit2.Oid(hex=p) for p in ps]))

    # --- changes ---------------------------------------------------------------------------
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

    # --- receipts --------------------------------------------------------------------------
    def record(self, attempt: str, head: str, base: str | None = None, key: str = "runner-1",
               old: str | None = None, ttl: int = 3600, output: bytes = VERDICT,
               repository_id: str | None = None) -> Path:
        out = self.receipts / f"{attempt}-{os.urandom(4).hex()}.json"
        return runner.record_review(self.work.path, attempt, base or self.base, head, output, self.keys[key], out,
                                    self.remote(), old, ttl, now(), repository_id, env=RUNNER)

    def push_review(self, attempt: str, receipt_file: Path) -> PushResult:
        return runner.push_review(self.work.path, attempt, receipt_file, self.remote(), now(), env=RUNNER)

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
                           mode: str = "100644", name: str = "receipt.json",
                           extra_refspecs: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        """Like the runner's push, for bytes it would refuse to send: one atomic push of `head` to
        the review ref and a receipt commit holding `data` to the receipt ref."""
        review_ref = review_ref or REVIEW_PREFIX + attempt
        receipt_ref = receipt_ref or RECEIPTS_PREFIX + attempt
        commit = self.receipt_commit(attempt, data, mode, name, receipt_ref)
        return self.server.push(f"+{head}:{review_ref}", f"{commit}:{receipt_ref}", *extra_refspecs,
                                pusher_env={"REMOTE_USER": pusher}, extra=("--atomic",))

    def good_doc(self, attempt: str, head: str, base: str | None = None, **changes: Any) -> dict[str, Any]:
        """The receipt the runner would seal for base..head now (then `changes`, None drops a field)."""
        path = self.record(attempt, head, base)
        doc = self.receipt_doc(path)
        path.unlink()
        doc.update(changes)
        return {k: v for k, v in doc.items() if v is not None}
