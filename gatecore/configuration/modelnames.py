"""Which model a model id names, read by the naming schemes of its providers (pure).

Reviewer independence (`gatecore.checks.independence`, docs/receipts.md) asks whether the model that
reviewed a change is the model that wrote it. One model has many ids: `claude-sonnet-4-5-20250929`
on Anthropic's API, `us.anthropic.claude-sonnet-4-5-20250929-v1:0` on Bedrock,
`claude-sonnet-4-5@20250929` on Vertex, `anthropic/claude-sonnet-4.5` on OpenRouter,
`claude-4.5-sonnet` in Cursor, `sonnet` in Claude Code. The table `gatecore/data/models.toml`
(validated by `configschema.parse_model_names`, carried in the validated policy) says how each
provider writes them; `ModelNames.read` takes an id apart by it:

1. the policy's `[review.models]`: an id it names reads as the model it says (an Azure
   deployment name, which only its owner knows), or as a model of its own;
2. the host's wrapper: a Bedrock ARN, Claude Code's `[1m]`, a `:variant` (OpenRouter's `:free`,
   Bedrock's `:0`), an `@version` (Vertex), `namespace/` paths (OpenRouter, Hugging Face,
   LiteLLM, Vertex's `publishers/<vendor>/models/`), Bedrock's `[region.]provider.` prefix and
   `-v1` suffix, Bedrock's own names (`deepseek.r1` is DeepSeek-R1), whole-id aliases (`sonnet`);
3. the vendor's name: the family word it starts with (`claude`, fused or not: `llama3`, `qwen2.5`),
   then every other word: a modifier the gate ignores (`latest`, `thinking`, `high`, `maas`), a
   snapshot date or number, a version (`4.5`, `v3.1`, `r1`, `4o`), a size (`70b`, `a22b`) or one
   of the family's words (`sonnet`, `mini`, `coder`).

An id with anything no entry explains is *unplaced* (`Unplaced`, with the part and the reason):
it cannot be told apart from any other model, so under `independent = "model"` or `"vendor"` it
is refused, never taken for a model of its own. Two placed ids name one model when their family
and words are equal (in any order: `claude-4.5-sonnet` is `claude-sonnet-4-5`) and their versions
and sizes are equal where both give them (a name without a version, `claude-sonnet`, is every
version of its line). Every rule only merges: two models may read as one (a preview and its
release), refused the safe way; an id with a word the table does not know is refused, never read
as another model. What the table cannot know is two different words for one model: those read as
two models until the family lists the word as ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..valueclass import field, valueclass

#: The most characters an id may have to be read at all.
MAX_ID = 200
_CHARS = re.compile(r"[a-z0-9._:@/\[\] -]+")
_ARN = re.compile(r"arn:aws[a-z-]*:bedrock:[a-z0-9-]*:\d*:(foundation-model|inference-profile)/(.+)")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_FUSED = re.compile(r"([a-z]+)(\d.*)")
#: Sizes in open-weight names: 70b, 1.5b, a22b (active), e4b (effective), 16e (experts), 8x7b, 128k, 1t.
_SIZE = re.compile(r"(?:a|e)?\d+(?:\.\d+)?[bkmt]|\d+e|\d+x\d+b")


def pattern(text: str) -> re.Pattern[str]:
    """A table pattern as a regex: a lone `#` is a number (digits, dots between: 4, 4.5), a run of
    two or more (`####`) exactly that many digits, everything else literal."""
    out = []
    for run in re.findall(r"#+|[^#]+", text):
        out.append((r"\d+(?:\.\d+)*" if len(run) == 1 else rf"\d{{{len(run)}}}") if run[0] == "#" else re.escape(run))
    return re.compile("".join(out))


def _number(token: str) -> str:
    """A version number's one form: no leading zeros, no trailing `.0` (`4.0` is `4`, `01` is `1`)."""
    parts = [str(int(p)) for p in token.split(".")]
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


@valueclass(frozen=True, slots=True)
class ModelName:
    """A placed id: the model it names, and how it was read."""

    id: str  # as given
    canonical: str  # the model's one spelling (family, then its parts), shown and matched by vendor globs
    family: str  # "" for a model of its own (the policy's [review.models] maps the id to itself)
    words: tuple[str, ...] = ()  # sorted
    versions: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    how: tuple[str, ...] = ()  # the schemes and family that placed it

    def same_model(self, other: ModelName) -> bool:
        if not self.family or not other.family:
            return self.canonical == other.canonical
        return (self.family == other.family and self.words == other.words
                and (not self.versions or not other.versions or self.versions == other.versions)
                and (set(self.sizes) <= set(other.sizes) or set(other.sizes) <= set(self.sizes)))


