"""The policy as plain values, and the pure matching it needs (no pydantic, no git).

`gatecore.configuration.configschema` validates a TOML policy with pydantic and hands its plain dump to
`Policy.from_plain`; the pre-receive hook reads that dump from a cache so that pydantic
stays off its start-up path. Both roads end here, in one constructor, which compiles the
globs and checks no bound again: the model is the one definition of keys, bounds and
defaults, and the allowed values of each setting are the `Literal` types below, which the
model uses too.

Glob forms (documented in docs/policy.md):

* paths: `*` and `?` match within one path segment, `**` matches any number of whole
  segments. A pattern matches a path when it matches the path or one of its leading
  directories (`ci` freezes everything under `ci/`). Matching is done on a normalised
  form of both sides - code points HFS+ ignores dropped, NFC, case-folded, trailing
  dots and spaces of each segment dropped - so `CI/Deploy.yml` and `ci/deploy.yml.` are frozen along with
  `ci/deploy.yml` (they are the same file on macOS and Windows checkouts).
* refs: the same segment rules, matched exactly and case-sensitively, no ancestors.
* identities (emails, pusher accounts): shell-style globs (`*` matches anything),
  case-insensitive.

The anonymous pusher (`ANONYMOUS`: a push over a transport that authenticated nobody, such
as `git daemon` or smart HTTP without `REMOTE_USER`) is restricted by default
(`[pushers] anonymous = "restricted"`): every rule that restricts anyone restricts it, it is a
restricted pusher for `deny-restricted` ref rules on every ref, and it is never trusted nor an
approver, whatever the policy says.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..valueclass import choices, valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Any, Literal

    from .modelnames import ModelNames
else:
    from ..valueclass import Literal  # (at run time each `Literal[...]` below is the tuple of its values)

MAX_POLICY_BYTES = 1 << 20
#: The allowed values of each setting, defined once: `configschema.PolicyModel` validates with them
#: (it makes `typing`'s `Literal` of each: `configschema.literal`).
Mode = Literal["enforce", "evaluate"]
RefAction = Literal["allow", "deny-restricted", "deny"]  # refs.delete, refs.force
ReplaceAction = Literal["trusted", "allow", "deny"]  # refs.replace
ModeAction = Literal["refuse-frozen", "refuse"]  # objects.noncanonical_modes
AnonymousAction = Literal["restricted", "unrestricted"]  # pushers.anonymous
Independence = Literal["off", "model", "vendor"]  # review.independent (gatecore.checks.independence)
ModelRun = Literal["any", "runner"]  # review.model_run: may a receipt's answer come from a file
#: The pusher of a push no transport authenticated (gatecore.adapters.environment).
ANONYMOUS = "anonymous"


def one_of(value: Any, allowed: Any, where: str) -> Any:
    """`value` if it is one of the `Literal` type's values (a validated form always is)."""
    if not isinstance(value, str) or value not in choices(allowed):
        raise ValueError(f"{where}: {value!r}")
    return value


def is_anonymous(pusher: str | None) -> bool:
    """The anonymous pusher (an account literally named so, in any case, is taken for it: fail closed)."""
    return pusher is not None and pusher.strip().casefold() == ANONYMOUS


#: Code points HFS+ ignores in names (as git's is_hfs_dotgit does): dropped before matching.
_HFS_IGNORED = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070),
                              0xFEFF])


def normalize_path(path: str) -> str:
    """The form frozen-path matching compares: HFS+-ignored code points dropped, NFC,
    case-folded, segment tails (dots, spaces) trimmed."""
    if path.isascii():
        text = path.casefold()  # (NFC and the HFS-ignored code points leave ASCII as it is)
    else:
        import unicodedata  # (not on a hook's start-up path unless a name needs it)

        text = unicodedata.normalize("NFC", path.translate(_HFS_IGNORED)).casefold()
    return "/".join(seg.rstrip(" .") or seg for seg in text.split("/"))


def _segment_regex(seg: str) -> str:
    out = []
    for ch in seg:
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(ch))
    return "".join(out)


def _glob_regex(segments: Sequence[str]) -> str:
    """Each segment followed by '/', `**` as any run of whole segments: empty ones too, as `*` matches
    one (a name of code points HFS+ ignores only, U+200C, is an empty segment once normalised)."""
    parts = []
    for seg in segments:
        parts.append("(?:[^/]*/)*" if seg == "**" else _segment_regex(seg) + "/")
    return "".join(parts)


