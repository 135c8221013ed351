"""Shared fixtures: real git repositories, real identities, the real `gate` CLI.

The harness lives in `tests/support/` (one package; this directory is on sys.path through
this conftest); the tests are grouped by what they threaten or check:
`unit/` (pure modules), `engine/` (the attacks' permutations decided by the engine in process,
on real objects: no transport), `push/` (real `git push` into a gated server), `servers/` (real
Apache and `git daemon` on 127.0.0.1 run by their hosting accounts; root only), `client/` (the
pre-commit hooks), `offline/` (the CLI without a server), `fuzz/` (parsers and the decision),
`install/` (the documented install lines, the built wheels in fresh environments: the package index).

The tiers that push through a transport (`push/`, `client/`, `servers/`, `install/`) are marked
`transport`; `./dev test --fast` runs the others (`-m "not transport"`), the loop to run
while editing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.gitutil import WorkRepo

#: The directories whose tests push through a real transport (the slow tiers).
TRANSPORT_TIERS = frozenset({"push", "client", "servers", "install"})
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = item.path.resolve().relative_to(_TESTS).parts[0]
        if tier in TRANSPORT_TIERS:
            item.add_marker(pytest.mark.transport)


@pytest.fixture
def work(tmp_path: Path) -> Iterator[WorkRepo]:
    yield WorkRepo(tmp_path / "work")
