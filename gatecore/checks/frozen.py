"""Frozen files: which commits a restricted identity wrote, and which frozen paths they wrote.

A commit is looked at only if some rule restricts it (by author or committer email, a
`Co-authored-by` email, an author or committer name, a trailer line, or the pusher),
before any tree is read. Its trees are then compared with its parents' (below directories
where a frozen pattern could match, unless the policy refuses non-canonical modes in the
whole change), identical subtrees skipped by id. For a merge, a path counts as written
when it differs from every parent. A tree-entry mode that is not one of git's canonical
modes, in a change the gate examines, is refused (`GATE-GIT-MODE`): git reads such an
entry as another kind than other tools do.

This module is the rule, one commit at a time; checking a walk's commits in batches (and
on two cores) is `gatecore.checks.frozenbatch`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..configuration.policy import AuthorAgent, FreezeRule, Signals, normalize_path
from ..errors import GateError
from ..findings import Violation
from ..git import trailers
from ..git.gitmodel import MODE_GITLINK, DescendFilter, canon_mode, kind_of
from ..git.grammar import Commit
from ..git.objects import Objects
from ..git.refs import display
from ..git.treediff import Change, NamePatterns, NameSearch, TreeDiff, name_pattern
from ..valueclass import valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from ..signing.signatures import SignatureChecker


def change_kind(old_mode: int, new_mode: int) -> str:
    """add, delete, modify, mode, type (file/symlink/submodule swap) or submodule (re-pointed)."""
    if old_mode == 0:
        return "add"
    if new_mode == 0:
        return "delete"
    if kind_of(old_mode) != kind_of(new_mode):
        return "type"
    if canon_mode(old_mode) == MODE_GITLINK:
        return "submodule"
    if old_mode != new_mode:
        return "mode"
    return "modify"


#: Directories whose searches one set of rules keeps (`FrozenChecker.name_patterns`).
NAMES_KEPT = 1 << 16


def rules_key(rules: Sequence[FreezeRule]) -> tuple[int, ...]:
    return tuple(r.index for r in rules)


def _norm(path: bytes) -> str:
    return normalize_path(path.decode("utf-8", "surrogateescape"))


@valueclass(frozen=True, slots=True)
class FrozenChange:
    """A change at a frozen path, with the rules that freeze it."""

    change: Change
    rules: tuple[FreezeRule, ...]

    @property
    def kind(self) -> str:
        return change_kind(self.change.old_mode, self.change.new_mode)


@valueclass(frozen=True, slots=True)
class Written:
    """A frozen path a commit wrote: how, and under which rules."""

    path: bytes
    kind: str
    rules: tuple[FreezeRule, ...]


@valueclass(frozen=True, slots=True)
class BadMode:
    """A non-canonical mode in a change a commit made."""

    path: bytes
    mode: int


class FrozenChecker:
    """Finds frozen paths written by commits, over one object store and its caches."""

    def __init__(self, objects: Objects, whole_change: bool = False, search_names: bool = True) -> None:
        """`whole_change`: look for non-canonical modes in the whole change of each examined
        commit (policy objects.noncanonical_modes = "refuse"), not only at frozen paths.
        `search_names` False parses every tree read whole (the reading `TreeDiff` proves the
        name search against, tests/unit/test_tree_search.py)."""
        self.objects = objects
        self.diff = TreeDiff(objects)
        self.whole_change = whole_change
        self.search_names = search_names
        #: who signed each commit, for rules with `signers` (None: no allowed signers here)
        self.signatures: SignatureChecker | None = None
        self._descenders: dict[tuple[int, ...], DescendFilter] = {}
        self._names: dict[tuple[int, ...], NamePatterns] = {}
        #: (first parent, second parent) -> merge base, filled in batches (`frozenbatch.Batches`)
        self.bases: dict[tuple[str, str], str | None] = {}
        #: (old tree, new tree, rules, with modes) -> (changes, non-canonical modes): the comparisons
        #: a batch prepared (`frozenbatch.Batches.prepare`), found here by `frozen_changes`.
        self.prepared: dict[tuple[str | None, str | None, tuple[int, ...], bool],
                            tuple[list[Change], list[tuple[bytes, int]]]] = {}

    def descender(self, rules: Sequence[FreezeRule]) -> DescendFilter:
        """One memoised filter per set of rules (paths repeat from commit to commit, and the
        tree comparison caches the entries it keeps per tree, filter and directory)."""
        key = rules_key(rules)
        got = self._descenders.get(key)
        if got is None:
            memo: dict[bytes, bool] = {}

            def descend(directory: bytes) -> bool:
                hit = memo.get(directory)
                if hit is None:
                    norm = _norm(directory)
                    hit = memo[directory] = any(r.may_match_below(norm) for r in rules)
                return hit

            got = self._descenders[key] = descend
        return got

    def name_patterns(self, rules: Sequence[FreezeRule]) -> NamePatterns | None:
        """Which names can matter in a directory, as a pattern `TreeDiff` searches raw trees
        with: the rules' next literal segments below it (`ci` and `gate.toml` at the root for
        `ci/**` and `gate.toml`); None where a pattern's wildcards start (any name can).

        A pattern `**/T1/../Tk` (or `**/T1/../Tk/**`: `@agent-config`'s `**/AGENTS.md`, `**/.claude/**`)
        matches the paths whose segments hold the run T1..Tk (`PathGlob.tail`): in a directory whose
        path holds the run any name can matter; elsewhere a file matters only as the run's end, so the
        search keeps the T names that continue the run there and every subdirectory (`dirs`)."""
        if not self.search_names:
            return None
        key = rules_key(rules)
        got = self._names.get(key)
        if got is None:
            literals = [g.literal for r in rules for g in r.paths if not g.tail]
            tails = sorted({g.tail for r in rules for g in r.paths if g.tail})
            memo: dict[bytes, NameSearch | None] = {}

            def names(prefix: bytes) -> NameSearch | None:
                if prefix in memo:
                    return memo[prefix]
                if len(memo) >= NAMES_KEPT:  # (a `**/NAME` search reaches every directory of a history)
                    memo.clear()
                segs = tuple(_norm(prefix[:-1]).split("/")) if prefix else ()
                depth = len(segs)
                below: set[str] = set()
                anything = False
                for lit in literals:
                    if len(lit) > depth and lit[:depth] == segs:
                        below.add(lit[depth])
                    elif len(lit) <= depth and segs[:len(lit)] == lit:
                        anything = True
                for tail in tails:
                    k = len(tail)
                    if any(segs[i:i + k] == tail for i in range(depth - k + 1)):
                        anything = True  # the run is in the path: everything below matches
                    # the names that start the run here, or continue one the path ends with
                    below.update(tail[j] for j in range(min(k, depth + 1)) if segs[depth - j:] == tail[:j])
                got = memo[prefix] = None if anything else name_pattern(sorted(below), dirs=bool(tails))
                return got

            got = self._names[key] = names
        return got

    def frozen_changes(self, old_tree: str | None, new_tree: str | None, rules: Sequence[FreezeRule],
                       bad: list[BadMode] | None = None) -> dict[bytes, FrozenChange]:
        """Changes between two trees at paths some rule freezes, by path. With `bad`, every
        non-canonical mode in the examined change (the whole change, or its frozen paths) is
        appended to it."""
        whole = bad is not None and self.whole_change
        prepared = self.prepared.get((old_tree, new_tree, rules_key(rules), bad is not None))
        modes: list[tuple[bytes, int]] | None
        if prepared is not None:
            changes, modes = prepared
        else:
            modes = None if bad is None else []
            changes = (self.diff.changes(old_tree, new_tree, None, modes) if whole else
                       self.diff.changes(old_tree, new_tree, self.descender(rules), modes, self.name_patterns(rules)))
        out: dict[bytes, FrozenChange] = {}
        for c in changes:
            hits = tuple(r for r in rules if r.matches_path(_norm(c.path)))
            if hits:
                out[c.path] = FrozenChange(c, hits)
        if bad is not None and modes:
            bad += [BadMode(path, mode) for path, mode in modes
                    if whole or any(r.matches_path(_norm(path)) for r in rules)]
        return out

    def merge_base(self, first: str, second: str) -> str | None:
        if (first, second) not in self.bases:
            self.bases[(first, second)] = self.objects.reader.merge_base(first, second)
        return self.bases[(first, second)]

    def tree_of(self, commit: str | None) -> str | None:
        return None if commit is None else self.objects.tree_id(commit)

    def written(self, commit: Commit, rules: Sequence[FreezeRule],
                bad: list[BadMode] | None = None) -> list[Written]:
        """Frozen paths this commit wrote.

        One parent (or none): every frozen path that differs from it (from nothing).
        A merge of two: every frozen path that differs from both parents, and every one
        where the merge keeps one parent's version over a change the other parent made
        since their merge base (taking a stale side is a revert, e.g. `merge -s ours`).
        An octopus merge: every frozen path that differs from any parent (fail closed).
        """
        parents: tuple[str | None, ...] = commit.parent_ids or (None,)
        if len(parents) == 1 and self.tree_of(parents[0]) == commit.tree_id:
            return []  # identical to its parent: wrote nothing
        per_parent = [self.frozen_changes(self.tree_of(p), commit.tree_id, rules, bad) for p in parents]
        if len(per_parent) == 1:
            return [Written(p, f.kind, f.rules) for p, f in per_parent[0].items()]
        if len(per_parent) > 2:
            picked: dict[bytes, Written] = {}
            for changes in per_parent:
                for p, f in changes.items():
                    picked.setdefault(p, Written(p, f.kind, f.rules))
            return list(picked.values())
        ours, theirs = per_parent
        out = {p: Written(p, f.kind, f.rules) for p, f in ours.items() if p in theirs}
        first, second = parents
        assert first is not None and second is not None
        base: list[str | None] = []  # the merge base, found once if needed
        for kept, dropped, other_tip in ((ours, theirs, second), (theirs, ours, first)):
            # Paths equal to the kept side's parent but not to the other: the merge took the
            # kept side. That is a revert if the other side changed the path since the base.
            stale = {p: f for p, f in dropped.items() if p not in kept}
            if stale:
                base = base or [self.merge_base(first, second)]
                changed = self.frozen_changes(self.tree_of(base[0]), self.tree_of(other_tip), rules)
                out.update({p: Written(p, "revert (merge keeps a stale side)", f.rules)
                            for p, f in stale.items() if p in changed})
        return list(out.values())


#: `trailer_keys`' answer when every message with a trailer is read (a glob's key has a wildcard).
EVERY_TRAILER = re.compile(b"")


def trailer_keys(rules: Sequence[FreezeRule]) -> re.Pattern[bytes] | None:
    """What a message must hold (ASCII, any case) for its trailers to restrict a commit under
    `rules`, found in one search: the key of each `trailers` glob (`Assisted-by` of `Assisted-by:
    *`) and `Co-authored-by` where a rule has `authors`. None: the rules read no trailers;
    `EVERY_TRAILER`: a glob whose key has a wildcard (every trailer is read).

    A trailer is matched as the line `KEY: VALUE`, its key git's `[A-Za-z0-9-]+` (ASCII, so
    folded to lower case): a glob whose text before its first `:` holds no wildcard matches
    only a trailer of that very key, and one whose key is not such a key matches none.
    Messages without any of these keys are read as holding no trailer: the rules' answer is
    the same (`signals`), and git's readings of the message are not parsed at all.

    The pattern is searched in the message lowered (`bytes.lower`, ASCII only, as a bytes pattern's
    IGNORECASE folds): four times faster than a case-insensitive search of the message."""
    keys: set[bytes] = set()
    for r in rules:
        for g in r.trailers:
            key, colon, _ = g.pattern.casefold().partition(":")
            if not colon or "*" in key or "?" in key:
                return EVERY_TRAILER
            if key and key.isascii() and all(c.isalnum() or c == "-" for c in key):
                keys.add(key.encode("ascii"))
        if r.authors:
            keys.add(b"co-authored-by")
    if not keys:
        return None
    return re.compile(b"|".join(re.escape(k) for k in sorted(keys)))


class SignalReader:
    """`signals` for one set of rules, its questions about them asked once (a walk asks it of
    every commit): the rules' trailer keys (`trailer_keys`), and the names-only answers kept."""

    def __init__(self, rules: Sequence[FreezeRule], sigs: SignatureChecker | None = None,
                 keys: re.Pattern[bytes] | None = EVERY_TRAILER) -> None:
        """`keys`: `trailer_keys(rules)`, or the default, which reads every trailer (the same answer)."""
        self.any = any(r.names or r.reads_messages or r.signers for r in rules)
        self.names = any(r.names for r in rules)
        self.signers = any(r.signers for r in rules)
        self.messages = any(r.reads_messages for r in rules)
        self.sigs = sigs
        self.keys = keys
        self._plain: dict[tuple[str, str], Signals] = {}  # (author name, committer name) -> Signals

    def __call__(self, commit: Commit) -> Signals | None:
        """The commit's signals; None where none can restrict it (no rule reads names or signers,
        and its message holds no trailer key a rule reads: the rules answer as for no signals)."""
        if not self.any:
            return None
        author, committer = commit.identities()
        shown = commit.shown  # (the message as git log shows it, for a commit that names an encoding)
        # most messages hold no trailer: that is decided first, on the bytes
        keys, message = self.keys, commit.message
        read = self.messages and keys is not None and (shown is not None or (
            trailers.may_have(message) and keys.search(message.lower()) is not None))
        if not (read or self.names or self.signers):
            return None
        signed: tuple[str, ...] = ()
        if self.signers:
            if self.sigs is None:
                raise GateError("GATE-CONFIG-SIGNERS", "a rule names signers but no allowed-signers file is available")
            signed = self.sigs.state(commit.id).principals
        found = tuple(trailers.found(message, shown)) if read else ()
        # Names only where a rule matches them (reading one that readers disagree on refuses the commit).
        names = (author.name, committer.name) if self.names else ("", "")
        if not found and not signed:
            got = self._plain.get(names)
            if got is None:
                got = self._plain[names] = Signals(*names)
            return got
        return Signals(names[0], names[1], tuple(f"{k}: {v}" for k, v in found),
                       tuple(trailers.coauthor_emails(list(found))), signed)


