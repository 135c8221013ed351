"""Which vendor made a model, and when two model ids name one model (pure).

Reviewer independence (`gatecore.independence`, docs/receipts.md) compares the model that
reviewed an attempt's change with the model that wrote it. Model ids come from many places for
one model: `claude-sonnet-4-5-20250929` on the vendor's API, `anthropic/claude-sonnet-4.5` through
OpenRouter, `us.anthropic.claude-sonnet-4-5-20250929-v1:0` on Bedrock, `claude-sonnet-4-5@20250929`
on Vertex. `canonical_model` maps them to one form, `claude-sonnet-4-5`:

1. lower case; only the last `/` segment (routing prefixes: `openrouter/anthropic/`,
   `publishers/google/models/`); nothing from the first `@` or `:` (Vertex versions, OpenRouter
   variants such as `:nitro`, Bedrock's `:0`);
2. a Bedrock prefix of dotted words (`us.anthropic.`, `amazon.`, `meta.`) dropped (a vendor
   lookup also tries the id with it, read as words: `deepseek.r1` is `deepseek-r1` too);
3. `.` and `_` read as `-` (`4.5` and `4-5` are one version);
4. from the end, again and again: a date (`-20250929`, `-2024-08-06`, `-09-2025`), a snapshot or
   version number of three or four digits (`-001`, `-0613`, `-2507`), `-v1` (Bedrock), `-latest`,
   `-preview`, `-exp`, `-thinking`, `-maas` (Vertex's served copies).

Every rule only ever merges ids: two ids that name one model compare equal, and two that name
different models may too (a preview and its release). For independence that errs the safe way:
a reviewer taken for the author's model is refused, never the reverse.

The vendor table (`gatecore/data/vendors.toml`, versioned, each entry with the public pages it
comes from) maps globs on canonical ids to vendor ids; a policy's `[review.vendors]` adds to it
(`configschema.validate_policy` merges both into the policy's plain form, so the hook never reads
the table). A model matched by entries of two vendors is of both (MAI-DS-R1 is DeepSeek-R1
post-trained by Microsoft); a model no entry matches has no known vendor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .ids import VENDOR_ID_RE

#: A vendor's id: what the ledger's `author_vendor` and a policy's `[review.vendors]` keys hold.
VENDOR_ID = VENDOR_ID_RE
_KEYS = {"id", "name", "sources", "checked", "models"}

_BEDROCK_PREFIX = re.compile(r"^(?:[a-z][a-z-]*\.)+(?=[a-z])")
_TAIL = re.compile(r"-(?:20\d{6}|20\d\d-\d\d-\d\d|\d\d-20\d\d|\d{3,4}|v\d+|latest|preview|exp|thinking|maas)$")


def canonical_model(model_id: str, bedrock: bool = True) -> str:
    """The form model ids are compared and looked up in (module docstring); never empty.
    `bedrock=False` keeps a leading dotted word (`deepseek.r1` reads `deepseek-r1`), the second
    form `vendors_of` looks up."""
    text = model_id.casefold().rsplit("/", 1)[-1]
    text = re.split(r"[@:]", text, maxsplit=1)[0]
    if bedrock:
        text = _BEDROCK_PREFIX.sub("", text)
    text = text.replace(".", "-").replace("_", "-")
    while (shorter := _TAIL.sub("", text)) != text and shorter:
        text = shorter
    return text or model_id.casefold()


def canonical_pattern(pattern: str) -> str:
    """A glob on model ids, read as `canonical_model` reads ids: lower case, `.` and `_` as `-`,
    the last `/` segment."""
    return pattern.casefold().rsplit("/", 1)[-1].replace(".", "-").replace("_", "-")


@dataclass(frozen=True, slots=True)
class Vendor:
    id: str
    name: str
    sources: tuple[str, ...]
    checked: str  # YYYY-MM-DD: when the sources were last checked against these patterns
    models: tuple[str, ...]  # globs on canonical model ids

    def as_plain(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "models": list(self.models), "sources": list(self.sources),
                "checked": self.checked}


@dataclass(frozen=True, slots=True)
class VendorTable:
    version: str
    vendors: tuple[Vendor, ...]

    def entries(self) -> list[tuple[str, str]]:
        """(glob, vendor id) of every entry, in order."""
        return [(canonical_pattern(p), v.id) for v in self.vendors for p in v.models]


def parse(data: bytes) -> VendorTable:
    """The vendor table from its TOML bytes. ValueError with a one-line reason if malformed."""
    from .tables import MAX_TABLE_BYTES, data_document, entry_head, string_list

    version, entries, doc = data_document(data, "vendor table", MAX_TABLE_BYTES, "vendor")
    if set(doc) - {"version", "vendor"}:
        raise ValueError("the vendor table has unknown keys (version and [[vendor]] only)")
    ids: set[str] = set()
    vendors = []
    for i, e in enumerate(entries):
        ident, sources, checked = entry_head(e, i, "vendor", _KEYS, ids)
        name = e.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"vendor {i}: needs a name")
        if VENDOR_ID.fullmatch(ident) is None:
            raise ValueError(f"vendor {i}: id {ident!r} is not of the form {VENDOR_ID.pattern}")
        vendors.append(Vendor(ident, name, sources, checked, string_list(e, "models", f"vendor {i}", required=True)))
    return VendorTable(version, tuple(vendors))


#: Where an entry of a policy's merged table came from (`Lookup.origin`).
FROM_POLICY = "the policy's [review.vendors]"


def merged(table: VendorTable | None, added: dict[str, list[str]]) -> list[list[str]]:
    """The policy's additions (vendor -> model globs), then the packaged table: [glob, vendor,
    origin] rows, the plain form `Policy.review_vendors` is built from."""
    rows = [[canonical_pattern(p), vendor, FROM_POLICY] for vendor, patterns in added.items() for p in patterns]
    if table is not None:
        rows += [[glob, vendor, f"vendor table {table.version}"] for glob, vendor in table.entries()]
    return rows


def vendors_of(model_id: str, rows: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Every vendor whose globs match the model's canonical id, with or without a Bedrock-style
    dotted prefix (`acme.coder-7` is looked up as `coder-7` and as `acme-coder-7`), a bare family
    name as the family (`codestral-*` matches `codestral`): vendor ->
    where the first matching entry came from (empty: no known vendor). Matching either form
    only adds vendors."""
    from .policy import IdentityGlob

    # each form also with a "-" after it: stripping `-latest` leaves `codestral`, which `codestral-*` means too
    forms = {f + end for f in (canonical_model(model_id), canonical_model(model_id, bedrock=False))
             for end in ("", "-")}
    found: dict[str, str] = {}
    for glob, vendor, origin in rows:
        if vendor not in found and any(IdentityGlob.compile(glob).matches(f) for f in forms):
            found[vendor] = origin
    return found
