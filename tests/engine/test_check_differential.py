"""The differential between the hook and `gate check` (issue 49): every family of
`support.cases.frozen` (the push tier's frozen attacks: merges, renames, modes, symlinks,
submodules, look-alike paths and identities, ref-name tricks, malformed, deep and huge trees,
scoped rules, evaluate mode), run on a `CheckedServer`: each push is decided by the hook's own
`judge` and, where the update has a pull request's form, by `gate check` on a CI clone, and the
two must give the same exit and the same (code, path, rule) set. Then the identity families of
`tests/push/test_agent_identity.py` (emails, names, trailers, co-authors, pushers) the same way.

Where they must differ, the update is not a pull request (`checkparity.NO_PR_FORM`); `UNPAIRED`
holds each family to the reasons it is expected to have, and every other family compares at
least one push."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cases.frozen import *  # noqa: F403 - every case (its __all__), run on this tier
from support.checkparity import (
    SERVERS,
    CheckedLab,
    CheckedServer,
    Judgement,
    check_update,
    ci_clone,
    fetch_into,
    of_check,
)
from support.engine import EngineServer
from support.gitutil import AGENT, HUMAN
from support.server import IDENTITY_POLICY, seeded

from gatecore.git.refs import RefUpdate


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> CheckedLab:
    return CheckedLab(tmp_path_factory.mktemp("checked"))


@pytest.fixture
def new_server() -> Callable[[Path, str], CheckedServer]:
    return lambda root, policy: CheckedServer(root, policy=policy)


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> CheckedServer:
    return seeded(tmp_path_factory.mktemp("server"), make=CheckedServer)  # type: ignore[no-any-return]


#: Families that push nothing with a pull request's form, so nothing is compared (each
#: `checkparity.NO_PR_FORM` reason they have is in `UNPAIRED`). The two marked "first" push to an
#: empty server; their questions (evaluate mode, a capped report) are compared below.
NOTHING_TO_COMPARE = frozenset({
    "test_a_symbolic_ref_into_the_review_namespace_does_not_bypass_the_gate",
    "test_agent_cannot_squat_the_parent_of_the_review_namespace",
    "test_agent_push_to_reserved_namespaces_is_rejected",
    "test_annotated_tag_on_a_new_agent_commit_is_checked",
    "test_evaluate_mode_does_not_open_the_reserved_namespaces",
    "test_evaluate_mode_reports_and_accepts",  # first
    "test_every_violation_is_listed_then_capped",  # first
    "test_ref_name_tricks_in_the_reserved_namespaces",
    "test_a_commit_already_on_another_branch_is_judged_again_by_the_check",  # compares by hand: they differ
})
#: The updates a family pushes that have no pull request's form, beyond a first push and the
#: trusted side's or a tag's refs outside refs/heads (`not-a-branch`), which any family may push.
UNPAIRED = {
    "test_a_symbolic_ref_into_the_review_namespace_does_not_bypass_the_gate": {"symbolic"},
    "test_agent_cannot_squat_the_parent_of_the_review_namespace": {"reserved-parent"},
    "test_agent_push_to_reserved_namespaces_is_rejected": {"review"},
    "test_agent_rebase_onto_newer_frozen_content_is_accepted": {"force"},
    "test_evaluate_mode_does_not_open_the_reserved_namespaces": {"review"},
    "test_evaluate_mode_reports_and_accepts": {"review"},
    "test_ref_name_tricks_in_the_reserved_namespaces": {"review"},
    "test_restricted_pusher_cannot_delete_refs_but_humans_can": {"delete"},
    "test_rewinding_away_a_human_frozen_change_is_rejected": {"force"},
}


@pytest.fixture(autouse=True)
def accounting(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every family compares at least one push, unless it has nothing to compare; no family has an
    update without a pull request's form that `UNPAIRED` does not list."""
    start = {id(s): (len(s.compared), len(s.unpaired)) for s in SERVERS}
    yield
    compared, unpaired = 0, set()
    for s in SERVERS:
        c, u = start.get(id(s), (0, 0))
        compared += len(s.compared) - c
        unpaired.update(s.unpaired[u:])
    family = request.node.originalname
    assert unpaired - {"first", "not-a-branch"} <= UNPAIRED.get(family, set()), unpaired
    assert compared or family in NOTHING_TO_COMPARE, f"{family}: no push was compared"


