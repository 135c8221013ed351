"""The one road from a configuration file (or a committed blob) to a Policy, Keyring or key.

`load_policy` and `load_keyring` read a server-side file, take its validated form from the
cache next to it when that matches the file (so that pydantic stays off the hook's
start-up path) and build the plain-value form the engine uses. `policy_from_bytes` and
`keyring_from_bytes` do the same for bytes read elsewhere (the client hooks read the
policy from a commit). Every failure is a configuration error with the file's code.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..configuration.policy import MAX_POLICY_BYTES, Policy
from ..errors import GateError
from ..signing.keys import MAX_KEYFILE_BYTES, MAX_KEYRING_BYTES, Keyring, SigningKey, keyring_from_plain
from ..valueclass import valueclass
from . import files

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..configuration.catalogue import Catalogue
    from ..configuration.configschema import ModelTable
    from ..configuration.vendors import VendorTable
    from ..signing.allowedsigners import AllowedSigners
    from ..signing.signatures import TrustedKeys
    from .files import StrPath

#: The package's data tables, shipped with it: the agent catalogue (gatecore/configuration/catalogue.py), the
#: vendor table (gatecore/configuration/vendors.py) and the model-id table (gatecore/configuration/modelnames.py).
_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data")
CATALOGUE_PATH = os.path.join(_DATA, "agents.toml")
VENDORS_PATH = os.path.join(_DATA, "vendors.toml")
MODELS_PATH = os.path.join(_DATA, "models.toml")


def _data_bytes(path: StrPath, what: str) -> bytes:
    from ..configuration.tables import MAX_TABLE_BYTES

    return files.read_capped(path, "GATE-CONFIG-POLICY", what, MAX_TABLE_BYTES)


def catalogue_bytes() -> bytes:
    return _data_bytes(CATALOGUE_PATH, "agent catalogue")


def load_catalogue() -> Catalogue:
    from ..configuration.configschema import parse_catalogue

    return parse_catalogue(catalogue_bytes(), str(CATALOGUE_PATH))


def vendor_bytes() -> bytes:
    return _data_bytes(VENDORS_PATH, "vendor table")


def load_vendor_table() -> VendorTable:
    from ..configuration.configschema import parse_vendor_table

    return parse_vendor_table(vendor_bytes(), str(VENDORS_PATH))


def model_names_bytes() -> bytes:
    return _data_bytes(MODELS_PATH, "model-id table")


def load_model_names() -> ModelTable:
    from ..configuration.configschema import parse_model_names

    return parse_model_names(model_names_bytes(), str(MODELS_PATH))


def _policy_salt() -> str:
    """What a policy's validated form depends on besides its bytes: the data tables' bytes."""
    return ("catalogue:" + files.small_sha256(catalogue_bytes())[:32]
            + " vendors:" + files.small_sha256(vendor_bytes())[:32]
            + " models:" + files.small_sha256(model_names_bytes())[:32])


def _validate_policy(data: bytes, origin: str) -> Any:
    from ..configuration.configschema import validate_policy

    return validate_policy(data, origin, load_catalogue(), load_vendor_table(), load_model_names())


def _validate_keyring(data: bytes, origin: str) -> Any:
    from ..configuration.configschema import validate_keyring

    return validate_keyring(data, origin)


def _policy(plain: Any, origin: str) -> Policy:
    try:
        return Policy.from_plain(plain)
    except (KeyError, TypeError, ValueError) as exc:
        raise GateError("GATE-CONFIG-POLICY", f"{origin}: validated form unusable: {exc}") from None


def _keyring(plain: Any, origin: str) -> Keyring:
    try:
        return keyring_from_plain(plain)
    except (KeyError, TypeError, ValueError) as exc:
        raise GateError("GATE-CONFIG-KEYRING", f"{origin}: validated form unusable: {exc}") from None


def read_policy_bytes(path: StrPath) -> bytes:
    return files.read_capped(path, "GATE-CONFIG-POLICY", "policy", MAX_POLICY_BYTES)


def read_keyring_bytes(path: StrPath) -> bytes:
    return files.read_capped(path, "GATE-CONFIG-KEYRING", "keyring", MAX_KEYRING_BYTES)


def load_policy(path: StrPath, cached: bool = True) -> Policy:
    """A policy file, validated (through its cache unless `cached` is False)."""
    data = read_policy_bytes(path)
    plain = (files.cached_validation(path, data, _validate_policy, _policy_salt()) if cached
             else _validate_policy(data, str(path)))
    return _policy(plain, str(path))


def load_keyring(path: StrPath, cached: bool = True) -> Keyring:
    data = read_keyring_bytes(path)
    plain = files.cached_validation(path, data, _validate_keyring) if cached else _validate_keyring(data, str(path))
    return _keyring(plain, str(path))


def policy_from_bytes(data: bytes, origin: str) -> Policy:
    return _policy(_validate_policy(data, origin), origin)


def keyring_from_bytes(data: bytes, origin: str) -> Keyring:
    return _keyring(_validate_keyring(data, origin), origin)


def policy_problems(path: StrPath) -> list[str]:
    """Every problem with a policy file, one line each (empty: valid)."""
    try:
        load_policy(path, cached=False)
    except GateError as exc:
        return [part.strip() for part in exc.detail.split("; ")]
    return []


@valueclass(frozen=True, slots=True)
class PolicyCheck:
    problems: list[str]  # one line each: the policy is invalid
    lines: list[str]  # what the valid policy restricts
    warnings: list[str]  # the gate's own files left unfrozen; frozen patterns that match no path on the default branch


def check_policy(path: StrPath, repo: Path | None = None) -> PolicyCheck:
    """`gate policy check FILE [--repo R]`: the problems, or what the policy restricts and, with
    a repository, the frozen path patterns that match nothing on its default branch; a warning when no
    rule freezes the gate's own files (.gate/policy.toml)."""
    from ..configuration.policyreport import describe, gate_files_warnings, unmatched_warnings
    from .gitcmd import default_branch_paths

    problems = policy_problems(path)
    if problems:
        return PolicyCheck(problems, [], [])
    policy = load_policy(path, cached=False)
    warnings = ["warning: " + w for w in gate_files_warnings(policy)]
    if repo is not None:
        listed = default_branch_paths(repo)
        if listed is None:
            warnings.append(f"note: {repo} has no commit on its default branch yet: path patterns not checked")
        else:
            warnings += ["warning: " + w for w in unmatched_warnings(policy, *listed)]
    return PolicyCheck([], describe(policy), warnings)


