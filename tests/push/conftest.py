"""Fixtures for the push tests: one `Lab` per module (a server install and its base push cost
more than most cases), and one unreviewed victim attempt the review attacks share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.lab import Lab
from support.server import Server, seeded


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("lab"))


@pytest.fixture(scope="module")
def victim(lab: Lab) -> dict[str, Any]:
    """One open attempt (model-a) with an agent change reviewed by nobody yet: attacks on its
    review ref are all rejected, so they can share it."""
    attempt = lab.open()
    head = lab.change(f"victim-{attempt}")
    return {"attempt": attempt, "head": head, "doc": lab.good_doc(attempt, head)}


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    """A fresh server whose main holds README, ci/deploy.yml and src/app.py."""
    return seeded(tmp_path_factory.mktemp("server"))


@pytest.fixture
def new_server() -> Callable[[Path, str], Server]:
    """A server of this tier for a test of its own: (root, policy) -> `Server` (the gate installed)."""
    return lambda root, policy: Server(root, policy=policy)