@valueclass(frozen=True, slots=True)
class Unplaced:
    """An id no scheme explains: `part` is what was not understood, `reason` why."""

    id: str
    part: str
    reason: str

    @property
    def detail(self) -> str:
        return f"{self.reason} (here: {self.part})" if self.part else self.reason


@valueclass(frozen=True, slots=True)
class _Family:
    id: str
    words: frozenset[str]
    marks: tuple[re.Pattern[str], ...]
    drop: tuple[re.Pattern[str], ...]
    prefixes: frozenset[str]
    sizes: bool
    needs: str  # "", "word", "version" or "either"
    words_first: bool

    def version(self, token: str) -> bool:
        return _NUMBER.fullmatch(token) is not None or any(p.fullmatch(token) for p in self.marks)


def _strs(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("expected a list of strings")
    return value


def _map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError("expected a table of strings")
    return value


Owned = tuple[re.Pattern[str], str]  # a table pattern and the scheme that names it


def _match(patterns: tuple[Owned, ...], text: str) -> str | None:
    """The scheme whose pattern `text` is, or None."""
    return next((owner for p, owner in patterns if p.fullmatch(text)), None)


@valueclass(frozen=True, slots=True)
class ModelNames:
    """The model-id table (`gatecore/data/models.toml`) and the policy's `[review.models]`, ready to
    read ids. Built from plain values (`from_plain`): the validated policy carries them."""

    version: str
    families: Mapping[str, _Family]
    also: Mapping[str, str]  # another first word -> family
    owners: Mapping[str, str]  # "kind:item" -> the scheme that names it
    namespaces: frozenset[str]
    deployments: frozenset[str]
    renames: Mapping[str, str]
    aliases: Mapping[str, str]
    brackets: frozenset[str]
    variants: tuple[Owned, ...]
    versions: tuple[Owned, ...]
    suffixes: tuple[Owned, ...]
    iterated: tuple[Owned, ...]
    modifiers: frozenset[str]
    dates: tuple[tuple[re.Pattern[str], ...], ...]
    bedrock: re.Pattern[str] | None
    policy: Mapping[str, str] = field(default_factory=dict)  # [review.models]: id -> model id (itself: own)

    @classmethod
    def from_plain(cls, table: Mapping[str, Any], policy: Mapping[str, str] | None = None) -> ModelNames:
        """From the validated table's plain form (`configschema.ModelNamesFile`'s dump, every key
        present) and the policy's `[review.models]`. Raises KeyError or TypeError for a form that
        is not such a dump; checks no bound again."""
        owners: dict[str, str] = {}
        sets: dict[str, set[str]] = {k: set() for k in ("regions", "providers", "namespaces", "deployments",
                                                        "brackets", "modifiers")}
        owned: dict[str, list[Owned]] = {k: [] for k in ("variants", "versions", "suffixes", "iterated")}
        dates: list[str] = []
        maps: dict[str, dict[str, str]] = {"renames": {}, "aliases": {}}
        for scheme in table["schemes"]:
            sid = str(scheme["id"])
            for key, bucket in sets.items():
                for item in _strs(scheme[key]):
                    bucket.add(item)
                    owners.setdefault(f"{key}:{item}", sid)
            for key, seq in owned.items():
                seq += [(pattern(item), sid) for item in _strs(scheme[key])]
            dates += _strs(scheme["dates"])
            for key, target in maps.items():
                for name, value in _map(scheme[key]).items():
                    target[name] = value
                    owners.setdefault(f"{key}:{name}", sid)
        families: dict[str, _Family] = {}
        also: dict[str, str] = {}
        for f in table["families"]:
            fid = str(f["id"])
            families[fid] = _Family(fid, frozenset(_strs(f["words"])), tuple(pattern(m) for m in _strs(f["marks"])),
                                    tuple(pattern(m) for m in _strs(f["drop"])), frozenset(_strs(f["prefixes"])),
                                    bool(f["sizes"]), str(f["needs"]), f["order"] == "words-first")
            also.update(dict.fromkeys(_strs(f["also"]), fid))
        bedrock = None
        if sets["providers"]:
            def alternatives(items: set[str]) -> str:
                return "|".join(re.escape(p) for p in sorted(items, key=len, reverse=True)) or "(?!)"

            bedrock = re.compile(rf"(?:(?P<region>{alternatives(sets['regions'])})\.)?"
                                 rf"(?P<provider>{alternatives(sets['providers'])})\.(?P<rest>.+)")
        return cls(
            version=str(table["version"]), families=families, also=also, owners=owners,
            namespaces=frozenset(sets["namespaces"]), deployments=frozenset(sets["deployments"]),
            renames=maps["renames"], aliases=maps["aliases"], brackets=frozenset(sets["brackets"]),
            variants=tuple(owned["variants"]), versions=tuple(owned["versions"]), suffixes=tuple(owned["suffixes"]),
            iterated=tuple(owned["iterated"]),
            modifiers=frozenset(sets["modifiers"]),
            dates=tuple(tuple(pattern(part) for part in d.split("-")) for d in dates), bedrock=bedrock,
            policy={k.strip().casefold(): v for k, v in (policy or {}).items()})

    # --- reading ----------------------------------------------------------------------------

    def read(self, model_id: str) -> ModelName | Unplaced:
        """The model `model_id` names, or why no scheme places it."""
        text = model_id.strip().casefold()
        target = self.policy.get(text)
        if target is None:
            return self._read(model_id, text)
        target = target.strip().casefold()
        if target == text or self.policy.get(target, "").strip().casefold() == target:
            return ModelName(model_id, target, "", how=("the policy's [review.models] (a model of its own)",))
        found = self._read(model_id, target)
        if isinstance(found, Unplaced):
            return Unplaced(model_id, target, f"the policy's [review.models] names it {target!r}, which no scheme "
                                              f"places either: {found.detail}")
        return ModelName(model_id, found.canonical, found.family, found.words, found.versions, found.sizes,
                         ("the policy's [review.models]", *found.how))

    def _read(self, given: str, text: str) -> ModelName | Unplaced:
        """The host's wrapper taken off (module docstring, step 2), then the vendor's name read."""
        if not text or len(text) > MAX_ID or _CHARS.fullmatch(text) is None:
            return Unplaced(given, "", "empty, too long, or holding characters no model id has")
        how: list[str] = []
        unwrapped = self._suffixes(given, text, how)
        if isinstance(unwrapped, Unplaced):
            return unwrapped
        text, variant, at = unwrapped
        return self._spaces(given, text, variant, at, how)

    def _suffixes(self, given: str, text: str, how: list[str]) -> tuple[str, str, str] | Unplaced:
        """An ARN, a bracketed suffix, `:variant`s and an `@version` taken off the end (each named
        in `how`): the rest, the variants and the `@`, or why no scheme names one of them."""
        if text.startswith("arn:"):
            arn = _ARN.fullmatch(text)
            if arn is None:
                return Unplaced(given, text, "an ARN that names no Bedrock foundation model or system inference "
                                             "profile (an application inference profile is named by its owner)")
            text = arn.group(2)
        if text.endswith("]"):
            text, _, inner = text[:-1].partition("[")
            if inner not in self.brackets:
                return Unplaced(given, f"[{inner}]", "a bracketed suffix no scheme names")
            how.append(self.owners[f"brackets:{inner}"])
        text, _, variant = text.partition(":")
        for part in variant.split(":") if variant else ():
            owner = _match(self.variants, part)
            if owner is None:
                return Unplaced(given, f":{part}", "a variant no scheme names")
            how.append(owner)
        text, at, version = text.partition("@")
        if at:
            owner = _match(self.versions, version)
            if owner is None:
                return Unplaced(given, f"@{version}", "a version no scheme names")
            how.append(owner)
        return text, variant, at

    def _spaces(self, given: str, text: str, variant: str, at: str, how: list[str]) -> ModelName | Unplaced:
        """Namespaces (`vendor/`, a Vertex resource path) and a Bedrock provider prefix taken off the
        front, host suffixes, renames and aliases applied; then the vendor's name read."""
        *spaces, core = text.split("/")
        if spaces[:1] == ["projects"] and len(spaces) >= 4 and spaces[2] == "locations":
            spaces = spaces[4:]  # a Vertex resource name: projects/P/locations/L/publishers/V/models/M
        if not core or any(not s for s in spaces):
            return Unplaced(given, text, "an empty path segment")
        for space in spaces:
            if space in self.deployments:
                return Unplaced(given, f"{space}/", "a deployment, named by its owner: only the policy's "
                                                    "[review.models] can say which model it serves")
            if space not in self.namespaces:
                return Unplaced(given, f"{space}/", "a namespace no scheme names")
            how.append(self.owners[f"namespaces:{space}"])
        bedrock = self.bedrock.fullmatch(core) if self.bedrock is not None else None
        if bedrock is not None:
            how.append(self.owners[f"providers:{bedrock.group('provider')}"])
            core = bedrock.group("rest")
        elif re.match(r"[a-z][a-z-]*\.[a-z]", core):
            return Unplaced(given, core.split(".", 1)[0] + ".", "a dotted provider prefix no scheme names")
        if bedrock is not None or at:
            head, dash, tail = core.rpartition("-")
            if dash and head and (_match(self.suffixes, tail) is not None
                                  or (bedrock is not None and variant and _match(self.iterated, tail) is not None)):
                core = head
        if bedrock is not None and f"{bedrock.group('provider')}.{core}" in self.renames:
            core = self.renames[f"{bedrock.group('provider')}.{core}"]
        if core in self.aliases:
            how.append(self.owners[f"aliases:{core}"])
            core = self.aliases[core]
        return self._name(given, core, list(dict.fromkeys(how)))

    def _name(self, given: str, core: str, how: list[str]) -> ModelName | Unplaced:
        """The vendor's name (module docstring, step 3)."""
        tokens = [t for piece in re.split(r"[-_ ]+", core) for t in re.split(r"(?<!\d)\.|\.(?!\d)", piece) if t]
        found = self._family(tokens) if tokens else None
        if found is None:
            return Unplaced(given, tokens[0] if tokens else core, "a word no model family's names begin with")
        f, rest = found
        rest = [t for t in rest if t in f.words or not (t in self.modifiers or any(p.fullmatch(t) for p in f.drop))]
        versions: list[str] = []
        sizes: list[str] = []
        words: list[str] = []
        last = ""
        for token in self._undated(rest):
            if token in f.words:
                words.append(token)
                last = "word"
            elif last == "version" and _NUMBER.fullmatch(token):
                versions[-1] += "." + token  # 3 5 is 3.5, v3 1 is v3.1
            elif f.version(token):
                versions.append(token)
                last = "version"
            elif f.sizes and _SIZE.fullmatch(token):
                sizes.append(token)
                last = "size"
            else:
                return Unplaced(given, token, f"a word no {f.id} model's name has")
        versions = [_version(v) for v in versions]
        if {"word": not words, "version": not versions,
                "either": not (words or versions or sizes)}.get(f.needs, False):
            what = {"word": "model line", "version": "version"}.get(f.needs, "model line or version")
            return Unplaced(given, core, f"a {f.id} name without its {what} names no one model")
        ordered = sorted(words)
        parts = [f.id, *(ordered + versions if f.words_first else versions + ordered), *sizes]
        return ModelName(given, "-".join(parts).replace(".", "-"), f.id, tuple(ordered), tuple(versions),
                         tuple(sizes), (*how, f.id))

    def _family(self, tokens: list[str]) -> tuple[_Family, list[str]] | None:
        """The family the name's first word (after a prefix such as `meta`) says, and the other words."""
        first, rest = tokens[0], tokens[1:]
        if rest and first not in self.families and first not in self.also:
            then = self._first(rest[0])
            if then is not None and first in then[0].prefixes:
                first, rest = rest[0], rest[1:]
        found = self._first(first)
        return None if found is None else (found[0], [*found[1], *rest])

    def _first(self, token: str) -> tuple[_Family, list[str]] | None:
        """A first word's family: itself, another word for it (`chatgpt`), or fused with its version
        (`llama3`, `qwen2.5`)."""
        fid = self.also.get(token, token)
        if fid in self.families:
            return self.families[fid], []
        fused = _FUSED.fullmatch(token)
        if fused is None:
            return None
        fid = self.also.get(fused.group(1), fused.group(1))
        return (self.families[fid], [fused.group(2)]) if fid in self.families else None

    def _undated(self, tokens: list[str]) -> list[str]:
        """Without snapshot dates: a run of numbers at the end (2024-08-06, 09-2025), or one number
        anywhere (20250929, 0528, 001)."""
        runs = [d for d in self.dates if len(d) > 1]
        singles = [d[0] for d in self.dates if len(d) == 1]
        changed = True
        while changed:
            changed = False
            for run in runs:
                tail = tokens[-len(run):]
                if len(tail) == len(run) and all(t.isdigit() and p.fullmatch(t)
                                                 for p, t in zip(run, tail, strict=True)):
                    tokens, changed = tokens[:-len(run)], True
        return [t for t in tokens if not (t.isdigit() and any(p.fullmatch(t) for p in singles))]


def _version(token: str) -> str:
    """A version's one form: its numbers without leading zeros or a trailing `.0` (`4.0` is `4`,
    `v3.1` stays, `01` is `1`)."""
    m = re.fullmatch(r"(\D*)(\d+(?:\.\d+)*)(\D*)", token)
    return m.group(1) + _number(m.group(2)) + m.group(3) if m else token


def reading(result: ModelName | Unplaced) -> str:
    """How `gate attempt show` and refusals say what an id reads as."""
    if isinstance(result, Unplaced):
        return f"placed by no naming scheme: {result.detail}"
    return f"read as {result.canonical}"