MAX_ALLOWED_SIGNERS_BYTES = 1 << 20


def _allowed_signers(path: StrPath) -> tuple[bytes, AllowedSigners]:
    """An allowed-signers file's bytes and its parsed form (GATE-CONFIG-SIGNERS if missing or malformed)."""
    from ..signing.allowedsigners import parse_allowed_signers

    data = files.read_capped(path, "GATE-CONFIG-SIGNERS", "allowed signers", MAX_ALLOWED_SIGNERS_BYTES)
    try:
        parsed = parse_allowed_signers(data.decode("utf-8"), utc_offset=_local_time)
    except (UnicodeDecodeError, ValueError) as exc:
        raise GateError("GATE-CONFIG-SIGNERS", f"{path}: {exc}") from None
    if parsed.skipped:
        # git would honour these lines (a cert-authority's certificates, a FIDO key) and the gate
        # cannot: the commits they sign would go unrecognised. Refuse rather than ignore them.
        number, why = parsed.skipped[0]
        raise GateError("GATE-CONFIG-SIGNERS", f"{path}: line {number}: {why}; list the plain keys instead "
                                               "(docs/policy.md#signatures)")
    return data, parsed


def _local_time(fields: tuple[int, int, int, int, int, int]) -> int:
    """A time written without `Z` in an allowed-signers file, as `ssh-keygen` reads it: this
    machine's local time (the hook's TZ), with mktime and no daylight-saving hint (tm_isdst 0)."""
    import time

    return int(time.mktime((*fields, 0, 0, 0)))


def read_allowed_signers(path: StrPath) -> bytes:
    """An allowed-signers file's bytes, validated (to be installed)."""
    return _allowed_signers(path)[0]


def load_allowed_signers(path: StrPath) -> AllowedSigners:
    return _allowed_signers(path)[1]


MAX_OPENPGP_KEYS_BYTES = 8 << 20


