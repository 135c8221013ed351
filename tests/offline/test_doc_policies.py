"""Every policy the documents show freezes the gate's own files (the failure it guards against: the
README's minimal policy left `.gate/policy.toml` unfrozen, so an agent's commit setting `mode =
"evaluate"` there passed the client hooks, and so did its next frozen write), and `gate policy check`
warns about a policy that leaves them unfrozen.

Each TOML block of README.md and docs/*.md, and the policy docs/ci-example.sh writes, is one of: a
keyring entry (`[[key]]`), a policy with freeze rules, checked as an admin checks one (`gate policy
check FILE`: valid, and no warning about the gate's files), or a fragment of a policy (a table or
two, no freeze rule), checked appended to the README's minimal policy."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import cli
from support.docblocks import blocks
from support.gitutil import ROOT

UNFROZEN = "no freeze rule freezes the gate's own files"


def toml_blocks() -> list[tuple[str, str]]:
    found = [(b.where, b.body) for b in blocks() if b.lang == "toml"]
    script = (ROOT / "docs" / "ci-example.sh").read_text()
    (policy,) = re.findall(r"<<'POLICY'\n(.*?)^POLICY$", script, re.S | re.M)
    return [*found, ("docs/ci-example.sh", policy)]


def check(tmp_path: Path, where: str, text: str) -> str:
    path = tmp_path / (re.sub(r"\W", "-", where) + ".toml")
    path.write_text(text)
    out = cli("policy", "check", str(path))
    assert out.returncode == 0, f"{where}: {out.stderr}"
    return out.stdout


def test_every_policy_the_docs_show_freezes_the_gates_own_files(tmp_path: Path) -> None:
    policies = fragments = 0
    minimal = next(body for where, body in toml_blocks() if where.startswith("README.md"))
    for where, body in toml_blocks():
        if "[[key]]" in body:
            continue
        if "[[freeze]]" in body:
            policies += 1
            said = check(tmp_path, where, body)
            assert UNFROZEN not in said, f"{where} leaves the gate's own files unfrozen:\n{said}"
        else:
            fragments += 1
            assert not re.search(r"^mode\s*=", body, re.M), f"{where}: a whole policy without a freeze rule"
            assert UNFROZEN not in check(tmp_path, where, minimal + body), where
    assert policies >= 5 and fragments >= 3, (policies, fragments)


def test_policy_check_warns_when_the_gates_own_files_are_not_frozen(tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text('[[freeze]]\npaths = ["ci/**"]\nauthors = ["*@agents.example.com"]\n')
    out = cli("policy", "check", str(policy))
    assert out.returncode == 0
    assert (f"warning: {UNFROZEN} (.gate/policy.toml, the client hooks' policy): an agent's commit could set "
            'mode = "evaluate" there and pass the client hooks; add ".gate/**" to a rule\'s paths '
            "(docs/client.md)") in out.stdout.splitlines(), out.stdout
    for paths in ('".gate/**"', '".gate/policy.toml"', '".gate/"', '"**/*.toml"'):
        policy.write_text(f'[[freeze]]\npaths = ["ci/**", {paths}]\nauthors = ["*@agents.example.com"]\n')
        assert UNFROZEN not in cli("policy", "check", str(policy)).stdout, paths
