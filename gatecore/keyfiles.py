"""Keyring files (verifying side) and key files (sealing side), validated with pydantic.

A keyring is a server-side TOML file of `[[key]]` tables. The keyring entry is the only
source of a key's algorithm; an envelope names a key id and nothing else. Each key has
one purpose: `receipt` keys seal review receipts, `attempt` keys seal the trusted side's
attempt records. A key never serves the other purpose.

    [[key]]
    id = "runner-2026"
    algorithm = "ed25519"          # or "hmac-sha256"
    purpose = "receipt"            # or "attempt"
    public_key = "<base64, 32 bytes>"   # ed25519
    # secret = "<base64, >= 32 bytes>"  # hmac-sha256 (runner and server in one trust domain)
    not_before = 2026-01-01T00:00:00Z   # optional
    not_after = 2027-01-01T00:00:00Z    # optional
    revoked = false                     # optional

A key file holds the sealing half: the same id, algorithm and purpose, and
`private_key` (ed25519 seed) or `secret` (hmac), readable by its owner only.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import os
import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .configcache import read_capped
from .errors import ConfigError
from .keys import MAX_KEYRING_BYTES, Keyring, SigningKey, VerifyKey, keyring_from_plain, keyring_to_plain
from .validation import format_validation_error

KEY_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
Algorithm = Literal["ed25519", "hmac-sha256"]
Purpose = Literal["receipt", "attempt"]


def _b64(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ValueError(f"{what} is not strict base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"{what} is not canonical base64")
    return raw


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("times need an explicit offset, e.g. 2026-01-01T00:00:00Z")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class KeyringEntry(_Strict):
    id: Annotated[str, Field(pattern=KEY_ID_PATTERN)]
    algorithm: Algorithm
    purpose: Purpose
    public_key: str | None = None
    secret: str | None = None
    not_before: dt.datetime | None = None
    not_after: dt.datetime | None = None
    revoked: bool = False

    _aware_nb = field_validator("not_before")(_aware)
    _aware_na = field_validator("not_after")(_aware)

    @model_validator(mode="after")
    def _material(self) -> KeyringEntry:
        if self.algorithm == "ed25519":
            if self.public_key is None or self.secret is not None:
                raise ValueError("an ed25519 key has public_key and no secret")
            if len(_b64(self.public_key, "public_key")) != 32:
                raise ValueError("an ed25519 public_key is 32 bytes")
        else:
            if self.secret is None or self.public_key is not None:
                raise ValueError("an hmac-sha256 key has secret and no public_key")
            if len(_b64(self.secret, "secret")) < 32:
                raise ValueError("an hmac-sha256 secret is at least 32 bytes")
        if self.not_before and self.not_after and self.not_after <= self.not_before:
            raise ValueError("not_after must be later than not_before")
        return self


class KeyringFile(_Strict):
    key: list[KeyringEntry] = Field(default_factory=list, max_length=1000)

    @model_validator(mode="after")
    def _unique(self) -> KeyringFile:
        ids = [k.id for k in self.key]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate key ids: {', '.join(dupes)}")
        return self


class KeyFile(_Strict):
    id: Annotated[str, Field(pattern=KEY_ID_PATTERN)]
    algorithm: Algorithm
    purpose: Purpose
    private_key: str | None = None
    secret: str | None = None

    @model_validator(mode="after")
    def _material(self) -> KeyFile:
        if self.algorithm == "ed25519":
            if self.private_key is None or self.secret is not None:
                raise ValueError("an ed25519 key file has private_key and no secret")
            if len(_b64(self.private_key, "private_key")) != 32:
                raise ValueError("an ed25519 private_key is a 32-byte seed")
        else:
            if self.secret is None or self.private_key is not None:
                raise ValueError("an hmac-sha256 key file has secret and no private_key")
            if len(_b64(self.secret, "secret")) < 32:
                raise ValueError("an hmac-sha256 secret is at least 32 bytes")
        return self


def _ts(value: dt.datetime | None) -> int | None:
    return None if value is None else int(value.timestamp())


def _toml(data: bytes, code: str, what: str, origin: str) -> dict[str, object]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ConfigError(code, f"{what} {origin} is not valid TOML: {exc}") from None


def read_keyring_bytes(path: Path) -> bytes:
    return read_capped(path, "GATE-CONFIG-KEYRING", "keyring", MAX_KEYRING_BYTES)


def validate_keyring_bytes(data: bytes, origin: str) -> list[dict[str, object]]:
    """Validate keyring TOML; return the plain form `keys.keyring_from_plain` takes."""
    doc = _toml(data, "GATE-CONFIG-KEYRING", "keyring", origin)
    try:
        model = KeyringFile.model_validate(doc)
    except ValidationError as exc:
        raise ConfigError("GATE-CONFIG-KEYRING", f"{origin}: {format_validation_error(exc)}") from None
    ring: Keyring = {}
    for k in model.key:
        material = _b64((k.public_key if k.algorithm == "ed25519" else k.secret) or "", "key")
        ring[k.id] = VerifyKey(k.id, k.algorithm, k.purpose, material,
                               _ts(k.not_before), _ts(k.not_after), k.revoked)
    return keyring_to_plain(ring)


def load_keyring(path: Path) -> Keyring:
    return keyring_from_plain(validate_keyring_bytes(read_keyring_bytes(path), str(path)))


def load_keyfile(path: Path) -> SigningKey:
    data = read_capped(path, "GATE-CONFIG-KEYFILE", "key file", 65536)
    doc = _toml(data, "GATE-CONFIG-KEYFILE", "key file", str(path))
    try:
        model = KeyFile.model_validate(doc)
    except ValidationError as exc:
        raise ConfigError("GATE-CONFIG-KEYFILE", f"{path}: {format_validation_error(exc)}") from None
    material = _b64((model.private_key if model.algorithm == "ed25519" else model.secret) or "", "key")
    return SigningKey(model.id, model.algorithm, model.purpose, material)


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True, slots=True)
class GeneratedKey:
    keyfile_text: str
    keyring_entry: str


def generate(algorithm: str, key_id: str, purpose: str) -> GeneratedKey:
    """Make a fresh key; return the key file text and the keyring entry (TOML)."""
    KeyFile.model_validate(  # validates id, algorithm and purpose before any key is made
        {"id": key_id, "algorithm": algorithm, "purpose": purpose,
         **({"private_key": base64.b64encode(bytes(32)).decode()} if algorithm == "ed25519"
            else {"secret": base64.b64encode(bytes(32)).decode()})}
    )
    head = f"id = {_toml_str(key_id)}\nalgorithm = {_toml_str(algorithm)}\npurpose = {_toml_str(purpose)}\n"
    if algorithm == "ed25519":
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        priv = Ed25519PrivateKey.generate()
        seed = priv.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                  serialization.NoEncryption())
        pub = priv.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        keyfile = head + f"private_key = {_toml_str(base64.b64encode(seed).decode())}\n"
        entry_material = f"public_key = {_toml_str(base64.b64encode(pub).decode())}\n"
    else:
        secret = base64.b64encode(secrets.token_bytes(32)).decode()
        keyfile = head + f"secret = {_toml_str(secret)}\n"
        entry_material = f"secret = {_toml_str(secret)}\n"
    entry = "[[key]]\n" + head + entry_material + "revoked = false\n"
    return GeneratedKey(keyfile, entry)


def write_private(path: Path, text: str) -> None:
    """Create `path` readable by its owner only; refuse to overwrite."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


