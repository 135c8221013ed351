"""The configuration files' schemas (pydantic) and their validation from bytes (pure).

Three files, all TOML:

* the **policy** (docs/policy.md), validated into the plain form `Policy.from_plain` takes;
* the **keyring** (verifying side, server-side), a list of `[[key]]` tables; the keyring
  entry is the only source of a key's algorithm, and each key has one purpose;
* a **key file** (sealing side): the same id, algorithm and purpose, and `private_key`
  (ed25519 seed) or `secret` (hmac), readable by its owner only.

    [[key]]
    id = "runner-2026"
    algorithm = "ed25519"          # or "hmac-sha256"
    purpose = "receipt"            # or "attempt"; "approval", "attestation" (ed25519 only)
    public_key = "<base64, 32 bytes>"   # ed25519
    # secret = "<base64, >= 32 bytes>"  # hmac-sha256 (runner and server in one trust domain)
    not_before = 2026-01-01T00:00:00Z   # optional
    not_after = 2027-01-01T00:00:00Z    # optional
    revoked = false                     # optional

These models are the one definition of each file's keys, types, bounds and defaults. The
hook never imports this module on its common path: it reads the validated plain form (the
model's dump, every key present) from a cache next to the file (`adapters.files`) and builds
its fast form from it (`Policy.from_plain`, `keys.keyring_from_plain`), which compiles the
globs and decodes the keys but checks no bound again. The allowed values of every setting
are `Literal` types defined once beside the plain-value classes (`policy.Mode`, ...,
`keys.Algorithm`) and used by both.

Receipts, ledger records and approvals are not configuration: they arrive with pushes and
are read on the hook's path, which must not import pydantic (about 70 ms a review push), so
their schemas are `gatecore/schema.py`'s small strict readers instead.

Validation errors are in the admin's words (`gatecore.configerrors`): file and line,
location (`freeze[0].refs[0]`), what is wrong and the fix.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from . import configerrors
from .catalogue import Catalogue, expand
from .envelope import b64decode_strict, b64encode
from .errors import GateError
from .ids import VENDOR_ID_RE
from .keys import Algorithm, Keyring, Purpose, SigningKey, VerifyKey, keyring_to_plain, new_ed25519, new_hmac_secret
from .policy import (
    DEFAULT_MAX_NEW_COMMITS,
    DEFAULT_MAX_REF_UPDATES,
    MAX_POLICY_BYTES,
    AnonymousAction,
    IdentityGlob,
    Independence,
    Mode,
    ModeAction,
    ModelRun,
    PathGlob,
    RefAction,
    RefGlob,
    ReplaceAction,
)
from .vendors import VendorTable, merged

KEY_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
#: Purposes whose verifiers must not hold a secret: an HMAC key would let whoever verifies also seal.
ED25519_ONLY = {"approval": "an approval key is ed25519: a shared secret on the server would let whoever reads "
                            "the gate's files approve",
                "attestation": "an attestation key is ed25519: whoever verifies an attestation holds only its "
                               "public key"}


def _toml(data: bytes, code: str, what: str, origin: str) -> tuple[dict[str, Any], str]:
    """The document and its text (for line numbers in errors)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GateError(code, f"{what} {origin} is not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text), text
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise GateError(code, configerrors.toml_problem(origin, what, exc)) from None


M = TypeVar("M", bound=BaseModel)


def _validated(model: type[M], doc: dict[str, Any], text: str, code: str, origin: str) -> M:
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        found = configerrors.problems(model, exc.errors(include_url=False), text, origin)
        raise GateError(code, "; ".join(found)) from None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


# --- the policy ------------------------------------------------------------------------

def _compiles(kind: type[PathGlob] | type[RefGlob] | type[IdentityGlob]) -> AfterValidator:
    def check(value: str) -> str:
        kind.compile(value)  # raises ValueError with a message in the admin's words
        return value

    return AfterValidator(check)


PathPattern = Annotated[str, Field(min_length=1, max_length=1024), _compiles(PathGlob)]
RefPattern = Annotated[str, Field(min_length=1, max_length=1024), _compiles(RefGlob)]
IdentityPattern = Annotated[str, Field(min_length=1, max_length=256), _compiles(IdentityGlob)]


class FreezeModel(_Strict):
    name: Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9._-]*$")] = ""
    paths: Annotated[list[PathPattern], Field(min_length=1, max_length=1000)]
    authors: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    names: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    trailers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    signers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    pushers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    refs: Annotated[list[RefPattern], Field(min_length=1, max_length=1000)] | None = None


class RefsModel(_Strict):
    delete: RefAction = "deny-restricted"
    force: RefAction = "allow"
    replace: ReplaceAction = "trusted"


class TrustedModel(_Strict):
    pushers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []


class ObjectsModel(_Strict):
    noncanonical_modes: ModeAction = "refuse-frozen"


class SignaturesModel(_Strict):
    require: Annotated[list[RefPattern], Field(max_length=1000)] = []


class ApprovalsModel(_Strict):
    approvers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    max_hours: Annotated[int, Field(ge=1, le=720)] = 72


