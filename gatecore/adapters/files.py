"""Reading and writing files safely: the one place the package opens files.

* `read_capped` reads regular files only: the file is opened with `O_NONBLOCK` (a FIFO
  cannot hang the open) and checked with `fstat` before anything is read, then read up
  to a cap; a FIFO, a device, a directory or a file over the cap is refused with the
  caller's code.
* `write_new` creates a file that must not exist (receipts are never overwritten),
  `write_private` one readable by its owner only (keys), both without following a symlink
  anywhere on the path; `atomic_write` replaces one.
* `cached_validation`: the validated form of a configuration file, kept next to it so
  that the hook does not import pydantic on every push. The cache records the source's
  SHA-256; a corrupt or stale cache is simply not used, so the answer is always that of
  validating the source file as it is now.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator

from ..errors import GateError

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, TypeAlias

    #: A path as the hook's path passes it (a string: `pathlib` stays off its start-up) or the trusted side does.
    StrPath: TypeAlias = str | os.PathLike[str]

#: 5: the plain form is the model's whole dump (policy.Policy.from_plain); 6: [limits] and [review] grew;
#: 7: [review] model_run and [review.models], the model-id table's plain form, and the catalogue's agents
#: reviewer independence reads commits for; 8: every catalogue agent's marks, for a tool call's writer
CACHE_SCHEMA = 8


def _chunks(path: StrPath, code: str, what: str, cap: int, too_large: str | None = None) -> Iterator[bytes]:
    """The bytes of a regular file of at most `cap` bytes, in chunks; GateError(code) otherwise
    (GateError(too_large) for a regular file over the cap, when given)."""
    big = too_large or code
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise GateError(code, f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise GateError(code, f"{what} {path} is not a regular file")
        if info.st_size > cap:
            raise GateError(big, f"{what} {path} is larger than {cap} bytes")
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return
            total += len(chunk)
            if total > cap:
                raise GateError(big, f"{what} {path} is larger than {cap} bytes")
            yield chunk
    except OSError as exc:
        raise GateError(code, f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def read_capped(path: StrPath, code: str, what: str, cap: int, too_large: str | None = None) -> bytes:
    """The bytes of a regular file of at most `cap` bytes; GateError(code) otherwise."""
    return b"".join(_chunks(path, code, what, cap, too_large))


def sha256_capped(path: StrPath, code: str, what: str, cap: int) -> str:
    """The SHA-256 of a regular file of at most `cap` bytes, read in chunks."""
    import hashlib  # (the trusted side's, for diffs: OpenSSL's, the fast one for large data)

    h = hashlib.sha256()
    for chunk in _chunks(path, code, what, cap):
        h.update(chunk)
    return h.hexdigest()


def _directory_fd(path: Path, code: str, parents: bool) -> int:
    """An open descriptor of `path`, a directory reached from / without following a symlink on
    any component (each opened with O_NOFOLLOW below the last); missing ones are created when
    `parents`. A component that is a symlink or not a directory is refused with `code` too."""
    from pathlib import Path  # (the trusted side's writes: not on the hook's start-up path)

    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    where = Path("/")
    try:
        for name in path.parts[1:]:
            where = where / name
            try:
                nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not parents:
                    raise GateError(code, f"cannot create a file in {path}: {where} does not exist") from None
                with contextlib.suppress(FileExistsError):  # made meanwhile: opened below, not followed either
                    os.mkdir(name, 0o755, dir_fd=fd)
                nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise GateError(code, f"{where} is a symlink or not a directory: files are written only through plain "
                                  "directories (pass the path with its symlinks resolved)") from None
        raise GateError(code, f"cannot create a file in {path}: {exc.strerror}") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_new(path: Path, data: bytes, code: str = "GATE-INPUT-PATH", mode: int = 0o644,
              parents: bool = False) -> Path:
    """Create `path` with `data`; refused (code) if it exists or cannot be created. No symlink is
    followed on the way, in any component of the path (an agent-writable directory replaced by a
    symlink cannot send the write elsewhere); missing directories are created when `parents`."""
    from pathlib import Path

    absolute = Path(os.path.abspath(path))
    directory = _directory_fd(absolute.parent, code, parents)
    try:
        fd = os.open(absolute.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                     dir_fd=directory)
    except FileExistsError:
        raise GateError(code, f"{path} exists; it is never overwritten") from None
    except OSError as exc:
        raise GateError(code, f"cannot create {path}: {exc.strerror}") from None
    finally:
        os.close(directory)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def write_private(path: Path, text: str) -> None:
    """Create `path` readable by its owner only (a private key); refuse to overwrite, or to write
    through a symlink (GATE-INPUT-PATH, as every --out of the trusted side)."""
    write_new(path, text.encode("utf-8"), "GATE-INPUT-PATH", mode=0o600)


def atomic_write(path: StrPath, data: bytes, mode: int) -> None:
    parent, name = os.path.split(os.fspath(path))
    os.makedirs(parent or ".", exist_ok=True)
    import tempfile  # not on the hook's start-up path: the hook only reads

    fd, tmp = tempfile.mkstemp(dir=parent or ".", prefix=f".{name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def small_sha256(data: bytes) -> str:
    """The SHA-256 of a small file's bytes (a policy, a keyring, the catalogue: kilobytes), as
    `hashlib.sha256` gives it, by the hash CPython builds in (`hashlib`'s own fallback: `_sha2`
    since 3.12, `_sha256` before): every push checks its validated caches, and importing `hashlib`
    loads OpenSSL, about 3 ms of a hook's start; for kilobytes the built-in hash is as fast."""
    try:
        builtin = __import__("_sha2" if sys.version_info >= (3, 12) else "_sha256")
    except ImportError:  # (a Python built without it: hashlib's)
        import hashlib

        return hashlib.sha256(data).hexdigest()
    return str(builtin.sha256(data).hexdigest())


