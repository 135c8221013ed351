"""The policy as plain values, and the pure matching it needs (no pydantic, no git).

`gatecore.policyfile` validates a TOML policy with pydantic and hands its plain dump to
`Policy.from_plain`; the pre-receive hook reads that dump from a cache so that pydantic
stays off its start-up path. Both roads end here, in one constructor.

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

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_POLICY_BYTES = 1 << 20
REF_ACTIONS = ("allow", "deny-restricted", "deny")
REPLACE_ACTIONS = ("trusted", "allow", "deny")
MODE_ACTIONS = ("refuse-frozen", "refuse")
MODES = ("enforce", "evaluate")
ANONYMOUS_ACTIONS = ("restricted", "unrestricted")
#: The pusher of a push no transport authenticated (gatecore.adapters.environment).
ANONYMOUS = "anonymous"


def is_anonymous(pusher: str | None) -> bool:
    """The anonymous pusher (an account literally named so, in any case, is taken for it: fail closed)."""
    return pusher is not None and pusher.strip().casefold() == ANONYMOUS


#: Code points HFS+ ignores in names (as git's is_hfs_dotgit does): dropped before matching.
_HFS_IGNORED = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070),
                              0xFEFF])


def normalize_path(path: str) -> str:
    """The form frozen-path matching compares: HFS+-ignored code points dropped, NFC,
    case-folded, segment tails (dots, spaces) trimmed."""
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
    """Each segment followed by '/', `**` as any run of whole segments."""
    parts = []
    for seg in segments:
        parts.append("(?:[^/]+/)*" if seg == "**" else _segment_regex(seg) + "/")
    return "".join(parts)


def _has_wildcard(seg: str) -> bool:
    return "*" in seg or "?" in seg


@dataclass(frozen=True, slots=True)
class PathGlob:
    pattern: str
    _regex: re.Pattern[str]
    _literal: tuple[str, ...]

    @classmethod
    def compile(cls, pattern: str) -> PathGlob:
        segs = [s for s in normalize_path(pattern.strip("/")).split("/") if s]
        if not segs:
            raise ValueError(f"empty path pattern {pattern!r}")
        literal = []
        for s in segs:
            if _has_wildcard(s):
                break
            literal.append(s)
        return cls(pattern, re.compile(_glob_regex(segs)), tuple(literal))

    def matches(self, norm_path: str) -> bool:
        """`norm_path` is already `normalize_path`-ed."""
        return self._regex.match(norm_path + "/") is not None

    @property
    def literal(self) -> tuple[str, ...]:
        """The pattern's leading segments without a wildcard, normalised (empty: it starts with one)."""
        return self._literal

    def may_match_below(self, norm_dir: str) -> bool:
        """Could any path below directory `norm_dir` match? (Conservative: may say yes.)"""
        if not norm_dir:
            return True
        segs = norm_dir.split("/")
        n = min(len(segs), len(self._literal))
        return segs[:n] == list(self._literal[:n])


@dataclass(frozen=True, slots=True)
class RefGlob:
    pattern: str
    _regex: re.Pattern[str]

    @classmethod
    def compile(cls, pattern: str) -> RefGlob:
        segs = pattern.split("/")
        if not pattern.startswith("refs/") or any(not s for s in segs):
            raise ValueError(f"ref pattern {pattern!r} must be refs/... without empty segments")
        return cls(pattern, re.compile(_glob_regex(segs)))

    def matches(self, ref: str) -> bool:
        return self._regex.fullmatch(ref + "/") is not None