class PushersModel(_Strict):
    anonymous: AnonymousAction = "restricted"


VendorId = Annotated[str, Field(pattern=f"^{VENDOR_ID_RE.pattern}$")]
ModelPattern = Annotated[str, Field(min_length=1, max_length=200), _compiles(IdentityGlob)]


class ReviewModel(_Strict):
    #: docs/receipts.md, Reviewer independence: "off", "model" or "vendor"
    independent: Independence = "off"
    #: "any", or "runner": only receipts whose answer the runner took from its own call of the model
    model_run: ModelRun = "any"
    #: the admin's additions to the vendor table: vendor id -> globs on canonical model ids
    vendors: Annotated[dict[VendorId, Annotated[list[ModelPattern], Field(min_length=1, max_length=1000)]],
                       Field(max_length=1000)] = {}


class LimitsModel(_Strict):
    #: None: the platform's default (Policy.deadline_for): 4 s under GitHub Enterprise, 30 s elsewhere
    deadline_seconds: Annotated[float, Field(gt=0, le=600, allow_inf_nan=False, strict=False)] | None = None
    max_violations_shown: Annotated[int, Field(ge=1, le=10000)] = 50
    #: docs/policy.md, Limits: a push updating more refs, or bringing more new commits, is refused
    max_ref_updates: Annotated[int, Field(ge=2, le=1_000_000)] = DEFAULT_MAX_REF_UPDATES
    max_new_commits: Annotated[int, Field(ge=1, le=100_000_000)] = DEFAULT_MAX_NEW_COMMITS


class PolicyModel(_Strict):
    mode: Mode = "enforce"
    freeze: Annotated[list[FreezeModel], Field(max_length=1000)] = []
    refs: RefsModel = RefsModel()
    trusted: TrustedModel = TrustedModel()
    objects: ObjectsModel = ObjectsModel()
    signatures: SignaturesModel = SignaturesModel()
    approvals: ApprovalsModel = ApprovalsModel()
    pushers: PushersModel = PushersModel()
    limits: LimitsModel = LimitsModel()
    review: ReviewModel = ReviewModel()


def validate_policy(data: bytes, origin: str, catalogue: Catalogue | None = None,
                    vendors: VendorTable | None = None) -> dict[str, Any]:
    """Validate policy TOML bytes; return the plain form `Policy.from_plain` takes, with every
    named set (`@known-agents`, `@agent-config`) replaced by the catalogue's patterns (each
    pattern's set in the rule's `origins`) and the catalogue's version recorded; under
    `[review] independent = "vendor"`, the vendor table the hook judges by (the form's review table: the
    policy's `[review.vendors]`, then `vendors`'s entries) and its version."""
    if len(data) > MAX_POLICY_BYTES:
        raise GateError("GATE-CONFIG-POLICY", f"{origin} is larger than {MAX_POLICY_BYTES} bytes")
    doc, text = _toml(data, "GATE-CONFIG-POLICY", "policy", origin)
    model = _validated(PolicyModel, doc, text, "GATE-CONFIG-POLICY", origin)
    plain: dict[str, Any] = model.model_dump(mode="json")
    used = False
    for i, rule in enumerate(plain["freeze"]):
        for key in ("paths", "authors", "names", "trailers", "signers", "pushers"):
            try:
                expanded = expand(key, rule[key], catalogue)
            except ValueError as exc:
                raise GateError("GATE-CONFIG-POLICY", configerrors.located(origin, text, ("freeze", i, key),
                                                                           str(exc))) from None
            used = used or any(came for _, came in expanded)
            rule[key] = [pattern for pattern, _ in expanded]
            if any(came for _, came in expanded):  # where each set's pattern came from, for evidence
                rule.setdefault("origins", {})[key] = {pattern: came for pattern, came in expanded if came}
    for table, key in (("trusted", "pushers"), ("approvals", "approvers")):
        if any(p.startswith("@") for p in plain[table][key]):
            raise GateError("GATE-CONFIG-POLICY", configerrors.located(
                origin, text, (table, key), "named sets are for freeze rules only: list the accounts"))
    plain["catalogue_version"] = catalogue.version if catalogue is not None and used else None
    review = plain["review"]
    by_vendor = review["independent"] == "vendor"
    review["table"] = merged(vendors, review["vendors"]) if by_vendor else []
    review["table_version"] = vendors.version if vendors is not None and by_vendor else None
    agents = () if review["independent"] == "off" or catalogue is None else catalogue.agents
    review["agents"] = [{"id": a.id, "vendor": a.vendor, "emails": list(a.emails), "names": list(a.names),
                         "trailers": list(a.trailers)} for a in agents]  # authors from the commits' evidence too
    return plain


# --- keyrings and key files -------------------------------------------------------------

def _material(value: str | None, what: str, size: int, exact: bool) -> str | None:
    """Strict base64 of `size` bytes (at least `size` unless `exact`), as a pydantic check."""
    if value is None:
        return None
    raw = b64decode_strict(value, what)
    if (len(raw) != size) if exact else (len(raw) < size):
        raise ValueError(f"{what} is {'' if exact else 'at least '}{size} bytes")
    return value