def signals(commit: Commit, rules: Sequence[FreezeRule], sigs: SignatureChecker | None = None) -> Signals | None:
    """The names, trailers and verified signers of a commit, when some rule looks at them (else None)."""
    return SignalReader(rules, sigs)(commit)


def _restricting(checker: FrozenChecker, commit: Commit, rules: Sequence[FreezeRule], pusher: str | None
                 ) -> dict[int, tuple[str, str]]:
    """Rule index -> (the restricted identity, every reason, strongest first), for each rule
    that restricts this commit."""
    author, committer = commit.identities()
    seen = signals(commit, rules, checker.signatures)
    by_rule = {}
    for r in rules:
        who = r.restricted_identity(author.email, committer.email, pusher, seen)
        if who is not None:
            # names as `signals` read them: only where a rule reads names (another reader's name refuses then)
            names = seen or Signals()
            why = r.evidence((names.author_name, author.email), (names.committer_name, committer.email), pusher, seen)
            by_rule[r.index] = (who, "; ".join(why))
    return by_rule


def commit_violations(checker: FrozenChecker, commit: Commit, rules: Sequence[FreezeRule], ref: str,
                      pusher: str | None, label: str | None = None) -> list[Violation]:
    """The frozen paths one commit (or a commit-to-be, in the client's commit hook) writes,
    and the non-canonical modes in what the gate examined of it."""
    by_rule = _restricting(checker, commit, rules, pusher)
    if not by_rule:
        return []
    applicable = [r for r in rules if r.index in by_rule]
    bad: list[BadMode] = []
    written = checker.written(commit, applicable, bad)
    return _violations(by_rule, applicable, written, bad, ref, label or commit.id)


