"""`gate agents ...`: the built-in catalogue of AI agents."""

from __future__ import annotations

import json
from typing import Annotated

import typer

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
