"""The built-in catalogue of AI agents, and the named sets a policy expands from it (pure).

Every admin would otherwise keep their own list of what agents write into commits and which
accounts they push from. The package ships one such list in `gatecore/data/agents.toml`,
versioned, each entry with its public sources and the date they were checked. Two named sets
come from it:

* `@known-agents`, in a rule's `authors` (emails: author, committer, `Co-authored-by`),
  `names` (author and committer names), `trailers` (whole trailer lines) and `pushers`
  (the platform's bot accounts agents push as);
* `@agent-config`, in a rule's `paths`: where agents keep their instructions and tool
  permissions (`AGENTS.md`, `.claude/**`, `.mcp.json`, `.cursor/**`, ...), files that can
  make an agent run code.

The catalogue is validated where pydantic is already loaded (`configschema.parse_catalogue`).
Validating the policy replaces a set by the catalogue's patterns for that key, each
remembering where it came from (`@known-agents (claude)`), so that a rejection and the audit
line can say why a commit was restricted; the hook never reads the catalogue itself. The
validated form records the catalogue's version, and the audit line carries it.

The catalogue matches what agents write, not what people are called: emails, bot logins and
trailer values that name a tool; a name only where it is distinctive (`* (aider)`, a
`[bot]` login), never a bare first name (people are called Devin, Claude and Jules). Every
entry is self-asserted by whoever wrote the commit, except `pushers`, which the platform
authenticates: the catalogue only ever adds restrictions. docs/agents.md lists every entry.
"""

from __future__ import annotations

from ..valueclass import valueclass

TYPE_CHECKING = False  # (not typing's: an agent's check reads the catalogue, and nothing of typing)
if TYPE_CHECKING:
    from typing import Any

KNOWN_AGENTS = "@known-agents"
AGENT_CONFIG = "@agent-config"
#: Rule key -> the catalogue field `@known-agents` takes its patterns from there.
SET_KEYS = {"authors": "emails", "names": "names", "trailers": "trailers", "pushers": "pushers"}
#: The rule key `@agent-config` is a set of.
CONFIG_KEY = "paths"


@valueclass(frozen=True, slots=True)
class Agent:
    id: str
    name: str
    sources: tuple[str, ...]
    checked: str  # YYYY-MM-DD: when the sources were last checked against these patterns
    emails: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    trailers: tuple[str, ...] = ()
    pushers: tuple[str, ...] = ()
    #: whose models the tool runs, when it runs only one vendor's (a vendor id of the vendor table):
    #: what a commit showing the agent says of the change's author ([review] independent = "vendor")
    vendor: str | None = None

    def as_plain(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "emails": list(self.emails), "names": list(self.names),
                "trailers": list(self.trailers), "pushers": list(self.pushers), "vendor": self.vendor,
                "sources": list(self.sources), "checked": self.checked}


@valueclass(frozen=True, slots=True)
class ConfigPaths:
    """Where one tool (or a convention several share) keeps agent instructions and permissions."""

    id: str
    tool: str
    sources: tuple[str, ...]
    checked: str
    paths: tuple[str, ...]

    def as_plain(self) -> dict[str, Any]:
        return {"id": self.id, "tool": self.tool, "paths": list(self.paths), "sources": list(self.sources),
                "checked": self.checked}


@valueclass(frozen=True, slots=True)
class Catalogue:
    version: str
    agents: tuple[Agent, ...]
    config: tuple[ConfigPaths, ...] = ()

    def patterns(self, field: str) -> list[tuple[str, str]]:
        """(pattern, agent id) of every agent's patterns for `field` (emails, names, trailers or
        pushers), in order, each pattern once (with the first agent that lists it)."""
        out: dict[str, str] = {}
        for a in self.agents:
            for p in getattr(a, field):
                out.setdefault(p, a.id)
        return list(out.items())

    def config_paths(self) -> list[tuple[str, str]]:
        """(path pattern, entry id) of every `@agent-config` path, in order, each once."""
        out: dict[str, str] = {}
        for c in self.config:
            for p in c.paths:
                out.setdefault(p, c.id)
        return list(out.items())

    def as_plain(self) -> dict[str, Any]:
        """The catalogue as JSON-ready values (`gate agents list --json`)."""
        return {"version": self.version, "sets": {KNOWN_AGENTS: sorted(SET_KEYS), AGENT_CONFIG: [CONFIG_KEY]},
                "agents": [a.as_plain() for a in self.agents], "agent_config": [c.as_plain() for c in self.config]}


def sample(pattern: str) -> str:
    """A value the identity glob `pattern` matches: each `*` as `agent`, each `?` as `x`."""
    return pattern.replace("*", "agent").replace("?", "x")


def origin(set_name: str, entry: str) -> str:
    """How a pattern taken from a named set is shown: `@known-agents (claude)`."""
    return f"{set_name} ({entry})"


def expand(key: str, values: list[str], catalogue: Catalogue | None) -> list[tuple[str, str]]:
    """A rule's patterns for `key` with every named set replaced by the catalogue's patterns:
    (pattern, origin) pairs, origin "" for a pattern the policy wrote itself, else
    `@known-agents (ENTRY)`; each pattern once, the first time it appears. In `paths` only
    the two sets' names are sets (a path may start with '@').

    ValueError for an unknown set, a set in a key that takes none, or a set without a catalogue.
    """
    out: dict[str, str] = {}
    for v in values:
        if key == CONFIG_KEY and v.startswith("@") and v not in (KNOWN_AGENTS, AGENT_CONFIG) and "/" not in v:
            import difflib  # (only to name the set a mistyped one resembles)

            near = difflib.get_close_matches(v, (KNOWN_AGENTS, AGENT_CONFIG), n=1, cutoff=0.8)
            if near:  # `@agent-configs` would freeze one root file of that name, silently
                raise ValueError(f"unknown set {v!r}: did you mean {near[0]!r}?")
        if not v.startswith("@") or (key == CONFIG_KEY and v not in (KNOWN_AGENTS, AGENT_CONFIG)):
            out.setdefault(v, "")  # a path may start with '@' (`@scope/**`): only the set's name is a set
            continue
        if v == KNOWN_AGENTS:
            if key not in SET_KEYS:
                raise ValueError(f"{key} takes no {v} (it names {', '.join(SET_KEYS)})")
        elif v == AGENT_CONFIG:
            if key != CONFIG_KEY:
                raise ValueError(f"{v} is a set of paths, not of {key}")
        else:
            raise ValueError(f"unknown set {v!r} (the sets are {KNOWN_AGENTS!r} and {AGENT_CONFIG!r})")
        if catalogue is None:
            raise ValueError(f"{v} needs the agent catalogue, which is not available")
        pairs = catalogue.config_paths() if v == AGENT_CONFIG else catalogue.patterns(SET_KEYS[key])
        for pattern, entry in pairs:
            out.setdefault(pattern, origin(v, entry))
    return list(out.items())
