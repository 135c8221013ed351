"""The ledger at scale: servers with 50, 5,000 and 50,000 attempts on record.

Each template is a small history plus N attempts accepted earlier, seeded straight into the
server's objects and refs: every attempt a sealed `opened` record (orchestrator key) on
`refs/gate/attempts/<id>` with its claim `refs/gate/generations/<sha256>`, written through
`packed-refs` (so seeding 50,000 takes seconds, not 50,000 pushes). The `archived` family
holds the same attempts folded into `refs/gate/archive` instead. One more attempt, opened
with a model on record, is the one the review push reviews. Three pushes are timed on each:
the opening push of a new attempt (ledger ref and claim, atomic), a review push (review ref
and receipt, atomic) and a plain one-commit push to main.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from . import hooks
from .gitenv import Git

PROMPT_SHA = hashlib.sha256(b"bench prompt\n").hexdigest()
REVIEWED = "bench-reviewed"


@dataclass(frozen=True)
class Seeded:
    template: Path  # the server before the timed push
    client: Path  # what the pushes are made from (holds every object they need)
    keyring: Path  # the keys the seeded records are sealed with (made with the template)
    refspecs: dict[str, list[str]]  # open | review | plain -> the push's refspecs

    @classmethod
    def load(cls, path: Path) -> Seeded:
        return cls(path / "server.git", path / "client", path / "keyring.toml",
                   json.loads((path / "seeded.json").read_text())["refspecs"])


def _write_packed_refs(repo: Path, refs: dict[str, str]) -> None:
    lines = ["# pack-refs with: peeled fully-peeled sorted \n"]
    lines += [f"{oid} {name}\n" for name, oid in sorted(refs.items())]
    (repo / "packed-refs").write_text("".join(lines))


def _keys(path: Path) -> tuple[Path, Path]:
    from gatecore.adapters.files import write_private
    from gatecore.configuration.configschema import generate_key

    entries = []
    for key_id, purpose in (("orchestrator-1", "attempt"), ("runner-1", "receipt")):
        made = generate_key("ed25519", key_id, purpose)
        write_private(path / f"{key_id}.key", made.keyfile_text)
        entries.append(made.keyring_entry)
    (path / "keyring.toml").write_text("\n".join(entries))
    return path / "orchestrator-1.key", path / "runner-1.key"


def build(git: Git, path: Path, attempts: int, archived: bool) -> None:
    """A template server at `path / server.git`, its client `path / client`, the keys, the refspecs."""
    from gatecore.adapters.config import load_keyfile
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.checks.binding import Expectations
    from gatecore.git.digest import tree_delta_digest
    from gatecore.git.objects import Objects
    from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
    from gatecore.records import archive, ledger
    from gatecore.records.receipt import DIFF_TREE_DELTA, seal_document
    from gatecore.trusted.attempts import record_commit

    path.mkdir(parents=True)
    attempt_keyfile, receipt_keyfile = _keys(path)
    akey, rkey = load_keyfile(attempt_keyfile), load_keyfile(receipt_keyfile)
    now = int(time.time())
    server, client = path / "server.git", path / "client"
    git.run("init", "-q", "-b", "main", str(client))
    for i in range(20):
        (client / f"src{i}.py").write_text(f"print({i})\n")
    git.run("add", "-A", cwd=client)
    git.run("commit", "-q", "-m", "base", cwd=client)
    git.init_bare(server)
    git.run("push", "-q", str(server), "main", cwd=client)
    repo = GitRepo.at(server)
    refs = {"refs/heads/main": git.out("rev-parse", "main", cwd=client)}
    entries: dict[str, bytes] = {}

    def open_attempt(attempt: str, model: str | None) -> tuple[ledger.AttemptState | None, str]:
        state = None
        tip = None
        for kind in ("opened", "model-selected") if model else ("opened",):
            fields: dict[str, str] = ({"workspace": "ws", "workspace_generation": f"g-{attempt}",
                                       "prompt_sha256": PROMPT_SHA, "target": "refs/heads/main"}
                                      if kind == "opened" else {"model_id": model or ""})
            data = ledger.make_record(akey, state, attempt_id=attempt, kind=kind, repository=hooks.REPOSITORY_ID,
                                      now=now, **fields)
            tip = record_commit(repo, ledger.RECORD_FILE, data, tip, f"gate attempt {attempt}: {kind}\n", now)
            state, _ = ledger.fold(ledger.read_entries(Objects(repo), tip, None), None, now, attempt)
        assert tip is not None
        return state, tip

    for i in range(attempts):
        attempt = f"seed-{i:06d}"
        state, tip = open_attempt(attempt, None)
        if archived:
            entries.update(archive.entries_for(attempt, f"g-{attempt}", []))
        else:
            assert state is not None
            refs[ATTEMPTS_PREFIX + attempt] = tip
            refs[generation_ref(state.workspace_generation)] = state.root
    if archived and entries:
        tree = repo.write_nested_tree(None, entries)
        refs[archive.ARCHIVE_REF] = repo.write_commit(tree, [], "seeded archive\n", "gate ledger",
                                                      "ledger@gate.invalid", now)
    state, tip = open_attempt(REVIEWED, "model-b")
    assert state is not None
    refs[ATTEMPTS_PREFIX + REVIEWED] = tip
    refs[generation_ref(state.workspace_generation)] = state.root
    _write_packed_refs(server, refs)
    # The client: everything the three pushes send.
    git.run("fetch", "-q", str(server), "+refs/gate/*:refs/gate/*", cwd=client)
    base = refs["refs/heads/main"]
    (client / "src0.py").write_text("print('reviewed')\n")
    git.run("commit", "-q", "-am", "agent: reviewed change", cwd=client)
    head = git.out("rev-parse", "HEAD", cwd=client)
    local = GitRepo.at(client)
    objects = Objects(local)
    expected = Expectations(REVIEWED, "model-b", state.workspace_generation, PROMPT_SHA,
                            tree_delta_digest(objects, base, head), DIFF_TREE_DELTA, hooks.REPOSITORY_ID,
                            REVIEW_PREFIX + REVIEWED, "0" * 40, base, head, objects.commit(head).tree_id, "sha1",
                            state.model_record)
    sealed = seal_document(expected.receipt_document("pass", ["benchmark"], now, now + 30 * 86400), rkey)
    receipt = record_commit(local, ledger.RECEIPT_FILE, sealed, None, "receipt\n", now)
    (client / "src1.py").write_text("print('plain')\n")
    git.run("commit", "-q", "-am", "human: plain change", cwd=client)
    plain = git.out("rev-parse", "HEAD", cwd=client)
    new = "bench-new-attempt"
    data = ledger.make_record(akey, None, attempt_id=new, kind="opened", repository=hooks.REPOSITORY_ID, now=now,
                              workspace="ws", workspace_generation=f"g-{new}", prompt_sha256=PROMPT_SHA)
    opened = record_commit(local, ledger.RECORD_FILE, data, None, f"gate attempt {new}: opened\n", now)
    refspecs = {"open": [f"{opened}:{ATTEMPTS_PREFIX}{new}", f"{opened}:{generation_ref(f'g-{new}')}"],
                "review": [f"{head}:{REVIEW_PREFIX}{REVIEWED}", f"{receipt}:{RECEIPTS_PREFIX}{REVIEWED}"],
                "plain": [f"{plain}:refs/heads/main"]}
    (path / "seeded.json").write_text(json.dumps({"attempts": attempts, "archived": archived, "refspecs": refspecs}))
