"""Policy defaults: each written once, in the pydantic model; the deadline by platform."""

from __future__ import annotations

import dataclasses

import pytest

from gatecore.configuration.configschema import validate_policy
from gatecore.configuration.policy import DEFAULT_DEADLINE_SECONDS, Policy


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


def test_each_default_is_written_once_in_the_model() -> None:
    """The `Policy` dataclass repeats no default of `configschema.PolicyModel` (a dead copy would
    drift): every field is required, and a policy that sets nothing gets the model's defaults."""
    from gatecore.configuration.configschema import PolicyModel

    assert [f.name for f in dataclasses.fields(Policy)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING] == []
    empty, model = _policy(""), PolicyModel()
    assert (empty.replace, empty.noncanonical_modes, empty.approval_max_seconds, empty.anonymous,
            empty.independent) == (model.refs.replace, model.objects.noncanonical_modes,
                                   model.approvals.max_hours * 3600, model.pushers.anonymous, model.review.independent)


def test_one_table_reads_every_setting_of_the_plain_form() -> None:
    """`Policy.from_plain` reads every field but the rules through `SETTINGS`, and every path
    there is a key of the validated form: a key is added in the model and in that table."""
    from gatecore.adapters.config import load_catalogue, load_model_names, load_vendor_table
    from gatecore.configuration.policy import SETTINGS, _at

    names = {f.name for f in dataclasses.fields(Policy)}
    assert {name for name, _, _ in SETTINGS} == names - {"rules"} and len(SETTINGS) == len(names) - 1
    plain = validate_policy(b'[review]\nindependent = "vendor"\n', "policy.toml", load_catalogue(),
                            load_vendor_table(), load_model_names())
    for _, path, _ in SETTINGS:
        _at(plain, path)  # KeyError if the form has no such key
