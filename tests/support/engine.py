"""The in-process tier: the gate's engine decides a push, with no transport and no hook process.

`EngineServer` stands for a gated server. It is a real bare repository: its refs are the
server's refs, and it reads the objects of its work repository through
`objects/info/alternates`, as a running push's quarantine shows the hook the objects the push
brings. `push()` takes the refspecs `git push` takes and states the server's values as the
old values (`raw()` states any, as a hostile client can); then it makes the call the
pre-receive hook makes once its configuration is read (`server/prereceive.py`, stage 4):
`gatecore.pipeline.judge` on a `PushInput` of plain values (the policy and keyring parsed
once from their text, the clock read once per push, the server's refs read through the
reader), with `GateError` as the boundary, as in the hook. The engine tier therefore tests
the product's own composition, not a copy; what only a hook process adds (the quarantine,
the transport, chained hooks, the audit line) is `tests/push/test_engine_parity.py`'s.

An accepted push moves the refs in one `git update-ref --stdin` transaction (the whole push,
as `git push --atomic` lands), approvals' use records included.

Objects and refs are read through `GitStream`, the hook's own reader: git's processes, nothing
mocked. `FaultyReader` is the same reader told to report chosen objects missing, or to hand out
other bytes for them: the faults a test cannot make on disk without breaking the repository
for the next test (`tests/engine/test_harness.py` holds it to a real missing object).

`EngineLab` is `support.lab.Lab` over an `EngineServer`: the same tools build the same objects
(the trusted side's own code, `gatecore.trusted`, run without a remote), and what the lab
would push goes to the engine. Why a real repository and not an in-memory store: the
objects the attacks need are made by git and by the trusted side's code (ledger chains,
receipts, merges, hostile trees written with `hash-object --literally`), and the engine asks
git's own walks (`rev-list`, `merge-base`) questions an in-memory store would have to answer
again, a second implementation to keep equal to git. Reading a repository built once per
module costs a few git processes per push; a push through a transport costs git's pack
negotiation and two hook processes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from gatecore.adapters import config, environment
from gatecore.adapters.gitstream import GitStream
from gatecore.checks.report import error_lines
from gatecore.errors import GateError, unreadable
from gatecore.findings import Violation
from gatecore.git.gitmodel import FORMATS
from gatecore.git.objects import Objects
from gatecore.git.refs import ATTEMPTS_PREFIX, REVIEW_PREFIX, RefUpdate, ServerRefs, generation_ref, parse_pre_receive
from gatecore.pipeline import Push, PushInput, judge
from gatecore.reserved.approvalrefs import USES_PREFIX, Used
from gatecore.signing.keys import Keyring
from gatecore.trusted import attempts, runner

from .gitutil import HUMAN, WorkRepo, git
from .lab import LAB_POLICY, RUNNER, VERDICT, Lab, now

REPOSITORY_ID = "demo/repo"


@dataclass
class Decided:
    """What the engine answered a push: what the hook's exit status, report and audit line say."""

    exit_code: int
    codes: tuple[str, ...]
    lines: list[str]
    decision: str = "reject"  # as the audit line says: accept, reject, evaluate-reject
    attempt_ids: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    approvals: list[Used] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def returncode(self) -> int:
        return self.exit_code

    @property
    def output(self) -> str:
        """The report, as the pusher reads it (without git's `remote: ` prefix)."""
        return "\n".join(self.lines)

    stderr = output
    stdout = ""

    def audit(self) -> dict[str, Any]:
        """The members of the hook's audit line a test reads."""
        return {"decision": self.decision, "exit": self.exit_code, "codes": list(self.codes),
                "attempt_ids": self.attempt_ids, "approvals": [u.audit() for u in self.approvals]}


@dataclass(frozen=True)
class Faults:
    """Objects the reader reports missing, and objects whose bytes it replaces."""

    missing: frozenset[str] = frozenset()
    replaced: dict[str, tuple[str, bytes]] = field(default_factory=dict)


