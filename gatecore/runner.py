"""The trusted side's ledger and review commands (`gate attempt ...`, `gate review ...`).

They write to a local clone and push to the server with plain `git push`; the server's
gate validates everything they push. The runner takes only `verdict` and `reasons` from
the model's output and computes every other receipt field itself: the git state from
the objects, the model, generation and prompt digest from the ledger.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import digest, envelope, ids, ledger, strictjson
from .errors import GateError, InputError
from .filereceipts import seal_receipt, write_new
from .gitrepo import GitRepo
from .keys import SigningKey
from .namespaces import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from .receipt import DIFF_TREE_DELTA, MAX_LIFETIME_SECONDS

RECEIPT_FILE = "receipt.json"


@dataclass(frozen=True, slots=True)
class PushResult:
    ok: bool
    output: str


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


def remote_ref(repo: Path, remote: str, ref: str) -> str | None:
    out = _git(repo, "ls-remote", remote, ref)
    if out.returncode != 0:
        raise GateError("GATE-GIT-REPOSITORY", f"cannot list {remote}: {out.stderr.strip()}")
    for line in out.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name == ref:
            return oid
    return None


def sync_ref(repo: Path, remote: str, ref: str) -> None:
    """Make the local ref equal the remote's (or absent), so that appends extend the server's chain."""
    oid = remote_ref(repo, remote, ref)
    if oid is None:
        _git(repo, "update-ref", "-d", ref)
        return
    out = _git(repo, "fetch", "--quiet", "--no-tags", remote, f"+{ref}:{ref}")
    if out.returncode != 0:
        raise GateError("GATE-LEDGER-UNREADABLE", f"cannot fetch {ref} from {remote}: {out.stderr.strip()}")


def push(repo: Path, remote: str, *refspecs: str, atomic: bool = False, lease: str | None = None) -> PushResult:
    args = ["push", "--porcelain"]
    if atomic:
        args.append("--atomic")
    if lease is not None:
        args.append(f"--force-with-lease={lease}")
    out = _git(repo, *args, remote, *refspecs)
    return PushResult(out.returncode == 0, (out.stdout + out.stderr).strip())


def _check_attempt(attempt: str) -> None:
    if not ids.is_attempt_id(attempt):
        raise InputError("GATE-INPUT-ARGUMENT", f"attempt id {attempt!r} is not of the allowed form")


def _key(key: SigningKey, purpose: str) -> None:
    if key.purpose != purpose:
        raise InputError("GATE-CONFIG-KEYFILE", f"key {key.id} is for {key.purpose}, not {purpose}")


def attempt_state(repo: GitRepo, attempt: str) -> ledger.AttemptState | None:
    tip = repo.ref_target(ATTEMPTS_PREFIX + attempt)
    return None if tip is None else ledger.read_state(repo, tip, None, int(time.time()), attempt)


def append_record(repo_path: Path, attempt: str, key: SigningKey, kind: str, remote: str | None, *,
                  repository: str | None = None, workspace: str | None = None,
                  workspace_generation: str | None = None, prompt_sha256: str | None = None,
                  model_id: str | None = None, note: str | None = None,
                  ) -> tuple[ledger.AttemptState, PushResult | None]:
    """Append one record to the attempt's ledger (after syncing it from `remote`), then push it."""
    _check_attempt(attempt)
    _key(key, "attempt")
    ref = ATTEMPTS_PREFIX + attempt
    if remote is not None:
        sync_ref(repo_path, remote, ref)
    repo = GitRepo.at(repo_path)
    state = attempt_state(repo, attempt)
    if kind == "opened" and state is not None:
        raise InputError("GATE-LEDGER-SEQUENCE", f"attempt {attempt} is already open")
    if kind != "opened" and state is None:
        raise InputError("GATE-LEDGER-MISSING", f"attempt {attempt} has no ledger; open it first")
    repository = repository or (state.repository if state else None)
    if repository is None:
        raise InputError("GATE-INPUT-ARGUMENT", "--repository-id is required to open an attempt")
    data = ledger.make_record(key, state, attempt_id=attempt, kind=kind, repository=repository,
                              workspace=workspace, workspace_generation=workspace_generation,
                              prompt_sha256=prompt_sha256, model_id=model_id, note=note)
    parent = repo.ref_target(ref)
    commit = ledger.append(repo, attempt, data, parent, kind)
    new_state = attempt_state(repo, attempt)
    assert new_state is not None
    if remote is None:
        return new_state, None
    result = push(repo_path, remote, f"{ref}:{ref}")
    if not result.ok:  # the server refused: put the local ledger back as it was
        _restore(repo_path, repo, ref, parent, commit)
    return new_state, result


