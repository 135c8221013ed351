"""Configuration errors in the admin's words, through `gate policy check`,
`gate keys check` and `gate keys generate`: file and line, the location as the file is read
(`freeze[0].refs[0]`), what is wrong and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import cli

from gatecore.configuration.configschema import validate_policy
from gatecore.configuration.policy import Policy
from gatecore.errors import GateError

GOOD_KEY = "A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="


def check(tmp_path: Path, text: str) -> list[str]:
    policy = tmp_path / "policy.toml"
    policy.write_text(text)
    out = cli("policy", "check", str(policy))
    assert out.returncode == 2 and not out.stdout.startswith("ok"), out.stdout + out.stderr
    prefix = f"GATE-CONFIG-POLICY: {policy}:"
    assert all(line.startswith(prefix) for line in out.stderr.splitlines()), out.stderr
    return [line[len(prefix):] for line in out.stderr.splitlines()]


@pytest.mark.parametrize("text,expected", [
    ('mode = "enforce"\n[[freeze]]\npaths = ["ci/**"]\nrefs = ["main"]\n',
     "4: freeze[0].refs[0]: 'main' is not a full ref name: did you mean refs/heads/main?"),
    ('mode = "enforce"\n[[freeze]]\npaths = ["ci/**"]\nrefs = ["refs/heads/main", "heads/dev"]\n',
     "4: freeze[0].refs[1]: 'heads/dev' is not a full ref name: did you mean refs/heads/dev?"),
    ('mode = "enforce"\n\n[freeze]\npaths = ["ci/**"]\n',
     "3: freeze: one table where a list of tables belongs: write [[freeze]] (two brackets), once per entry"),
    ('mode = "enforce"\n[[freeze]]\npaths = ["ci/**"]\nauthor = ["*@agents.example.com"]\n',
     "4: freeze[0].author: unknown key: did you mean authors?"),
    ('mode = "Enforce"\n', "1: mode: 'Enforce' is not one of 'enforce', 'evaluate': did you mean 'enforce'?"),
    ('mode = "enforce"\n[[freeze]]\npaths = "ci/**"\n', '3: freeze[0].paths: a string where a list belongs: '
                                                       'write paths = ["ci/**"]'),
    ('mode = "enforce"\n[[freeze]]\nname = "a"\n', "2: freeze[0].paths: paths is required here"),
    ('mode = "enforce"\n[limits]\nmax_violations_shown = "5"\n',
     "3: limits.max_violations_shown: must be an integer, not a string"),
    ('mode = "enforce"\n[approvals]\nmax_hours = 1000\n', "3: approvals.max_hours: must be at most 720, not 1000"),
    ('mode = "enforce"\nfreez = []\n', "2: freez: unknown key: did you mean freeze?"),
    ('mode = = "enforce"\n', "1: not valid TOML (column 8): Invalid value"),
])
def test_a_policy_error_names_file_line_location_and_fix(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in check(tmp_path, text)


def test_every_problem_is_reported_on_its_own_line(tmp_path: Path) -> None:
    found = check(tmp_path, 'mode = "enforce"\n[[freeze]]\npaths = ["ci/**"]\nrefs = ["main"]\n'
                            '[[freeze]]\npaths = []\ncolour = "red"\n')
    assert [line.split(": ")[1] for line in found] == ["freeze[0].refs[0]", "freeze[1].paths", "freeze[1].colour"]
    assert found[2].endswith("the keys here are name, paths, authors, names, trailers, signers, pushers, refs")


def test_a_named_set_in_the_wrong_table_is_located(tmp_path: Path) -> None:
    assert check(tmp_path, 'mode = "enforce"\n[trusted]\npushers = ["@known-agents"]\n') == [
        "3: trusted.pushers: named sets are for freeze rules only: list the accounts"]


def test_keyring_errors_name_the_entry_and_the_line(tmp_path: Path) -> None:
    ring = tmp_path / "ring.toml"
    ring.write_text(f'[[key]]\nid = "a"\nalgorithm = "ed25519"\npurpose = "receipt"\npublic_key = "{GOOD_KEY}"\n'
                    f'[[key]]\nid = "b"\nalgorithm = "ed2551"\npurpose = "receipts"\npublic_key = "{GOOD_KEY}"\n'
                    "not_after = \"2027-01-01\"\n")
    out = cli("keys", "check", str(ring))
    assert out.returncode == 2
    assert f"{ring}:8: key[1].algorithm: 'ed2551' is not one of 'ed25519', 'hmac-sha256': did you mean 'ed25519'?" \
        in out.stderr
    assert f"{ring}:9: key[1].purpose: 'receipts' is not one of 'receipt', 'attempt', 'approval', 'attestation': did you mean " \
           "'receipt'?" in out.stderr
    assert f"{ring}:11: key[1].not_after: must be a date-time such as 2026-01-01T00:00:00Z (no quotes), not a " \
           "string" in out.stderr
    ring.write_text(f'[key]\nid = "a"\nalgorithm = "ed25519"\npurpose = "receipt"\npublic_key = "{GOOD_KEY}"\n')
    assert "write [[key]] (two brackets)" in cli("keys", "check", str(ring)).stderr


def test_key_generation_names_the_flag() -> None:
    out = cli("keys", "generate", "--alg", "ed25519", "--id", "r", "--purpose", "reciept", "--out", "/nonexistent/k")
    assert out.returncode == 1
    assert "--purpose: 'reciept' is not one of 'receipt', 'attempt', 'approval', 'attestation': did you mean 'receipt'?" in out.stderr


def test_the_hooks_form_is_the_models_dump_and_is_not_validated_twice() -> None:
    """One source per fact: what the model fills in (every default) is what the fast form holds;
    `from_plain` only compiles. Its allowed values are the same Literal types."""
    plain = validate_policy(b'mode = "evaluate"\n[[freeze]]\npaths = ["ci"]\n', "p.toml")
    assert set(plain) >= {"mode", "freeze", "refs", "trusted", "objects", "signatures", "approvals", "pushers",
                          "limits", "catalogue_version"}
    policy = Policy.from_plain(plain)
    assert (policy.mode, policy.delete, policy.force, policy.replace, policy.anonymous) == (
        "evaluate", "deny-restricted", "allow", "trusted", "restricted")
    assert policy.approval_max_seconds == 72 * 3600 and policy.max_violations_shown == 50
    with pytest.raises(ValueError):
        Policy.from_plain({**plain, "mode": "lenient"})  # a form that is not a dump never yields a policy


@pytest.mark.parametrize("pattern,fix", [("./ci/**", "write 'ci/**'"), ("ci\\\\deploy.yml", "write 'ci/deploy.yml'"),
                                         ("ci/../gate.toml", "write 'gate.toml'"), ("../x", "write 'x'")])
def test_a_path_pattern_that_can_never_match_is_refused(tmp_path: Path, pattern: str, fix: str) -> None:
    found = check(tmp_path, f'mode = "enforce"\n[[freeze]]\npaths = ["{pattern}"]\n')
    assert len(found) == 1 and "3: freeze[0].paths[0]:" in found[0] and "can never match" in found[0], found
    assert found[0].endswith(fix)


def test_leading_slashes_and_empty_segments_are_normalised(tmp_path: Path) -> None:
    policy = Policy.from_plain(validate_policy(b'[[freeze]]\npaths = ["/ci//deploy.yml", "gate.toml/"]\n', "p"))
    assert [g.matches(p) for g in policy.rules[0].paths for p in ("ci/deploy.yml", "gate.toml")] == [
        True, False, False, True]
    with pytest.raises(GateError):
        validate_policy(b'[[freeze]]\npaths = ["/"]\n', "p")