def _check_material(algorithm: str, asymmetric: str | None, secret: str | None, asymmetric_name: str) -> None:
    """An ed25519 key has the asymmetric half (32 bytes) and no secret; an hmac key a secret of 32+ bytes."""
    if algorithm == "ed25519":
        if asymmetric is None or secret is not None:
            raise ValueError(f"an ed25519 key has {asymmetric_name} and no secret")
        _material(asymmetric, asymmetric_name, 32, exact=True)
    else:
        if secret is None or asymmetric is not None:
            raise ValueError(f"an hmac-sha256 key has secret and no {asymmetric_name}")
        _material(secret, "secret", 32, exact=False)


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("times need an explicit offset, e.g. 2026-01-01T00:00:00Z")
    return value


class _KeyIdentity(_Strict):
    """What a keyring entry and a key file both say: which key, of which algorithm, for what."""

    id: Annotated[str, Field(pattern=KEY_ID_PATTERN)]
    algorithm: Algorithm
    purpose: Purpose


class KeyringEntry(_KeyIdentity):
    public_key: str | None = None
    secret: str | None = None
    not_before: dt.datetime | None = None
    not_after: dt.datetime | None = None
    revoked: bool = False

    _aware_nb = field_validator("not_before")(_aware)
    _aware_na = field_validator("not_after")(_aware)

    @model_validator(mode="after")
    def _shape(self) -> KeyringEntry:
        _check_material(self.algorithm, self.public_key, self.secret, "public_key")
        if self.purpose in ED25519_ONLY and self.algorithm != "ed25519":
            raise ValueError(ED25519_ONLY[self.purpose])
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


class KeyFile(_KeyIdentity):
    private_key: str | None = None
    secret: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> KeyFile:
        _check_material(self.algorithm, self.private_key, self.secret, "private_key")
        if self.purpose == "attestation" and self.algorithm != "ed25519":
            raise ValueError(ED25519_ONLY[self.purpose])
        return self


def _ts(value: dt.datetime | None) -> int | None:
    return None if value is None else int(value.timestamp())


def validate_keyring(data: bytes, origin: str) -> list[dict[str, object]]:
    """Validate keyring TOML; return the plain form `keys.keyring_from_plain` takes."""
    doc, text = _toml(data, "GATE-CONFIG-KEYRING", "keyring", origin)
    model = _validated(KeyringFile, doc, text, "GATE-CONFIG-KEYRING", origin)
    ring: Keyring = {}
    for k in model.key:
        material = b64decode_strict((k.public_key if k.algorithm == "ed25519" else k.secret) or "", "key")
        ring[k.id] = VerifyKey(k.id, k.algorithm, k.purpose, material, _ts(k.not_before), _ts(k.not_after),
                               k.revoked)
    return keyring_to_plain(ring)


def parse_keyfile(data: bytes, origin: str) -> SigningKey:
    doc, text = _toml(data, "GATE-CONFIG-KEYFILE", "key file", origin)
    model = _validated(KeyFile, doc, text, "GATE-CONFIG-KEYFILE", origin)
    material = b64decode_strict((model.private_key if model.algorithm == "ed25519" else model.secret) or "", "key")
    return SigningKey(model.id, model.algorithm, model.purpose, material)


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True, slots=True)
class GeneratedKey:
    keyfile_text: str
    keyring_entry: str


def generate_key(algorithm: str, key_id: str, purpose: str) -> GeneratedKey:
    """Make a fresh key; return the key file text and the keyring entry (TOML).

    GATE-INPUT-ARGUMENT when the id, algorithm or purpose is not allowed.
    """
    placeholder = b64encode(bytes(32))
    try:  # validates id, algorithm and purpose before any key is made
        KeyFile.model_validate({"id": key_id, "algorithm": algorithm, "purpose": purpose,
                                ("private_key" if algorithm == "ed25519" else "secret"): placeholder})
    except ValidationError as exc:
        flags = {"id": "--id", "algorithm": "--alg", "purpose": "--purpose"}
        found = [f"{flags.get(str(e['loc'][0]), configerrors.where(e['loc'])) if e['loc'] else '--alg'}: "
                 f"{configerrors.message(KeyFile, e)}" for e in exc.errors(include_url=False)]
        raise GateError("GATE-INPUT-ARGUMENT", "; ".join(found)) from None
    head = f"id = {_toml_str(key_id)}\nalgorithm = {_toml_str(algorithm)}\npurpose = {_toml_str(purpose)}\n"
    if algorithm == "ed25519":
        seed, pub = new_ed25519()
        keyfile = head + f"private_key = {_toml_str(b64encode(seed))}\n"
        entry_material = f"public_key = {_toml_str(b64encode(pub))}\n"
    else:
        secret = b64encode(new_hmac_secret())
        keyfile = head + f"secret = {_toml_str(secret)}\n"
        entry_material = f"secret = {_toml_str(secret)}\n"
    return GeneratedKey(keyfile, "[[key]]\n" + head + entry_material + "revoked = false\n")
