"""The stages are named the same in the code, its docstrings and docs/architecture.md: the hook's
own (`server/prereceive.py`) and the engine's one composition (`gatecore/pipeline.py`)."""

from __future__ import annotations

import re

from support.gitutil import ROOT

import gatecore.pipeline
import server.prereceive


def _titles(text: str) -> list[str]:
    return [m.group(1).lower() for m in re.finditer(r"^\d\. \*\*([^*]+)\*\*", text, re.M)]


def _architecture() -> str:
    arch = (ROOT / "docs" / "architecture.md").read_text()
    return arch[arch.index("## How a push is decided"):arch.index("## Where codes are raised")]


def test_the_hooks_docstring_the_architecture_and_the_code_list_the_same_stages() -> None:
    doc = _titles(server.prereceive.__doc__ or "")
    section = _architecture()
    source = (ROOT / "server" / "prereceive.py").read_text()
    code = [m.group(2).lower() for m in sorted(re.finditer(r"^ +# (\d)\. ([^(\n]+?)\s*(?:\(|$)", source, re.M),
                                                 key=lambda m: m.group(1))]
    assert len(doc) == 6, doc
    assert _titles(section)[:len(doc)] == doc
    assert code == doc


def test_the_pipelines_stages_are_the_architectures_and_its_own_names() -> None:
    doc = _titles(gatecore.pipeline.__doc__ or "")
    assert doc == [gatecore.pipeline.RULES, gatecore.pipeline.RESERVED, gatecore.pipeline.APPROVALS]
    assert _titles(_architecture())[6:] == doc
    assert frozenset(doc) == gatecore.pipeline.ALL


def test_the_hook_composes_no_stage_itself() -> None:
    """The hook, the in-process tier and the client hooks build a `PushInput` and call `judge`:
    none of them runs a stage of its own."""
    for path in ("server/prereceive.py", "tests/support/engine.py", "hooks/frozen_push.py", "hooks/receipt_check.py"):
        text = (ROOT / path).read_text()
        assert "judge(" in text, path
        for stage in ("PushChecker(", "reserved.check(", "reserved_check(", "ReservedContext(", "ApprovalContext(",
                      "verdict_on("):
            assert stage not in text, (path, stage)