def cache_path(source: StrPath) -> str:
    return os.fspath(source) + ".validated.json"


def write_cache(source: StrPath, data: bytes, value: Any, salt: str = "", source_id: str | None = None) -> bool:
    """Atomically (re)write the validated form of `source`'s bytes; False if the directory is not writable.

    `salt` names anything else the validated form depends on (the agent catalogue a policy's
    named sets were expanded from): a cache with another salt is validated again. `source_id`:
    another name of the same bytes the reader may know first (a git blob id: `cached_by_id`)."""
    record = {"schema": CACHE_SCHEMA, "source_sha256": small_sha256(data), "salt": salt, "value": value}
    if source_id is not None:
        record["source_id"] = source_id
    text = json.dumps(record, sort_keys=True)
    try:
        atomic_write(cache_path(source), text.encode("utf-8"), 0o640)
    except OSError:
        return False
    return True


def cached_by_id(source: StrPath, source_id: str, salt: str = "") -> Any | None:
    """The cached validated form of the bytes named `source_id` (`write_cache`), or None: a reader
    that knows the id before the bytes (an agent's hook: the committed policy's blob id) reads
    neither the bytes nor their digest when the cache holds them."""
    try:
        with open(cache_path(source), "rb") as fh:
            cached = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    if (isinstance(cached, dict) and cached.get("schema") == CACHE_SCHEMA and cached.get("source_id") == source_id
            and cached.get("salt", "") == salt and "value" in cached):
        return cached["value"]
    return None


def cached_validation(source: StrPath, data: bytes, validate: Callable[[bytes, str], Any], salt: str = "") -> Any:
    """The validated form of `data` (the bytes of `source`): from the cache when it matches."""
    digest = small_sha256(data)
    try:
        with open(cache_path(source), "rb") as fh:
            cached = json.loads(fh.read())
        if (isinstance(cached, dict) and cached.get("schema") == CACHE_SCHEMA
                and cached.get("source_sha256") == digest and cached.get("salt", "") == salt
                and "value" in cached):
            return cached["value"]
    except (OSError, ValueError):
        pass  # no usable cache: validate the source
    value = validate(data, str(source))
    write_cache(source, data, value, salt)
    return value
