"""Shared fixtures: real git repositories, real identities, the real `gate` CLI.

The harness lives in `tests/support/` (one package; this directory is on sys.path through
this conftest); the tests are grouped by what they threaten or check:
`unit/` (pure modules), `engine/` (the attacks' permutations decided by the engine in process,
on real objects: no transport), `push/` (real `git push` into a gated server), `servers/` (real
Apache and `git daemon` on 127.0.0.1 run by their hosting accounts; root only), `client/` (the
pre-commit hooks), `offline/` (the CLI without a server), `forges/` (the hosted forges' files: schemas,
linters, the GitHub action's steps run as the runner runs them), `fuzz/` (parsers and the decision),
`install/` (the documented install lines, the built wheels in fresh environments: the package index),
`agents/` (the coding agents' real CLIs, installed by `./dev agent-clis`, run offline against a
scripted model on 127.0.0.1: their pre-tool hooks and the payloads they send; `support.agentcli`).

The tiers that push through a transport (`push/`, `client/`, `servers/`, `install/`) are marked
`transport`, and so is `agents/` (also marked `agents`: `-m agents` runs just it); `./dev test --fast` runs the others (`-m "not transport and not corpus"`: the real-history
parity tests are marked `corpus`), the loop to run
while editing.

The format-sensitive tests take `repo_format` (or `module_format`, one per module and format)
and are marked `formats`: each runs in the four formats git makes (files or reftable refs,
SHA-1 or SHA-256 objects) on `GATE_MODERN_GIT`'s git, else on the machine's, skipping what
that git cannot make (`support.formats`). `GATE_MODERN_GIT=$(./dev modern-git) ./dev test -m formats`
runs just them on git 2.55.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import formats
from support.gitutil import WorkRepo

#: The directories whose tests push through a real transport (the slow tiers), and those that run
#: the coding agents' real CLIs (they push nothing, but are as slow: marked `transport` too).
TRANSPORT_TIERS = frozenset({"push", "client", "servers", "install"})
AGENT_TIERS = frozenset({"agents"})
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = item.path.resolve().relative_to(_TESTS).parts[0]
        if tier in TRANSPORT_TIERS:
            item.add_marker(pytest.mark.transport)
        if tier in AGENT_TIERS:
            item.add_marker(pytest.mark.transport)
            item.add_marker(pytest.mark.agents)
        if {"repo_format", "module_format"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.formats)
    # The slow modules first: those that push through a transport or read real histories (`corpus`),
    # then the quick in-process ones, each module whole and in the tree's order within its group.
    # `./dev test` hands modules out in this order (pytest-xdist, --no-loadscope-reorder), so the
    # workers end together on quick modules instead of one of them running a slow one alone.
    slow = {item.path for item in items if item.get_closest_marker("transport") or item.get_closest_marker("corpus")}
    items.sort(key=lambda item: item.path not in slow)


@pytest.fixture(params=formats.FORMATS, ids=formats.IDS)
def repo_format(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> formats.RepoFormat:
    """This test's repositories in one of the four formats, made by the format tests' git."""
    fmt = formats.repo_format(*request.param)
    fmt.apply(monkeypatch)
    return fmt


@pytest.fixture(scope="module", params=formats.FORMATS, ids=formats.IDS)
def module_format(request: pytest.FixtureRequest) -> Iterator[formats.RepoFormat]:
    """`repo_format` for a module's shared fixtures (every test of the module takes it)."""
    fmt = formats.repo_format(*request.param)
    with pytest.MonkeyPatch.context() as mp:
        fmt.apply(mp)
        yield fmt


@pytest.fixture
def work(tmp_path: Path) -> Iterator[WorkRepo]:
    yield WorkRepo(tmp_path / "work")
