"""The policy file (TOML) and its validation with pydantic.

    mode = "enforce"            # or "evaluate": report what would be rejected, accept
    [[freeze]]
    name = "governance"         # optional, shown in rejections
    paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml"]
    authors = ["*@agents.example.com"]   # globs on author and committer email
    pushers = ["agent-*"]                # globs on the authenticated pusher account
    refs = ["refs/heads/*"]              # optional scope; default all refs
    [refs]
    delete = "deny-restricted"  # allow | deny-restricted | deny
    force = "allow"             # allow | deny-restricted | deny
    [trusted]
    pushers = ["runner-*"]      # may write refs/gate/* and refs/heads/review/runner/*
    [limits]
    deadline_seconds = 4.0
    max_violations_shown = 50

See docs/policy.md. Validation errors carry their location (`freeze.0.paths`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from .configcache import read_capped
from .errors import ConfigError
from .policy import MAX_POLICY_BYTES, IdentityGlob, PathGlob, Policy, RefGlob
from .validation import format_validation_error


def _compiles(kind: type[PathGlob] | type[RefGlob] | type[IdentityGlob]) -> AfterValidator:
    def check(value: str) -> str:
        kind.compile(value)  # raises ValueError with a message pydantic reports
        return value

    return AfterValidator(check)


PathPattern = Annotated[str, Field(min_length=1, max_length=1024), _compiles(PathGlob)]
RefPattern = Annotated[str, Field(min_length=6, max_length=1024), _compiles(RefGlob)]
IdentityPattern = Annotated[str, Field(min_length=1, max_length=256), _compiles(IdentityGlob)]
Action = Literal["allow", "deny-restricted", "deny"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class FreezeModel(_Model):
    name: Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9._-]*$")] = ""
    paths: Annotated[list[PathPattern], Field(min_length=1, max_length=1000)]
    authors: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    pushers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []
    refs: Annotated[list[RefPattern], Field(min_length=1, max_length=1000)] | None = None


class RefsModel(_Model):
    delete: Action = "deny-restricted"
    force: Action = "allow"


class TrustedModel(_Model):
    pushers: Annotated[list[IdentityPattern], Field(max_length=1000)] = []


class LimitsModel(_Model):
    deadline_seconds: Annotated[float, Field(gt=0, le=600, allow_inf_nan=False, strict=False)] = 4.0
    max_violations_shown: Annotated[int, Field(ge=1, le=10000)] = 50


class PolicyModel(_Model):
    mode: Literal["enforce", "evaluate"] = "enforce"
    freeze: Annotated[list[FreezeModel], Field(max_length=1000)] = []
    refs: RefsModel = RefsModel()
    trusted: TrustedModel = TrustedModel()
    limits: LimitsModel = LimitsModel()


def validate_bytes(data: bytes, origin: str) -> dict[str, Any]:
    """Validate policy TOML bytes; return the plain form `Policy.from_plain` takes."""
    if len(data) > MAX_POLICY_BYTES:
        raise ConfigError("GATE-CONFIG-POLICY", f"{origin} is larger than {MAX_POLICY_BYTES} bytes")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ConfigError("GATE-CONFIG-POLICY", f"{origin} is not valid TOML: {exc}") from None
    try:
        model = PolicyModel.model_validate(doc)
    except ValidationError as exc:
        raise ConfigError("GATE-CONFIG-POLICY", f"{origin}: {format_validation_error(exc)}") from None
    return model.model_dump(mode="json")


def load(path: Path) -> Policy:
    """Read, validate and compile a policy file (the slow, complete road)."""
    plain = validate_bytes(read_capped(path, "GATE-CONFIG-POLICY", "policy", MAX_POLICY_BYTES), str(path))
    return Policy.from_plain(plain)


def check_messages(path: Path) -> list[str]:
    """Every problem with a policy file, one line each (empty: valid)."""
    try:
        load(path)
    except ConfigError as exc:
        return [part.strip() for part in exc.detail.split("; ")]
    return []
