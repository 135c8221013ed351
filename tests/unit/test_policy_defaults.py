"""Policy defaults that depend on where the hook runs: the deadline by platform."""

from __future__ import annotations

import pytest

from gatecore.configschema import validate_policy
from gatecore.policy import DEFAULT_DEADLINE_SECONDS, Policy


def _policy(text: str) -> Policy:
    return Policy.from_plain(validate_policy(text.encode(), "policy.toml"))


@pytest.mark.parametrize("platform,seconds", [("github", 4.0), ("git", DEFAULT_DEADLINE_SECONDS),
                                              ("gitolite", DEFAULT_DEADLINE_SECONDS),
                                              ("gitlab", DEFAULT_DEADLINE_SECONDS)])
def test_an_unset_deadline_is_the_platforms(platform: str, seconds: float) -> None:
    assert _policy('mode = "enforce"\n').deadline_for(platform) == seconds


def test_a_policy_deadline_wins_everywhere() -> None:
    p = _policy('mode = "enforce"\n[limits]\ndeadline_seconds = 7\n')
    assert {p.deadline_for(x) for x in ("github", "git", "gitolite")} == {7.0}