def _restore(repo_path: Path, repo: GitRepo, ref: str, parent: str | None, current: str) -> None:
    if parent:
        repo.set_ref(ref, parent, current)
    else:
        _git(repo_path, "update-ref", "-d", ref, current)


def record_review(repo_path: Path, attempt: str, base_rev: str, head_rev: str, model_output: bytes,
                  key: SigningKey, out: Path, remote: str | None, old: str | None, ttl: int,
                  repository_id: str | None = None) -> Path:
    """Seal a receipt for base..head of this attempt; only verdict and reasons come from the model."""
    _check_attempt(attempt)
    _key(key, "receipt")
    if not 0 < ttl <= MAX_LIFETIME_SECONDS:
        raise InputError("GATE-INPUT-ARGUMENT", "--ttl must be between 1 second and 30 days")
    review_ref = REVIEW_PREFIX + attempt
    if remote is not None:
        sync_ref(repo_path, remote, ATTEMPTS_PREFIX + attempt)
        if old is None:
            old = remote_ref(repo_path, remote, review_ref)
    repo = GitRepo.at(repo_path)
    state = attempt_state(repo, attempt)
    if state is None:
        raise InputError("GATE-LEDGER-MISSING", f"attempt {attempt} has no ledger")
    if state.model_id is None:
        raise InputError("GATE-LEDGER-NO-MODEL", f"attempt {attempt} has no model on record")
    output = strictjson.loads(model_output, code="GATE-INPUT-ARGUMENT")
    if not isinstance(output, dict) or "verdict" not in output or "reasons" not in output:
        raise InputError("GATE-INPUT-ARGUMENT", "model output must be a JSON object with verdict and reasons")
    base = repo.resolve(base_rev)
    head = repo.resolve(head_rev)
    now = int(time.time())
    data = seal_receipt({
        "version": 1, "attempt_id": attempt, "diff_algorithm": DIFF_TREE_DELTA,
        "diff_sha256": digest.tree_delta_digest(repo, base, head), "prompt_sha256": state.prompt_sha256,
        "model_id": state.model_id, "workspace_generation": state.workspace_generation,
        "verdict": output["verdict"], "reasons": output["reasons"], "issued_at": now, "expires_at": now + ttl,
        "repository": repository_id or state.repository, "ref": review_ref,
        "old_commit": old or repo.zero_id, "base_commit": base, "new_commit": head,
        "new_tree": repo.commit(head).tree_id, "object_format": repo.object_format,
        "ledger_record": state.model_record,
    }, key)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_new(out, data)


def push_review(repo_path: Path, attempt: str, receipt_file: Path, remote: str) -> PushResult:
    """Push the reviewed commit to review/runner/<id> and its receipt, in one atomic push."""
    _check_attempt(attempt)
    try:
        data = receipt_file.read_bytes()
    except OSError as exc:
        raise InputError("GATE-RECEIPT-MISSING", f"cannot read {receipt_file}: {exc.strerror}") from None
    env = envelope.parse(data)
    doc = strictjson.loads(env.payload)
    if not isinstance(doc, dict) or not isinstance(doc.get("new_commit"), str):
        raise InputError("GATE-RECEIPT-FIELD", "the receipt names no new_commit")
    head = doc["new_commit"]
    old = doc.get("old_commit")
    receipts_ref = RECEIPTS_PREFIX + attempt
    review_ref = REVIEW_PREFIX + attempt
    sync_ref(repo_path, remote, receipts_ref)
    repo = GitRepo.at(repo_path)
    parent = repo.ref_target(receipts_ref)
    tree = repo.write_tree({RECEIPT_FILE: data})
    commit = repo.write_commit(tree, [parent] if parent else [], f"gate receipt {attempt}\n",
                               ledger.LEDGER_NAME, ledger.LEDGER_EMAIL)
    repo.set_ref(receipts_ref, commit, parent)
    lease_old = "" if not isinstance(old, str) or old == repo.zero_id else old
    result = push(repo_path, remote, f"+{head}:{review_ref}", f"{receipts_ref}:{receipts_ref}", atomic=True,
                  lease=f"{review_ref}:{lease_old}")
    if not result.ok:
        _restore(repo_path, repo, receipts_ref, parent, commit)
    return result