def unread_violations(checker: FrozenChecker, commit: Commit, rules: Sequence[FreezeRule], ref: str,
                      pusher: str | None) -> list[Violation]:
    """`commit_violations` of a walked commit every one of `rules` restricts whatever it says of
    itself (`FreezeRule.any_author`), read from a walk that may not have kept its message: what it
    writes first, and only if it writes a frozen path (or a non-canonical mode), who wrote it, from
    the commit as its object holds it (its message, as `git log` shows it where it names an
    encoding): the identity and evidence `commit_violations` reports, which raise where the
    identities cannot be read as git reads them, as they do there."""
    bad: list[BadMode] = []
    written = checker.written(commit, rules, bad)
    if not written and not bad:
        return []
    by_rule = _restricting(checker, checker.objects.commit(commit.id), rules, pusher)
    applicable = [r for r in rules if r.index in by_rule]
    return _violations(by_rule, applicable, written, bad, ref, commit.id)


@valueclass(frozen=True, slots=True)
class Writer:
    """Who would commit a proposed write (a tool call inside an agent: no commit exists yet), as
    every shape its commit could take: the identities git would record (`git var`, as the commit
    hook reads them), the pusher if known, and one `Signals` per way the agent marks its commits
    (from its catalogue entry: names, trailers, co-author emails)."""

    author: tuple[str, str]  # (name, email)
    committer: tuple[str, str]
    pusher: str | None = None
    signals: tuple[Signals, ...] = (Signals(),)


