"""`gate agents install` and `gate agents doctor`: the agents' pre-tool hooks, committed with the project.

Install writes each chosen agent's hook configuration (`gatecore.toolcalls`: each agent's
`CONFIG_PATH` and `configure`) into the work tree, as a plan first and then its writes: a file that
exists is merged into (every hook and setting of the user's kept; one the installer cannot read is
refused, never overwritten, `GATE-AGENT-INSTALL`), and a run that changes nothing writes nothing.
The files are for committing: every clone, and the agents' cloud sandboxes, then run the check.

Doctor says, per agent, whether its file holds the gate's hook, and runs the command the file
names, as the agent would, on a write it must refuse whatever the policy (into the git directory's
hooks): a hook that does not refuse it is not working (gate not on PATH, a wrong agent).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence

from gatecore.adapters.files import atomic_write, read_capped
from gatecore.errors import GateError
from gatecore.toolcalls import hookfiles
from gatecore.toolcalls.toolcall import AGENTS, adapter
from gatecore.valueclass import valueclass

#: A hook configuration file larger than this is not one the installer merges into.
MAX_CONFIG_BYTES = 1 << 20


@valueclass(frozen=True, slots=True)
class Planned:
    agent: str
    path: str  # absolute
    text: str  # what the file will hold
    state: str  # "create", "update" or "unchanged"
    executable: bool


def _read(path: str) -> str | None:
    if not os.path.lexists(path):
        return None
    data = read_capped(path, "GATE-AGENT-INSTALL", "hook configuration", MAX_CONFIG_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise GateError("GATE-AGENT-INSTALL", f"{path} is not UTF-8 text: left as it is") from None


def plan(top: str, agents: Sequence[str], gate: str = "gate") -> list[Planned]:
    """What installing the hooks of `agents` in the work tree `top` writes (nothing is written)."""
    out = []
    for name in agents:
        module = adapter(name)
        path = os.path.join(top, module.CONFIG_PATH)
        old = _read(path)
        text = module.configure(old, hookfiles.command_for(name, gate))
        state = "create" if old is None else "unchanged" if old == text else "update"
        out.append(Planned(name, path, text, state, module.EXECUTABLE))
    return out


def apply(planned: Sequence[Planned]) -> None:
    for p in planned:
        if p.state == "unchanged":
            continue
        os.makedirs(os.path.dirname(p.path), exist_ok=True)
        atomic_write(p.path, p.text.encode("utf-8"), 0o755 if p.executable else 0o644)


def install(top: str, agents: Sequence[str], dry_run: bool, gate: str = "gate") -> list[str]:
    """Plan, then write (unless `dry_run`): one line per agent."""
    planned = plan(top, agents, gate)
    if not dry_run:
        apply(planned)
    verb = {"create": "would write" if dry_run else "wrote", "update": "would update" if dry_run else "updated",
            "unchanged": "unchanged"}
    lines = [f"{p.agent}: {verb[p.state]} {os.path.relpath(p.path, top)}" for p in planned]
    if not dry_run and any(p.state != "unchanged" for p in planned):
        lines.append("commit them (git add " + " ".join(sorted({os.path.relpath(p.path, top) for p in planned
                                                                 if p.state != "unchanged"})) + "), and freeze them "
                     "for agents: @agent-config in the policy's paths (docs/agent-hooks.md)")
    return lines


def _denied(stdout: str, code: int) -> bool:
    """Whether a hook's answer refuses the call, in any of the agents' forms."""
    if code == 2:
        return True
    try:
        doc = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else None
    except ValueError:
        return False
    if not isinstance(doc, dict):
        return False
    nested = doc.get("hookSpecificOutput")
    decision = nested.get("permissionDecision") if isinstance(nested, dict) else None
    return "deny" in (doc.get("permission"), doc.get("permissionDecision"), doc.get("decision"), decision) or \
        doc.get("cancel") is True


def doctor(top: str, agents: Sequence[str] = AGENTS) -> tuple[list[str], bool]:
    """Per agent: configured or not; for a configured one, whether its command refuses a write into
    the git directory's hooks (a refusal no policy can lift). ok: every configured hook works."""
    lines, ok = [], True
    git_hooks = os.path.join(top, ".git", "hooks", "pre-commit")
    for name in agents:
        module = adapter(name)
        path = os.path.join(top, module.CONFIG_PATH)
        try:
            text = _read(path)
            command = None if text is None else module.configured(text)
        except GateError as exc:
            lines.append(f"{name}: FAIL {module.CONFIG_PATH}: {exc.code}: {exc.detail}")
            ok = False
            continue
        if command is None:
            lines.append(f"{name}: not configured ({module.CONFIG_PATH}"
                         + (" holds no push-gate hook)" if text is not None else " does not exist)"))
            continue
        argv = [path] if module.EXECUTABLE else ["/bin/sh", "-c", command]
        payload = json.dumps(module.sample_write(git_hooks, top)).encode()
        try:
            run = subprocess.run(argv, input=payload, capture_output=True, cwd=top, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            lines.append(f"{name}: FAIL {module.CONFIG_PATH}: its hook does not run: {exc}")
            ok = False
            continue
        stdout = run.stdout.decode("utf-8", "replace")
        stderr = run.stderr.decode("utf-8", "replace")
        if _denied(stdout, run.returncode) and "GATE-AGENT-HOOKS-OFF" in stdout + stderr:
            lines.append(f"{name}: ok: {module.CONFIG_PATH} runs the check ({command})")
        else:
            why = (stderr.strip().splitlines() or stdout.strip().splitlines() or [f"exit {run.returncode}"])[-1]
            lines.append(f"{name}: FAIL {module.CONFIG_PATH}: its command did not refuse a write into .git/hooks "
                         f"({why[:200]})")
            ok = False
    return lines, ok
