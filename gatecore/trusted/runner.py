"""The runner's commands: `gate review run`, `gate review record` and `gate review push`.

`run` calls the model itself (`gatecore.records.modelcall`): it passes the model's command a request
built from the attempt's prompt and the diff it seals, with a fresh challenge, and seals the
answer the command prints, if it carries the challenge and no other model served it. `record`
seals a model's output file: the weaker path, for runners that cannot call the model (a file
cannot say which model wrote it, for which request, or when). Either way the runner takes only
`verdict` and `reasons` from the model's answer (`gatecore.records.modeloutput`: other members ignored,
one fenced JSON block read, anything else refused naming where it came from) and computes
every other receipt field itself: the git state from the objects, the model, generation and
prompt digest from the ledger as the server holds it, the review ref's current value on
the server (the optimistic lock), and the base of the reviewed diff: by default the merge
base of the reviewed commit with the attempt's target branch as the server has it, never
a branch of the clone (which the agent may have moved).

The commands are safe to retry: run again after a push that landed, they find the review
and its receipt on the server and push nothing; `record` run again finds the receipt it would
seal already in `--out` (never overwritten) and hands that on, and so does `run` when `--out`
holds a receipt of the same binding from a call of the model (without calling it again). The receipt file is written
without following a symlink anywhere on its path: the scoring directory lies in the
agent-writable workspace.

On a hosted forge the ledger is kept in a repository of its own (`ledger_remote`,
`--ledger-remote`; docs/forges.md): the attempt's ledger and its receipt ref are read from and
pushed to that one, never the forge's copies, which an agent can write; the review ref and the
target branch stay on the remote (the forge). Two repositories take no atomic push: the receipt
goes to the ledger first, then the review ref to the forge. A receipt without its review ref
moves nothing the check judges (it judges the review ref a pull request names), while a review
ref without its receipt fails the check; and a retry after the first push landed finds its
receipt at the tip of the ledger's receipt ref and pushes the review ref alone (committed twice,
the receipt would be a replay).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .. import strictjson
from ..adapters import files, gitcmd
from ..adapters.gitrepo import GitRepo
from ..checks.binding import Expectations, review_expectations
from ..errors import GateError
from ..git import digest
from ..git.objects import Objects, single_file
from ..git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX
from ..records import modeloutput
from ..records.ledger import RECEIPT_FILE, AttemptState
from ..records.receipt import BOUND, MAX_LIFETIME_SECONDS, MODEL_RUN_FILE, MODEL_RUN_RUNNER, Receipt, seal_document
from ..signing import envelope
from ..signing.keys import SigningKey
from ..signing.seal import sealed_by
from ..valueclass import valueclass
from .attempts import (
    ALREADY,
    LOCAL,
    attempt_state,
    check_attempt_id,
    ledger_of,
    open_clone,
    record_commit,
    restore,
    sync_ledger,
)

if TYPE_CHECKING:
    from ..configuration.modelnames import ModelNames


def server_base(repo_path: Path, remote: str, target: str | None, head: str, env: gitcmd.Env = None) -> str:
    """The merge base of `head` with the target branch as the server has it now."""
    target = target or gitcmd.remote_head(repo_path, remote, env)
    if target is None:
        raise GateError("GATE-INPUT-ARGUMENT", f"{remote} names no HEAD branch; pass --base")
    gitcmd.run_git(["fetch", "--quiet", "--no-tags", remote, target], cwd=repo_path, code="GATE-GIT-REPOSITORY",
                   env=env, transport=True)
    tip = gitcmd.run_git(["rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}"], cwd=repo_path,
                         code="GATE-GIT-REPOSITORY").stdout.decode("ascii").strip()
    base = GitRepo.at(repo_path).merge_base(tip, head)
    if base is None:
        raise GateError("GATE-BIND-BASE-COMMIT", f"{head[:12]} shares no history with {target} on {remote}")
    return base


@valueclass(frozen=True, slots=True)
class Review:
    """What the runner binds a review of this attempt to, before it has an answer."""

    state: AttemptState
    expected: Expectations
    repo: GitRepo


def _prepare(repo_path: Path, attempt: str, base_rev: str | None, head_rev: str, remote: str | None, old: str | None,
             ttl: int, now: int, repository_id: str | None, env: gitcmd.Env, ledger_remote: str | None) -> Review:
    """The attempt as the ledger has it (synced from `ledger_remote`, else `remote`), the review
    ref's value on `remote`, the base and head, and every field the receipt binds
    (`binding.review_expectations`)."""
    store = ledger_of(remote, ledger_remote, "--remote", repo_path)
    open_clone(repo_path)
    if not 0 < ttl <= MAX_LIFETIME_SECONDS:
        raise GateError("GATE-INPUT-ARGUMENT", "--ttl must be between 1 second and 30 days")
    review_ref = REVIEW_PREFIX + attempt
    repo = GitRepo.at(repo_path)
    tip: str | None = LOCAL
    if remote is not None and store is not None:
        tip = sync_ledger(repo_path, store, attempt, env)
        if old is None:
            old = gitcmd.ls_remote(repo_path, remote, review_ref, env=env).get(review_ref)
    state = attempt_state(repo, attempt, now, tip)
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
    expected = review_expectations(
        state, repository_id=repository_id or state.repository, ref=review_ref, old=old or repo.zero_id, base=base,
        new=head, new_tree=objects.commit(head).tree_id, object_format=repo.object_format,
        diff_sha256=digest.tree_delta_digest(objects, base, head))
    return Review(state, expected, repo)


def record_review(repo_path: Path, attempt: str, base_rev: str | None, head_rev: str, model_output: bytes,
                  key: SigningKey, out: Path, remote: str | None, old: str | None, ttl: int, now: int,
                  repository_id: str | None = None, env: gitcmd.Env = None, origin: str = "(given)",
                  ledger_remote: str | None = None) -> Path:
    """Seal a receipt for base..head of this attempt from a model's output file: only verdict and
    reasons come from the model (`origin`: where the output came from, for messages). The weaker
    path: the runner cannot tell which model wrote the file, for which request, or when
    (`run_review` can); the receipt says so (`model_run: "file"`)."""
    check_attempt_id(attempt)
    answer = modeloutput.read(model_output, origin)  # refused before anything is read from git
    review = _prepare(repo_path, attempt, base_rev, head_rev, remote, old, ttl, now, repository_id, env, ledger_remote)
    doc = review.expected.receipt_document(answer.verdict, answer.reasons, now, now + ttl, model_run=MODEL_RUN_FILE)
    if _same_receipt(out, doc, now, _TIMES, key):
        return out  # a retry: the receipt this run would seal is there already (never overwritten)
    _open(review.state)
    if os.path.lexists(out):
        raise occupied(out, doc, now, _TIMES)
    return files.write_new(out, seal_document(doc, key), "GATE-INPUT-PATH", parents=True)


def _open(state: AttemptState) -> None:
    """No receipt is sealed for a closed attempt (GATE-LEDGER-CLOSED), whoever would judge it: a hook
    refuses its push, but a forge's check judges a review at the close, and a receipt sealed within
    the clock's allowance after it passed there (docs/forges.md). (A retry that finds the receipt it
    would seal, sealed before the close, hands that one on: `_same_receipt`.)"""
    if state.closed:
        raise GateError("GATE-LEDGER-CLOSED", f"attempt {state.attempt_id} is closed: no review is sealed for it "
                                              "(open a new attempt)")


#: What a review request's change may weigh (its text, `changetext`): more is GATE-REVIEW-CHANGE-TOO-LARGE.
MAX_REQUEST_DIFF_BYTES = 64 << 20


def run_review(repo_path: Path, attempt: str, base_rev: str | None, head_rev: str, prompt_file: Path, command: str,
               key: SigningKey, out: Path, remote: str | None, old: str | None, ttl: int, now: int,
               timeout: float, repository_id: str | None = None, env: gitcmd.Env = None,
               notes: list[str] | None = None, ledger_remote: str | None = None) -> Path:
    """Call the model and seal its answer, with nothing on disk in between (`gatecore.records.modelcall`):
    the request built from the prompt the ledger holds (the file's SHA-256 must be the attempt's
    `prompt_sha256`) and the diff this receipt seals, with a fresh challenge, passed to `command`
    on stdin; the answer taken from its stdout, carrying that challenge, from the model selected."""
    from ..adapters import modelcmd
    from ..records import modelcall
    from .filereceipts import MAX_PROMPT_BYTES

    check_attempt_id(attempt)
    if not timeout > 0:
        raise GateError("GATE-INPUT-ARGUMENT", "--model-timeout must be a positive number of seconds")
    prompt = files.read_capped(prompt_file, "GATE-INPUT-ARGUMENT", "prompt file", MAX_PROMPT_BYTES)
    review = _prepare(repo_path, attempt, base_rev, head_rev, remote, old, ttl, now, repository_id, env, ledger_remote)
    state, expected = review.state, review.expected
    if hashlib.sha256(prompt).hexdigest() != state.prompt_sha256:
        raise GateError("GATE-BIND-PROMPT", f"{prompt_file} is not the prompt the ledger holds for attempt "
                                            f"{attempt} (its SHA-256 differs from the opened record's "
                                            "prompt_sha256): the model is asked with the attempt's prompt only")
    model = expected.model_id
    bound = {k: v for k, v in expected.receipt_document(None, None, 0, 0, model_run=MODEL_RUN_RUNNER).items()
             if k not in _ANSWER}
    if _same_receipt(out, bound, now, _ANSWER, key):
        return out  # a retry: this binding's receipt, from a call of the model, is there already
    _open(state)
    if os.path.lexists(out):  # refused before the model is called, not after
        raise occupied(out, bound, now, _ANSWER)
    challenge = modelcall.challenge(secrets.token_hex(16), attempt, expected.workspace_generation,
                                    expected.diff_sha256, model)
    request = _request(Objects(review.repo), prompt, expected, challenge)
    stdout = modelcmd.run(command, request, timeout, {modelcall.ENV_MODEL: model, modelcall.ENV_ATTEMPT: attempt},
                          notes)
    got = modelcall.read_answer(stdout, challenge, model, "the model's command", _model_names())
    if notes is not None:
        notes += got.answer.notes("the model's command")
    doc = expected.receipt_document(got.answer.verdict, got.answer.reasons, now, now + ttl,
                                    model_run=MODEL_RUN_RUNNER, served_model=got.served_model, challenge=challenge,
                                    request_sha256=hashlib.sha256(request).hexdigest())
    return files.write_new(out, seal_document(doc, key), "GATE-INPUT-PATH", parents=True)


def _request(objects: Objects, prompt: bytes, bound: Expectations | Receipt, challenge: str) -> bytes:
    """The request the model's command reads: a function of the prompt, the bound values, the
    challenge and the objects alone (`modelcall.request`; the change's text, `changetext`), so that
    whoever holds them rebuilds it byte for byte (`request_of`)."""
    from ..git import changetext
    from ..records import modelcall

    assert bound.base_commit is not None and bound.new_commit is not None  # every review binds both
    change = changetext.change_text(objects, bound.base_commit, bound.new_commit, MAX_REQUEST_DIFF_BYTES)
    return modelcall.request(prompt.decode("utf-8", "replace"), change.text, challenge=challenge,
                             attempt=bound.attempt_id, generation=bound.workspace_generation, model=bound.model_id,
                             diff_sha256=bound.diff_sha256)


def request_of(repo_path: Path, receipt: bytes, prompt: bytes) -> bytes:
    """What the model was shown for a receipt of `gate review run`: its request, rebuilt from the
    receipt (an envelope's bytes; its seal is the gate's to judge), the attempt's prompt and the
    repository's objects, and held to the receipt's `request_sha256`. GATE-BIND-PROMPT for another
    prompt than the receipt's; GATE-RECEIPT-FIELD for a receipt that names no request, or whose
    request this is not (another runner's rendering)."""
    from ..records.receipt import parse_payload

    found, problems = parse_payload(envelope.parse(receipt).payload)
    if found is None:
        raise GateError(problems[0].code, f"{problems[0].field}: {problems[0].detail}")
    if found.request_sha256 is None or found.challenge is None or found.base_commit is None:
        raise GateError("GATE-RECEIPT-FIELD", "the receipt names no request: it was not sealed by gate review run "
                                              "(or by one before the request was recorded)")
    if hashlib.sha256(prompt).hexdigest() != found.prompt_sha256:
        raise GateError("GATE-BIND-PROMPT", "the prompt is not the one the receipt names (prompt_sha256)")
    request = _request(Objects(GitRepo.at(repo_path)), prompt, found, found.challenge)
    if hashlib.sha256(request).hexdigest() != found.request_sha256:
        raise GateError("GATE-RECEIPT-FIELD", "the request rebuilt from the receipt, the prompt and the objects is "
                                              "not the one the receipt names (request_sha256): another runner's "
                                              "rendering of the change")
    return request


def _model_names() -> ModelNames:
    """How the runner reads the model a tool reports served the answer: the packaged model-id
    table (the runner holds no policy, so no [review.models]: an id the table does not place must
    be the one on record, spelled alike)."""
    from ..adapters.config import load_model_names
    from ..configuration.modelnames import ModelNames

    return ModelNames.from_plain(load_model_names().plain)


_TIMES = ("issued_at", "expires_at")
#: What a model's answer (and when) gives a receipt: a retry of a call of the model asks again only
#: if the receipt it finds binds anything else.
_ANSWER = (*_TIMES, "verdict", "reasons", "served_model", "challenge", "request_sha256")


def _same_receipt(out: Path, doc: dict[str, object], now: int, besides: tuple[str, ...], key: SigningKey) -> bool:
    """Does `out` already hold a receipt that says all `doc` says (but `besides`) and is still
    valid? Then a retry pushes it instead of failing on a file it must never overwrite. One this
    runner's `key` did not seal (the scoring directory is the agent's to write) is refused,
    GATE-INPUT-PATH: with the ledger apart no hook verifies it before it is spent there."""
    if not os.path.lexists(out):
        return False
    try:
        data = files.read_capped(out, "GATE-INPUT-PATH", "receipt", strictjson.MAX_DOCUMENT_BYTES)
        found = strictjson.loads(envelope.parse(data).payload)
    except GateError:
        return False
    if not isinstance(found, dict) or not isinstance(found.get("expires_at"), int) or found["expires_at"] <= now:
        return False
    if ({k: v for k, v in found.items() if k not in besides}
            != {k: v for k, v in doc.items() if k not in besides}):
        return False
    if not sealed_by(data, key, envelope.PAYLOAD_RECEIPT):
        raise GateError("GATE-INPUT-PATH", f"{out} holds a receipt of this very review that key {key.id} did not "
                                           "seal (this runner's key: another's writing): nothing is handed on or "
                                           "written; remove it, or write to another --out")
    return True


def occupied(out: Path, doc: dict[str, object], now: int, besides: tuple[str, ...]) -> GateError:
    """`--out` exists and holds nothing this run may hand on (`_same_receipt` said no): the refusal
    (GATE-INPUT-PATH, nothing written) says whose receipt the file holds, as read from the file
    (its seal is not checked here: the gate checks it), how it differs from this review, and the
    file to write instead: one per model, as docs/ci-example.sh names them."""
    import re

    attempt, model, generation = (str(doc.get(k)) for k in ("attempt_id", "model_id", "workspace_generation"))
    try:
        found = strictjson.loads(envelope.parse(files.read_capped(out, "GATE-INPUT-PATH", "receipt",
                                                                  strictjson.MAX_DOCUMENT_BYTES)).payload)
    except (GateError, ValueError):
        found = None
    if isinstance(found, dict) and all(isinstance(found.get(k), str) for k in ("attempt_id", "model_id")):
        held = (f"the receipt of attempt {found['attempt_id']}, model {found['model_id']}, generation "
                f"{str(found.get('workspace_generation'))[:16]} (as the file says: its seal is not checked here)")
        differ = [k for k in (*BOUND, "model_run") if k not in besides and found.get(k) != doc.get(k)]
        if differ:
            held += "; it differs from this review in " + ", ".join(
                f"{k} ({str(found.get(k))[:16]}, not {str(doc.get(k))[:16]})" for k in differ[:3])
        elif isinstance(found.get("expires_at"), int) and found["expires_at"] <= now:
            held += "; it is this review's, and it has expired"
    else:
        held = "no receipt this runner can read (not a sealed receipt)"
    name = "receipt-" + re.sub(r"[^A-Za-z0-9._-]", "-", model) + ".json"
    if out.name == name:
        name = "receipt-" + re.sub(r"[^A-Za-z0-9._-]", "-", f"{attempt}-{model}") + ".json"
    return GateError("GATE-INPUT-PATH", f"{out} exists and is never overwritten: it holds {held}. This review "
                                        f"is attempt {attempt}'s by model {model} (generation {generation[:16]}): "
                                        f"write it to a file of its own, one per model: --out "
                                        f"{out.parent / name}")


def _last_receipt(objects: Objects, tip: str | None) -> tuple[bytes, dict[str, object]] | None:
    """The receipt at the tip of a receipt ref (its envelope's bytes and payload), None when the
    ref is absent or its tip holds no readable receipt."""
    if tip is None:
        return None
    try:
        data = single_file(objects, objects.commit(tip).tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF",
                           "GATE-RECEIPT-TOO-LARGE")
        doc = strictjson.loads(envelope.parse(data).payload)
    except GateError:
        return None
    return (data, doc) if isinstance(doc, dict) else None


def landed(repo_path: Path, remote: str, attempt: str, head: str, payload: str | None = None,
           bound: Mapping[str, object] | None = None, env: gitcmd.Env = None,
           ledger_remote: str | None = None) -> bool:
    """Does the server hold the review of `head` for this attempt (the review ref on `remote`), its
    receipt on record (on `ledger_remote`, else `remote`: the receipt with sealed-payload digest
    `payload`, or binding the `bound` values, if given)? Then a retry has nothing to do."""
    receipts_ref, review_ref = RECEIPTS_PREFIX + attempt, REVIEW_PREFIX + attempt
    store = ledger_of(remote, ledger_remote, "--remote", repo_path) or remote
    if store == remote:
        refs = gitcmd.ls_remote(repo_path, remote, review_ref, receipts_ref, env=env)
    else:
        refs = {**gitcmd.ls_remote(repo_path, remote, review_ref, env=env),
                **gitcmd.ls_remote(repo_path, store, receipts_ref, env=env)}
    if refs.get(review_ref) != head or receipts_ref not in refs:
        return False
    gitcmd.fetch_ref(repo_path, store, receipts_ref, "GATE-REVIEW-RECEIPT-REF", env)
    last = _last_receipt(Objects(GitRepo.at(repo_path)), refs[receipts_ref])
    if last is None:
        return False
    data, doc = last
    if (doc.get("ref"), doc.get("new_commit")) != (review_ref, head):
        return False
    return ((payload is None or envelope.payload_digest(data) == payload)
            and all(doc.get(k) == v for k, v in (bound or {}).items()))


def review_landed(repo_path: Path, attempt: str, head_rev: str, remote: str, env: gitcmd.Env = None,
                  ledger_remote: str | None = None) -> bool:
    """`gate review record --push` run again after its push landed: nothing to do. (Landed for
    the model now on record: after a failover the review is the new model's to make.) The
    ledger and the receipt are read from `ledger_remote` where one is named, the review ref
    from `remote`: landed only when both are."""
    check_attempt_id(attempt)
    store = ledger_of(remote, ledger_remote, "--remote", repo_path) or remote
    open_clone(repo_path)
    tip = sync_ledger(repo_path, store, attempt, env)
    repo = GitRepo.at(repo_path)
    state = attempt_state(repo, attempt, 0, tip)
    if state is None or state.model_id is None:
        return False  # record_review says what is missing
    return landed(repo_path, remote, attempt, repo.resolve(head_rev),
                  bound={"model_id": state.model_id, "ledger_record": state.model_record}, env=env,
                  ledger_remote=ledger_remote)


@valueclass(frozen=True, slots=True)
class ReviewPush:
    """What `push_review` did: `ok` when the review ref and its receipt are both where they go;
    `output`, git's (of each push made); `receipt_only` when, with a ledger remote, the receipt
    landed on the ledger and the review ref did not land on the remote (a retry pushes it alone)."""

    ok: bool
    output: str
    receipt_only: bool = False


def push_review(repo_path: Path, attempt: str, receipt_file: Path, remote: str, now: int,
                env: gitcmd.Env = None, ledger_remote: str | None = None,
                key: SigningKey | None = None) -> ReviewPush:
    """Push the reviewed commit to review/runner/<id> and its receipt, in one atomic push (nothing,
    when a retry finds them on the server already). With `ledger_remote` (another repository than
    `remote`), the receipt to it first, then the review ref to `remote` (the module's docstring).
    `key`, the runner's: the receipt must be its seal (GATE-SEAL-BAD-SIGNATURE), and with the ledger
    apart it is required: no hook verifies a receipt before it is spent there (`receipt_file` is in
    the scoring directory, which the agent can write)."""
    check_attempt_id(attempt)
    store = ledger_of(remote, ledger_remote, "--remote", repo_path) or remote
    if store != remote and key is None:
        raise GateError("GATE-INPUT-ARGUMENT", "with --ledger-remote, --key (the runner's receipt key) is required: "
                                               "the receipt's seal is checked before it is spent on the ledger, "
                                               "where no hook verifies it and nothing takes it back")
    open_clone(repo_path)
    data = files.read_capped(receipt_file, "GATE-RECEIPT-MISSING", "receipt", strictjson.MAX_DOCUMENT_BYTES)
    if key is not None and not sealed_by(data, key, envelope.PAYLOAD_RECEIPT):
        raise GateError("GATE-SEAL-BAD-SIGNATURE", f"{receipt_file} is not a receipt key {key.id} sealed (this "
                                                   "runner's key: another's writing, or another key's): nothing was "
                                                   "pushed")
    doc = strictjson.loads(envelope.parse(data).payload)
    if not isinstance(doc, dict) or not isinstance(doc.get("new_commit"), str):
        raise GateError("GATE-RECEIPT-FIELD", "the receipt names no new_commit")
    head = doc["new_commit"]
    old = doc.get("old_commit")
    payload = envelope.payload_digest(data)
    if landed(repo_path, remote, attempt, head, payload, env=env, ledger_remote=ledger_remote):
        return ReviewPush(True, ALREADY)
    receipts_ref = RECEIPTS_PREFIX + attempt
    review_ref = REVIEW_PREFIX + attempt
    gitcmd.sync_ref(repo_path, store, receipts_ref, env=env)
    repo = GitRepo.at(repo_path)
    parent = repo.ref_target(receipts_ref)
    lease_old = "" if not isinstance(old, str) or old == repo.zero_id else old
    review = (f"+{head}:{review_ref}", f"{review_ref}:{lease_old}")  # the refspec and its lease
    last = _last_receipt(Objects(repo), parent)
    if store != remote and last is not None and envelope.payload_digest(last[0]) == payload:
        # a retry after the receipt landed on the ledger and the review ref did not land on the remote
        result = gitcmd.push(repo_path, remote, review[0], lease=review[1], env=env)
        return ReviewPush(result.ok, result.output, receipt_only=not result.ok)
    if store != remote:
        if parent is not None and last is None:
            raise GateError("GATE-REVIEW-RECEIPT-REF", f"{receipts_ref} on {store} holds no receipt this runner can "
                                                       "read at its tip")
        _spendable(data, attempt, review_ref, Objects(repo), parent, store)
        _follows(last, doc, review_ref, repo.zero_id, store)
    commit = record_commit(repo, RECEIPT_FILE, data, parent, f"gate receipt {attempt}\n", now)
    repo.set_ref(receipts_ref, commit, parent)
    if store == remote:
        result = gitcmd.push(repo_path, remote, review[0], f"{receipts_ref}:{receipts_ref}", atomic=True,
                             lease=review[1], env=env)
        if not result.ok:
            restore(repo, receipts_ref, parent, commit)
        return ReviewPush(result.ok, result.output)
    receipt = gitcmd.push(repo_path, store, f"{receipts_ref}:{receipts_ref}", env=env)
    if not receipt.ok:  # nothing landed
        restore(repo, receipts_ref, parent, commit)
        return ReviewPush(False, receipt.output)
    result = gitcmd.push(repo_path, remote, review[0], lease=review[1], env=env)
    return ReviewPush(result.ok, "\n".join(o for o in (receipt.output, result.output) if o),
                      receipt_only=not result.ok)


def _spendable(data: bytes, attempt: str, review_ref: str, objects: Objects, parent: str | None,
               store: str) -> None:
    """With the ledger on another remote than the review ref, no hook reads a receipt before it lands
    on the ledger, and nothing takes one back from there: the receipt file (in the scoring
    directory, which the agent writes) must be a well-formed receipt of this attempt's review ref
    whose payload the ledger's chain does not hold already (a replay, GATE-RECEIPT-REUSED at the
    check; the retry that finds it at the chain's tip pushes the review ref alone, before this).
    Another attempt's receipt, committed here, would leave the chain naming another ref for good."""
    from ..checks.binding import open_commit, receipt_chain
    from ..records.receipt import parse_payload

    found, problems = parse_payload(envelope.parse(data).payload)
    if found is None:
        raise GateError(problems[0].code, f"the receipt's {problems[0].field}: {problems[0].detail}")
    if found.attempt_id != attempt:
        raise GateError("GATE-BIND-ATTEMPT", f"the receipt is attempt {found.attempt_id}'s, not {attempt}'s: "
                                             "nothing was pushed")
    if found.ref != review_ref:
        raise GateError("GATE-BIND-REF", f"the receipt binds {found.ref}, not {review_ref}: nothing was pushed")
    payload = envelope.payload_digest(data)
    for commit in receipt_chain(objects, parent):
        if open_commit(objects, commit).payload_digest == payload:
            raise GateError("GATE-RECEIPT-REUSED", f"the ledger on {store} holds this receipt already (receipt "
                                                   f"commit {commit[:12]}): pushed again it would be a replay; "
                                                   "nothing was pushed")


def _follows(last: tuple[bytes, dict[str, object]] | None, doc: Mapping[str, object], review_ref: str, zero: str,
             store: str) -> None:
    """With the ledger on another remote than the review ref, no hook compares a receipt's
    old_commit with the receipt chain before it lands: the check at the merge does, and refuses a
    review ref whose receipts do not move it step by step (`GATE-REVIEW-UNRECORDED`). Refused here
    first, before a receipt that could never pass is spent on the ledger: this receipt must move
    the review ref from where the ledger's last receipt put it (the first: from nothing)."""
    old = doc.get("old_commit")
    old = zero if old in (None, "") else old
    if last is None:
        if old != zero:
            raise GateError("GATE-REVIEW-UNRECORDED", f"the receipt moves {review_ref} from {str(old)[:12]}, but the "
                                                      f"ledger on {store} holds no receipt that put it there: the "
                                                      "check would refuse it (close the attempt and review in a new "
                                                      "one)")
        return
    at = last[1].get("new_commit")
    if last[1].get("ref") != review_ref or at != old:
        raise GateError("GATE-REVIEW-UNRECORDED", f"the receipt moves {review_ref} from {str(old)[:12]}, but the "
                                                  f"last receipt on {store} put it at {str(at)[:12]}: land that "
                                                  "review first (gate review push with its receipt pushes the review "
                                                  "ref alone), or close the attempt and review in a new one")
