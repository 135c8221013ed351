"""The hook's stages are named the same in its docstring, in docs/architecture.md and in the code."""

from __future__ import annotations

import re

from support.gitutil import ROOT

import server.prereceive


def _titles(text: str) -> list[str]:
    return [m.group(1).lower() for m in re.finditer(r"^\d\. \*\*([^*]+)\*\*", text, re.M)]


def test_the_docstring_the_architecture_and_the_code_list_the_same_stages() -> None:
    doc = _titles(server.prereceive.__doc__ or "")
    arch = (ROOT / "docs" / "architecture.md").read_text()
    section = arch[arch.index("## How a push is decided"):arch.index("## Where codes are raised")]
    source = (ROOT / "server" / "prereceive.py").read_text()
    code = [m.group(2).lower() for m in sorted(re.finditer(r"^ +# (\d)\. ([^(\n]+?)\s*(?:\(|$)", source, re.M),
                                                 key=lambda m: m.group(1))]
    assert len(doc) == 8, doc
    assert _titles(section) == doc
    assert code == doc
