"""The versioned data tables the package ships (the agent catalogue, `gatecore/catalogue.py`;
the vendor table, `gatecore/vendors.py`): their one size cap and the reading both share (pure).

A running hook never parses a table (the validated policy carries what it took from them),
but it hashes their bytes to know whether the validated form is still current: this module
is what it imports for the cap, and it imports nothing it does not need until a table is
parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The most bytes a shipped data table may hold (read capped, parsed capped).
MAX_TABLE_BYTES = 1 << 20


def string_list(entry: Mapping[str, Any], key: str, where: str, required: bool = False) -> tuple[str, ...]:
    """`entry[key]`: a list of non-empty strings (empty if absent, unless `required`)."""
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where}: {key} must be a list of non-empty strings")
    if required and not value:
        raise ValueError(f"{where}: {key} must not be empty")
    return tuple(value)


def entry_head(entry: Any, index: int, what: str, keys: set[str], ids: set[str]) -> tuple[str, tuple[str, ...], str]:
    """(id, sources, checked) of a table's entry: only `keys`, an id unique among `ids` (added to
    them), at least one source and the date they were checked."""
    where = f"{what} {index}"
    if not isinstance(entry, dict) or set(entry) - keys:
        raise ValueError(f"{where}: unknown keys {sorted(set(entry) - keys) if isinstance(entry, dict) else ''}")
    ident, checked = entry.get("id"), entry.get("checked")
    if not isinstance(ident, str) or not ident or not ident.replace("-", "").isalnum() or not ident.islower():
        raise ValueError(f"{where}: id must be lower-case letters, digits and '-'")
    if ident in ids:
        raise ValueError(f"{where}: id {ident!r} is listed twice")
    ids.add(ident)
    import datetime as dt  # (only when a table is parsed: the hook reads tables' bytes only)

    if isinstance(checked, dt.date) and not isinstance(checked, dt.datetime):
        checked = checked.isoformat()
    if not isinstance(checked, str):
        raise ValueError(f"{where}: checked must be the date the sources were checked (YYYY-MM-DD)")
    try:
        dt.date.fromisoformat(checked)
    except ValueError:
        raise ValueError(f"{where}: checked must be a date (YYYY-MM-DD)") from None
    return ident, string_list(entry, "sources", where, required=True), checked


def data_document(data: bytes, what: str, cap: int, entries: str) -> tuple[str, list[Any], dict[str, Any]]:
    """A packaged data table's TOML (the agent catalogue, the vendor table): its `version`, its
    `[[entries]]` (at least one) and the whole document. ValueError with a one-line reason."""
    if len(data) > cap:
        raise ValueError(f"the {what} is too large")
    import tomllib  # (here: a hook that reads the catalogue's bytes only never imports it)

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"the {what} is not valid TOML: {exc}") from None
    version, listed = doc.get("version"), doc.get(entries)
    if not isinstance(version, str) or not version or not isinstance(listed, list) or not listed:
        raise ValueError(f"the {what} needs a version and at least one [[{entries}]]")
    return version, listed, doc