@dataclass(frozen=True, slots=True)
class IdentityGlob:
    """A glob on an email, a name, an account or a whole trailer line, case-insensitive:
    `*` matches any run of characters, `?` one; everything else is literal (so
    `claude[bot]@...` means the brackets, as GitHub spells its apps' accounts)."""

    pattern: str
    _regex: re.Pattern[str]

    @classmethod
    def compile(cls, pattern: str) -> IdentityGlob:
        if not pattern.strip():
            raise ValueError("empty identity pattern")
        parts = [".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern.casefold()]
        return cls(pattern, re.compile("(?s:" + "".join(parts) + r")\Z"))

    def matches(self, identity: str) -> bool:
        return self._regex.match(identity.casefold()) is not None


def _any(globs: Iterable[IdentityGlob], value: str | None) -> bool:
    return value is not None and any(g.matches(value) for g in globs)


@dataclass(frozen=True, slots=True)
class Signals:
    """What a commit says about who made it besides its two emails (all self-asserted):
    the author and committer names, its trailers (`Key: value`, as git parses them) and
    the emails of its `Co-authored-by` trailers."""

    author_name: str = ""
    committer_name: str = ""
    trailers: tuple[str, ...] = ()
    coauthors: tuple[str, ...] = ()
    signers: tuple[str, ...] = ()  # principals of a verified SSH signature (not self-asserted)


@dataclass(frozen=True, slots=True)
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

    def restricted_identity(self, author: str, committer: str, pusher: str | None,
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

    def matches_path(self, norm_path: str) -> bool:
        return any(g.matches(norm_path) for g in self.paths)

    def may_match_below(self, norm_dir: str) -> bool:
        return any(g.may_match_below(norm_dir) for g in self.paths)


#: The hook's deadline when the policy sets none (limits.deadline_seconds), by platform.
PLATFORM_DEADLINES = {"github": 4.0}
DEFAULT_DEADLINE_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Policy:
    mode: str
    rules: tuple[FreezeRule, ...]
    delete: str
    force: str
    trusted_pushers: tuple[IdentityGlob, ...]
    deadline_seconds: float | None  # None: the platform's default (deadline_for)
    max_violations_shown: int
    replace: str = "trusted"
    noncanonical_modes: str = "refuse-frozen"
    catalogue_version: str | None = None  # the agent catalogue the named sets were expanded from
    #: refs whose every new commit must carry a valid signature by a key in the allowed signers
    require_signatures: tuple[RefGlob, ...] = ()
    #: who may approve a restricted write of a frozen path ([approvals]; empty: approvals off)
    approvers: tuple[IdentityGlob, ...] = ()
    approval_max_seconds: int = 72 * 3600
    #: [pushers] anonymous: "restricted" (default) or "unrestricted"
    anonymous: str = "restricted"

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
        """Build from the plain (validated) form. Raises ValueError/TypeError/KeyError if malformed."""
        def strs(value: Any) -> list[str]:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise TypeError("expected a list of strings")
            return value

        mode = doc["mode"]
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}")
        pushers = doc.get("pushers", {})
        if not isinstance(pushers, Mapping):
            raise TypeError("pushers")
        anonymous = pushers.get("anonymous", "restricted")
        if anonymous not in ANONYMOUS_ACTIONS:
            raise ValueError("pushers.anonymous")
        rules = []
        for i, r in enumerate(doc["freeze"]):
            refs = r.get("refs")
            name = r.get("name") or ""
            if not isinstance(name, str):
                raise TypeError("rule name")
            rules.append(FreezeRule(
                index=i, name=name,
                paths=tuple(PathGlob.compile(p) for p in strs(r["paths"])),
                authors=tuple(IdentityGlob.compile(a) for a in strs(r.get("authors", []))),
                pushers=tuple(IdentityGlob.compile(p) for p in strs(r.get("pushers", []))),
                refs=None if refs is None else tuple(RefGlob.compile(x) for x in strs(refs)),
                names=tuple(IdentityGlob.compile(n) for n in strs(r.get("names", []))),
                trailers=tuple(IdentityGlob.compile(t) for t in strs(r.get("trailers", []))),
                signers=tuple(IdentityGlob.compile(t) for t in strs(r.get("signers", []))),
                anonymous_restricted=anonymous == "restricted",
            ))
        refs_doc = doc["refs"]
        if refs_doc["delete"] not in REF_ACTIONS or refs_doc["force"] not in REF_ACTIONS:
            raise ValueError("refs.delete / refs.force")
        replace = refs_doc.get("replace", "trusted")
        if replace not in REPLACE_ACTIONS:
            raise ValueError("refs.replace")
        modes = doc.get("objects", {}).get("noncanonical_modes", "refuse-frozen")
        if modes not in MODE_ACTIONS:
            raise ValueError("objects.noncanonical_modes")
        limits = doc["limits"]
        deadline = limits["deadline_seconds"]
        shown = limits["max_violations_shown"]
        if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, int | float)
                                     or not 0 < deadline <= 600):
            raise ValueError("limits.deadline_seconds")
        if isinstance(shown, bool) or not isinstance(shown, int) or shown < 1:
            raise ValueError("limits.max_violations_shown")
        approvals = doc.get("approvals", {"approvers": [], "max_hours": 72})
        hours = approvals["max_hours"]
        if isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= 720:
            raise ValueError("approvals.max_hours")
        return cls(
            mode=mode, rules=tuple(rules), delete=refs_doc["delete"], force=refs_doc["force"],
            trusted_pushers=tuple(IdentityGlob.compile(p) for p in strs(doc["trusted"]["pushers"])),
            deadline_seconds=None if deadline is None else float(deadline), max_violations_shown=shown, replace=replace,
            noncanonical_modes=modes, catalogue_version=doc.get("catalogue_version"),
            require_signatures=tuple(RefGlob.compile(x) for x in strs(doc.get("signatures", {}).get("require", []))),
            approvers=tuple(IdentityGlob.compile(x) for x in strs(approvals["approvers"])),
            approval_max_seconds=hours * 3600, anonymous=anonymous,
        )
