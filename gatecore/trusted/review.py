"""The runner's commands: `gate review record` and `gate review push`.

The runner takes only `verdict` and `reasons` from the model's output (`gatecore.modeloutput`:
other members ignored, one fenced JSON block read, anything else refused naming the file)
and computes every other receipt field itself: the git state from the objects, the model, generation and
prompt digest from the ledger as the server holds it, the review ref's current value on
the server (the optimistic lock), and the base of the reviewed diff: by default the merge
base of the reviewed commit with the attempt's target branch as the server has it, never
a branch of the clone (which the agent may have moved).

Both commands are safe to retry: run again after a push that landed, they find the review
and its receipt on the server and push nothing; `record` run again finds the receipt it would
seal already in `--out` (never overwritten) and hands that on. The receipt file is written
without following a symlink anywhere on its path: the scoring directory lies in the
agent-writable workspace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .. import digest, envelope, modeloutput, strictjson
from ..adapters import files, gitcmd
from ..adapters.gitrepo import GitRepo
from ..binding import Expectations
from ..errors import GateError
from ..keys import SigningKey
from ..ledger import RECEIPT_FILE
from ..objects import Objects, single_file
from ..receipt import DIFF_TREE_DELTA, MAX_LIFETIME_SECONDS, seal_document
from ..refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from .attempts import ALREADY, attempt_state, check_attempt_id, open_clone, record_commit, restore


def server_base(repo_path: Path, remote: str, target: str | None, head: str, env: gitcmd.Env = None) -> str:
    """The merge base of `head` with the target branch as the server has it now."""
    target = target or gitcmd.remote_head(repo_path, remote, env)
    if target is None:
        raise GateError("GATE-INPUT-ARGUMENT", f"{remote} names no HEAD branch; pass --base")
    gitcmd.run_git(["fetch", "--quiet", "--no-tags", remote, target], cwd=repo_path, code="GATE-GIT-REPOSITORY",
                   env=env)
    tip = gitcmd.run_git(["rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}"], cwd=repo_path,
                         code="GATE-GIT-REPOSITORY").stdout.decode("ascii").strip()
    base = GitRepo.at(repo_path).merge_base(tip, head)
    if base is None:
        raise GateError("GATE-BIND-BASE-COMMIT", f"{head[:12]} shares no history with {target} on {remote}")
    return base


def record_review(repo_path: Path, attempt: str, base_rev: str | None, head_rev: str, model_output: bytes,
                  key: SigningKey, out: Path, remote: str | None, old: str | None, ttl: int, now: int,
                  repository_id: str | None = None, env: gitcmd.Env = None, origin: str = "(given)") -> Path:
    """Seal a receipt for base..head of this attempt; only verdict and reasons come from the model
    (`origin`: where the output came from, for messages)."""
    check_attempt_id(attempt)
    answer = modeloutput.read(model_output, origin)  # refused before anything is read from git
    open_clone(repo_path)
    if not 0 < ttl <= MAX_LIFETIME_SECONDS:
        raise GateError("GATE-INPUT-ARGUMENT", "--ttl must be between 1 second and 30 days")
    review_ref = REVIEW_PREFIX + attempt
    if remote is not None:
        gitcmd.sync_ref(repo_path, remote, ATTEMPTS_PREFIX + attempt, env=env)
        if old is None:
            old = gitcmd.ls_remote(repo_path, remote, review_ref, env=env).get(review_ref)
    repo = GitRepo.at(repo_path)
    state = attempt_state(repo, attempt, now)
    if state is None:
        raise GateError("GATE-LEDGER-MISSING", f"attempt {attempt} has no ledger")
    if state.model_id is None:
        raise GateError("GATE-LEDGER-NO-MODEL", f"attempt {attempt} has no model on record")
    head = repo.resolve(head_rev)
    if base_rev is not None:
        base = repo.resolve(base_rev)
    elif remote is not None:
        base = server_base(repo_path, remote, state.target, head, env)
    else:
        raise GateError("GATE-INPUT-ARGUMENT", "without --remote, --base is required")
    objects = Objects(repo)
    expected = Expectations(
        attempt_id=attempt, model_id=state.model_id, workspace_generation=state.workspace_generation,
        prompt_sha256=state.prompt_sha256, diff_sha256=digest.tree_delta_digest(objects, base, head),
        diff_algorithm=DIFF_TREE_DELTA, repository=repository_id or state.repository, ref=review_ref,
        old_commit=old or repo.zero_id, base_commit=base, new_commit=head, new_tree=objects.commit(head).tree_id,
        object_format=repo.object_format, ledger_record=state.model_record,
    )
    doc = expected.receipt_document(answer.verdict, answer.reasons, now, now + ttl)
    if _same_receipt(out, doc, now):
        return out  # a retry: the receipt this run would seal is there already (never overwritten)
    return files.write_new(out, seal_document(doc, key), "GATE-INPUT-PATH", parents=True)


_TIMES = ("issued_at", "expires_at")


def _same_receipt(out: Path, doc: dict[str, object], now: int) -> bool:
    """Does `out` already hold a receipt that says all `doc` says (but when it was issued) and is
    still valid? Then a retry pushes it instead of failing on a file it must never overwrite.
    Whatever the file holds, the gate still verifies its seal and every field."""
    if not os.path.lexists(out):
        return False
    try:
        found = strictjson.loads(envelope.parse(files.read_capped(out, "GATE-INPUT-PATH", "receipt",
                                                                  strictjson.MAX_DOCUMENT_BYTES)).payload)
    except GateError:
        return False
    if not isinstance(found, dict) or not isinstance(found.get("expires_at"), int) or found["expires_at"] <= now:
        return False
    return {k: v for k, v in found.items() if k not in _TIMES} == {k: v for k, v in doc.items() if k not in _TIMES}


def landed(repo_path: Path, remote: str, attempt: str, head: str, payload: str | None = None,
           bound: Mapping[str, object] | None = None, env: gitcmd.Env = None) -> bool:
    """Does the server hold the review of `head` for this attempt, its receipt on record (the
    receipt with sealed-payload digest `payload`, or binding the `bound` values, if given)?
    Then a retry has nothing to do."""
    receipts_ref, review_ref = RECEIPTS_PREFIX + attempt, REVIEW_PREFIX + attempt
    refs = gitcmd.ls_remote(repo_path, remote, review_ref, receipts_ref, env=env)
    if refs.get(review_ref) != head or receipts_ref not in refs:
        return False
    gitcmd.fetch_ref(repo_path, remote, receipts_ref, "GATE-REVIEW-RECEIPT-REF", env)
    objects = Objects(GitRepo.at(repo_path))
    try:
        data = single_file(objects, objects.commit(refs[receipts_ref]).tree_id, RECEIPT_FILE,
                           "GATE-REVIEW-RECEIPT-REF", "GATE-RECEIPT-TOO-LARGE")
        doc = strictjson.loads(envelope.parse(data).payload)
    except GateError:
        return False
    if not isinstance(doc, dict) or (doc.get("ref"), doc.get("new_commit")) != (review_ref, head):
        return False
    return ((payload is None or envelope.payload_digest(data) == payload)
            and all(doc.get(k) == v for k, v in (bound or {}).items()))


def review_landed(repo_path: Path, attempt: str, head_rev: str, remote: str, env: gitcmd.Env = None) -> bool:
    """`gate review record --push` run again after its push landed: nothing to do. (Landed for
    the model now on record: after a failover the review is the new model's to make.)"""
    check_attempt_id(attempt)
    open_clone(repo_path)
    gitcmd.sync_ref(repo_path, remote, ATTEMPTS_PREFIX + attempt, env=env)
    repo = GitRepo.at(repo_path)
    state = attempt_state(repo, attempt, 0)
    if state is None or state.model_id is None:
        return False  # record_review says what is missing
    return landed(repo_path, remote, attempt, repo.resolve(head_rev),
                  bound={"model_id": state.model_id, "ledger_record": state.model_record}, env=env)


def push_review(repo_path: Path, attempt: str, receipt_file: Path, remote: str, now: int,
                env: gitcmd.Env = None) -> gitcmd.PushResult:
    """Push the reviewed commit to review/runner/<id> and its receipt, in one atomic push (nothing,
    when a retry finds them on the server already)."""
    check_attempt_id(attempt)
    open_clone(repo_path)
    data = files.read_capped(receipt_file, "GATE-RECEIPT-MISSING", "receipt", strictjson.MAX_DOCUMENT_BYTES)
    doc = strictjson.loads(envelope.parse(data).payload)
    if not isinstance(doc, dict) or not isinstance(doc.get("new_commit"), str):
        raise GateError("GATE-RECEIPT-FIELD", "the receipt names no new_commit")
    head = doc["new_commit"]
    old = doc.get("old_commit")
    if landed(repo_path, remote, attempt, head, envelope.payload_digest(data), env=env):
        return gitcmd.PushResult(True, ALREADY)
    receipts_ref = RECEIPTS_PREFIX + attempt
    review_ref = REVIEW_PREFIX + attempt
    gitcmd.sync_ref(repo_path, remote, receipts_ref, env=env)
    repo = GitRepo.at(repo_path)
    parent = repo.ref_target(receipts_ref)
    commit = record_commit(repo, RECEIPT_FILE, data, parent, f"gate receipt {attempt}\n", now)
    repo.set_ref(receipts_ref, commit, parent)
    lease_old = "" if not isinstance(old, str) or old == repo.zero_id else old
    result = gitcmd.push(repo_path, remote, f"+{head}:{review_ref}", f"{receipts_ref}:{receipts_ref}", atomic=True,
                         lease=f"{review_ref}:{lease_old}", env=env)
    if not result.ok:
        restore(repo, receipts_ref, parent, commit)
    return result
