"""`gate agents ...`: the built-in catalogue of AI agents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..errors import GateError
from .clicommon import Opt, command, out_line

group = typer.Typer(no_args_is_help=True, help="AI agents: the built-in catalogue (@known-agents), and the check "
                                                "their pre-tool hooks run.")


@command(group, "list")
def agents_list(
    as_json: Annotated[bool, Opt("--json", help="Print the catalogue as JSON.")] = False,
) -> int:
    """Print the catalogue: each agent with its sources, the patterns @known-agents stands for,
    and the paths @agent-config stands for."""
    from ..adapters.config import load_catalogue

    cat = load_catalogue()
    if as_json:
        out_line(json.dumps(cat.as_plain(), indent=2))
        return 0
    out_line(f"agent catalogue {cat.version} ({len(cat.agents)} agents, {len(cat.config)} agent-config entries; "
         "docs/agents.md)")
    for a in cat.agents:
        out_line(f"\n{a.name} [{a.id}] (checked {a.checked})")
        for key in ("emails", "names", "trailers", "pushers"):
            values = getattr(a, key)
            if values:
                out_line(f"  {key}: " + ", ".join(values))
        for source in a.sources:
            out_line(f"  source: {source}")
    out_line("\n@agent-config: where agents read their instructions and tool permissions")
    for c in cat.config:
        out_line(f"\n{c.tool} [{c.id}] (checked {c.checked})\n  paths: " + ", ".join(c.paths))
        for source in c.sources:
            out_line(f"  source: {source}")
    return 0


@command(group, "check")
def agents_check(
    agent: Annotated[str | None, Opt("--agent", help="The agent whose hook payload this is (claude, gemini, ...; "
                                                     "default: recognised from the payload).")] = None,
    policy: Annotated[str | None, Opt("--policy", help=".gate/policy.toml as committed in HEAD, unless this file "
                                                       "is given.")] = None,
) -> int:
    """An agent's pre-tool hook: read one tool call on stdin; refuse it, in the agent's own format, when the commit
    it would become writes a frozen path (docs/agent-hooks.md)."""
    from hooks.agent_check import main

    return main([*(["--agent", agent] if agent else []), *(["--policy", policy] if policy else [])])


def _work_tree(repo: Path) -> str:
    from ..adapters.gitcmd import run_git

    out = run_git(["rev-parse", "--show-toplevel"], cwd=repo, ok=None)
    top = out.stdout.decode("utf-8", "surrogateescape").strip()
    if not out.ok or not top:
        raise GateError("GATE-INPUT-ARGUMENT", f"{repo} is not in a git work tree: {out.last_error()}")
    return top


def _agents(agent: list[str] | None, every: bool) -> list[str]:
    from ..toolcalls.toolcall import AGENTS

    if every == bool(agent):
        raise GateError("GATE-INPUT-ARGUMENT", f"name the agents (--agent {' | --agent '.join(AGENTS)}) or --all")
    chosen = list(AGENTS) if every else list(dict.fromkeys(agent or []))
    unknown = [a for a in chosen if a not in AGENTS]
    if unknown:
        raise GateError("GATE-INPUT-ARGUMENT", f"unknown agent {', '.join(unknown)} (one of {', '.join(AGENTS)})")
    return chosen


@command(group, "install")
def agents_install(
    agent: Annotated[list[str] | None, Opt("--agent", help="An agent to configure (claude, copilot, cursor, codex, "
                                                           "gemini, windsurf, cline, kiro); repeat for more.")] = None,
    every: Annotated[bool, Opt("--all", help="Every agent the check reads.")] = False,
    repo: Annotated[Path, Opt("--repo", help="The work tree (default: the current directory's).")] = Path("."),
    dry_run: Annotated[bool, Opt("--dry-run", help="Say what would be written; write nothing.")] = False,
) -> int:
    """Write the agents' pre-tool hook configuration into the work tree, for committing: each runs gate agents
    check (merged into an existing file, the user's other hooks kept; running it again changes nothing)."""
    from hooks.agent_install import install

    for line in install(_work_tree(repo), _agents(agent, every), dry_run):
        out_line(line)
    return 0


@command(group, "doctor")
def agents_doctor(
    agent: Annotated[list[str] | None, Opt("--agent", help="Only this agent; repeat for more (default: every "
                                                           "one).")] = None,
    repo: Annotated[Path, Opt("--repo", help="The work tree (default: the current directory's).")] = Path("."),
) -> int:
    """Per agent: is its pre-tool hook configured, and does the command it names run the check (exit 1 if a
    configured one does not)."""
    from hooks.agent_install import doctor

    from ..toolcalls.toolcall import AGENTS

    lines, ok = doctor(_work_tree(repo), _agents(agent, False) if agent else AGENTS)
    for line in lines:
        out_line(line)
    return 0 if ok else 1
