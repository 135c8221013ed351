"""A project the user has not trusted: what each real agent CLI does with its hook file then.
(What gets around the hooks, for the gate's docs: the server stays where the rule is enforced.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.agentcli import play
from support.scriptedmodel import Turn, call, freeform, say

WRITES = {
    "gemini": lambda project: call("write_file", file_path=str(project / "frozen/x.yml"), content="a: 1\n"),
    "codex": lambda project: freeform("apply_patch", "*** Begin Patch\n*** Add File: frozen/x.yml\n+a: 1\n*** End Patch\n"),
    "copilot": lambda project: call("create", path=str(project / "frozen/x.yml"), file_text="a: 1\n"),
}


@pytest.mark.parametrize("agent", ["codex", "copilot"])
def test_an_untrusted_projects_hooks_are_ignored_silently(agent: str, tmp_path: Path) -> None:
    def script(project: Path) -> list[Turn]:
        return [WRITES[agent](project), say("All done.")]

    played = play(agent, tmp_path, script, trusted=False, files={"frozen/.keep": ""})
    assert played.run.returncode == 0, played.run.describe()
    assert played.hook.payloads() == []
    assert (played.run.project / "frozen/x.yml").read_text() == "a: 1\n"
    assert played.run.outbound == [], played.run.describe()


def test_gemini_cli_refuses_to_run_headless_in_an_untrusted_folder(tmp_path: Path) -> None:
    played = play("gemini", tmp_path, lambda project: [WRITES["gemini"](project), say("All done.")], trusted=False)
    assert played.run.returncode == 55, played.run.describe()
    assert "not running in a trusted directory" in played.run.stderr
    assert played.model.requests == [] and played.hook.payloads() == []
