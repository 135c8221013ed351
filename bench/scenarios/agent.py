"""The agent check: `gate agents check`, the whole process, as a coding agent runs it before each tool
call (issue 48), side by side with `python -I -c pass`.

A project whose `.gate/policy.toml` (the README's minimal policy) and Claude Code's hook file
(`gate agents install --agent claude`) are committed, git's identity an agent's; Claude Code's
`PreToolUse` payload for a `Write` on stdin: one into `src/` (allowed: exit 0, silent) and one into
`ci/` (refused: exit 2, GATE-FROZEN-PATH). One warm-up run first fills the client hooks' validated
policy cache, as the first tool call of a session does; every timed run then reads it.

Where the time goes is measured once beside the timings and put in the case's note: the git
processes each check starts (`GIT_TRACE`) and its imports (`PYTHONPROFILEIMPORTTIME`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .. import hooks
from ..generate import AGENTS
from .core import BenchCore, Case

#: The reference the check is held to (issue 48: the whole check at most 2x it).
PYTHON = "python -I -c pass"


def claude_write(project: Path, rel: str) -> bytes:
    """Claude Code's `PreToolUse` payload for a `Write` of `rel` (its keys as 2.1.332 sends them:
    tests/agents/payloads/claude/write-allowed.json)."""
    return json.dumps({
        "session_id": "00000000-0000-4000-8000-000000000000",
        "transcript_path": str(project.parent / "transcript.jsonl"), "cwd": str(project),
        "prompt_id": "00000000-0000-4000-8000-000000000001", "permission_mode": "acceptEdits", "effort": "high",
        "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": str(project / rel), "content": "x = 1\n"},
        "tool_use_id": "toolu_bench",
    }).encode()


class Agents(BenchCore):
    def agent(self) -> list[Case]:
        """`gate agents check` on an allowed and a refused write, against `python -I -c pass`."""
        gate = Path(sys.executable).parent / "gate"
        label = ("agent check: gate agents check on Claude Code's Write payload, a write allowed and one refused "
                 "(policy committed, its validated cache warm)")
        if not gate.exists():
            return [Case("agent", label, {}, skipped=f"no {gate} (the venv's console script)")]
        project = self.work / "agent-project"
        name, email = AGENTS[0]
        env = {**self.git.env, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
               "GIT_COMMITTER_EMAIL": email}
        self._agent_project(project, gate, env)
        check = [str(gate), "agents", "check", "--agent", "claude"]
        commands = {PYTHON: [sys.executable, "-I", "-c", "pass"], "allowed": check, "denied": check}
        inputs = {"allowed": claude_write(project, "src/new.py"), "denied": claude_write(project, "ci/deploy.yml")}
        expect = {PYTHON: 0, "allowed": 0, "denied": 2}
        # the warm-up run: the first check of a session validates the policy and fills the cache
        for variant in ("allowed", "denied"):
            proc = subprocess.run(check, cwd=project, env=env, input=inputs[variant], capture_output=True, check=False)
            if proc.returncode != expect[variant] or (variant == "denied") != (b"GATE-FROZEN-PATH" in proc.stderr):
                return [Case("agent", label, {}, skipped=f"the {variant} check answered exit {proc.returncode}: "
                                                         + proc.stderr.decode(errors="replace")[-300:])]
        runs = max(self.runs, self.sizes.agent_runs)
        case = self.timed_case("agent", label, project, env, commands, "agent", "agent check (allowed, refused)",
                               inputs=inputs, expect=expect, runs=runs)
        case.note = "; ".join(self._where_the_time_goes(check, project, env, inputs))
        self.log(f"    {case.note}")
        return [case]

    def _agent_project(self, project: Path, gate: Path, env: dict[str, str]) -> None:
        """The project: the minimal policy, a frozen file, a source file, Claude Code's hook file as
        `gate agents install` writes it; all committed."""
        self.git.run("init", "-q", "-b", "main", str(project))
        for rel, text in {".gate/policy.toml": hooks.MINIMAL_POLICY, "ci/deploy.yml": "name: deploy\n",
                          "src/app.py": "x = 0\n", "README.md": "a project\n"}.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text)
        subprocess.run([str(gate), "agents", "install", "--agent", "claude"], cwd=project, env=env, check=True,
                       capture_output=True)
        self.git.run("add", "-A", cwd=project)
        self.git.run("commit", "-q", "-m", "the project, its policy and its agent hook", cwd=project, extra=env)

    def _where_the_time_goes(self, check: list[str], project: Path, env: dict[str, str],
                             inputs: dict[str, bytes]) -> list[str]:
        """One more run of each check: the git processes it starts, and its imports."""
        notes = []
        for variant, payload in inputs.items():
            trace = self.work / f"agent-trace-{variant}.txt"
            trace.unlink(missing_ok=True)
            proc = subprocess.run(check, cwd=project, env={**env, "GIT_TRACE": str(trace),
                                                           "PYTHONPROFILEIMPORTTIME": "1"},
                                  input=payload, capture_output=True, check=False)
            gits = [line.split("trace: built-in: git ", 1)[1].split()[0]
                    for line in (trace.read_text().splitlines() if trace.exists() else [])
                    if "trace: built-in: git " in line]
            top: list[tuple[int, str]] = []
            for line in proc.stderr.decode(errors="replace").splitlines():
                if line.startswith("import time:") and "self [us]" not in line:
                    _own, cumulative, module = line[len("import time:"):].split("|")
                    if not module.startswith("  "):  # a top-level import (its own imports indented below it)
                        top.append((int(cumulative), module.strip()))
            total = sum(us for us, _ in top) / 1000
            heaviest = ", ".join(f"{module} {us / 1000:.0f}" for us, module in sorted(top, reverse=True)[:4])
            counted = ", ".join(f"{cmd} x{gits.count(cmd)}" if gits.count(cmd) > 1 else cmd for cmd in dict.fromkeys(gits))
            notes.append(f"{variant}: {len(gits)} git process{'' if len(gits) == 1 else 'es'} ({counted or 'none'}); imports {total:.0f} ms "
                         f"(heaviest: {heaviest} ms)")
        notes.append(f"`{PYTHON}` runs {sys.executable}; the check runs as the installed hook runs it: the venv's "
                     "console script")
        return notes
