"""The stages are named the same in the code, its docstrings and docs/architecture.md: the hook's
own (`server/prereceive.py`) and the engine's one composition (`gatecore/pipeline.py`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.gitutil import AGENT, ROOT, WorkRepo

import gatecore.pipeline
import server.prereceive
from gatecore.adapters.config import load_catalogue
from gatecore.adapters.gitstream import GitStream
from gatecore.checks.frozen import ProposedWrite, Writer
from gatecore.configuration.configschema import validate_policy
from gatecore.configuration.policy import Policy, Signals
from gatecore.git.objects import Objects
from gatecore.git.refs import RefUpdate, ServerRefs
from gatecore.pipeline import (
    ALL,
    PROPOSED,
    RESERVED_ONLY,
    RULES,
    STAGES_OF,
    Judged,
    Push,
    PushInput,
    Range,
    Writes,
    judge,
)


def _titles(text: str) -> list[str]:
    return [m.group(1).lower() for m in re.finditer(r"^\d\. \*\*([^*]+)\*\*", text, re.M)]


def _architecture() -> str:
    arch = (ROOT / "docs" / "architecture.md").read_text()
    start = arch.index("## How a push is decided")
    return arch[start:arch.index("\n## ", start)]


def test_the_hooks_docstring_the_architecture_and_the_code_list_the_same_stages() -> None:
    doc = _titles(server.prereceive.__doc__ or "")
    section = _architecture()
    source = (ROOT / "server" / "prereceive.py").read_text()
    code = [m.group(2).lower() for m in sorted(re.finditer(r"^ +# (\d)\. ([^(\n]+?)\s*(?:\(|$)", source, re.M),
                                                 key=lambda m: m.group(1))]
    assert len(doc) == 6, doc
    assert _titles(section)[:len(doc)] == doc
    assert code == doc


def test_the_pipelines_stages_are_the_architectures_and_its_own_names() -> None:
    doc = _titles(gatecore.pipeline.__doc__ or "")
    assert doc == [gatecore.pipeline.RULES, gatecore.pipeline.RESERVED, gatecore.pipeline.APPROVALS]
    assert _titles(_architecture())[6:] == doc
    assert frozenset(doc) == gatecore.pipeline.ALL


def test_the_hook_composes_no_stage_itself() -> None:
    """The hook, the in-process tier and the client hooks build a `PushInput` and call `judge`:
    none of them runs a stage of its own."""
    for path in ("server/prereceive.py", "tests/support/engine.py", "hooks/frozen_push.py", "hooks/receipt_check.py"):
        text = (ROOT / path).read_text()
        assert "judge(" in text, path
        for stage in ("PushChecker(", "reserved.check(", "reserved_check(", "ReservedContext(", "ApprovalContext(",
                      "verdict_on("):
            assert stage not in text, (path, stage)


# --- one question, three callers (docs/architecture.md) ------------------------------------------

POLICY = """\
[[freeze]]
name = "agents"
paths = ["ci/**", ".gate/**"]
authors = ["*@agents.example.com", "@known-agents"]
trailers = ["@known-agents"]
[[freeze]]
name = "release"
paths = ["release/**"]
authors = ["*@agents.example.com"]
refs = ["refs/heads/main"]
"""


def _policy(text: str = POLICY) -> Policy:
    plain = validate_policy(text.encode(), "policy.toml", load_catalogue())
    return Policy.from_plain(json.loads(json.dumps(plain)))


def _input(repo: WorkRepo, policy: Policy) -> tuple[PushInput, GitStream]:
    reader = GitStream(str(repo.path / ".git"))
    inp = PushInput(objects=Objects(reader), policy=policy, pusher="", now=0, repository_id="t",
                    server=ServerRefs(reader.ref_target))
    return inp, reader


def _codes(judged: Judged) -> list[tuple[str, str | None, str | None, str | None]]:
    return [(v.code, v.path, v.rule, v.identity) for v in judged.violations]


def test_each_shape_goes_through_the_stages_its_table_row_names() -> None:
    assert {Push: ALL, Range: ALL, Writes: frozenset({RULES})} == STAGES_OF
    judged = judge(_input_free(_policy()), Writes("refs/heads/main", [ProposedWrite("ci/x.yml", "add")], AGENT_WRITER),
                   stages=RESERVED_ONLY)
    assert judged.violations == [] and judged.verdict.exit_code == 0  # no stage of its own asked for: nothing judged


def _input_free(policy: Policy) -> PushInput:
    """A tool call's input: no objects are read (`Writes` judges paths)."""
    return PushInput(objects=None, policy=policy, pusher="", now=0, repository_id="", server=ServerRefs(lambda _: None))  # type: ignore[arg-type]


