"""Secondary variants of cases a default test already covers run with GATE_LONG_TESTS=1."""

from __future__ import annotations

import os
from typing import Any

import pytest

LONG = pytest.mark.skipif(os.environ.get("GATE_LONG_TESTS") != "1", reason="variant: set GATE_LONG_TESTS=1")


def more(*values: Any) -> Any:
    """A parametrize entry that only runs in the long run."""
    return pytest.param(*values, marks=LONG)