def writer_for(author: tuple[str, str], committer: tuple[str, str], pusher: str | None,
               agents: Sequence[AuthorAgent]) -> Writer:
    """The writer of a tool call made by an agent of `agents` (catalogue entries, as the validated
    policy carries them): its commit as git would record it, then the same commit carrying each
    entry's marks, each pattern's `catalogue.sample`: its emails as co-authors and its trailers in
    one shape, each of its names as the author's and committer's in another."""
    from ..configuration.catalogue import sample  # (a tool call's: never on a hook's start-up path)

    shapes = [Signals()]
    for a in agents:
        emails = tuple(sample(p) for p in a.emails)
        lines = tuple(sample(p) for p in a.trailers)
        names = tuple(sample(p) for p in a.names)
        if emails or lines:
            shapes.append(Signals(trailers=lines, coauthors=emails))
        shapes += [Signals(author_name=n, committer_name=n) for n in names]
    return Writer(author, committer, pusher, tuple(shapes))


@valueclass(frozen=True, slots=True)
class ProposedWrite:
    """A path a tool call would write (repository-relative, `/`-separated, as git stores it), and how:
    `add`, `modify`, `delete`, `write` or `mode` (a move is a delete of its source and an add of its
    target). `tree`: a directory, written somewhere below (a copy into it): it counts where a rule may
    match below it (`FreezeRule.may_match_below`, the test the tree comparison descends by)."""

    path: str
    kind: str
    tree: bool = False


