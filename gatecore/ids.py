"""Identifier forms shared by receipts, attempt records and ref names (pure, no imports).

An attempt id is also a ref name component (`refs/gate/attempts/<id>`) and a directory
name (`<out-dir>/<id>/receipt.json`), so its form is strict: ASCII letters, digits,
`.`, `_`, `-`; starting with a letter or digit; no `..`; not ending in `.` or `.lock`;
at most 128 characters. Nothing that could be a path separator, NUL or traversal.
"""

from __future__ import annotations

import re

ATTEMPT_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
GENERATION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MODEL_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")
SHA256_HEX_RE = re.compile(r"[0-9a-f]{64}")
OID_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
REPOSITORY_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]{0,255}")
#: A model vendor's id (`gatecore.configuration.vendors`): the ledger's `author_vendor`, a policy's
#: `[review.vendors]` key.
VENDOR_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


def is_attempt_id(value: str) -> bool:
    return (
        ATTEMPT_ID_RE.fullmatch(value) is not None
        and ".." not in value
        and not value.endswith((".", ".lock"))
    )


def is_generation(value: str) -> bool:
    return GENERATION_RE.fullmatch(value) is not None


def is_model_id(value: str) -> bool:
    return MODEL_ID_RE.fullmatch(value) is not None and ".." not in value


def is_repository_id(value: str) -> bool:
    return REPOSITORY_ID_RE.fullmatch(value) is not None and ".." not in value
