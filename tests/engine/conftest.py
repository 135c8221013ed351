"""Fixtures for the in-process tier: one `EngineLab` per module (a real repository built once, its
pushes decided by the engine in this process), and one unreviewed victim attempt the review
attacks share, as in `tests/push/conftest.py`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.engine import EngineLab, EngineServer
from support.server import seeded


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> EngineLab:
    return EngineLab(tmp_path_factory.mktemp("engine"))


@pytest.fixture(scope="module")
def victim(lab: EngineLab) -> dict[str, Any]:
    """One open attempt (model-a) with an agent change reviewed by nobody yet."""
    attempt = lab.open()
    head = lab.change(f"victim-{attempt}")
    return {"attempt": attempt, "head": head, "doc": lab.good_doc(attempt, head)}


@pytest.fixture
def new_server() -> Callable[[Path, str], EngineServer]:
    """A server of this tier for a test of its own: (root, policy) -> `EngineServer`."""
    return lambda root, policy: EngineServer(root, policy=policy)


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> EngineServer:
    """A fresh server whose main holds README, ci/deploy.yml and src/app.py (as tests/push's)."""
    return seeded(tmp_path_factory.mktemp("server"), make=EngineServer)  # type: ignore[no-any-return]
