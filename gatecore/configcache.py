"""Validated server configuration, cached so that the hook's start-up stays light.

The policy and the keyring are validated with pydantic, which is too slow to import on
every push. `load` reads the source file, and if a cache file next to it records the
same source SHA-256 (and schema), returns the validated plain form stored there; else it
validates the source (the slow road), rewrites the cache atomically where it can, and
returns the result. A corrupt or stale cache is simply not used: the answer is always
that of validating the source file as it is now.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import ConfigError

SCHEMA = 1


def read_capped(path: Path, code: str, what: str, cap: int) -> bytes:
    """Read a configuration file of at most `cap` bytes; ConfigError(code) otherwise."""
    try:
        with path.open("rb") as fh:
            data = fh.read(cap + 1)
    except OSError as exc:
        raise ConfigError(code, f"cannot read {what} {path}: {exc.strerror}") from None
    if len(data) > cap:
        raise ConfigError(code, f"{what} {path} is larger than {cap} bytes")
    return data


def cache_path(source: Path) -> Path:
    return source.with_name(source.name + ".validated.json")


def load(source: Path, read: Callable[[Path], bytes], validate: Callable[[bytes, str], Any]) -> Any:
    data = read(source)
    digest = hashlib.sha256(data).hexdigest()
    cpath = cache_path(source)
    try:
        cached = json.loads(cpath.read_bytes())
        if (isinstance(cached, dict) and cached.get("schema") == SCHEMA
                and cached.get("source_sha256") == digest and "value" in cached):
            return cached["value"]
    except (OSError, ValueError):
        pass  # no usable cache: validate the source
    value = validate(data, str(source))
    write(cpath, digest, value)
    return value


def write(cpath: Path, digest: str, value: Any) -> bool:
    """Atomically (re)write a cache; False if the directory is not writable."""
    text = json.dumps({"schema": SCHEMA, "source_sha256": digest, "value": value}, sort_keys=True)
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=cpath.parent, prefix=".cache-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, cpath)
    except OSError:
        return False
    return True
