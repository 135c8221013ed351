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

and the package's own data tables (the agent catalogue, the vendor table, the model-id table,
`gatecore/data/*.toml`), validated the same way where pydantic is already loaded (validating a
policy, `gate agents list`, `gate attempt show`; never on the hook's path).

These models are the one definition of each file's keys, types, bounds and defaults. The
hook never imports this module on its common path: it reads the validated plain form (the
model's dump, every key present) from a cache next to the file (`adapters.files`) and builds
its fast form from it (`Policy.from_plain`, `keys.keyring_from_plain`), which compiles the
globs and decodes the keys but checks no bound again. The allowed values of every setting
are `Literal` types defined once beside the plain-value classes (`policy.Mode`, ...,
`keys.Algorithm`) and used by both (at run time those are tuples of the values, which this
module makes `typing`'s `Literal` of, below its imports).

Receipts, ledger records and approvals are not configuration: they arrive with pushes and
are read on the hook's path, which must not import pydantic (about 70 ms a review push), so
their schemas are `gatecore/records/schema.py`'s small strict readers instead.

Validation errors are in the admin's words (`gatecore.configuration.configerrors`): file and line,
location (`freeze[0].refs[0]`), what is wrong and the fix.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import GateError
from ..ids import VENDOR_ID_RE
from ..signing.envelope import b64decode_strict, b64encode
from ..signing.keys import (
    Algorithm,
    Keyring,
    Purpose,
    SigningKey,
    VerifyKey,
    keyring_to_plain,
    new_ed25519,
    new_hmac_secret,
)
from ..valueclass import valueclass
from . import configerrors
from .catalogue import Agent, Catalogue, ConfigPaths, expand
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
from .tables import MAX_TABLE_BYTES
from .vendors import Vendor, VendorTable, merged

TYPE_CHECKING = False
if not TYPE_CHECKING:
    # The settings' `Literal` types are tuples of their values at run time (`valueclass.Literal`: the hooks
    # import no `typing`); pydantic reads `typing`'s own, made of them here (mypy reads policy's and keys').
    (Mode, RefAction, ReplaceAction, ModeAction, AnonymousAction, Independence, ModelRun, Algorithm,
     Purpose) = (Literal[values] for values in (Mode, RefAction, ReplaceAction, ModeAction, AnonymousAction,
                                                Independence, ModelRun, Algorithm, Purpose))

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


ModelId = Annotated[str, Field(min_length=1, max_length=200)]


class ReviewModel(_Strict):
    #: docs/receipts.md, Reviewer independence: "off", "model" or "vendor"
    independent: Independence = "off"
    #: "any", or "runner": only receipts whose answer the runner took from its own call of the model
    model_run: ModelRun = "any"
    #: the admin's additions to the vendor table: vendor id -> globs on canonical model ids
    vendors: Annotated[dict[VendorId, Annotated[list[ModelPattern], Field(min_length=1, max_length=1000)]],
                       Field(max_length=1000)] = {}
    #: model ids no naming scheme places (an Azure deployment): id -> the model it serves, or itself
    models: Annotated[dict[ModelId, ModelId], Field(max_length=1000)] = {}


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
                    vendors: VendorTable | None = None, names: ModelTable | None = None) -> dict[str, Any]:
    """Validate policy TOML bytes; return the plain form `Policy.from_plain` takes, with every
    named set (`@known-agents`, `@agent-config`) replaced by the catalogue's patterns (each
    pattern's set in the rule's `origins`) and the catalogue's version recorded; under
    `[review] independent = "vendor"`, the vendor table the hook judges by (the form's review table: the
    policy's `[review.vendors]`, then `vendors`'s entries) and its version; under "model" or
    "vendor", the model-id table ids are read by (`names`, the form's review names). Every id the
    policy's `[review.models]` names must read as a model the table places, or as itself."""
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
    if names is not None:
        _check_model_aliases(names, review["models"], origin, text)
    elif review["independent"] != "off":
        raise GateError("GATE-CONFIG-POLICY", configerrors.located(
            origin, text, ("review", "independent"), "reading model ids needs the model-id table, which is not "
                                                     "available"))
    review["names"] = names.plain if names is not None and review["independent"] != "off" else None
    every = [] if catalogue is None else [{"id": a.id, "vendor": a.vendor, "emails": list(a.emails),
                                           "names": list(a.names), "trailers": list(a.trailers)}
                                          for a in catalogue.agents]
    plain["agents"] = every  # the marks a tool call's commit would carry (`frozen.writer_for`)
    review["agents"] = every if review["independent"] != "off" else []  # authors from the commits' evidence too
    return plain


def _check_model_aliases(names: ModelTable, models: dict[str, str], origin: str, text: str) -> None:
    """Each `[review.models]` id names a model the table places, or itself (a model of its own), or
    a model of its own the table declares: a typo must not declare a new model."""
    from .modelnames import ModelNames, Unplaced

    reader = ModelNames.from_plain(names.plain)
    own = {k.strip().casefold() for k, v in models.items() if k.strip().casefold() == v.strip().casefold()}
    for key, target in models.items():
        if target.strip().casefold() in own:  # a model of its own, or another name of one
            continue
        found = reader.read(target)
        if isinstance(found, Unplaced):
            raise GateError("GATE-CONFIG-POLICY", configerrors.located(
                origin, text, ("review", "models", key),
                f"{target!r} is placed by no model-id scheme ({found.detail}): name a model the model-id table "
                f"{names.version} places (such as gpt-5 or claude-sonnet-4-5), or map the id to itself for a model "
                "of its own"))


# --- the shipped data tables ------------------------------------------------------------
#
# The agent catalogue (gatecore/data/agents.toml), the vendor table (vendors.toml) and the model-id
# table (models.toml) ship with the package. They are read where pydantic is already loaded
# (validating a policy, `gate agents list`, `gate attempt show`); the hook never parses them: the
# validated policy carries what it took from them.

TableId = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", max_length=64)]
Text = Annotated[str, Field(min_length=1, max_length=2000)]
Texts = Annotated[list[Annotated[str, Field(min_length=1, max_length=1000)]], Field(max_length=1000)]
Word = Annotated[str, Field(pattern=r"^[a-z0-9#][a-z0-9#._-]*$", max_length=64)]
Words = Annotated[list[Word], Field(max_length=1000)]


def _unique(entries: Iterable[Any], key: str, origin: str, text: str) -> None:
    """No id listed twice in a table's `[[key]]` entries (the second one is named, with its line)."""
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.id in seen:
            raise GateError("GATE-CONFIG-POLICY", configerrors.located(
                origin, text, (key, i, "id"), f"{entry.id!r} is listed twice"))
        seen.add(entry.id)


class _Sourced(_Strict):
    """What every table entry says of itself: its id, the public pages it comes from and the day
    they were checked (a TOML date or "YYYY-MM-DD")."""

    id: TableId
    sources: Annotated[Texts, Field(min_length=1)]
    checked: Annotated[dt.date, Field(strict=False)]


class AgentEntry(_Sourced):
    name: Text
    emails: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    names: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    trailers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    pushers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    #: whose models the tool runs, where it runs one vendor's only (a vendor id of the vendor table)
    vendor: VendorId | None = None

    @model_validator(mode="after")
    def _says_something(self) -> AgentEntry:
        if not (self.emails or self.names or self.trailers or self.pushers):
            raise ValueError("lists no emails, names, trailers or pushers")
        return self


class ConfigEntry(_Sourced):
    tool: Text
    paths: Annotated[list[PathPattern], Field(min_length=1, max_length=1000)]


class CatalogueFile(_Strict):
    version: Text
    agent: Annotated[list[AgentEntry], Field(min_length=1, max_length=10_000)]
    config: Annotated[list[ConfigEntry], Field(max_length=10_000)] = []



class VendorEntry(_Sourced):
    id: VendorId
    name: Text
    models: Annotated[list[ModelPattern], Field(min_length=1, max_length=1000)]


class VendorTableFile(_Strict):
    version: Text
    vendor: Annotated[list[VendorEntry], Field(min_length=1, max_length=10_000)]



class SchemeEntry(_Sourced):
    """How a host, router or tool wraps a vendor's model names (gatecore/configuration/modelnames.py)."""

    name: Text
    dates: Words = []  # snapshot shapes: "########", "####-##-##"
    modifiers: Words = []  # words the gate ignores (latest, thinking, high)
    regions: Words = []  # Bedrock's geographic prefixes
    providers: Words = []  # Bedrock's provider prefixes
    suffixes: Words = []  # a version suffix after the last "-" of a Bedrock or Vertex id (v1)
    iterated: Words = []  # one that is a version only before Bedrock's ":iteration" (gpt-oss-120b-1:0)
    variants: Words = []  # after ":" (free, nitro; Bedrock's 0)
    versions: Words = []  # after "@" (Vertex: 20250929, 001)
    namespaces: Words = []  # path segments before "/"
    deployments: Words = []  # path segments after which the name is the owner's
    renames: Annotated[dict[str, Word], Field(max_length=1000)] = {}  # "provider.name" -> the vendor's name
    aliases: Annotated[dict[Word, Word], Field(max_length=1000)] = {}  # a whole id -> the vendor's name
    brackets: Words = []  # a "[...]" suffix (Claude Code's [1m])


class FamilyEntry(_Sourced):
    """How a vendor names its own models: the first word, the words that tell them apart."""

    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9]*$", max_length=32)]
    vendor: VendorId
    also: Words = []  # other first words read as this family (chatgpt)
    prefixes: Words = []  # words that may stand before the family word (meta, open)
    words: Words = []
    marks: Words = []  # version shapes besides numbers (v#, r#, #o)
    drop: Words = []  # this family's words the gate ignores
    sizes: bool = False  # sizes (70b, a22b) belong to its names
    needs: Literal["", "word", "version", "either"] = ""
    order: Literal["", "words-first"] = ""


class ModelNamesFile(_Strict):
    version: Text
    scheme: Annotated[list[SchemeEntry], Field(min_length=1, max_length=1000)]
    family: Annotated[list[FamilyEntry], Field(min_length=1, max_length=1000)]



_T = TypeVar("_T", bound=BaseModel)


def _table(model: type[_T], data: bytes, origin: str, what: str) -> tuple[_T, str]:
    if len(data) > MAX_TABLE_BYTES:
        raise GateError("GATE-CONFIG-POLICY", f"{origin}: the {what} is larger than {MAX_TABLE_BYTES} bytes")
    doc, text = _toml(data, "GATE-CONFIG-POLICY", what, origin)
    return _validated(model, doc, text, "GATE-CONFIG-POLICY", origin), text


def parse_catalogue(data: bytes, origin: str) -> Catalogue:
    """The agent catalogue (gatecore/configuration/catalogue.py) from its TOML; GATE-CONFIG-POLICY with each
    problem's line and location (`agent[3].emails[0]: ...`) if malformed."""
    model, text = _table(CatalogueFile, data, origin, "agent catalogue")
    _unique(model.agent, "agent", origin, text)  # an agent and the config paths of its tool may share an id
    _unique(model.config, "config", origin, text)
    agents = tuple(Agent(a.id, a.name, tuple(a.sources), a.checked.isoformat(), tuple(a.emails), tuple(a.names),
                         tuple(a.trailers), tuple(a.pushers), a.vendor) for a in model.agent)
    config = tuple(ConfigPaths(c.id, c.tool, tuple(c.sources), c.checked.isoformat(), tuple(c.paths))
                   for c in model.config)
    return Catalogue(model.version, agents, config)


def parse_vendor_table(data: bytes, origin: str) -> VendorTable:
    """The vendor table (gatecore/configuration/vendors.py) from its TOML; GATE-CONFIG-POLICY as the catalogue's."""
    model, text = _table(VendorTableFile, data, origin, "vendor table")
    _unique(model.vendor, "vendor", origin, text)
    return VendorTable(model.version, tuple(Vendor(v.id, v.name, tuple(v.sources), v.checked.isoformat(),
                                                   tuple(v.models)) for v in model.vendor))


@valueclass(frozen=True, slots=True)
class ModelTable:
    """The model-id table: its entries (for docs and `gate attempt show`) and the plain form the
    validated policy carries (`ModelNames.from_plain`)."""

    version: str
    schemes: tuple[SchemeEntry, ...]
    families: tuple[FamilyEntry, ...]

    @property
    def plain(self) -> dict[str, Any]:
        drop = {"name", "sources", "checked"}
        return {"version": self.version,
                "schemes": [s.model_dump(mode="json", exclude=drop) for s in self.schemes],
                "families": [f.model_dump(mode="json", exclude=drop) for f in self.families]}


def parse_model_names(data: bytes, origin: str) -> ModelTable:
    """The model-id table (gatecore/configuration/modelnames.py) from its TOML; GATE-CONFIG-POLICY as the
    catalogue's, and when an alias or rename names a model the table itself does not place."""
    from .modelnames import ModelNames, Unplaced

    model, text = _table(ModelNamesFile, data, origin, "model-id table")
    _unique(model.scheme, "scheme", origin, text)
    _unique(model.family, "family", origin, text)
    table = ModelTable(model.version, tuple(model.scheme), tuple(model.family))
    names = ModelNames.from_plain(table.plain)
    for i, scheme in enumerate(model.scheme):
        for key in ("aliases", "renames"):
            for name, target in getattr(scheme, key).items():
                if isinstance(found := names.read(target), Unplaced):
                    raise GateError("GATE-CONFIG-POLICY", configerrors.located(
                        origin, text, ("scheme", i, key, name), f"{target!r} is placed by no scheme: {found.detail}"))
    return table


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


@valueclass(frozen=True, slots=True)
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