# --- identities: the catalogue, trailers, names, pushers (tests/push/test_agent_identity.py's cases) ---------

CLAUDE = "Co-authored-by: Claude <noreply@anthropic.com>"


@pytest.fixture(scope="module")
def identities(tmp_path_factory: pytest.TempPathFactory) -> CheckedServer:
    s = CheckedServer(tmp_path_factory.mktemp("identities"), policy=IDENTITY_POLICY)
    s.work.write("README", "base\n")
    s.work.commit("base", identity=HUMAN)
    assert s.push("main").ok
    return s


@pytest.mark.parametrize(("path", "message", "author", "pusher", "expected"), [
    ("ci/deploy.yml", "fix ci", AGENT, None, 1),
    ("ci/deploy.yml", "fix ci", ("Hana Human (aider)", "hana@example.com"), None, 1),
    ("ci/deploy.yml", "fix ci", ("Copilot", "198982749+Copilot@users.noreply.github.com"), None, 1),
    ("ci/deploy.yml", "fix ci", ("claudeb", "claudeb@users.noreply.github.com"), None, 0),
    ("ci/deploy.yml", f"fix ci\n\n{CLAUDE}\n", HUMAN, None, 1),
    ("ci/deploy.yml", "fix ci\n\nco-authored-by: Copilot <175728472+Copilot@users.noreply.github.com>\n", HUMAN, None,
     1),
    ("ci/deploy.yml", "fix ci\n\nAssisted-by: Claude:claude-opus-4\nSigned-off-by: Hana <hana@example.com>\n", HUMAN,
     None, 1),
    ("ci/deploy.yml", "fix ci\n\nMade-with: Cursor\n", HUMAN, None, 1),
    ("ci/deploy.yml", f"\n{CLAUDE}\n", HUMAN, None, 1),
    ("ci/deploy.yml", f"ci\n\n{CLAUDE}\n\nthe last paragraph is prose.\n", HUMAN, None, 0),
    ("ci/deploy.yml", "fix ci", ("Devin Smith", "devin.smith@example.com"), None, 0),
    ("ci/deploy.yml", "fix ci\n\nCo-authored-by: Claude Dupont <claude.dupont@example.fr>\n", HUMAN, None, 0),
    ("ci/deploy.yml", "fix ci", HUMAN, "agent-7", 1),
    ("ci/deploy.yml", "fix ci", HUMAN, "copilot-swe-agent[bot]", 1),
    ("ci/deploy.yml", "fix ci", HUMAN, "hana", 0),
    (".claude/settings.json", "tune the agent", ("Bot", "bot@agents.example.com"), None, 1),
    ("AGENTS.md", "tune the agent", HUMAN, None, 0),
    ("src/app.py", f"app\n\n{CLAUDE}\n", HUMAN, "agent-7", 0),
], ids=["email", "aider-name", "github-app", "not-the-app", "co-author", "co-author-numeric", "assisted-by",
        "made-with", "blank-first-line", "prose-last", "devin-named-person", "claude-named-co-author", "pusher",
        "bot-account-pusher", "human-pusher", "agent-config", "agent-config-by-a-human", "not-frozen"])