class FaultyReader(GitStream):
    """`GitStream` with `Faults`: a missing object is GATE-GIT-UNREADABLE wherever the engine
    reads it (header, contents, digests), as git's `cat-file` reports one; a replaced one reads
    as the bytes given. git's own walks (`rev-list`, `merge-base`) still see the repository."""

    def __init__(self, git_dir: str, faults: Faults) -> None:
        super().__init__(git_dir)
        self.faults = faults

    def _fault(self, oid: str) -> None:
        if oid in self.faults.missing:
            raise unreadable(f"object {oid} is not in the repository (quarantine not visible?)")

    def header(self, oid: str) -> tuple[str, int]:
        self._fault(oid)
        if oid in self.faults.replaced:
            kind, data = self.faults.replaced[oid]
            return kind, len(data)
        return super().header(oid)

    def exists(self, oid: str) -> bool:
        return oid not in self.faults.missing and (oid in self.faults.replaced or super().exists(oid))

    def read(self, oid: str) -> tuple[str, bytes]:
        self._fault(oid)
        return self.faults.replaced.get(oid) or super().read(oid)

    def read_many(self, oids: Sequence[str]) -> Iterator[tuple[str, str, bytes]]:
        for oid in oids:
            yield (oid, *self.read(oid))

    def blob_digests(self, oids: Iterable[str]) -> dict[str, str]:
        import hashlib

        out = {}
        for oid in oids:
            kind, data = self.read(oid)
            if kind != "blob":
                return super().blob_digests(oids)  # the real reader's error for a non-blob
            out[oid] = hashlib.sha256(data).hexdigest()
        return out


