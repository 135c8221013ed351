"""Which vendor made a model (pure).

Reviewer independence under `[review] independent = "vendor"` (`gatecore.checks.independence`,
docs/receipts.md) refuses a reviewer that shares a vendor with the model that wrote the change.
A model id is first read by its providers' naming schemes (`gatecore.configuration.modelnames`: Bedrock's
`us.deepseek.r1-v1:0` reads `deepseek-r1`); the vendor table (`gatecore/data/vendors.toml`,
versioned, each entry with the public pages it comes from, validated by
`configschema.parse_vendor_table`) maps globs on those canonical forms to vendor ids; a policy's
`[review.vendors]` adds to it (`configschema.validate_policy` merges both into the policy's plain
form, so the hook never reads the table). A model matched by entries of two vendors is of both
(MAI-DS-R1 is DeepSeek-R1 post-trained by Microsoft); a model no entry matches has no known vendor.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..ids import VENDOR_ID_RE
from ..valueclass import valueclass

#: A vendor's id: what the ledger's `author_vendor` and a policy's `[review.vendors]` keys hold.
VENDOR_ID = VENDOR_ID_RE


def canonical_pattern(pattern: str) -> str:
    """A glob on canonical model ids as a policy may write it: lower case, `.` and `_` as `-`,
    the last `/` segment."""
    return pattern.casefold().rsplit("/", 1)[-1].replace(".", "-").replace("_", "-")


@valueclass(frozen=True, slots=True)
class Vendor:
    id: str
    name: str
    sources: tuple[str, ...]
    checked: str  # YYYY-MM-DD: when the sources were last checked against these patterns
    models: tuple[str, ...]  # globs on canonical model ids (gatecore.configuration.modelnames)

    def as_plain(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "models": list(self.models), "sources": list(self.sources),
                "checked": self.checked}


@valueclass(frozen=True, slots=True)
class VendorTable:
    version: str
    vendors: tuple[Vendor, ...]

    def entries(self) -> list[tuple[str, str]]:
        """(glob, vendor id) of every entry, in order."""
        return [(canonical_pattern(p), v.id) for v in self.vendors for p in v.models]


#: Where an entry of a policy's merged table came from (`Lookup.origin`).
FROM_POLICY = "the policy's [review.vendors]"


def merged(table: VendorTable | None, added: dict[str, list[str]]) -> list[list[str]]:
    """The policy's additions (vendor -> model globs), then the packaged table: [glob, vendor,
    origin] rows, the plain form `Policy.review_vendors` is built from."""
    rows = [[canonical_pattern(p), vendor, FROM_POLICY] for vendor, patterns in added.items() for p in patterns]
    if table is not None:
        rows += [[glob, vendor, f"vendor table {table.version}"] for glob, vendor in table.entries()]
    return rows


def vendors_of(canonical: str, rows: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Every vendor whose globs match a model's canonical form (`modelnames.ModelName.canonical`),
    a bare family name as the family (`codestral-*` matches `codestral`): vendor -> where the first
    matching entry came from (empty: no known vendor)."""
    from .policy import IdentityGlob

    forms = (canonical, canonical + "-")
    found: dict[str, str] = {}
    for glob, vendor, origin in rows:
        if vendor not in found and any(IdentityGlob.compile(glob).matches(f) for f in forms):
            found[vendor] = origin
    return found