def test_identities_are_judged_alike(identities: CheckedServer, path: str, message: str, author: tuple[str, str],
                                     pusher: str | None, expected: int) -> None:
    w = identities.work
    w.git("checkout", "-q", "-f", "-B", "identity", "main")
    w.write(path, f"{message!r}\n")
    w.git("add", "-A")
    w.git("commit", "-q", "--cleanup=verbatim", "-m", message, identity=author)
    compared = len(identities.compared)
    out = identities.push(f"HEAD:refs/heads/id/{w.head()[:12]}",
                          pusher_env=None if pusher is None else {"REMOTE_USER": pusher})
    assert out.exit_code == expected, out.output
    assert len(identities.compared) == compared + 1


# --- modes and scopes ---------------------------------------------------------------------------------------

def test_evaluate_mode_and_a_capped_report_are_judged_alike(tmp_path: Path) -> None:
    """Evaluate mode: both accept and list what they would refuse, every violation (the report's
    cap shortens the lines, not the judgement); then enforce."""
    s = seeded(tmp_path, make=CheckedServer)
    s.set_policy('mode = "evaluate"\n[[freeze]]\npaths = ["ci/**"]\nauthors = ["*@agents.example.com"]\n'
                 "[limits]\nmax_violations_shown = 2\n")
    for i in range(4):
        s.work.write(f"ci/f{i}.yml", "x\n")
    s.work.commit("agent", identity=AGENT)
    out = s.push("main")
    assert out.exit_code == 0 and len(out.violations) == 4 and s.compared[-1].exit_code == 0
    s.work.write("ci/f9.yml", "x\n")
    s.work.commit("agent", identity=AGENT)
    s.set_policy(s.policy_text.replace('"evaluate"', '"enforce"'))
    assert s.push("main").exit_code == 1 and len(s.compared) == 2


def test_a_scoped_rule_is_judged_alike_on_and_off_its_branches(tmp_path: Path) -> None:
    s = seeded(tmp_path, make=CheckedServer)
    s.set_policy('[[freeze]]\npaths = ["ci/**"]\nauthors = ["*@agents.example.com"]\nrefs = ["refs/heads/release/*"]\n')
    s.work.write("ci/deploy.yml", "scoped\n")
    s.work.commit("agent", identity=AGENT)
    assert s.push("main:refs/heads/feature").exit_code == 0  # a pull request onto feature: out of scope
    assert s.push("main:refs/heads/release/1").exit_code == 1  # onto release/1 (new: from main)
    assert len(s.compared) == 2


# --- where they differ on purpose ---------------------------------------------------------------------------

def test_a_commit_already_on_another_branch_is_judged_again_by_the_check(tmp_path: Path) -> None:
    """The one difference in the check's judgement of a pull request (docs/forges.md): the hook takes a
    commit any branch already holds as judged (it came in through the gate: here, in evaluate mode),
    the check cannot (a forge ran no gate on its branches) and judges the pull request's commits from
    the merge base, whichever branches also hold them. Stricter, never looser."""
    s = seeded(tmp_path, make=EngineServer)
    s.set_policy(s_policy := '[[freeze]]\npaths = ["ci/**"]\nauthors = ["*@agents.example.com"]\n')
    s.set_policy('mode = "evaluate"\n' + s_policy)
    s.work.git("checkout", "-q", "-b", "side")
    s.work.write("ci/deploy.yml", "landed in evaluate mode\n")
    s.work.commit("agent", identity=AGENT)
    assert s.push("side").exit_code == 0
    s.set_policy(s_policy)  # enforced from now on
    before = s.refs()
    ci = ci_clone(tmp_path / "ci", s.work, "sha1")
    fetch_into(ci, before)
    (tmp_path / "policy.toml").write_text(s_policy)
    update = RefUpdate(before["refs/heads/main"], before["refs/heads/side"], b"refs/heads/main")
    check = of_check(check_update(ci, update, before, "hana", tmp_path / "policy.toml", None, "demo/repo"))
    hook = s.push("side:main")
    assert hook.exit_code == 0  # already on side: judged when it landed there
    assert check == Judgement(1, frozenset({("GATE-FROZEN-PATH", "ci/deploy.yml", "freeze[0]")}))