def proposal_violations(writer: Writer, writes: Sequence[ProposedWrite], rules: Sequence[FreezeRule], ref: str,
                        label: str) -> list[Violation]:
    """The frozen paths a commit-to-be would write, for a change that is not a commit yet (a tool
    call): a rule applies when it restricts any shape of the writer's commit (the very
    `restricted_identity` and `evidence` a commit is judged by), and then every write at a path it
    freezes is a violation, as `commit_violations` reports one."""
    by_rule: dict[int, tuple[str, str]] = {}
    for r in rules:
        for seen in writer.signals:
            who = r.restricted_identity(writer.author[1], writer.committer[1], writer.pusher, seen)
            if who is not None:
                why = r.evidence((seen.author_name or writer.author[0], writer.author[1]),
                                 (seen.committer_name or writer.committer[0], writer.committer[1]), writer.pusher, seen)
                by_rule[r.index] = (who, "; ".join(why))
                break
    if not by_rule:
        return []
    applicable = [r for r in rules if r.index in by_rule]
    written = []
    for w in writes:
        norm = normalize_path(w.path)
        hits = tuple(r for r in applicable if r.matches_path(norm) or (w.tree and r.may_match_below(norm)))
        if hits:
            written.append(Written(w.path.encode("utf-8", "surrogateescape"), w.kind, hits))
    return _violations(by_rule, applicable, written, [], ref, label)


def _violations(by_rule: dict[int, tuple[str, str]], applicable: Sequence[FreezeRule], written: Sequence[Written],
                bad: Sequence[BadMode], ref: str, shown: str) -> list[Violation]:
    """What a commit, or a commit-to-be, is refused for: each non-canonical mode once, then each
    frozen write under each rule that freezes it, with the rule's restricted identity and evidence."""
    who_first, why_first = by_rule[applicable[0].index]
    out = [Violation(code="GATE-GIT-MODE", ref=ref, commit=shown, identity=who_first, path=display(b.path),
                     detail=f"mode {b.mode:o} is not one of git's canonical modes (git reads it as "
                            f"{canon_mode(b.mode):o})", evidence=why_first)
           for b in {b.path: b for b in bad}.values()]
    out += [Violation(code="GATE-FROZEN-PATH", ref=ref, commit=shown, identity=by_rule[r.index][0],
                      path=display(w.path), rule=r.label, detail=f"{w.kind} of a frozen path",
                      evidence=by_rule[r.index][1])
            for w in written for r in w.rules]
    return out


def discarded_violations(checker: FrozenChecker, old: str, new: str, rules: Sequence[FreezeRule],
                         ref: str, pusher: str) -> list[Violation]:
    """A non-fast-forward update that drops frozen-path changes made on the ref since the fork.

    Rebasing onto newer history (which changes frozen paths through others' commits) is
    fine; rewinding or force-pushing away a change to a frozen path is not.
    """
    base = checker.objects.reader.merge_base(old, new)
    old_tree, new_tree = checker.tree_of(old), checker.tree_of(new)
    changed_on_ref = checker.frozen_changes(checker.tree_of(base), old_tree, rules)
    out: list[Violation] = []
    for path, f in checker.frozen_changes(old_tree, new_tree, rules).items():
        if path in changed_on_ref:
            out.extend(Violation(
                code="GATE-FROZEN-REF", ref=ref, commit=new, identity=f"pusher:{pusher}",
                path=display(path), rule=r.label,
                detail="the update discards a change to a frozen path made on this ref",
            ) for r in f.rules)
    return out
