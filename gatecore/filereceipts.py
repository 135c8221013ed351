"""The seed's CI flow on files: write a sealed receipt, verify it, with no git server.

The four bound values (attempt, model, workspace generation, prompt) come from the
command line, set by the trusted orchestrator; the diff is either the bytes of a patch
file (`sha256-bytes`) or a commit range of a repository (`gate-tree-delta-v1`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from . import digest, envelope, ids
from .decision import Decision, Expectations, decide
from .errors import ConfigError, InputError
from .keys import Keyring, SigningKey
from .receipt import DIFF_BYTES, DIFF_TREE_DELTA, Receipt, canonical_payload
from .seal import sign
from .strictjson import MAX_DOCUMENT_BYTES

RECEIPT_FILE = "receipt.json"


@dataclass(frozen=True, slots=True)
class DiffSource:
    """Either a patch file or a commit range in a repository."""

    diff_file: Path | None = None
    repo: Path | None = None
    rev_from: str | None = None
    rev_to: str | None = None


@dataclass(frozen=True, slots=True)
class DiffBinding:
    algorithm: str
    sha256: str
    base_commit: str | None = None
    new_commit: str | None = None
    new_tree: str | None = None
    object_format: str | None = None


def _read_file(path: Path, what: str, cap: int | None = None) -> bytes:
    try:
        with path.open("rb") as fh:
            data = fh.read() if cap is None else fh.read(cap + 1)
    except OSError as exc:
        raise InputError("GATE-INPUT-ARGUMENT", f"cannot read {what} {path}: {exc.strerror}") from None
    return data


def bind_diff(src: DiffSource) -> DiffBinding:
    if src.diff_file is not None:
        if src.repo is not None or src.rev_from is not None or src.rev_to is not None:
            raise InputError("GATE-INPUT-ARGUMENT", "give --diff-file or --repo/--from/--to, not both")
        return DiffBinding(DIFF_BYTES, digest.bytes_digest(_read_file(src.diff_file, "diff file")))
    if src.repo is None or src.rev_from is None or src.rev_to is None:
        raise InputError("GATE-INPUT-ARGUMENT", "give --diff-file, or all of --repo, --from and --to")
    from .gitrepo import GitRepo

    repo = GitRepo.at(src.repo)
    base = repo.resolve(src.rev_from)
    new = repo.resolve(src.rev_to)
    return DiffBinding(
        DIFF_TREE_DELTA, digest.tree_delta_digest(repo, base, new),
        base_commit=base, new_commit=new, new_tree=repo.commit(new).tree_id,
        object_format=repo.object_format,
    )


def check_bound_values(attempt: str, model: str, generation: str) -> None:
    if not ids.is_attempt_id(attempt):
        raise InputError("GATE-INPUT-ARGUMENT", f"attempt id {attempt!r} is not of the allowed form")
    if not ids.is_model_id(model):
        raise InputError("GATE-INPUT-ARGUMENT", f"model id {model!r} is not of the allowed form")
    if not ids.is_generation(generation):
        raise InputError("GATE-INPUT-ARGUMENT", f"workspace generation {generation!r} is not of the allowed form")


def write_receipt(
    out_dir: Path, attempt: str, model: str, generation: str, prompt_file: Path,
    src: DiffSource, verdict: str, reasons: list[str], key: SigningKey, ttl: int,
    now: int | None = None,
) -> Path:
    """Seal a receipt and write it to out_dir/attempt/receipt.json; never overwrite."""
    check_bound_values(attempt, model, generation)
    if key.purpose != "receipt":
        raise ConfigError("GATE-CONFIG-KEYFILE", f"key {key.id} is for {key.purpose}, not receipts")
    binding = bind_diff(src)
    issued = int(time.time()) if now is None else now
    data = seal_receipt({
        "version": 1, "attempt_id": attempt, "diff_algorithm": binding.algorithm,
        "diff_sha256": binding.sha256,
        "prompt_sha256": digest.bytes_digest(_read_file(prompt_file, "prompt file")),
        "model_id": model, "workspace_generation": generation, "verdict": verdict,
        "reasons": reasons, "issued_at": issued, "expires_at": issued + ttl,
        "base_commit": binding.base_commit, "new_commit": binding.new_commit,
        "new_tree": binding.new_tree, "object_format": binding.object_format,
    }, key)
    target_dir = out_dir / attempt
    target_dir.mkdir(parents=True, exist_ok=True)
    return write_new(target_dir / RECEIPT_FILE, data)


def seal_receipt(doc: dict[str, object], key: SigningKey) -> bytes:
    """Validate a receipt document with the schema the gate uses, and seal it."""
    from pydantic import ValidationError

    from .validation import format_validation_error

    try:
        receipt = Receipt.model_validate(doc)
    except ValidationError as exc:
        raise InputError("GATE-INPUT-ARGUMENT", f"receipt: {format_validation_error(exc)}") from None
    data = envelope.encode(sign(key, envelope.PAYLOAD_RECEIPT, canonical_payload(receipt)))
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InputError("GATE-RECEIPT-TOO-LARGE", f"receipt would be {len(data)} bytes")
    return data


def write_new(path: Path, data: bytes) -> Path:
    """Create `path` with `data`; receipts are never overwritten."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise InputError("GATE-INPUT-ARGUMENT", f"{path} exists; receipts are never overwritten") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def verify_receipt(
    receipt_file: Path, attempt: str, model: str, generation: str, prompt_file: Path,
    src: DiffSource, keyring: Keyring, now: int | None = None,
) -> Decision:
    """Verify a receipt file against the values of this attempt. A missing file is a reject."""
    check_bound_values(attempt, model, generation)
    binding = bind_diff(src)
    expected = Expectations(
        attempt_id=attempt, model_id=model, workspace_generation=generation,
        prompt_sha256=digest.bytes_digest(_read_file(prompt_file, "prompt file")),
        diff_sha256=binding.sha256, diff_algorithm=binding.algorithm,
        base_commit=binding.base_commit, new_commit=binding.new_commit,
        new_tree=binding.new_tree, object_format=binding.object_format,
    )
    data: bytes | None
    try:
        with receipt_file.open("rb") as fh:
            data = fh.read(MAX_DOCUMENT_BYTES + 1)
    except OSError:  # absent or unreadable: both are "no receipt", a rejection
        data = None
    return decide(data, expected, keyring, int(time.time()) if now is None else now)