def _has_wildcard(seg: str) -> bool:
    return "*" in seg or "?" in seg


#: Each glob's regular expression, compiled the first time a glob of that source matches anything: a
#: policy names dozens of globs (the named sets expand to them) and a push, a commit or a tool call
#: matches against a few; compiling them all as the policy is read cost a hook milliseconds.
_COMPILED: dict[str, re.Pattern[str]] = {}


def _compiled(source: str) -> re.Pattern[str]:
    got = _COMPILED.get(source)
    if got is None:
        got = _COMPILED[source] = re.compile(source)
    return got


@valueclass(frozen=True, slots=True)
class PathGlob:
    pattern: str
    _source: str  # the regular expression, compiled when first used (`_compiled`)
    _literal: tuple[str, ...]
    origin: str = ""  # the named set it came from (`@agent-config (cursor)`), "" for the policy's own
    _tail: tuple[str, ...] = ()  # `**/T1/../Tk` or `**/T1/../Tk/**`: T1..Tk (no wildcard), else ()

    @classmethod
    def compile(cls, pattern: str, origin: str = "") -> PathGlob:
        """A leading or trailing `/` and empty segments are dropped (patterns always start at the
        repository's root); a pattern that could never match a path git stores is refused: a
        backslash (git's separator is `/`), a `.` or `..` segment (git paths hold none)."""
        if "\\" in pattern:
            raise ValueError(f"{pattern!r} can never match: git separates paths with '/', not '\\': "
                             f"write {pattern.replace(chr(92), '/')!r}")
        raw = [s for s in pattern.split("/") if s]
        if any(s in (".", "..") for s in raw):
            fixed = posixpath.normpath("/".join(raw))
            while fixed == ".." or fixed.startswith("../"):
                fixed = fixed[3:]
            fixed = "" if fixed == "." else fixed
            raise ValueError(f"{pattern!r} can never match: git paths hold no '.' or '..' segment, they start at "
                             f"the repository's root" + (f": write {fixed!r}" if fixed else ""))
        segs = [s for s in normalize_path(pattern.strip("/")).split("/") if s]
        if not segs:
            raise ValueError(f"empty path pattern {pattern!r}")
        literal = []
        for s in segs:
            if _has_wildcard(s):
                break
            literal.append(s)
        body = segs[1:-1] if len(segs) > 1 and segs[-1] == "**" else segs[1:]
        tail = tuple(body) if segs[0] == "**" and body and not any(_has_wildcard(s) for s in body) else ()
        return cls(pattern, _glob_regex(segs), tuple(literal), origin, tail)

    def matches(self, norm_path: str) -> bool:
        """`norm_path` is already `normalize_path`-ed."""
        return _compiled(self._source).match(norm_path + "/") is not None

    @property
    def literal(self) -> tuple[str, ...]:
        """The pattern's leading segments without a wildcard, normalised (empty: it starts with one)."""
        return self._literal

    @property
    def tail(self) -> tuple[str, ...]:
        """For `**/T1/../Tk` and `**/T1/../Tk/**` (no other wildcard): T1..Tk, normalised. Such a
        pattern matches exactly the paths whose segments hold the run T1..Tk, and those below them
        (`frozen.FrozenChecker.name_patterns` searches trees for those names); () for any other."""
        return self._tail

    def may_match_below(self, norm_dir: str) -> bool:
        """Could any path below directory `norm_dir` match? (Conservative: may say yes.)"""
        if not norm_dir:
            return True
        segs = norm_dir.split("/")
        n = min(len(segs), len(self._literal))
        return segs[:n] == list(self._literal[:n])


@valueclass(frozen=True, slots=True)
class RefGlob:
    pattern: str
    _regex: re.Pattern[str]

    @classmethod
    def compile(cls, pattern: str) -> RefGlob:
        segs = pattern.split("/")
        if not pattern.startswith("refs/"):
            bare = pattern.strip("/")
            guess = "refs/" + bare if bare.startswith(("heads/", "tags/")) else "refs/heads/" + bare
            raise ValueError(f"{pattern!r} is not a full ref name: did you mean {guess}?")
        if any(not s for s in segs):
            raise ValueError(f"ref pattern {pattern!r} has an empty segment (two '/' in a row, or one at the end)")
        return cls(pattern, re.compile(_glob_regex(segs)))

    def matches(self, ref: str) -> bool:
        return self._regex.fullmatch(ref + "/") is not None


