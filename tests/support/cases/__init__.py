"""Test functions both tiers collect: every case in process (`tests/engine/`), one of each family
through a real push (`tests/push/`); the importing module's fixtures decide which."""
