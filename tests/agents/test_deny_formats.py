"""How each real agent CLI takes a hook's answer: a hook that fails (exit 1), a JSON decision alone
(exit 0), and a JSON decision with exit 2 (what a gate that must fail closed in every agent sends).
The ground truth for the gate's deny format (issue 48, "fail closed, in the agent's own words").

One run per agent: three writes into frozen/, the hook answering each in one of the three ways
(stderr is always BLOCKED-BY-TEST, the JSON's reason REASON-IN-JSON).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support.agentcli import Played, play
from support.scriptedmodel import Turn, call, freeform, say

STDERR, JSON_REASON = "BLOCKED-BY-TEST", "REASON-IN-JSON"
CLAUDE_FORM = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                      "permissionDecisionReason": JSON_REASON}}
DECISIONS = {  # each agent's documented JSON deny
    "claude": CLAUDE_FORM,
    "codex": CLAUDE_FORM,
    "gemini": {"decision": "deny", "reason": JSON_REASON},
    "copilot": {"permissionDecision": "deny", "permissionDecisionReason": JSON_REASON},
}
WRITES: dict[str, Callable[[Path, str], Turn]] = {
    "claude": lambda project, rel: call("Write", file_path=str(project / rel), content="x\n"),
    "gemini": lambda project, rel: call("write_file", file_path=str(project / rel), content="x\n"),
    "codex": lambda project, rel: freeform("apply_patch", f"*** Begin Patch\n*** Add File: {rel}\n+x\n*** End Patch\n"),
    "copilot": lambda project, rel: call("create", path=str(project / rel), file_text="x\n"),
}
FAILS, JSON_ONLY, JSON_AND_EXIT_2 = "frozen/fails/a.txt", "frozen/json/b.txt", "frozen/both/c.txt"

# What each CLI did (the pinned versions): was the file written, and what did the model read.
EXPECTED = {
    #          a hook that fails: written?  JSON alone: reason        JSON + exit 2: reason
    "claude": (True, JSON_REASON, JSON_REASON),
    "codex": (True, JSON_REASON, STDERR),  # exit 2 wins: stderr
    "gemini": (True, JSON_REASON, JSON_REASON),
    "copilot": (False, JSON_REASON, JSON_REASON),  # a failing hook denies ("hook errored")
}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def answered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Played:
    agent = str(request.param)
    decision = json.dumps(DECISIONS[agent])
    rules = [("frozen/fails/", 1, None), ("frozen/json/", 0, decision), ("frozen/both/", 2, decision)]

    def script(project: Path) -> list[Turn]:
        return [*(WRITES[agent](project, rel) for rel in (FAILS, JSON_ONLY, JSON_AND_EXIT_2)), say("All done.")]

    # (Copilot's create wants the directory to exist)
    files = {"frozen/fails/.keep": "", "frozen/json/.keep": "", "frozen/both/.keep": ""}
    return play(agent, tmp_path_factory.mktemp(f"deny-{agent}"), script, rules=rules, files=files)


def _agent(played: Played) -> str:
    return played.run.agent


def test_a_failing_hook(answered: Played) -> None:
    written, _, _ = EXPECTED[_agent(answered)]
    assert answered.run.returncode == 0, answered.run.describe()
    assert (answered.run.project / FAILS).exists() == written, answered.run.describe()
    (result,) = answered.model.results_after(0)
    assert (STDERR in result.text or "errored" in result.text) != written, result


def test_a_json_decision_alone_denies_with_its_reason(answered: Played) -> None:
    _, reason, _ = EXPECTED[_agent(answered)]
    assert not (answered.run.project / JSON_ONLY).exists()
    (result,) = answered.model.results_after(1)
    assert reason in result.text, result


def test_a_json_decision_with_exit_2_denies(answered: Played) -> None:
    _, _, reason = EXPECTED[_agent(answered)]
    assert not (answered.run.project / JSON_AND_EXIT_2).exists()
    (result,) = answered.model.results_after(2)
    assert reason in result.text, result
