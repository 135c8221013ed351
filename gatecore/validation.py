"""Turning pydantic validation errors into one-line, location-bearing messages."""

from __future__ import annotations

from pydantic import ValidationError


def error_locations(exc: ValidationError) -> list[tuple[str, str]]:
    """(dotted location, message) per error, in pydantic's order."""
    out = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(document)"
        out.append((loc, str(err["msg"])))
    return out


def format_validation_error(exc: ValidationError) -> str:
    return "; ".join(f"{loc}: {msg}" for loc, msg in error_locations(exc))