class EngineServer:
    """A bare repository standing for a gated server, its pushes decided in this process."""

    def __init__(self, root: Path, policy: str = LAB_POLICY, keyring: str | None = None,
                 repository_id: str = REPOSITORY_ID, allowed_signers: Path | None = None,
                 object_format: str = "sha1", work: WorkRepo | None = None) -> None:
        """`work`: the repository whose objects the pushes bring (default: a new one in `root`)."""
        self.root = root
        self.bare = root / "server.git"
        git(root, "init", "-q", "--bare", "-b", "main", f"--object-format={object_format}", str(self.bare))
        self.work = WorkRepo(root / "work", object_format) if work is None else work
        self.zero = FORMATS[object_format].zero_id
        (self.bare / "objects" / "info" / "alternates").write_text(f"{self.work.path / '.git' / 'objects'}\n")
        self.set_policy(policy)
        self.set_keyring(keyring)
        self.repository_id = repository_id
        self.allowed_signers = allowed_signers
        self.faults: Faults | None = None
        self.decisions: list[Decided] = []

    def set_policy(self, text: str) -> None:
        """The policy, parsed by the installation's own reader into the plain value the hook uses."""
        self.policy = config.policy_from_bytes(text.encode(), "policy.toml")

    def set_keyring(self, text: str | None) -> None:
        """The keyring (None: none installed), parsed as `set_policy` parses the policy."""
        self.keyring: Keyring | None = None if text is None else config.keyring_from_bytes(text.encode(),
                                                                                          "keyring.toml")

    # --- the server's refs -------------------------------------------------------------------
    def ref(self, name: str) -> str | None:
        """The server's value of `name` (a symbolic ref resolved), read by libgit2 in this process."""
        try:
            return str(pygit2.Repository(str(self.bare)).references[name].resolve().target)
        except (KeyError, pygit2.GitError):
            return None

    def refs(self) -> dict[str, str]:
        repo = pygit2.Repository(str(self.bare))
        return {name: str(repo.references[name].resolve().target) for name in repo.references}

    snapshot = refs

    def mirror(self, refs: dict[str, str]) -> None:
        """Make the server's refs exactly `refs` (another server's, whose objects `work` holds)."""
        lines = [f"delete {name}" for name in self.refs() if name not in refs]
        lines += [f"update {name} {value}" for name, value in refs.items()]
        git(self.bare, "update-ref", "--stdin", input=("\n".join(lines) + "\n").encode())

    def set_ref(self, name: str, value: str | None) -> None:
        """Write (None: delete) a ref on the server behind the gate's back, as an admin, a crash or
        a half-applied push leaves it."""
        if value is None:
            git(self.bare, "update-ref", "-d", name)
        else:
            git(self.bare, "update-ref", name, value)

    def audit(self) -> list[dict[str, Any]]:
        return [d.audit() for d in self.decisions]

    # --- pushes ------------------------------------------------------------------------------
    def push(self, *refspecs: str, pusher_env: dict[str, str] | None = None, identity: tuple[str, str] = HUMAN,
             url: str | None = None, extra: tuple[str, ...] = ()) -> Decided:
        """`git push REFSPEC...` (the signature of `Server.push`): each source resolved in the work
        repository, each old value the server's. The pusher is read from `pusher_env` as the hook
        reads it (`REMOTE_USER`, else the account running this); `identity`, `url` and `extra` mean
        nothing without a transport (`--atomic` is how every accepted push lands here)."""
        updates = []
        for spec in refspecs:
            src, _, dst = spec.lstrip("+").partition(":")
            dst = self._full_name(dst or src, src)
            new = self.resolve(src) if src else self.zero
            updates.append((self.ref(dst) or self.zero, new, dst))
        return self.raw(updates, pusher_env)

    def raw(self, updates: Sequence[tuple[str, str, str]], pusher_env: dict[str, str] | None = None) -> Decided:
        """A push stating (old, new, ref) for each update, whatever the server holds."""
        env = {k: v for k, v in (pusher_env or {}).items() if k == "REMOTE_USER"}
        pusher = environment.read_hook_env("auto", {**env, "GIT_DIR": str(self.bare)}).pusher
        data = "".join(f"{old} {new} {ref}\n" for old, new, ref in updates).encode("utf-8", "surrogateescape")
        try:
            live = [u for u in parse_pre_receive(data) if not u.is_noop]
            decided = self.decide(live, pusher)
            if decided.ok:
                self._land(live, decided.approvals)
        except GateError as exc:
            decided = Decided(exc.exit_code, (exc.code,), error_lines(exc.code, exc.detail, gitlab=False,
                                                                      git_dir=str(self.bare)))
        self.decisions.append(decided)
        return decided

    def decide(self, updates: Sequence[RefUpdate], pusher: str, at: int | None = None) -> Decided:
        """The pre-receive hook's judgement (`gatecore.pipeline.judge`, the call the hook makes) of
        `updates`, by `pusher`, at `at` (now), and its report."""
        live = [u for u in updates if not u.is_noop]
        if not live:
            return Decided(0, (), [], "accept")
        reader = GitStream(str(self.bare)) if self.faults is None else FaultyReader(str(self.bare), self.faults)
        try:
            judged = judge(self.push_input(reader, pusher, now() if at is None else at), Push(live))
        finally:
            reader.close()
        lines = judged.lines(cap=self.policy.max_violations_shown, gitlab=False, git_dir=str(self.bare))
        verdict = judged.verdict
        return Decided(verdict.exit_code, verdict.codes, lines, verdict.decision, judged.attempt_ids,
                       judged.violations, judged.approvals_used)

    def push_input(self, reader: GitStream, pusher: str, at: int) -> PushInput:
        """What the hook builds from its installation (`server.prereceive.push_input`), from this
        server's plain values: the policy and keyring parsed once, the clock given."""
        signers = None
        if self.policy.needs_signers:
            signers = config.load_trusted_keys(self.allowed_signers, None)
        return PushInput(objects=Objects(reader), policy=self.policy, pusher=pusher, now=at,
                         repository_id=self.repository_id, server=ServerRefs(reader.ref_target), keyring=self.keyring,
                         head_branch=lambda: reader.symbolic_target("HEAD"), signers=signers,
                         load_ssh_signers=lambda: (None if self.allowed_signers is None
                                                   else config.load_allowed_signers(self.allowed_signers)))

    def _land(self, live: Sequence[RefUpdate], used: Sequence[Used]) -> None:
        """Move the refs of an accepted push, and record the approvals it used, in one transaction
        (GATE-APPROVAL-USED if a use is on record already, as the hook's `record_uses`)."""
        lines = ["start"]
        lines += [f"create {USES_PREFIX}{u.id} {u.record}" for u in used]
        lines += [f"delete {u.ref} {u.old}" if u.is_delete else f"update {u.ref} {u.new} {u.old}" for u in live]
        out = git(self.bare, "update-ref", "--stdin", input=("\n".join([*lines, "commit"]) + "\n").encode(),
                  check=False)
        if out.returncode != 0:
            if used:
                raise GateError("GATE-APPROVAL-USED", f"an approval could not be recorded as used: {out.stderr}")
            raise AssertionError(f"git update-ref refused an accepted push: {out.stderr}")

    # --- names -------------------------------------------------------------------------------
    def resolve(self, rev: str) -> str:
        """The object a source names in the work repository (a tag stays a tag, as git pushes it)."""
        return str(pygit2.Repository(str(self.work.path)).revparse_single(rev).id)

    def _full_name(self, dst: str, src: str) -> str:
        if dst.startswith("refs/"):
            return dst
        if dst == src:
            for prefix in ("refs/heads/", "refs/tags/"):
                if prefix + src in pygit2.Repository(str(self.work.path)).references:
                    return prefix + src
        return f"refs/heads/{dst}"