AGENT_WRITER = Writer(("Agent Smith", "bot-7@agents.example.com"), ("Agent Smith", "bot-7@agents.example.com"))


def test_a_range_judges_what_head_adds_to_base_even_where_another_ref_holds_it(tmp_path: Path) -> None:
    repo = WorkRepo(tmp_path / "w")
    repo.write("README", "x")
    repo.commit("root")
    base = repo.head()
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("ci/deploy.yml", "run: evil")
    repo.commit("agent's change", identity=AGENT)
    head = repo.head()
    repo.git("branch", "elsewhere", head)  # the clone holds the agent's commit on another branch too
    inp, reader = _input(repo, _policy())
    try:
        as_range = judge(inp, Range("refs/heads/main", base, head))
        as_push = judge(inp, Push([RefUpdate(base, head, b"refs/heads/main")]))  # the repository's own refs hidden
    finally:
        reader.close()
    assert _codes(as_range) == [("GATE-FROZEN-PATH", "ci/deploy.yml", "freeze[0]:agents", AGENT[1])]
    assert as_range.verdict.exit_code == 1
    assert as_push.violations == []  # a push hides every ref: the commit is "already on the server"


def test_a_range_scopes_branch_rules_to_its_ref(tmp_path: Path) -> None:
    repo = WorkRepo(tmp_path / "w")
    repo.write("README", "x")
    repo.commit("root")
    base = repo.head()
    repo.write("release/notes", "v2")
    repo.commit("agent's release note", identity=AGENT)
    inp, reader = _input(repo, _policy())
    try:
        onto_main = judge(inp, Range("refs/heads/main", base, repo.head()))
        onto_dev = judge(inp, Range("refs/heads/dev", base, repo.head()))
    finally:
        reader.close()
    assert [v.rule for v in onto_main.violations] == ["freeze[1]:release"]
    assert onto_dev.violations == []


def test_a_tool_calls_writes_are_judged_as_the_commit_that_would_carry_them(tmp_path: Path) -> None:
    """The same identity and paths, once as a real commit (`commit_violations`, through a push) and
    once as a tool call's proposal: the same codes, paths, rules, identities and evidence."""
    repo = WorkRepo(tmp_path / "w")
    repo.write("README", "x")
    repo.commit("root")
    base = repo.head()
    repo.write("ci/deploy.yml", "a")
    repo.write(".gate/policy.toml", "b")
    repo.write("src/ok.py", "c")
    repo.commit("agent", identity=AGENT)
    policy = _policy()
    inp, reader = _input(repo, policy)
    try:
        committed = judge(inp, Range("refs/heads/main", base, repo.head()))
    finally:
        reader.close()
    writes = [ProposedWrite(p, "add") for p in ("ci/deploy.yml", ".gate/policy.toml", "src/ok.py")]
    proposed = judge(_input_free(policy), Writes("refs/heads/main", writes, AGENT_WRITER))

    def seen(j: Judged) -> list[tuple[str, ...]]:
        return sorted((v.code, v.path or "", v.rule or "", v.identity or "", v.evidence or "", v.detail)
                      for v in j.violations)

    assert seen(proposed) == seen(committed) and len(seen(proposed)) == 2
    assert {v.commit for v in proposed.violations} == {PROPOSED}
    assert proposed.verdict.exit_code == committed.verdict.exit_code == 1


def test_a_tool_call_is_restricted_by_any_shape_of_its_writers_commit() -> None:
    """A human's git identity, but the agent's trailer in one of its shapes: restricted (by the
    trailer, as a commit carrying it would be); names compared as the server compares them."""
    human = ("Hana Human", "hana@example.com")
    plain = Writer(human, human)
    marked = Writer(human, human, signals=(Signals(), Signals(trailers=("Co-authored-by: Claude <noreply@anthropic.com>",),
                                                               coauthors=("noreply@anthropic.com",))))
    writes = [ProposedWrite("CI/Deploy.yml", "modify")]
    assert judge(_input_free(_policy()), Writes(None, writes, plain)).violations == []
    got = judge(_input_free(_policy()), Writes(None, writes, marked)).violations
    assert [(v.code, v.path, v.identity) for v in got] == [("GATE-FROZEN-PATH", "CI/Deploy.yml",
                                                            "co-author:noreply@anthropic.com")]
    assert "@known-agents (claude)" in (got[0].evidence or "")
