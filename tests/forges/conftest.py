"""The forges tier's shared fixture: a repository shaped like a forge with pull requests."""

from __future__ import annotations

import pytest
from support.forgerepo import Forge, make_forge


@pytest.fixture(scope="module")
def forge(tmp_path_factory: pytest.TempPathFactory) -> Forge:
    """One per module (each module's scripts fetch into its checkout)."""
    return make_forge(tmp_path_factory.mktemp("forge"))
