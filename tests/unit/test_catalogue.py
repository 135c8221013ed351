"""The agent catalogue (`@known-agents`, `@agent-config`) against what agents really write.

Every entry has shapes taken from real commits (the source of each is named beside it): the
commit built from each shape is restricted by a rule naming `@known-agents`, and the evidence
names that entry; every pattern of every entry is matched by one of its shapes (a pattern no
real commit shows is a guess). People who share a first name with an agent (Devin, Claude,
Jules, ...) are not restricted by anything in the catalogue.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from support.gitutil import ROOT, gate

from gatecore.adapters.config import load_catalogue, load_vendor_table
from gatecore.configuration import catalogue
from gatecore.configuration.configschema import parse_catalogue, validate_policy
from gatecore.configuration.policy import FreezeRule, IdentityGlob, PathGlob, Policy, Signals, normalize_path
from gatecore.errors import GateError
from gatecore.git import trailers


@dataclass(frozen=True)
class Shape:
    """A commit as an agent wrote it (and the account that pushed it, where the platform says)."""

    seen: str  # where this shape comes from
    author: tuple[str, str] = ("Hana Human", "hana@example.com")
    committer: tuple[str, str] = ("Hana Human", "hana@example.com")
    message: str = "change\n"
    pusher: str | None = None


HUMAN = ("Hana Human", "hana@example.com")

SHAPES: dict[str, list[Shape]] = {
    "copilot": [
        Shape("Copilot cloud agent commits: authored by Copilot, the human as co-author (docs.github.com)",
              author=("Copilot", "198982749+Copilot@users.noreply.github.com"),
              message="Initial plan\n\nCo-authored-by: hana <12345+hana@users.noreply.github.com>\n"),
        Shape("Copilot CLI commits (223556219+Copilot@users.noreply.github.com)",
              author=("Copilot", "223556219+Copilot@users.noreply.github.com")),
        Shape("history rewritten from copilot-swe-agent[bot] <149234854+copilot-swe-agent[bot]@...>",
              author=("copilot-swe-agent[bot]", "149234854+copilot-swe-agent[bot]@users.noreply.github.com")),
        Shape("VS Code git.addAICoAuthor (microsoft/vscode extensions/git/src/repository.ts)",
              message="fix ci\n\nCo-authored-by: Copilot <copilot@github.com>\n"),
        Shape("a squash of a Copilot pull request",
              message="fix (#12)\n\nCo-authored-by: copilot-swe-agent[bot] <198982749+Copilot@users.noreply.github.com>\n"),
        Shape("the copilot-swe-agent app pushes the agent's branch", pusher="copilot-swe-agent[bot]"),
    ],
    "claude": [
        Shape("Claude Code's default attribution (code.claude.com/docs/en/settings)",
              message="fix ci\n\n\N{ROBOT FACE} Generated with [Claude Code](https://claude.com/claude-code)\n\n"
                      "Co-Authored-By: Claude <noreply@anthropic.com>\n"),
        Shape("with the model's name (anthropics/claude-code#14241)",
              message="fix\n\nCo-Authored-By: Claude Opus 4.5 <noreply@anthropic.com>\n"),
        Shape("a cloud session (anthropics/claude-code#77830)",
              message="fix\n\nClaude-Session: https://claude.ai/code/session_01AbC\n"),
        Shape("the Claude GitHub app (claude-code-action)",
              author=("claude[bot]", "209825114+claude[bot]@users.noreply.github.com"), pusher="claude[bot]"),
        Shape("the Claude agent on GitHub: anthropic-code-agent[bot] <242468646+Claude@users.noreply.github.com>",
              author=("anthropic-code-agent[bot]", "242468646+Claude@users.noreply.github.com"),
              pusher="anthropic-code-agent[bot]"),
    ],
    "codex": [
        Shape("Codex CLI's git attribution (openai/codex)", message="fix\n\nCo-authored-by: Codex <noreply@openai.com>\n"),
        Shape("Codex cloud commits: Codex <codex@openai.com>", author=("Codex", "codex@openai.com"),
              message="fix\n\nCo-authored-by: Codex <codex@openai.com>\n"),
        Shape("the ChatGPT Codex Connector app",
              author=("chatgpt-codex-connector[bot]", "199175422+chatgpt-codex-connector[bot]@users.noreply.github.com"),
              pusher="chatgpt-codex-connector[bot]"),
        Shape("the Codex agent on GitHub: openai-code-agent[bot] <242516109+Codex@users.noreply.github.com>",
              author=("openai-code-agent[bot]", "242516109+Codex@users.noreply.github.com"),
              pusher="openai-code-agent[bot]"),
    ],
    "devin": [
        Shape("the devin-ai-integration app", author=("Devin AI", "158243242+devin-ai-integration[bot]@users.noreply.github.com"),
              pusher="devin-ai-integration[bot]"),
        Shape("Devin as co-author", message="fix\n\nCo-Authored-By: Devin AI <devin-ai-integration[bot]@users.noreply.github.com>\n"),
        Shape("Devin CLI attribution (docs.devin.ai config-file)", message="fix\n\nGenerated with [Devin]\n\nCo-Authored-By: Devin\n"),
        Shape("the app's login as the author name",
              author=("devin-ai-integration[bot]", "158243242+devin-ai-integration[bot]@users.noreply.github.com")),
    ],
    "jules": [
        Shape("Jules' commits", author=("google-labs-jules[bot]", "161369871+google-labs-jules[bot]@users.noreply.github.com"),
              pusher="google-labs-jules[bot]"),
    ],
    "gemini-code-assist": [
        Shape("Gemini Code Assist suggestions committed",
              message="fix\n\nCo-authored-by: gemini-code-assist[bot] <176961590+gemini-code-assist[bot]@users.noreply.github.com>\n"),
        Shape("the app's own commits", author=("gemini-code-assist[bot]", "176961590+gemini-code-assist[bot]@users.noreply.github.com"),
              pusher="gemini-code-assist[bot]"),
    ],
    "amazon-q": [
        Shape("Amazon Q Developer for GitHub",
              author=("amazon-q-developer[bot]", "208079219+amazon-q-developer[bot]@users.noreply.github.com"),
              pusher="amazon-q-developer[bot]"),
    ],
    "cursor": [
        Shape("Cursor's agent attribution (cursor.com/help/integrations/git)", message="fix\n\nMade-with: Cursor\n"),
        Shape("Cursor's co-author trailer (block/aittributor#15)", message="fix\n\nCo-authored-by: Cursor <cursoragent@cursor.com>\n"),
        Shape("a Cursor cloud agent commit", author=("Cursor Agent", "cursoragent@cursor.com")),
    ],
    "aider": [
        Shape("aider's default (mohsin-zaheer/mcp-server 87f61c2f)",
              message="refactor: fix errors\n\nCo-authored-by: aider (anthropic/claude-sonnet-4-20250514) <aider@aider.chat>\n"),
        Shape("older aider releases", message="feat: add endpoint\n\nCo-authored-by: aider (gpt-4o) <noreply@aider.chat>\n"),
        Shape("--attribute-author / --attribute-committer (aider/repo.py)",
              author=("Hana Human (aider)", "hana@example.com"), committer=("Hana Human (aider)", "hana@example.com")),
    ],
    "openhands": [
        Shape("OpenHands with the user's git identity (CodeActAgent prompt)",
              message="fix\n\nCo-authored-by: openhands <openhands@all-hands.dev>\n"),
        Shape("OpenHands without a git identity", author=("openhands", "openhands@all-hands.dev"),
              committer=("openhands", "openhands@all-hands.dev")),
    ],
    "replit": [
        Shape("a Replit Agent checkpoint",
              message="Update dashboard UI\n\nReplit-Commit-Author: Agent\nReplit-Commit-Session-Id: 5e5ec4ea-3b62-4fbd-8ff5-a1174ccc19b4\n"
                      "Replit-Commit-Checkpoint-Type: full_checkpoint\n"),
    ],
    "amp": [
        Shape("Amp's default trailers (ampcode.com/manual)",
              message="fix\n\nAmp-Thread-ID: https://ampcode.com/threads/T-019c58d6-7447-76d1-8e5b-c1c0e03cac36\n"
                      "Co-authored-by: Amp <amp@ampcode.com>\n"),
    ],
    "factory": [
        Shape("Factory-AI/factory#1264", message="docs: document authentication\n\n"
              "Co-authored-by: factory-droid[bot] <138933559+factory-droid[bot]@users.noreply.github.com>\n"),
        Shape("the app's own commits", author=("factory-droid[bot]", "138933559+factory-droid[bot]@users.noreply.github.com"),
              pusher="factory-droid[bot]"),
    ],
    "warp": [
        Shape("Warp's agent as co-author", message="Docs: set CI badge slug\n\nCo-Authored-By: Warp <agent@warp.dev>\n"),
    ],
    "gitlab-duo": [
        Shape("a Duo flow's executor commit (gitlab-org ai-assist#1487)", author=("Duo Developer", "duo.workflow.agent@gitlab.com"),
              committer=("Duo Developer", "duo.workflow.agent@gitlab.com")),
    ],
    "ai-assistance-trailers": [
        Shape("the kernel's form (Documentation/process/coding-assistants.rst)",
              message="mm: fix a leak\n\nAssisted-by: Claude:claude-3-opus coccinelle sparse\nSigned-off-by: Hana Human <hana@example.com>\n"),
        Shape("tmt's form (testing-farm docs!271)",
              message="docs: add code assistants section\n\nGenerated-by: Claude Code\nSigned-off-by: Hana Human <hana@example.com>\n"),
    ],
}

#: People who share a name with an agent, and human accounts: nothing in the catalogue restricts them.
HUMANS = [
    Shape("a human co-author named Devin", message="fix\n\nCo-authored-by: Devin Smith <devin.smith@example.com>\n"),
    Shape("a human co-author named Claude", message="fix\n\nCo-authored-by: Claude Dupont <claude.dupont@example.fr>\n"),
    Shape("a human co-author named Jules", message="fix\n\nCo-authored-by: Jules Verne <jules@example.org>\n"),
    Shape("a human named Claude", author=("Claude", "claude@example.fr")),
    Shape("a human named Devin", author=("Devin", "devin@example.com")),
    Shape("a human named Devin Aiello", author=("Devin Aiello", "daiello@example.com")),
    Shape("a human named Amparo", author=("Amparo Ruiz", "amparo@example.es"), message="fix\n\nReviewed-by: Amp Ruiz <amp@example.es>\n"),
    Shape("a human surnamed Cursor", author=("Ada Cursor", "ada.cursor@example.com")),
    Shape("a human named Aiden", author=("Aiden Ider", "aiden@example.com")),
    Shape("a human's own GitHub noreply email", author=("claude", "1234+claude-dupont@users.noreply.github.com")),
    Shape("humans pushing under first names", pusher="devin"),
    Shape("humans pushing under first names", pusher="claude"),
    Shape("humans pushing under first names", pusher="jules"),
    Shape("a human reviewer trailer", message="fix\n\nReviewed-by: Codex Reviewer <cr@example.com>\nSigned-off-by: Hana <hana@example.com>\n"),
    Shape("the kernel's ordinary trailers", message="fix\n\nSigned-off-by: Claude Dupont <claude@example.fr>\nAcked-by: Devin <devin@example.com>\n"),
]

FIRST_NAMES = ["Devin", "Claude", "Jules", "Amp", "Cody", "Ada", "Aria", "Max", "Otto", "Jarvis", "Gemini", "Warp",
               "Cursor", "Replit", "Aider", "Codex", "Jean-Claude", "Claudia", "Devon", "Julie"]


@pytest.fixture(scope="module")
def rule() -> FreezeRule:
    """A rule naming @known-agents everywhere it can, as a policy validated with the shipped catalogue."""
    policy = ('mode = "enforce"\n[[freeze]]\nname = "agents"\npaths = ["ci/**"]\nauthors = ["@known-agents"]\n'
              'names = ["@known-agents"]\ntrailers = ["@known-agents"]\npushers = ["@known-agents"]\n'
              '[pushers]\nanonymous = "unrestricted"\n')
    return Policy.from_plain(validate_policy(policy.encode(), "test", load_catalogue())).rules[0]


def _signals(shape: Shape) -> Signals:
    found = trailers.found(shape.message.encode())
    return Signals(shape.author[0], shape.committer[0], tuple(f"{k}: {v}" for k, v in found),
                   tuple(trailers.coauthor_emails(found)))


def _evidence(rule: FreezeRule, shape: Shape) -> tuple[str, ...]:
    return rule.evidence(shape.author, shape.committer, shape.pusher, _signals(shape))


@pytest.mark.parametrize(("entry", "shape"), [(e, s) for e, shapes in SHAPES.items() for s in shapes],
                         ids=[f"{e}: {s.seen[:40]}" for e, shapes in SHAPES.items() for s in shapes])
def test_each_real_shape_is_restricted_and_the_evidence_names_its_entry(rule: FreezeRule, entry: str,
                                                                        shape: Shape) -> None:
    assert rule.restricted_identity(shape.author[1], shape.committer[1], shape.pusher, _signals(shape)) is not None
    why = _evidence(rule, shape)
    assert any(f"@known-agents ({entry})" in line for line in why), why


def test_every_entry_has_real_shapes_and_every_pattern_matches_one() -> None:
    """A pattern no real commit of its agent shows is a guess: each one is held to a shape."""
    cat = load_catalogue()
    assert {a.id for a in cat.agents} == set(SHAPES)
    for agent in cat.agents:
        shapes = SHAPES[agent.id]
        emails = [e for s in shapes for e in (s.author[1], s.committer[1], *_signals(s).coauthors)]
        names = [n for s in shapes for n in (s.author[0], s.committer[0])]
        lines = [t for s in shapes for t in _signals(s).trailers]
        pushers = [s.pusher for s in shapes if s.pusher]
        for key, values in (("emails", emails), ("names", names), ("trailers", lines), ("pushers", pushers)):
            for pattern in getattr(agent, key):
                assert any(IdentityGlob.compile(pattern).matches(v) for v in values), (agent.id, key, pattern)


@pytest.mark.parametrize("shape", HUMANS, ids=[h.seen for h in HUMANS])
def test_no_human_is_restricted_by_a_name_they_share_with_an_agent(rule: FreezeRule, shape: Shape) -> None:
    assert rule.restricted_identity(shape.author[1], shape.committer[1], shape.pusher, _signals(shape)) is None
    assert _evidence(rule, shape) == ()


def test_no_first_name_alone_matches_a_name_or_trailer_pattern() -> None:
    """Names: only distinctive ones (`* (aider)`, `[bot]` logins, `Devin AI`, `Cursor Agent`); trailers:
    values that name a tool by its email, or a key only a tool writes."""
    cat = load_catalogue()
    names = [IdentityGlob.compile(p) for p, _ in cat.patterns("names")]
    lines = [IdentityGlob.compile(p) for p, _ in cat.patterns("trailers")]
    for first in FIRST_NAMES:
        for full in (f"{first} Smith", f"{first}", f"{first} Dupont-Lefèvre"):
            assert not any(g.matches(full) for g in names), full
            for key in ("Co-authored-by", "Signed-off-by", "Reviewed-by", "Acked-by", "Reported-by"):
                line = f"{key}: {full} <{first.lower()}@example.com>"
                assert not any(g.matches(line) for g in lines), line


def test_named_sets_expand_with_their_origin() -> None:
    cat = load_catalogue()
    got = catalogue.expand("authors", ["x@y", "@known-agents"], cat)
    assert got[0] == ("x@y", "") and ("noreply@anthropic.com", "@known-agents (claude)") in got
    assert ("Assisted-by: *", "@known-agents (ai-assistance-trailers)") in catalogue.expand("trailers", ["@known-agents"], cat)
    assert ("copilot-swe-agent[bot]", "@known-agents (copilot)") in catalogue.expand("pushers", ["@known-agents"], cat)
    assert ("**/.claude/**", "@agent-config (claude-code)") in catalogue.expand("paths", ["ci/**", "@agent-config"], cat)
    assert catalogue.expand("paths", ["@scope/**"], cat) == [("@scope/**", "")]  # a path may start with '@'
    for key, values, cat_or_none in (("signers", ["@known-agents"], cat), ("authors", ["@other"], cat),
                                     ("authors", ["@agent-config"], cat), ("paths", ["@known-agents"], cat),
                                     ("authors", ["@known-agents"], None), ("paths", ["@agent-configs"], cat),
                                     ("paths", ["@Agent-Config"], cat), ("paths", ["@known-agent"], cat)):
        with pytest.raises(ValueError):
            catalogue.expand(key, values, cat_or_none)


@pytest.mark.parametrize("text,said", [
    ('version = "1"\n', "agents.toml: agent: agent is required here"),
    ('version = "1"\n[[agent]]\nid = "x"\nname = "x"\nchecked = "2026-01-01"\nsources = ["s"]\n',
     "agents.toml:2: agent[0]: lists no emails, names, trailers or pushers"),
    ('version = "1"\n[[agent]]\nid = "x"\nname = "x"\nsources = ["s"]\nemails = ["a"]\n',
     "agents.toml:2: agent[0].checked: checked is required here"),
    ('version = "1"\n[[agent]]\nid = "x"\nname = "x"\nchecked = 2026-01-01\nsources = ["s"]\nemails = [3]\n',
     "agents.toml:7: agent[0].emails[0]: must be a string (in quotes), not an integer"),
    ('version = "1"\n[[agent]]\nid = "x"\nname = "x"\nchecked = 2026-01-01\nsources = ["s"]\nemails = ["a"]\n'
     '[[config]]\nid = "y"\ntool = "t"\nchecked = 2026-01-01\nsources = ["s"]\npath = ["AGENTS.md"]\n',
     "agents.toml:13: config[0].path: unknown key: did you mean paths?"),
    ('version = "1"\n[[agent]]\nid = "x"\nname = "x"\nchecked = 2026-01-01\nsources = ["s"]\nemails = ["a"]\n'
     'vendor = "Anthropic"\n', "agents.toml:8: agent[0].vendor:"),
])
def test_a_malformed_catalogue_is_refused_with_the_line_and_location(text: str, said: str) -> None:
    """The catalogue is validated like the policy (pydantic, configerrors): file, line, location, fix."""
    with pytest.raises(GateError) as err:
        parse_catalogue(text.encode(), "agents.toml")
    assert err.value.code == "GATE-CONFIG-POLICY" and said in err.value.detail, err.value.detail


# --- @agent-config ----------------------------------------------------------------------------

#: Files the vendors' docs name, each frozen by @agent-config; and files it leaves alone.
CONFIG_FILES = ["AGENTS.md", "src/lib/AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "docs/CLAUDE.md",
                "CLAUDE.local.md", ".claude/settings.json", ".claude/settings.local.json", ".claude/commands/x.md",
                ".claude/hooks/pre.sh", ".mcp.json", ".cursor/rules/style.mdc", ".cursor/mcp.json", ".cursorrules",
                "web/.cursor/rules/x.mdc", ".github/copilot-instructions.md", ".github/instructions/py.instructions.md",
                ".github/prompts/p.prompt.md", ".github/agents/reviewer.agent.md", ".github/workflows/copilot-setup-steps.yml",
                ".vscode/mcp.json", "GEMINI.md", ".gemini/settings.json", ".codex/config.toml", "svc/.codex/hooks.json",
                ".windsurfrules", ".windsurf/rules/r.md", ".windsurf/workflows/deploy.md", ".aider.conf.yml",
                ".amp/settings.json", ".agents/skills/x/SKILL.md", ".openhands/setup.sh", ".openhands/microagents/repo.md",
                "Claude.md", ".Claude/settings.json", ".vscode/settings.json", ".vscode/tasks.json"]
NOT_CONFIG = ["README.md", "docs/agents-guide.md", "src/claude.py", ".github/workflows/ci.yml", ".vscode/launch.json",
              "AGENTS.md.bak", "my.claude/x", "src/cursor.ts"]


def test_agent_config_freezes_the_files_agents_read_and_nothing_else() -> None:
    globs = [PathGlob.compile(p) for p, _ in load_catalogue().config_paths()]
    for path in CONFIG_FILES:
        assert any(g.matches(normalize_path(path)) for g in globs), path
    for path in NOT_CONFIG:
        assert not any(g.matches(normalize_path(path)) for g in globs), path


def test_a_rules_path_globs_asked_as_one_pattern_answer_as_each_asked_alone() -> None:
    """`FreezeRule.matches_path` asks the rule's globs as one alternation: the same answer as
    asking each glob (`PathGlob.matches`), on paths each glob matches, misses and nearly matches."""
    from gatecore.adapters.config import policy_from_bytes

    rule = policy_from_bytes(b'[[freeze]]\npaths = ["@agent-config", "ci/**", "gate.toml", "a/*/b", "**/x?.md", '
                             b'"d/**/e"]\nauthors = ["*"]\n', "test").rules[0]
    assert len(rule.paths) > 40
    paths = [*CONFIG_FILES, *NOT_CONFIG, "ci", "ci/x", "CI./x", "gate.toml", "gate.toml/x", "a/q/b", "a/q/c", "a/b",
             "x1.md", "z/x1.md", "z/x12.md", "d/e", "d/q/r/e", "d/q/r/f", "", ".claude", "w/.claude/k"]
    for path in paths:
        norm = normalize_path(path)
        assert rule.matches_path(norm) == any(g.matches(norm) for g in rule.paths), path


# --- the catalogue as shipped, documented and listed ----------------------------------------


def test_the_shipped_catalogue_is_valid_sourced_and_documented() -> None:
    cat = load_catalogue()
    vendors = {v.id for v in load_vendor_table().vendors}
    assert cat.version and len(cat.agents) >= 16 and cat.config
    doc = (ROOT / "docs" / "agents.md").read_text()
    assert cat.version in doc
    for a in cat.agents:
        assert a.sources and a.checked, a.id
        assert f"`{a.id}`" in doc, a.id
        if a.vendor is not None:
            assert f"(`{a.id}`, vendor `{a.vendor}`)" in doc, a.id
            assert a.vendor in vendors, a.id  # a vendor the packaged vendor table knows
        for p in (*a.emails, *a.names, *a.trailers, *a.pushers):
            IdentityGlob.compile(p)
            assert p.isascii(), p  # Python's codecs and iconv agree on ASCII (docs/agents.md)
            assert f"`{p}`" in doc, p
    for c in cat.config:
        assert c.sources and c.checked, c.id
        for p in c.paths:
            PathGlob.compile(p)
            assert f"`{p}`" in doc, p


def test_agents_list_json_is_the_catalogue() -> None:
    out = gate("agents", "list", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == load_catalogue().as_plain()
