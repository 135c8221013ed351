"""The anonymous pusher in the policy, on plain values: restricted by default (every rule that
restricts anyone restricts it, `deny-restricted` treats it as restricted, never trusted, never an
approver); `[pushers] anonymous = "unrestricted"` turns that off, and only that."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.gitutil import gate

from gatecore.configuration.configschema import validate_policy
from gatecore.configuration.policy import ANONYMOUS, Policy, is_anonymous
from gatecore.errors import GateError

BASE = """\
[[freeze]]
name = "agents"
paths = ["ci/**"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[[freeze]]
name = "scoped"
paths = ["release/**"]
trailers = ["Assisted-by: *"]
refs = ["refs/heads/main"]
[[freeze]]
name = "everyone"
paths = ["LICENSE"]
[trusted]
pushers = ["*"]
[approvals]
approvers = ["*"]
"""


def policy(extra: str = "") -> Policy:
    plain = validate_policy((BASE + extra).encode(), "test.toml")
    return Policy.from_plain(json.loads(json.dumps(plain)))  # the cache's road: through JSON


def test_the_default_is_restricted_and_the_plain_form_says_so() -> None:
    plain = validate_policy(BASE.encode(), "test.toml")
    assert plain["pushers"] == {"anonymous": "restricted"}
    assert policy().anonymous == "restricted"
    with pytest.raises(KeyError):  # not the model's whole dump (a cache of an older form is validated again)
        Policy.from_plain({k: v for k, v in plain.items() if k != "pushers"})


def test_restricted_anonymous_under_every_rule_that_restricts_anyone() -> None:
    p = policy()
    agents, scoped, everyone = p.rules
    human = "hana@example.com"
    for rule in p.rules:
        assert rule.restricts_pusher(ANONYMOUS)
    assert agents.restricted_identity(human, human, ANONYMOUS) == "pusher:anonymous"
    assert scoped.restricted_identity(human, human, ANONYMOUS) == "pusher:anonymous"  # a rule naming no pushers
    assert everyone.restricted_identity(human, human, ANONYMOUS) == human  # as for everybody
    # The commit's own signals still come first (they say more than "anonymous").
    assert agents.restricted_identity("bot@agents.example.com", human, ANONYMOUS) == "bot@agents.example.com"
    # A human account is restricted by none of the identity rules.
    assert agents.restricted_identity(human, human, "hana") is None
    assert not agents.restricts_pusher("hana")


def test_restricted_anonymous_for_ref_rules_never_trusted_never_approver() -> None:
    p = policy()
    for ref in ("refs/heads/main", "refs/heads/topic", "refs/tags/v1", None):
        assert p.pusher_restricted(ANONYMOUS, ref)
    assert not p.pusher_restricted("hana", "refs/heads/topic")
    assert p.pusher_trusted("hana") and p.is_approver("hana")  # the globs are "*"
    assert not p.pusher_trusted(ANONYMOUS)
    assert not p.is_approver(ANONYMOUS)


def test_restricted_anonymous_is_restricted_for_ref_rules_even_without_rules() -> None:
    plain = validate_policy(b"", "empty.toml")
    p = Policy.from_plain(plain)
    assert p.rules == () and p.pusher_restricted(ANONYMOUS, "refs/heads/x")


def test_unrestricted_turns_it_off_but_never_makes_it_trusted() -> None:
    p = policy('[pushers]\nanonymous = "unrestricted"\n')
    agents, scoped, everyone = p.rules
    human = "hana@example.com"
    assert p.anonymous == "unrestricted"
    assert not agents.restricts_pusher(ANONYMOUS) and not scoped.restricts_pusher(ANONYMOUS)
    assert everyone.restricts_pusher(ANONYMOUS)  # a rule for everybody still is
    assert agents.restricted_identity(human, human, ANONYMOUS) is None
    assert agents.restricted_identity("bot@agents.example.com", human, ANONYMOUS) == "bot@agents.example.com"
    assert not p.pusher_restricted(ANONYMOUS, "refs/heads/main")
    assert not p.pusher_trusted(ANONYMOUS) and not p.is_approver(ANONYMOUS)


def test_unrestricted_anonymous_is_an_account_rules_may_still_name() -> None:
    p = policy('[[freeze]]\npaths = ["docs/**"]\npushers = ["anonymous"]\n[pushers]\nanonymous = "unrestricted"\n')
    assert p.rules[3].restricted_identity("h@example.com", "h@example.com", ANONYMOUS) == "pusher:anonymous"
    assert p.pusher_restricted(ANONYMOUS, "refs/heads/main")


@pytest.mark.parametrize("name", ["anonymous", "Anonymous", " ANONYMOUS "])
def test_an_account_named_anonymous_is_taken_for_the_anonymous_pusher(name: str) -> None:
    assert is_anonymous(name)
    assert not policy().pusher_trusted(name)
    assert policy().rules[1].restricts_pusher(name)


@pytest.mark.parametrize("name", [None, "", "anon", "anonymous-1", "hana"])
def test_others_are_not_anonymous(name: str | None) -> None:
    assert not is_anonymous(name)


@pytest.mark.parametrize("extra,where", [
    ('[pushers]\nanonymous = "allowed"\n', "pushers.anonymous"),
    ('[pushers]\nanonymous = true\n', "pushers.anonymous"),
    ('[pushers]\nguest = "restricted"\n', "pushers.guest"),
])
def test_the_setting_is_validated_strictly(extra: str, where: str) -> None:
    with pytest.raises(GateError) as exc:
        validate_policy((BASE + extra).encode(), "bad.toml")
    assert exc.value.code == "GATE-CONFIG-POLICY" and where in exc.value.detail


@pytest.mark.parametrize("value", ["yes", None, ["restricted"], 1])
def test_from_plain_refuses_a_malformed_setting(value: Any) -> None:
    plain = validate_policy(BASE.encode(), "test.toml")
    with pytest.raises((TypeError, ValueError)):
        Policy.from_plain({**plain, "pushers": {"anonymous": value}})
    with pytest.raises(TypeError):
        Policy.from_plain({**plain, "pushers": ["anonymous"]})


def test_policy_check_says_what_anonymous_pushers_meet(tmp_path: Path) -> None:
    for extra, shown in (("", "pushers.anonymous: restricted"),
                         ('[pushers]\nanonymous = "unrestricted"\n', "pushers.anonymous: unrestricted")):
        (tmp_path / "p.toml").write_text(BASE + extra)
        out = gate("policy", "check", str(tmp_path / "p.toml"))
        assert out.returncode == 0 and shown in out.stdout, out.stdout + out.stderr