@valueclass(frozen=True, slots=True)
class IdentityGlob:
    """A glob on an email, a name, an account or a whole trailer line, case-insensitive:
    `*` matches any run of characters, `?` one; everything else is literal (so
    `claude[bot]@...` means the brackets, as GitHub spells its apps' accounts). `origin` is
    the named set it came from (`@known-agents (claude)`), "" when the policy wrote it."""

    pattern: str
    _source: str  # the regular expression, compiled when first used (`_compiled`)
    origin: str = ""

    @classmethod
    def compile(cls, pattern: str, origin: str = "") -> IdentityGlob:
        if not pattern.strip():
            raise ValueError("empty identity pattern")
        parts = [".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern.casefold()]
        return cls(pattern, "(?s:" + "".join(parts) + r")\Z", origin)

    def matches(self, identity: str) -> bool:
        return _compiled(self._source).match(identity.casefold()) is not None

    @property
    def label(self) -> str:
        """How evidence names it: its set and entry, else the pattern itself."""
        return self.origin or self.pattern


#: id(globs) -> (globs, one pattern matching what any of them matches): a commit's identities are
#: matched against every glob of a rule, a history's distinct identities thousands of times.
_ANY_OF: dict[int, tuple[tuple[IdentityGlob, ...], re.Pattern[str]]] = {}


def _any(globs: tuple[IdentityGlob, ...], value: str | None) -> bool:
    if value is None or not globs:
        return False
    got = _ANY_OF.get(id(globs))
    if got is None or got[0] is not globs:
        if len(_ANY_OF) >= 256:
            _ANY_OF.clear()
        # each glob's pattern is anchored (`\Z`): the alternation matches where one of them does
        got = _ANY_OF[id(globs)] = (globs, re.compile("|".join(f"(?:{g._source})" for g in globs)))
    return got[1].match(value.casefold()) is not None


#: id(globs) -> (globs, one pattern matching at a path's start where any of them does).
_ANY_PATH: dict[int, tuple[tuple[PathGlob, ...], re.Pattern[str]]] = {}


def _any_path(globs: tuple[PathGlob, ...]) -> re.Pattern[str]:
    got = _ANY_PATH.get(id(globs))
    if got is None or got[0] is not globs:
        if len(_ANY_PATH) >= 256:
            _ANY_PATH.clear()
        # (each glob's pattern is matched at the path's start, as `PathGlob.matches` matches it)
        got = _ANY_PATH[id(globs)] = (globs, re.compile("|".join(f"(?:{g._source})" for g in globs) or "(?!)"))
    return got[1]


def _first(globs: Iterable[IdentityGlob], value: str | None) -> IdentityGlob | None:
    """The first of `globs` that matches `value`; a rule's globs (a tuple) are asked as one pattern
    first (`_any`): most identities match none of a catalogue's dozens."""
    if value is None or (isinstance(globs, tuple) and not _any(globs, value)):
        return None
    return next((g for g in globs if g.matches(value)), None)


@valueclass(frozen=True, slots=True)
class Signals:
    """What a commit says about who made it besides its two emails (all self-asserted):
    the author and committer names, its trailers (`Key: value`, as git parses them) and
    the emails of its `Co-authored-by` trailers."""

    author_name: str = ""
    committer_name: str = ""
    trailers: tuple[str, ...] = ()
    coauthors: tuple[str, ...] = ()
    signers: tuple[str, ...] = ()  # principals of a verified SSH signature (not self-asserted)


@valueclass(frozen=True, slots=True)
class FreezeRule:
    index: int
    name: str
    paths: tuple[PathGlob, ...]
    authors: tuple[IdentityGlob, ...]
    pushers: tuple[IdentityGlob, ...]
    refs: tuple[RefGlob, ...] | None  # None: every ref
    names: tuple[IdentityGlob, ...] = ()     # author / committer names
    trailers: tuple[IdentityGlob, ...] = ()  # whole trailer lines
    signers: tuple[IdentityGlob, ...] = ()   # principals of a commit's verified signature
    #: the anonymous pusher counts as named by this rule when the rule restricts anyone ([pushers] anonymous)
    anonymous_restricted: bool = True

    @property
    def label(self) -> str:
        return f"freeze[{self.index}]" + (f":{self.name}" if self.name else "")

    @property
    def everyone(self) -> bool:
        """A rule naming no identities freezes its paths for everybody."""
        return not (self.authors or self.pushers or self.names or self.trailers or self.signers)

    @property
    def reads_messages(self) -> bool:
        """The rule looks at trailers (its own, or `Co-authored-by` emails for `authors`)."""
        return bool(self.authors or self.trailers)

    @property
    def any_author(self) -> bool:
        """Some `authors` glob is wildcards only (`authors = ["*"]`): every author's email matches it,
        so the rule restricts every commit whatever the commit says of itself. Who wrote one is then
        read only to report a violation of it (its identity and evidence), not to decide."""
        return any(g.pattern and not g.pattern.strip("*") for g in self.authors)

    def applies_to_ref(self, ref: str) -> bool:
        return self.refs is None or any(g.matches(ref) for g in self.refs)

    def restricts_pusher(self, pusher: str | None) -> bool:
        """Commits this pusher pushes are restricted under the rule (it names the pusher,
        or names nobody and so freezes its paths for everyone)."""
        return self.everyone or self.names_pusher(pusher)

    def names_pusher(self, pusher: str | None) -> bool:
        """The rule names this pusher account itself (a rule naming nobody names no pusher); a rule
        that restricts anyone names the anonymous pusher, unless `[pushers] anonymous = "unrestricted"`."""
        if self.anonymous_restricted and is_anonymous(pusher) and not self.everyone:
            return True
        return _any(self.pushers, pusher)

    def restricted_identity(self, author: str, committer: str, pusher: str | None,  # noqa: PLR0912 - one branch per identity source; policy.py is helper models'
                            signals: Signals | None = None) -> str | None:
        """The identity that makes a commit restricted under this rule, or None: an email,
        `co-author:EMAIL`, `name:NAME`, `trailer:LINE` or `pusher:ACCOUNT`."""
        if self.everyone:
            return author
        for email in (author, committer):
            if _any(self.authors, email):
                return email
        if signals is not None:
            for email in signals.coauthors:
                if _any(self.authors, email):
                    return f"co-author:{email}"
            for name in (signals.author_name, signals.committer_name):
                if name and _any(self.names, name):
                    return f"name:{name}"
            for line in signals.trailers:
                if _any(self.trailers, line):
                    return f"trailer:{line}"
            for principal in signals.signers:
                if _any(self.signers, principal):
                    return f"signer:{principal}"
        if self.names_pusher(pusher):
            return f"pusher:{pusher}"
        return None

    def evidence(self, author: tuple[str, str], committer: tuple[str, str], pusher: str | None,  # noqa: PLR0912 - one branch per evidence kind; policy.py is helper models'
                 signals: Signals | None = None) -> tuple[str, ...]:
        """Why this rule restricts a commit, every reason it has, strongest first (docs/agents.md,
        How strong each signal is): the platform's authenticated pusher, a verified signature,
        then what the commit says about itself (its emails, its `Co-authored-by` emails, its
        names, its trailers). `author` and `committer` are (name, email). Empty: not restricted."""
        if self.everyone:
            return ("the rule freezes these paths for everyone",)
        out: list[str] = []
        if self.anonymous_restricted and is_anonymous(pusher) and not self.everyone:
            out.append("pusher anonymous (no transport authenticated the push; [pushers] anonymous = restricted)")
        elif (g := _first(self.pushers, pusher)) is not None:
            out.append(f"pusher {pusher} matched {g.label}")
        seen = signals or Signals()
        for principal in seen.signers:
            if (g := _first(self.signers, principal)) is not None:
                out.append(f"signed by {principal} (verified signature) matched {g.label}")
        for role, (_, email) in (("author", author), ("committer", committer)):
            if (g := _first(self.authors, email)) is not None:
                out.append(f"{role} email {email} matched {g.label}")
        for email in seen.coauthors:
            if (g := _first(self.authors, email)) is not None:
                out.append(f"co-author email {email} (Co-authored-by trailer) matched {g.label}")
        for role, (name, _) in (("author", author), ("committer", committer)):
            if name and (g := _first(self.names, name)) is not None:
                out.append(f"{role} name {name} matched {g.label}")
        for line in seen.trailers:
            if (g := _first(self.trailers, line)) is not None:
                out.append(f"trailer {line} matched {g.label}")
        return tuple(dict.fromkeys(out))

    def matches_path(self, norm_path: str) -> bool:
        """Does any of the rule's path globs match (`PathGlob.matches`)? Asked of one pattern, their
        alternation (`_any_path`): a rule names dozens of globs (`@agent-config`: 43) and a restricted
        commit's changed entries are each asked."""
        return _any_path(self.paths).match(norm_path + "/") is not None

    def may_match_below(self, norm_dir: str) -> bool:
        return any(g.may_match_below(norm_dir) for g in self.paths)


@valueclass(frozen=True, slots=True)
class AuthorAgent:
    """A catalogue agent as reviewer independence reads the reviewed commits for it (the
    catalogue's patterns, carried by the validated policy: `gatecore.checks.authorship`)."""

    id: str
    vendor: str | None
    emails: tuple[str, ...]
    names: tuple[str, ...]
    trailers: tuple[str, ...]


#: The hook's deadline when the policy sets none (limits.deadline_seconds), by platform.
PLATFORM_DEADLINES = {"github": 4.0}
DEFAULT_DEADLINE_SECONDS = 30.0
#: [limits] defaults (docs/policy.md, Limits): GitHub's push rulesets take at most 1,000 ref updates
#: a push; 100,000 new commits is 12 times the largest real history in tests/ (ohmyzsh, 7,860 commits,
#: 1 ref) and, even with every commit restricted (its root tree read), a few seconds of the hook's walk.
DEFAULT_MAX_REF_UPDATES = 1_000
DEFAULT_MAX_NEW_COMMITS = 100_000


@valueclass(frozen=True, slots=True)
class Policy:
    """The policy as the engine reads it. Built by `from_plain` only, from the validated form:
    every field is required here, and each default is written once, in `configschema.PolicyModel`."""

    mode: Mode
    rules: tuple[FreezeRule, ...]
    delete: str
    force: str
    trusted_pushers: tuple[IdentityGlob, ...]
    deadline_seconds: float | None  # None: the platform's default (deadline_for)
    max_violations_shown: int
    replace: str
    noncanonical_modes: str
    catalogue_version: str | None  # the agent catalogue the named sets were expanded from
    #: refs whose every new commit must carry a valid signature by a key in the allowed signers
    require_signatures: tuple[RefGlob, ...]
    #: who may approve a restricted write of a frozen path ([approvals]; empty: approvals off)
    approvers: tuple[IdentityGlob, ...]
    approval_max_seconds: int
    #: [pushers] anonymous: "restricted" or "unrestricted"
    anonymous: str
    max_ref_updates: int  # [limits]: more in one push is GATE-LIMIT-REFS
    max_new_commits: int  # [limits]: more in one walk is GATE-LIMIT-COMMITS
    #: [review] independent: "off", "model" or "vendor" (gatecore.checks.independence)
    independent: str
    #: (glob on canonical model ids, vendor, where it came from): the policy's [review.vendors], then the
    #: packaged vendor table (gatecore.configuration.vendors.merged); filled when independent = "vendor"
    review_vendors: tuple[tuple[str, str, str], ...]
    vendor_table_version: str | None
    #: [review.models]: model ids no naming scheme places -> the model they serve (or themselves)
    model_aliases: Mapping[str, str]
    #: the model-id table's plain form (gatecore/data/models.toml), carried when independent is not "off"
    model_names: Mapping[str, Any] | None
    #: [review] model_run: "any", or "runner": the receipt must say the runner ran the model itself
    #: (`gate review run`), GATE-REVIEW-MODEL-RUN otherwise
    model_run: str
    #: the agent catalogue's agents, when independent is not "off" (`gatecore.checks.authorship`)
    review_agents: tuple[AuthorAgent, ...]
    #: every agent of the catalogue the policy was validated with: the marks its commits carry, which a
    #: tool call inside that agent is judged with (`frozen.writer_for`)
    agents: tuple[AuthorAgent, ...]

    def model_reader(self) -> ModelNames | None:
        """The model-id table and the policy's aliases, ready to read ids (None: not carried,
        independent = "off"). Imported here, not at start-up: only a review push reads model ids."""
        if self.model_names is None:
            return None
        from .modelnames import ModelNames

        return ModelNames.from_plain(self.model_names, self.model_aliases)

    def deadline_for(self, platform: str) -> float:
        """The hook's deadline: the policy's, else the platform's default. GitHub Enterprise gives
        all pre-receive hooks 5 seconds together; self-hosted servers impose none, and a large
        migration must not pass or fail by chance on a loaded machine (docs/servers.md)."""
        if self.deadline_seconds is not None:
            return self.deadline_seconds
        return PLATFORM_DEADLINES.get(platform, DEFAULT_DEADLINE_SECONDS)

    @property
    def approvals_enabled(self) -> bool:
        return bool(self.approvers)

    def is_approver(self, name: str | None) -> bool:
        """An approver: named by [approvals] approvers and not named by any rule's pushers (never anonymous)."""
        return (not is_anonymous(name) and _any(self.approvers, name)
                and not any(_any(r.pushers, name) for r in self.rules))

    @property
    def needs_signers(self) -> bool:
        """Deciding needs the allowed-signers file (a rule names signers, or signatures are required)."""
        return bool(self.require_signatures) or any(r.signers for r in self.rules)

    @property
    def reads_messages(self) -> bool:
        return any(r.reads_messages for r in self.rules)

    def pusher_restricted(self, pusher: str | None, ref: str | None = None) -> bool:
        """A restricted pusher, for `deny-restricted` ref rules: some rule in scope names it.

        A rule naming no identities freezes its paths for everyone's commits; it does not
        make every pusher restricted (a human may still delete their own topic branch). The
        anonymous pusher is restricted on every ref unless `[pushers] anonymous = "unrestricted"`.
        """
        if self.anonymous == "restricted" and is_anonymous(pusher):
            return True
        return any(r.names_pusher(pusher) and (ref is None or r.applies_to_ref(ref)) for r in self.rules)

    def pusher_trusted(self, pusher: str | None) -> bool:
        """Trusted accounts write the ledger and review refs; a restricted account never is, nor anonymous."""
        return not is_anonymous(pusher) and _any(self.trusted_pushers, pusher) and not any(
            _any(r.pushers, pusher) for r in self.rules
        )

    @classmethod
    def from_plain(cls, doc: Mapping[str, Any]) -> Policy:
        """Build from the validated plain form: `configschema.PolicyModel`'s dump, every key present.

        It comes from validation or from the cache next to the file (written only after
        validation, keyed by the source's SHA-256). Nothing is validated again here: the
        globs are compiled and each setting is taken to be one of its `Literal` values, so a
        form that is not such a dump raises KeyError, TypeError or ValueError, never yields a
        policy. Every field but the rules is read by `SETTINGS`; a key is added there and in
        the model."""
        values = {name: read(_at(doc, path)) for name, path, read in SETTINGS}
        restricted = values["anonymous"] == "restricted"
        rules = tuple(_rule(i, r, restricted) for i, r in enumerate(_list(doc["freeze"])))
        return cls(rules=rules, **values)


# --- reading the plain form ---------------------------------------------------------------------

def _at(doc: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = doc
    for key in path:
        if not isinstance(value, Mapping):
            raise TypeError(f"{'.'.join(path)}: expected a table")
        value = value[key]
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("expected a list")
    return value


def _strs(value: Any) -> list[str]:
    items = _list(value)
    if not all(isinstance(v, str) for v in items):
        raise TypeError("expected a list of strings")
    return items


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("expected an integer")
    return value


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError("expected a number")
    return float(value)


def _text(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def _literal(allowed: Any, where: str) -> Callable[[Any], Any]:
    return lambda value: one_of(value, allowed, where)


def _globs(kind: type[IdentityGlob] | type[RefGlob]) -> Callable[[Any], tuple[Any, ...]]:
    return lambda value: tuple(kind.compile(x) for x in _strs(value))


def _rows(value: Any) -> tuple[tuple[str, str, str], ...]:
    rows = _list(value)
    if not all(isinstance(r, list) and len(r) == 3 and all(isinstance(x, str) for x in r) for r in rows):
        raise TypeError("review.table: expected [glob, vendor, origin] rows")
    return tuple((g, v, o) for g, v, o in rows)


def _aliases(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError("review.models: expected a table of strings")
    return dict(value)


def _names(value: Any) -> Mapping[str, Any] | None:
    """The model-id table's plain form (read when a review push asks, `Policy.model_reader`)."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("version"), str) or not (
            isinstance(value.get("schemes"), list) and isinstance(value.get("families"), list)):
        raise TypeError("review.names: expected the model-id table's plain form")
    return value


def _agents(value: Any) -> tuple[AuthorAgent, ...]:
    """The catalogue's agents as reviewer independence reads the reviewed commits for them."""
    out = []
    for a in _list(value):
        if not isinstance(a, Mapping) or not isinstance(a["id"], str) or not (
                a["vendor"] is None or isinstance(a["vendor"], str)):
            raise TypeError("agents: expected agents with an id and a vendor or null")
        out.append(AuthorAgent(a["id"], a["vendor"], tuple(_strs(a["emails"])), tuple(_strs(a["names"])),
                               tuple(_strs(a["trailers"]))))
    return tuple(out)


#: Every `Policy` field but `rules`: (field, its path in the plain form, how it is read). The model
#: (`configschema.PolicyModel`) holds each key's bounds and default; `validate_policy` adds what it
#: took from the data tables (catalogue_version, review.table, review.table_version, review.names,
#: review.agents).
SETTINGS: tuple[tuple[str, tuple[str, ...], Callable[[Any], Any]], ...] = (
    ("mode", ("mode",), _literal(Mode, "mode")),
    ("delete", ("refs", "delete"), _literal(RefAction, "refs.delete")),
    ("force", ("refs", "force"), _literal(RefAction, "refs.force")),
    ("trusted_pushers", ("trusted", "pushers"), _globs(IdentityGlob)),
    ("deadline_seconds", ("limits", "deadline_seconds"), _seconds),
    ("max_violations_shown", ("limits", "max_violations_shown"), _int),
    ("replace", ("refs", "replace"), _literal(ReplaceAction, "refs.replace")),
    ("noncanonical_modes", ("objects", "noncanonical_modes"), _literal(ModeAction, "objects.noncanonical_modes")),
    ("catalogue_version", ("catalogue_version",), _text),
    ("require_signatures", ("signatures", "require"), _globs(RefGlob)),
    ("approvers", ("approvals", "approvers"), _globs(IdentityGlob)),
    ("approval_max_seconds", ("approvals", "max_hours"), lambda value: _int(value) * 3600),
    ("anonymous", ("pushers", "anonymous"), _literal(AnonymousAction, "pushers.anonymous")),
    ("max_ref_updates", ("limits", "max_ref_updates"), _int),
    ("max_new_commits", ("limits", "max_new_commits"), _int),
    ("independent", ("review", "independent"), _literal(Independence, "review.independent")),
    ("review_vendors", ("review", "table"), _rows),
    ("vendor_table_version", ("review", "table_version"), _text),
    ("model_aliases", ("review", "models"), _aliases),
    ("model_names", ("review", "names"), _names),
    ("model_run", ("review", "model_run"), _literal(ModelRun, "review.model_run")),
    ("review_agents", ("review", "agents"), _agents),
    ("agents", ("agents",), _agents),
)


def _rule(index: int, r: Any, anonymous_restricted: bool) -> FreezeRule:
    """One `[[freeze]]` rule of the plain form, its globs compiled with the named set each came from."""
    if not isinstance(r, Mapping) or not isinstance(r["name"], str):
        raise TypeError("rule name")
    origins = r.get("origins", {})  # key -> pattern -> the named set it came from
    if not isinstance(origins, Mapping) or not all(isinstance(v, Mapping) for v in origins.values()):
        raise TypeError("rule origins")

    def identities(key: str) -> tuple[IdentityGlob, ...]:
        where = origins.get(key, {})
        return tuple(IdentityGlob.compile(p, str(where.get(p, ""))) for p in _strs(r[key]))

    return FreezeRule(
        index=index, name=r["name"],
        paths=tuple(PathGlob.compile(p, str(origins.get("paths", {}).get(p, ""))) for p in _strs(r["paths"])),
        authors=identities("authors"), pushers=identities("pushers"),
        refs=None if r["refs"] is None else _globs(RefGlob)(r["refs"]),
        names=identities("names"), trailers=identities("trailers"), signers=identities("signers"),
        anonymous_restricted=anonymous_restricted,
    )
