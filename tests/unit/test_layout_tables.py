"""The layout tables tell the truth: docs/architecture.md's "Layout" and its module map are held
to the tree, so a folder or package added, moved or removed without the table saying so fails here,
and so does a table row naming what does not exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.gitutil import ROOT

_TICKS = re.compile(r"`([^`]+)`")


def _rows(doc: Path, heading: str) -> list[list[str]]:
    """The cells of every row of the tables in the section of `doc` that starts with `heading`."""
    text = doc.read_text()
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    rows = []
    for line in text[start:end if end >= 0 else None].splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:] if rows else rows


def _layout() -> dict[str, str]:
    """docs/architecture.md's Layout table: each path the first column names -> the row's second column."""
    out = {}
    for path_cell, holds in _rows(ROOT / "docs" / "architecture.md", "## Layout\n"):
        for path in _TICKS.findall(path_cell):
            out[path] = holds
    return out


def _tracked_folders() -> set[str]:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return {f.split("/")[0] + "/" for f in files if "/" in f}


def _packages() -> set[str]:
    return {f"gatecore/{p.parent.name}/" for p in (ROOT / "gatecore").glob("*/__init__.py")}


def test_every_top_level_folder_and_gatecore_package_has_its_row_in_the_readme() -> None:
    named = set(_layout())
    missing = (_tracked_folders() | _packages()) - named
    assert not missing, f"docs/architecture.md's Layout table has no row for {sorted(missing)}"


def test_every_path_the_readme_layout_names_exists() -> None:
    found = []
    for path, holds in _layout().items():
        if not (ROOT / path).exists():
            found.append(f"row `{path}`: no such path")
            continue
        if not path.endswith("/"):
            continue
        for name in _TICKS.findall(holds):
            if re.fullmatch(r"[\w-]+/", name) and not (ROOT / path / name).is_dir():
                found.append(f"row `{path}` names `{name}`: no such folder in {path}")
            elif re.fullmatch(r"[\w-]+\.py", name) and not any((ROOT / path).rglob(name)):
                found.append(f"row `{path}` names `{name}`: no such module in {path}")
    assert not found, found


def test_the_readme_names_every_test_tier() -> None:
    """Every folder of tests/ is named in the `tests/` row (a new tier is said where readers look)."""
    named = set(_TICKS.findall(_layout()["tests/"]))
    tiers = {f"{p.name}/" for p in (ROOT / "tests").iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert tiers <= named, f"docs/architecture.md's tests/ row does not name {sorted(tiers - named)}"


def _module_map() -> set[str]:
    """docs/architecture.md's module map: every `package/module.py` it names."""
    out = set()
    for row in _rows(ROOT / "docs" / "architecture.md", "The engine's modules, by what they hold"):
        (package,) = _TICKS.findall(row[0])
        out |= {package + module for module in _TICKS.findall(row[1])}
    return out


def _engine_modules() -> set[str]:
    """The pure engine's modules: gatecore/ but the command line and the shell's packages."""
    shell = {"adapters", "trusted", "cli"}
    out = {f"gatecore/{p.name}" for p in (ROOT / "gatecore").glob("*.py")} - {
        "gatecore/__init__.py", "gatecore/_build.py"}
    for init in (ROOT / "gatecore").glob("*/__init__.py"):
        if init.parent.name not in shell:
            out |= {str(p.relative_to(ROOT)) for p in init.parent.glob("*.py")
                    if p.name != "__init__.py" or p.read_text().count("\n") > 20}  # a package with code of its own
    return out


def test_the_architecture_module_map_names_every_engine_module_and_nothing_else() -> None:
    mapped, actual = _module_map(), _engine_modules()
    assert not actual - mapped, f"docs/architecture.md's module map does not name {sorted(actual - mapped)}"
    assert not mapped - actual, f"docs/architecture.md's module map names what is not there: {sorted(mapped - actual)}"


@pytest.mark.parametrize("package", ["adapters", "trusted"])
def test_the_architecture_layers_name_every_module_of_the_shell(package: str) -> None:
    rows: dict[str, str] = {}
    for row in _rows(ROOT / "docs" / "architecture.md", "## The layers"):  # the layer table is the section's first
        if len(row) == 3 and _TICKS.findall(row[1]):
            rows.setdefault(_TICKS.findall(row[1])[0], row[2])
    named = set(_TICKS.findall(rows[f"gatecore/{package}/"]))
    modules = {p.name for p in (ROOT / "gatecore" / package).glob("*.py") if p.name != "__init__.py"}
    assert modules <= named, f"docs/architecture.md's gatecore/{package}/ row does not name {sorted(modules - named)}"
    assert all((ROOT / "gatecore" / package / n).is_file() for n in named if re.fullmatch(r"\w+\.py", n)), named


def test_the_command_line_table_names_every_module_of_the_package_and_every_command() -> None:
    """docs/architecture.md, "The command line": one row per module of gatecore/cli/, and the
    wiring's every command and group named in the row of the module that holds it."""
    from gatecore.cli import wiring

    rows = {_TICKS.findall(row[0])[0]: row[1] for row in _rows(ROOT / "docs" / "architecture.md",
                                                                "## The command line\n")}
    package = {p.name for p in (ROOT / "gatecore" / "cli").glob("*.py")} - {"__main__.py"}
    assert set(rows) == package
    for name, module in (*wiring.COMMANDS, *wiring.GROUPS):
        assert f"`gate {name}" in rows[f"{module}.py"], (name, module)
