"""A tool call's verdict is the commit hook's: the same engine, not a second matcher.

For each policy, identity and change of the grid below, the change is staged for real and judged by
the pre-commit stage's own function (`hooks.frozen_commit.staged_violations`, and with a message
carrying trailers `hooks.frozen_message`'s road through the same function), and the same writes are
judged as a tool call would be (`pipeline.judge` on `Writes`, the writer with that identity and
those trailers): the same codes, paths, rules and restricted identities, and the same verdict."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from support.gitutil import WorkRepo, git

from gatecore.adapters.config import load_catalogue
from gatecore.checks.frozen import ProposedWrite, Writer
from gatecore.configuration.configschema import validate_policy
from gatecore.configuration.policy import Policy, Signals
from gatecore.git.grammar import Ident
from gatecore.git.objects import Objects
from gatecore.git.refs import ServerRefs
from gatecore.git.trailers import coauthor_emails, found
from gatecore.pipeline import PushInput, Writes, judge
from hooks.common import ClientRepo
from hooks.frozen_commit import staged_violations

POLICIES = {
    "emails": '[[freeze]]\nname = "e"\npaths = ["ci/**", "LICENSE"]\nauthors = ["*@agents.example.com"]\n',
    "known-agents": '[[freeze]]\nname = "k"\npaths = ["ci/**"]\nauthors = ["@known-agents"]\n'
                    'trailers = ["@known-agents"]\n',
    "names": '[[freeze]]\nname = "n"\npaths = ["ci/**"]\nnames = ["* (aider)"]\n',
    "scoped": '[[freeze]]\nname = "s"\npaths = ["release/**"]\nauthors = ["*@agents.example.com"]\n'
              'refs = ["refs/heads/main"]\n',
    "everyone": '[[freeze]]\nname = "all"\npaths = ["LICENSE", "ci/secret/**"]\n',
    "two-rules": '[[freeze]]\nname = "a"\npaths = ["ci/**"]\nauthors = ["*@agents.example.com"]\n'
                 '[[freeze]]\nname = "b"\npaths = ["ci/deploy.yml", "docs/**"]\ntrailers = ["Assisted-by: *"]\n',
}
IDENTITIES = {
    "agent": (("Agent Bot", "bot@agents.example.com"), ""),
    "human": (("Hana Human", "hana@example.com"), ""),
    "aider": (("Hana (aider)", "hana@example.com"), ""),
    "claude-trailer": (("Hana Human", "hana@example.com"), "Co-Authored-By: Claude <noreply@anthropic.com>\n"),
    "assisted": (("Hana Human", "hana@example.com"), "Assisted-by: Gemini:gemini-2.5-pro\n"),
}
#: (path, what the change does to it): files in the base commit are ci/deploy.yml, LICENSE, src/app.py
CHANGES = {
    "frozen-modify": [("ci/deploy.yml", "modify")],
    "frozen-add": [("ci/new/job.yml", "add")],
    "frozen-delete": [("LICENSE", "delete")],
    "unfrozen": [("src/app.py", "modify"), ("src/new.py", "add")],
    "mixed": [("src/app.py", "modify"), ("ci/deploy.yml", "modify"), ("docs/x.md", "add")],
    "release": [("release/notes.md", "add")],
    "case-alias": [("CI/Deploy.yml", "add")],
}


def _policy(text: str) -> Policy:
    plain = validate_policy(text.encode(), "policy.toml", load_catalogue())
    return Policy.from_plain(json.loads(json.dumps(plain)))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = WorkRepo(tmp_path_factory.mktemp("parity") / "base")
    repo.write("ci/deploy.yml", "a\n")
    repo.write("LICENSE", "MIT\n")
    repo.write("src/app.py", "print(1)\n")
    repo.commit("base")
    return repo.path


def _staged(base: Path, tmp: Path, change: list[tuple[str, str]]) -> tuple[ClientRepo, str, str]:
    work = tmp / "work"
    git(tmp, "clone", "-q", str(base), str(work))
    for path, what in change:
        if what == "delete":
            git(work, "rm", "-q", path)
        else:
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text("changed\n")
            git(work, "add", path)
    tree = git(work, "write-tree").stdout.strip()
    head = git(work, "rev-parse", "HEAD").stdout.strip()
    return ClientRepo(str(work / ".git"), str(work)), tree, head


def _seen(violations: list) -> set[tuple[str | None, ...]]:  # type: ignore[type-arg]
    return {(v.code, v.path, v.rule, v.identity) for v in violations}


GRID = list(itertools.product(POLICIES, IDENTITIES, CHANGES, ("refs/heads/main", "refs/heads/topic")))


@pytest.mark.parametrize(("policy_name", "who", "change", "branch"), GRID, ids=["-".join(g) for g in GRID])
def test_a_tool_call_and_the_commit_it_would_become_get_one_verdict(base: Path, tmp_path: Path, policy_name: str,
                                                                     who: str, change: str, branch: str) -> None:
    policy = _policy(POLICIES[policy_name])
    (name, email), trailer = IDENTITIES[who]
    message = f"change\n\n{trailer}".encode() if trailer else b""
    repo, tree, head = _staged(base, tmp_path, CHANGES[change])
    ident = Ident(name, email)
    line = f"{name} <{email}> 0 +0000".encode()
    try:
        os.chdir(repo.workdir or ".")
        committed = staged_violations(repo, policy, tree, [head], (ident, line), (ident, line), "", branch, message)
    finally:
        repo.close()
    lines = tuple(f"{k}: {v}" for k, v in found(message, None)) if message else ()
    signals = Signals(name, name, lines, tuple(coauthor_emails(list(found(message, None)))) if message else ())
    writer = Writer((name, email), (name, email), None, (signals,))
    writes = [ProposedWrite(p, "delete" if what == "delete" else "write") for p, what in CHANGES[change]]
    inp = PushInput(objects=Objects(repo), policy=policy, pusher="", now=0, repository_id="",
                    server=ServerRefs(lambda _n: None))
    proposed = judge(inp, Writes(branch, writes, writer))
    assert _seen(proposed.violations) == _seen(committed), (committed, proposed.violations)


def test_the_grid_holds_refusals_as_well_as_acceptances(base: Path, tmp_path: Path) -> None:
    """(The parity above is not the parity of two empty answers.)"""
    seen = {}
    for policy_name, who, change in (("emails", "agent", "frozen-modify"), ("known-agents", "claude-trailer", "mixed"),
                                     ("two-rules", "assisted", "mixed"), ("emails", "human", "frozen-modify")):
        (name, email), trailer = IDENTITIES[who]
        message = f"change\n\n{trailer}".encode() if trailer else b""
        lines = tuple(f"{k}: {v}" for k, v in found(message, None)) if message else ()
        writer = Writer((name, email), (name, email), None,
                        (Signals(name, name, lines, tuple(coauthor_emails(list(found(message, None))))),))
        writes = [ProposedWrite(p, "write") for p, _ in CHANGES[change]]
        inp = PushInput(objects=None, policy=_policy(POLICIES[policy_name]), pusher="", now=0,  # type: ignore[arg-type]
                        repository_id="", server=ServerRefs(lambda _n: None))
        seen[(policy_name, who)] = {v.rule for v in judge(inp, Writes("refs/heads/main", writes, writer)).violations}
    assert seen == {("emails", "agent"): {"freeze[0]:e"}, ("known-agents", "claude-trailer"): {"freeze[0]:k"},
                    ("two-rules", "assisted"): {"freeze[1]:b"}, ("emails", "human"): set()}
