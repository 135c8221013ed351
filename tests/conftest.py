"""Shared fixtures: real git repositories, real identities, the real `gate` CLI.

The harness lives in `tests/support/` (one package; this directory is on sys.path through
this conftest); the tests are grouped by what they threaten or check:
`unit/` (pure modules), `push/` (real `git push` into a gated server), `servers/` (real
Apache and `git daemon` on 127.0.0.1 run by their hosting accounts; root only), `client/` (the
pre-commit hooks), `offline/` (the CLI without a server), `fuzz/` (parsers and the decision).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.gitutil import WorkRepo


@pytest.fixture
def work(tmp_path: Path) -> Iterator[WorkRepo]:
    yield WorkRepo(tmp_path / "work")