class EngineLab(Lab):
    """`Lab` whose server is an `EngineServer`: the same objects, every push decided in process."""

    server: EngineServer  # type: ignore[assignment]

    def make_server(self, root: Path, policy: str, extra: tuple[str, ...]) -> EngineServer:  # type: ignore[override]
        assert not extra, "an engine server installs nothing: pass its options to EngineServer"
        return EngineServer(root, policy, self.keyring_text)

    def remote(self) -> str:
        raise AssertionError("the engine lab has no remote: its pushes go to lab.server")

    def sync(self, ref: str) -> None:
        """The work repository's `ref` := the server's (what the trusted side's commands fetch first)."""
        value = self.server.ref(ref)
        if value is None:
            self.work.git("update-ref", "-d", ref, check=False)
        else:
            self.work.git("update-ref", ref, value)

    def append(self, attempt: str, kind: str, key: str = "orch-1", remote: bool = True,
               **fields: Any) -> Decided | None:
        """`gate attempt ...`: the record written by the orchestrator's code, pushed to the engine
        (and taken back from the clone if refused, as the command does)."""
        ref = ATTEMPTS_PREFIX + attempt
        if remote:
            self.sync(ref)
            if kind == "opened":
                fields.setdefault("target", "refs/heads/main")  # the command asks the server's HEAD
        state, _ = attempts.append_record(self.work.path, attempt, self.keys[key], kind, None, now(), env=RUNNER,
                                          **fields)
        if not remote:
            return None
        claim = generation_ref(state.workspace_generation)
        refspecs = [f"{ref}:{ref}", *([f"{claim}:{claim}"] if kind == "opened" else [])]
        out = self.server.push(*refspecs, pusher_env=RUNNER, extra=("--atomic",))
        if not out.ok:
            self.sync(ref)
            if kind == "opened":
                self.sync(claim)
        return out

    def record(self, attempt: str, head: str, base: str | None = None, key: str = "runner-1",
               old: str | None = None, ttl: int = 3600, output: bytes = VERDICT,
               repository_id: str | None = None) -> Path:
        """`gate review record`, its ledger and the review ref's old value taken from the server."""
        self.sync(ATTEMPTS_PREFIX + attempt)
        old = old if old is not None else self.server.ref(REVIEW_PREFIX + attempt)
        out = self.receipts / f"{attempt}-{os.urandom(4).hex()}.json"
        return runner.record_review(self.work.path, attempt, base or self.base, head, output, self.keys[key], out,
                                    None, old, ttl, now(), repository_id, env=RUNNER)

    def push_review(self, attempt: str, receipt_file: Path) -> Decided:  # type: ignore[override]
        """`gate review push`: the reviewed commit to the review ref and the receipt on the receipt
        ref, in one push."""
        data = receipt_file.read_bytes()
        return self.push_receipt_bytes(attempt, data, self.receipt_doc(receipt_file)["new_commit"])


def objects_brought(server: EngineServer, *tips: str) -> frozenset[str]:
    """Every object reachable from `tips` and from no ref of the server: what a push of them brings."""
    out = subprocess.run(["git", "rev-list", "--objects", *tips, "--not", "--all"], cwd=server.bare,
                         capture_output=True, text=True, check=True)
    return frozenset(line.split(" ")[0] for line in out.stdout.splitlines() if line)
