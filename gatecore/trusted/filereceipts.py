"""The seed's CI flow on files: write a sealed receipt, verify it, with no git server.

The four bound values (attempt, model, workspace generation, prompt) come from the
command line, set by the trusted orchestrator; the diff is either the bytes of a patch
file (`sha256-bytes`) or a commit range of a repository (`gate-tree-delta-v1`). Every
file is read only if it is a regular file under its cap (`adapters.files`).
"""

from __future__ import annotations

from pathlib import Path

from .. import ids
from ..adapters import files
from ..checks.binding import Decision, Expectations, file_expectations, judge_receipt
from ..errors import GateError
from ..findings import Failure
from ..git import digest
from ..records.ledger import RECEIPT_FILE
from ..records.receipt import DIFF_BYTES, DIFF_TREE_DELTA, seal_document
from ..signing.keys import Keyring, SigningKey
from ..strictjson import MAX_DOCUMENT_BYTES
from ..valueclass import valueclass

MAX_DIFF_BYTES = 1 << 30
MAX_PROMPT_BYTES = 16 << 20


@valueclass(frozen=True, slots=True)
class DiffSource:
    """Either a patch file or a commit range in a repository."""

    diff_file: Path | None = None
    repo: Path | None = None
    rev_from: str | None = None
    rev_to: str | None = None


@valueclass(frozen=True, slots=True)
class DiffBinding:
    """The diff part of the expectations: the digest, its algorithm and, for a commit range, the
    git state it binds."""

    diff_sha256: str
    diff_algorithm: str
    base_commit: str | None = None
    new_commit: str | None = None
    new_tree: str | None = None
    object_format: str | None = None


def bind_diff(src: DiffSource) -> DiffBinding:
    """The digest of a patch file's bytes, or the tree delta of a commit range."""
    if src.diff_file is not None:
        if src.repo is not None or src.rev_from is not None or src.rev_to is not None:
            raise GateError("GATE-INPUT-ARGUMENT", "give --diff-file or --repo/--from/--to, not both")
        sha = files.sha256_capped(src.diff_file, "GATE-INPUT-ARGUMENT", "diff file", MAX_DIFF_BYTES)
        return DiffBinding(sha, DIFF_BYTES)
    if src.repo is None or src.rev_from is None or src.rev_to is None:
        raise GateError("GATE-INPUT-ARGUMENT", "give --diff-file, or all of --repo, --from and --to")
    from ..adapters.gitrepo import GitRepo
    from ..git.objects import Objects

    repo = GitRepo.at(src.repo)
    base = repo.resolve(src.rev_from)
    new = repo.resolve(src.rev_to)
    objects = Objects(repo)
    return DiffBinding(digest.tree_delta_digest(objects, base, new), DIFF_TREE_DELTA, base, new,
                       objects.commit(new).tree_id, repo.object_format)


def prompt_digest(prompt_file: Path) -> str:
    return files.sha256_capped(prompt_file, "GATE-INPUT-ARGUMENT", "prompt file", MAX_PROMPT_BYTES)


def expectations(attempt: str, model: str, generation: str, prompt_file: Path, src: DiffSource) -> Expectations:
    """What a receipt for this attempt must say, from the command line and the files."""
    if not ids.is_attempt_id(attempt):
        raise GateError("GATE-INPUT-ARGUMENT", f"attempt id {attempt!r} is not of the allowed form")
    if not ids.is_model_id(model):
        raise GateError("GATE-INPUT-ARGUMENT", f"model id {model!r} is not of the allowed form")
    if not ids.is_generation(generation):
        raise GateError("GATE-INPUT-ARGUMENT", f"workspace generation {generation!r} is not of the allowed form")
    prompt = prompt_digest(prompt_file)
    diff = bind_diff(src)
    return file_expectations(attempt, model, generation, prompt, diff.diff_sha256, diff.diff_algorithm,
                             base=diff.base_commit, new=diff.new_commit, new_tree=diff.new_tree,
                             object_format=diff.object_format)


def write_receipt(out_dir: Path, attempt: str, model: str, generation: str, prompt_file: Path,
                  src: DiffSource, verdict: str, reasons: list[str], key: SigningKey, ttl: int, now: int) -> Path:
    """Seal a receipt and write it to out_dir/attempt/receipt.json; never overwrite."""
    expected = expectations(attempt, model, generation, prompt_file, src)
    if key.purpose != "receipt":
        raise GateError("GATE-CONFIG-KEYFILE", f"key {key.id} is for {key.purpose}, not receipts")
    data = seal_document(expected.receipt_document(verdict, reasons, now, now + ttl), key)
    return files.write_new(out_dir / attempt / RECEIPT_FILE, data, "GATE-INPUT-PATH", parents=True)


def verify_receipt(receipt_file: Path, attempt: str, model: str, generation: str, prompt_file: Path,
                   src: DiffSource, keyring: Keyring, now: int) -> Decision:
    """Verify a receipt file against the values of this attempt. A missing file is a reject."""
    expected = expectations(attempt, model, generation, prompt_file, src)
    try:
        data = files.read_capped(receipt_file, "GATE-RECEIPT-MISSING", "receipt", MAX_DOCUMENT_BYTES,
                                 "GATE-RECEIPT-TOO-LARGE")
    except GateError as exc:  # absent, unreadable, not a regular file (no receipt), or too large
        return Decision(False, (Failure(exc.code, "receipt", exc.detail),), None)
    return judge_receipt(data, expected, keyring, now)
