"""The code registry, `gate explain` and docs/codes.md agree, and every code used exists."""

from __future__ import annotations

import re

from support.cli import cli
from support.gitutil import ROOT

from gatecore import codes

CODE_RE = re.compile(r"GATE-[A-Z]+(?:-[A-Z0-9]+)+")


def test_docs_codes_md_is_generated_from_the_registry() -> None:
    assert (ROOT / "docs" / "codes.md").read_text() == codes.markdown_table()


def test_every_code_used_in_the_package_is_registered() -> None:
    used: set[str] = set()
    for pkg in ("gatecore", "server", "hooks"):
        for path in (ROOT / pkg).rglob("*.py"):
            used |= set(CODE_RE.findall(path.read_text()))
    unknown = sorted(used - set(codes.CODES))
    assert not unknown, f"codes used but not registered: {unknown}"


def test_every_code_has_area_reason_and_hint() -> None:
    for c in codes.CODES.values():
        assert c.area in codes.AREAS
        assert c.code.startswith(f"GATE-{c.area}-")
        assert c.reason and c.hint
        assert c.reason.isascii() and c.hint.isascii()


def test_gate_explain_prints_each_code() -> None:
    for code in ("GATE-BIND-MODEL", "GATE-FROZEN-PATH", "GATE-HOOK-DEADLINE"):
        out = cli("explain", code)
        assert out.returncode == 0
        assert code in out.stdout and codes.CODES[code].hint in out.stdout


def test_gate_explain_markdown_matches_docs() -> None:
    out = cli("explain", "--markdown")
    assert out.stdout == (ROOT / "docs" / "codes.md").read_text()


def test_gate_explain_unknown_code() -> None:
    out = cli("explain", "GATE-NOPE")
    assert out.returncode == 2
    assert "unknown code" in out.stderr
