"""A composite action's `run:` steps, run as GitHub's runner runs them (tests/forges/).

The runner's part that matters here, and nothing more:

* the action is the repository's tree at a commit (the runner downloads the whole repository and
  points `GITHUB_ACTION_PATH` at the action's folder in it): here, the files git tracks or would
  track, copied into `_actions/OWNER/push-gate/SHA/`;
* each `run:` step is a `bash --noprofile --norc -eo pipefail FILE` process (GitHub's `shell: bash`)
  in its `working-directory`, with the runner's variables (`GITHUB_OUTPUT` a fresh file per step,
  `GITHUB_STEP_SUMMARY`, `GITHUB_WORKSPACE`, `GITHUB_ACTION_PATH`, `RUNNER_TEMP`, ...) and the
  step's `env:`;
* `${{ ... }}` expressions, evaluated by a small evaluator that knows only what the action uses:
  `inputs.NAME` (declared inputs, their defaults), `github.event.PATH` (the fake event payload; a
  missing member is the empty string, as GitHub makes a null), `github.event_name`,
  `github.action_path`, `github.action_ref`, `github.actor`, `github.repository`, `github.workspace`, `runner.temp` and
  `steps.ID.outputs.NAME` (of a step already run). Anything else fails the test: an expression the
  action starts to use must be taught here first, on purpose;
* `uses:` steps are not run (the test provides what they would: a Python 3.11+ on PATH).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .gitutil import ROOT

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*")
#: github.* names the evaluator knows, besides github.event.*
GITHUB_NAMES = frozenset({"event_name", "action_path", "action_ref", "actor", "repository", "workspace"})


class UnknownExpression(AssertionError):
    """An expression this evaluator was not taught: teach it here, or do not use it."""


def install_action_tree(dest: Path) -> Path:
    """The project as the runner downloads it for `uses: OWNER/push-gate/forges/github@SHA`: the
    files git tracks or would track (not what it ignores), at `dest`. Returns the action's path."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file() or src.is_symlink():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    return dest / "forges" / "github"


@dataclass
class Runner:
    action: dict[str, Any]
    action_path: Path
    workspace: Path
    temp: Path
    event_name: str
    event: dict[str, Any]
    inputs: dict[str, str] = field(default_factory=dict)
    actor: str = "octocat"
    repository: str = "acme/project"
    action_ref: str = ""  # the ref of `uses: ...@REF`: the commit the action is pinned to
    path_prepend: list[str] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    summary: Path = field(init=False)

    def __post_init__(self) -> None:
        declared = self.action.get("inputs", {})
        unknown = set(self.inputs) - set(declared)
        assert not unknown, f"inputs the action does not declare: {sorted(unknown)}"
        self.inputs = {name: str(self.inputs.get(name, spec.get("default", ""))) for name, spec in declared.items()}
        self.summary = self.temp / "step_summary.md"
        self.summary.touch()
        self.event_path = self.temp / "event.json"
        self.event_path.write_text(json.dumps(self.event))

    # --- expressions -----------------------------------------------------------------------

    def value(self, expr: str) -> str:
        if PATH.fullmatch(expr) is None:
            raise UnknownExpression(f"not a plain context path: {expr!r}")
        parts = expr.split(".")
        root, rest = parts[0], parts[1:]
        if root == "inputs" and len(rest) == 1:
            if rest[0] not in self.inputs:
                raise UnknownExpression(f"undeclared input: {expr}")
            return self.inputs[rest[0]]
        if root == "runner" and rest == ["temp"]:
            return str(self.temp)
        if root == "steps" and len(rest) == 3 and rest[1] == "outputs":
            if rest[0] not in self.outputs:
                raise UnknownExpression(f"{expr}: step {rest[0]!r} has not run")
            return self.outputs[rest[0]].get(rest[2], "")
        if root == "github" and rest and rest[0] == "event":
            node: Any = self.event
            for key in rest[1:]:
                node = node.get(key) if isinstance(node, Mapping) else None
            return "" if node is None else node if isinstance(node, str) else json.dumps(node)
        if root == "github" and len(rest) == 1 and rest[0] in GITHUB_NAMES:
            return {"event_name": self.event_name, "action_path": str(self.action_path),
                    "action_ref": self.action_ref, "actor": self.actor,
                    "repository": self.repository, "workspace": str(self.workspace)}[rest[0]]
        raise UnknownExpression(f"the evaluator does not know {expr!r}")

    def known(self, expr: str) -> None:
        """Fail unless the evaluator knows `expr` (a step's outputs: a step the action has)."""
        parts = expr.split(".")
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            assert any(s.get("id") == parts[1] for s in self.steps()), f"{expr}: no step {parts[1]!r}"
            return
        self.value(expr)

    def render(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), text)

    # --- steps -----------------------------------------------------------------------------

    def steps(self) -> list[dict[str, Any]]:
        return list(self.action["runs"]["steps"])

    def step(self, step_id: str) -> dict[str, Any]:
        return next(s for s in self.steps() if s.get("id") == step_id)

    def env(self, step: dict[str, Any], output: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "GIT_"))}
        env.update({
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(self.event_path), "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_ACTION_PATH": str(self.action_path), "GITHUB_ACTOR": self.actor,
            "GITHUB_REPOSITORY": self.repository, "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_ENV": str(self.temp / "github_env"),
            "GITHUB_PATH": str(self.temp / "github_path"), "RUNNER_TEMP": str(self.temp),
            "PATH": os.pathsep.join([*self.path_prepend, os.environ["PATH"]]),
        })
        env.update({name: self.render(str(value)) for name, value in (step.get("env") or {}).items()})
        return env

    def run(self, step_id: str) -> subprocess.CompletedProcess[str]:
        """Run one `run:` step; its outputs become `steps.ID.outputs.*` for the steps after it."""
        step = self.step(step_id)
        assert step.get("shell") == "bash" and "run" in step, step
        output = self.temp / f"output-{step_id}"
        output.write_text("")
        script = self.temp / f"step-{step_id}.sh"
        script.write_text(self.render(step["run"]))
        cwd = self.render(step.get("working-directory", str(self.workspace)))
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd,
                              env=self.env(step, output), capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.outputs[step_id] = read_outputs(output.read_text())
        return proc

    def expressions(self) -> list[str]:
        """Every `${{ }}` of the action, for a test that evaluates them all."""
        found: list[str] = []

        def walk(node: Any) -> None:
            if isinstance(node, str):
                found.extend(m.group(1) for m in EXPRESSION.finditer(node))
            elif isinstance(node, Mapping):
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(self.action)
        return found


def read_outputs(text: str) -> dict[str, str]:
    """`$GITHUB_OUTPUT`'s two forms: `name=value` and `name<<DELIMITER` ... `DELIMITER`."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            while lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            i += 1
            out[name] = "\n".join(body)
        else:
            name, _, value = line.partition("=")
            out[name] = value
    return out


def load_action(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text())
    assert isinstance(loaded, dict)
    return loaded
