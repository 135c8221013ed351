"""`gate agents ...`: the built-in catalogue of AI agents."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from .clicommon import Opt, command, out_line

group = typer.Typer(no_args_is_help=True, help="The built-in catalogue of AI agents (@known-agents).")


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