def _openpgp_keys(path: StrPath) -> tuple[bytes, bytes]:
    """An OpenPGP keyring file's bytes and its binary form (GATE-CONFIG-SIGNERS if not a keyring)."""
    from .gpg import dearmor_keyring

    data = files.read_capped(path, "GATE-CONFIG-SIGNERS", "OpenPGP keyring", MAX_OPENPGP_KEYS_BYTES)
    try:
        return data, dearmor_keyring(data, str(path))
    except ValueError as exc:
        raise GateError("GATE-CONFIG-SIGNERS", str(exc)) from None


def read_openpgp_keys(path: StrPath) -> bytes:
    """An OpenPGP keyring (`gpg --export`, armored or not) in the binary form gpgv reads (to be installed)."""
    return _openpgp_keys(path)[1]


def load_trusted_keys(ssh: StrPath | None, openpgp: StrPath | None) -> TrustedKeys:
    """The keys commit signatures are verified with: SSH allowed signers and an OpenPGP keyring
    (binary, as gpgv reads it); a path given must be a valid file, and neither given is a
    configuration error (GATE-CONFIG-SIGNERS)."""
    from ..signing.signatures import TrustedKeys
    from .gpg import OpenPGPVerifier

    if ssh is None and openpgp is None:
        raise GateError("GATE-CONFIG-SIGNERS", "the policy reads commit signatures but neither an allowed-signers "
                                               "file nor an OpenPGP keyring is installed")
    if openpgp is not None:
        data, binary = _openpgp_keys(openpgp)
        if binary != data:
            raise GateError("GATE-CONFIG-SIGNERS", f"{openpgp} is armored; gpgv reads binary keyrings "
                                                   "(gpg --dearmor, or gpg --export without --armor)")
    return TrustedKeys(None if ssh is None else load_allowed_signers(ssh), OpenPGPVerifier(openpgp))

def load_keyfile(path: StrPath) -> SigningKey:
    from ..configuration.configschema import parse_keyfile

    return parse_keyfile(files.read_capped(path, "GATE-CONFIG-KEYFILE", "key file", MAX_KEYFILE_BYTES), str(path))


@valueclass(frozen=True, slots=True)
class Validated:
    """A configuration file read and validated, ready to be installed."""

    data: bytes
    plain: Any
    salt: str = ""


def validated_policy(source: StrPath) -> Validated:
    data = read_policy_bytes(source)
    plain = _validate_policy(data, str(source))
    _policy(plain, str(source))
    return Validated(data, plain, _policy_salt())


def policy_of(valid: Validated) -> Policy:
    """The policy a validated file holds (its fast form, as the hook builds it)."""
    return _policy(valid.plain, "(validated policy)")


def validated_keyring(source: StrPath) -> Validated:
    data = read_keyring_bytes(source)
    plain = _validate_keyring(data, str(source))
    _keyring(plain, str(source))
    return Validated(data, plain)


def install(valid: Validated, target: StrPath) -> None:
    """Write a validated file and its cache (the hook then reads the cache, not pydantic)."""
    files.atomic_write(target, valid.data, 0o640)
    files.write_cache(target, valid.data, valid.plain, valid.salt)


def policy_from_bytes_cached(data: bytes, origin: str, cache: StrPath) -> Policy:
    """`policy_from_bytes`, with the validated form kept beside `cache` and used while the bytes
    are the same (`files.cached_validation`): a client hook imports pydantic only when the
    committed policy changed."""
    plain = files.cached_validation(cache, data, lambda d, _where: _validate_policy(d, origin), _policy_salt())
    return _policy(plain, origin)


def policy_from_blob_cached(blob: str, read: Callable[[], bytes], origin: str, cache: StrPath) -> Policy:
    """`policy_from_bytes_cached` for bytes known first by their git blob id: when the cache holds
    that blob's validated form it is used without reading the blob (one git process fewer for an
    agent's hook); otherwise the bytes are read (`read`), validated or found by their digest, and
    the cache rewritten naming the blob."""
    salt = _policy_salt()
    plain = files.cached_by_id(cache, blob, salt)
    if plain is None:
        data = read()
        plain = files.cached_validation(cache, data, lambda d, _where: _validate_policy(d, origin), salt)
        files.write_cache(cache, data, plain, salt, source_id=blob)
    return _policy(plain, origin)
