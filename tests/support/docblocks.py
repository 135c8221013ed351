"""The fenced blocks of README.md and docs/*.md, and running the shell ones as written.

A shell block (```sh, bash, shell, console) is preceded by one marker line (the nearest
non-blank line above its fence):

* `<!-- run: NAME -->`: a test runs it (`run_block("NAME", ...)`), its placeholders filled by
  the test's fixture (`fill`: each placeholder must occur, so a renamed one fails the test); two
  documents may show one block under one name (README.md and docs/servers.md, the admin's
  install) only when its text is the same in both;
* `<!-- synopsis -->`: not runnable as written (placeholders, a real server, the whole suite).

`tests/offline/test_docs_run.py` fails on a shell block with neither marker, on a run name no
test runs, and on a block with no language at all (so commands cannot hide in one).
"""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .gitutil import ROOT

SHELL = frozenset({"sh", "bash", "shell", "console", "zsh"})
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!-- (?:run: (?P<name>[a-z0-9-]+)|(?P<synopsis>synopsis)) -->")


@dataclass(frozen=True)
class Block:
    file: str  # relative to the project root
    line: int  # of the opening fence
    lang: str
    body: str  # dedented
    run: str | None  # the run name
    synopsis: bool

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks() -> list[Block]:
    out = []
    for path in documents():
        text = path.read_text()
        for m in FENCE.finditer(text):
            before = [ln for ln in text[:m.start()].splitlines() if ln.strip()]
            mark = MARK.fullmatch(before[-1].strip()) if before else None
            lang = m.group("info").strip().split(" ")[0] if m.group("info").strip() else ""
            out.append(Block(str(path.relative_to(ROOT)), text[:m.start()].count("\n") + 1, lang,
                             textwrap.dedent(m.group("body")), mark.group("name") if mark else None,
                             bool(mark and mark.group("synopsis"))))
    return out


def block(name: str) -> Block:
    """The block marked `run: NAME`: one, or one text that several documents show."""
    found = [b for b in blocks() if b.run == name]
    assert found, f"no block marked run: {name}"
    assert len({b.body for b in found}) == 1, f"run: {name} marks blocks that differ: {[b.where for b in found]}"
    return found[0]


def fill(text: str, values: dict[str, str]) -> str:
    """The block with each placeholder replaced; every placeholder must be in it."""
    for placeholder, value in values.items():
        assert placeholder in text, f"{placeholder!r} is not in the block:\n{text}"
        text = text.replace(placeholder, value)
    return text


def run_block(name: str, values: dict[str, str], cwd: Path, env: dict[str, str] | None = None,
              check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the block named `name` with bash (-e -u -o pipefail), its placeholders filled."""
    b = block(name)
    script = fill(b.body, values)
    out = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    if check:
        assert out.returncode == 0, f"{b.where} ({name}) failed ({out.returncode}):\n{script}\n{out.stdout}\n{out.stderr}"
    return out
