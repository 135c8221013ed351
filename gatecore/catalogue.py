"""The built-in catalogue of AI agents, and the named sets a policy expands from it (pure).

Every admin would otherwise keep their own list of agent emails (`copilot-swe-agent[bot]`,
`claude[bot]`, `cursoragent@cursor.com`, the numeric `NNN+name[bot]@users.noreply.github.com`
forms, ...) and the trailers agents leave (`Co-authored-by: Claude <noreply@anthropic.com>`,
`Assisted-by: AGENT:MODEL`, `Made-with: Cursor`). The package ships one such list in
`gatecore/data/agents.toml`, versioned; a rule names it as the set `@known-agents` in its
`authors`, `names` or `trailers`, and validating the policy replaces the set by the
catalogue's patterns for that key (so the hook never reads the catalogue itself; the
validated form records the catalogue's version, and the audit line carries it).

Everything here is self-asserted by whoever wrote the commit: it only ever adds
restrictions. docs/agents.md lists every entry with its source.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The one named set there is.
KNOWN_AGENTS = "@known-agents"
#: Rule keys a set may appear in, and the catalogue field each takes its patterns from.
SET_KEYS = {"authors": "emails", "names": "names", "trailers": "trailers"}
MAX_CATALOGUE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Agent:
    name: str
    source: str
    emails: tuple[str, ...]
    names: tuple[str, ...]
    trailers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Catalogue:
    version: str
    agents: tuple[Agent, ...]

    def patterns(self, field: str) -> list[str]:
        """Every agent's patterns for `field` (emails, names or trailers), in order, once each."""
        out: dict[str, None] = {}
        for a in self.agents:
            for p in getattr(a, field):
                out.setdefault(p, None)
        return list(out)


def parse(data: bytes) -> Catalogue:
    """The catalogue from its TOML bytes. ValueError with a one-line reason if malformed."""
    if len(data) > MAX_CATALOGUE_BYTES:
        raise ValueError("the agent catalogue is too large")
    import tomllib  # (here: a hook that reads the catalogue's bytes only never imports it)

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"the agent catalogue is not valid TOML: {exc}") from None
    version = doc.get("version")
    entries = doc.get("agent")
    if not isinstance(version, str) or not version or not isinstance(entries, list) or not entries:
        raise ValueError("the agent catalogue needs a version and at least one [[agent]]")
    agents = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or set(e) - {"name", "source", "emails", "names", "trailers"}:
            raise ValueError(f"agent {i}: unknown keys")
        lists = {}
        for key in ("emails", "names", "trailers"):
            value = e.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ValueError(f"agent {i}: {key} must be a list of non-empty strings")
            lists[key] = tuple(value)
        name, source = e.get("name"), e.get("source")
        if not isinstance(name, str) or not name or not isinstance(source, str) or not source:
            raise ValueError(f"agent {i}: needs a name and a source")
        agents.append(Agent(name, source, lists["emails"], lists["names"], lists["trailers"]))
    return Catalogue(version, tuple(agents))


def expand(key: str, values: list[str], catalogue: Catalogue | None) -> list[str]:
    """A rule's patterns for `key` with every named set replaced by the catalogue's patterns.

    ValueError for an unknown set, a set in a key that takes none, or a set without a catalogue.
    """
    out: list[str] = []
    for v in values:
        if not v.startswith("@"):
            out.append(v)
            continue
        if v != KNOWN_AGENTS:
            raise ValueError(f"unknown set {v!r} (the one set is {KNOWN_AGENTS!r})")
        if key not in SET_KEYS:
            raise ValueError(f"{key} takes no named sets")
        if catalogue is None:
            raise ValueError(f"{v} needs the agent catalogue, which is not available")
        out += catalogue.patterns(SET_KEYS[key])
    return list(dict.fromkeys(out))
