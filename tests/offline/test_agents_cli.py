"""The agent catalogue through the `gate` command line (in process): `gate agents list` prints it, and
`gate policy check` shows what `@known-agents` and `@agent-config` expand to (docs/agents.md)."""

from __future__ import annotations

from pathlib import Path

from support.cli import cli

from gatecore.adapters.config import load_catalogue

POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", ".gate/**", "@agent-config"]
authors = ["@known-agents", "*@agents.example.com"]
trailers = ["@known-agents"]
pushers = ["@known-agents"]
"""


def test_agents_list_prints_every_catalogue_entry_and_the_version() -> None:
    cat = load_catalogue()
    out = cli("agents", "list")
    assert out.returncode == 0, out.stderr
    header, *blocks = out.stdout.strip().split("\n\n")
    assert header == (f"agent catalogue {cat.version} ({len(cat.agents)} agents, {len(cat.config)} agent-config "
                      "entries; docs/agents.md)")
    assert len(blocks) == len(cat.agents) + 1 + len(cat.config)
    for agent, block in zip(cat.agents, blocks, strict=False):
        expected = [f"{agent.name} [{agent.id}] (checked {agent.checked})"]
        for key in ("emails", "names", "trailers", "pushers"):
            if values := getattr(agent, key):
                expected.append(f"  {key}: " + ", ".join(values))
        expected += [f"  source: {s}" for s in agent.sources]
        assert block.splitlines() == expected, agent.name
    for entry, block in zip(cat.config, blocks[len(cat.agents) + 1:], strict=True):
        assert block.splitlines()[:2] == [f"{entry.tool} [{entry.id}] (checked {entry.checked})",
                                          "  paths: " + ", ".join(entry.paths)]
    for pattern in ("*copilot-swe-agent[bot]@users.noreply.github.com", "noreply@anthropic.com",
                    "Assisted-by: *", "Made-with: Cursor", "* (aider)", "pushers: copilot-swe-agent[bot]",
                    "**/AGENTS.md", ".mcp.json"):
        assert pattern in out.stdout, pattern


def test_policy_check_shows_what_known_agents_expands_to(tmp_path: Path) -> None:
    cat = load_catalogue()
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    out = cli("policy", "check", str(policy))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"named sets expanded from the agent catalogue {cat.version}" in out.stdout
    lines = {line.split(": ", 1)[0].strip(): line.split(": ", 1)[1] for line in out.stdout.splitlines()
             if line.startswith("  freeze[0]:governance ")}
    authors = lines["freeze[0]:governance authors"].split(", ")
    trailers = lines["freeze[0]:governance trailers"].split(", ")
    assert authors == [*(p for p, _ in cat.patterns("emails")), "*@agents.example.com"]
    assert trailers == [p for p, _ in cat.patterns("trailers")]
    assert lines["freeze[0]:governance pushers"].split(", ") == [p for p, _ in cat.patterns("pushers")]
    assert lines["freeze[0]:governance paths"].split(", ") == ["ci/**", ".gate/**", *(p for p, _ in cat.config_paths())]
    for email in ("*copilot-swe-agent[bot]@users.noreply.github.com", "*claude[bot]@users.noreply.github.com",
                  "noreply@anthropic.com", "cursoragent@cursor.com", "openhands@all-hands.dev"):
        assert email in authors, email
    for trailer in ("Assisted-by: *", "Co-authored-by: * <noreply@anthropic.com>", "Co-authored-by: Copilot <*>",
                    "Made-with: Cursor", "Replit-Commit-Author: Agent"):
        assert trailer in trailers, trailer
    assert not any(t.startswith(("Co-authored-by: Claude", "Co-authored-by: Devin*")) for t in trailers)
    assert "@known-agents" not in out.stdout and "@agent-config" not in out.stdout  # replaced, never literal


def test_policy_check_refuses_an_unknown_named_set(tmp_path: Path) -> None:
    for key in ("authors", "trailers"):
        policy = tmp_path / f"{key}.toml"
        policy.write_text(f'mode = "enforce"\n[[freeze]]\npaths = ["ci/**"]\n{key} = ["@no-such-set"]\n')
        out = cli("policy", "check", str(policy))
        assert out.returncode == 2, out.stdout + out.stderr
        assert f"GATE-CONFIG-POLICY: {policy}:4: freeze[0].{key}: unknown set '@no-such-set'" in out.stderr
        assert not out.stdout.startswith("ok:")
