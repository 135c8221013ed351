"""Every indirect write of a frozen path, decided by the engine in process: merges, renames, modes,
symlinks, submodules, look-alike paths and identities, ref-name tricks, malformed, deep and huge
trees, evaluate mode.

The cases are `support.cases.frozen`, collected here with an `EngineLab` (real objects, the lab's
policy; `PushChecker` decides). `tests/push/test_frozen_attacks.py` keeps one real push per family.
"""

from __future__ import annotations

from support.cases.frozen import *  # noqa: F403 - every case (its __all__), run on this tier
