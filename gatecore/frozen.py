"""Frozen files: which commits a restricted identity wrote, and which frozen paths they wrote.

A commit is looked at only if some rule restricts it (by author, committer or pusher),
before any tree is read. Its trees are then compared with its parents' only below
directories where a frozen pattern could match, and identical subtrees are skipped by
id. For a merge, a path counts as written when it differs from every parent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .failure import Violation
from .gitrepo import MODE_GITLINK, MODE_LINK, MODE_TREE, Change, CommitInfo, DescendFilter, GitRepo
from .policy import FreezeRule, normalize_path
from .refupdates import display


def _kind_of(mode: int) -> str:
    if mode == MODE_LINK:
        return "symlink"
    if mode == MODE_GITLINK:
        return "submodule"
    if mode == MODE_TREE:
        return "directory"
    return "file"


def change_kind(old_mode: int, new_mode: int) -> str:
    """add, delete, modify, mode, type (file/symlink/submodule swap) or submodule (re-pointed)."""
    if old_mode == 0:
        return "add"
    if new_mode == 0:
        return "delete"
    if _kind_of(old_mode) != _kind_of(new_mode):
        return "type"
    if old_mode == MODE_GITLINK:
        return "submodule"
    if old_mode != new_mode:
        return "mode"
    return "modify"


def _norm(path: bytes) -> str:
    return normalize_path(path.decode("utf-8", "surrogateescape"))


@dataclass(frozen=True, slots=True)
class Written:
    path: bytes
    kind: str
    rules: tuple[FreezeRule, ...]


class FrozenChecker:
    """Finds frozen paths written by commits, with per-process caches of what it read."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self._info: dict[str, CommitInfo] = {}
        self._descenders: dict[tuple[int, ...], DescendFilter] = {}

    def remember(self, infos: Iterable[CommitInfo]) -> None:
        """Commits already read (with the walk that found them): not read again."""
        for i in infos:
            self._info.setdefault(i.id, i)

    def info(self, commit: str) -> CommitInfo:
        got = self._info.get(commit)
        if got is None:
            got = self._info[commit] = self.repo.commit(commit)
        return got

    def _descender(self, rules: Sequence[FreezeRule]) -> DescendFilter:
        """One memoised filter per set of rules (paths repeat from commit to commit; and
        GitRepo caches the entries it keeps per tree, filter and directory)."""
        key = tuple(r.index for r in rules)
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

    def frozen_changes(self, old_tree: str | None, new_tree: str | None,
                       rules: Sequence[FreezeRule]) -> list[tuple[Change, tuple[FreezeRule, ...]]]:
        """Changes between two trees at paths some rule freezes, each with the rules that freeze it."""
        descend = self._descender(rules)

        out = []
        for c in self.repo.tree_changes(old_tree, new_tree, descend):
            norm = _norm(c.path)
            hits = tuple(r for r in rules if r.matches_path(norm))
            if hits:
                out.append((c, hits))
        return out

    def written(self, info: CommitInfo, rules: Sequence[FreezeRule]) -> list[Written]:
        """Frozen paths this commit wrote.

        One parent (or none): every frozen path that differs from it (from nothing).
        A merge of two: every frozen path that differs from both parents, and every one
        where the merge keeps one parent's version over a change the other parent made
        since their merge base (taking a stale side is a revert, e.g. `merge -s ours`).
        An octopus merge: every frozen path that differs from any parent (fail closed).
        """
        parents: tuple[str | None, ...] = info.parent_ids or (None,)
        per_parent = []
        for parent in parents:
            parent_tree = None if parent is None else self.info(parent).tree_id
            if parent_tree == info.tree_id and len(parents) == 1:
                return []  # identical to its parent: wrote nothing
            per_parent.append({c.path: (c, hits) for c, hits in self.frozen_changes(parent_tree, info.tree_id, rules)})
        if len(per_parent) == 1:
            picked = {p: (v, change_kind(v[0].old_mode, v[0].new_mode)) for p, v in per_parent[0].items()}
        elif len(per_parent) == 2:
            ours, theirs = per_parent
            picked = {p: (v, change_kind(v[0].old_mode, v[0].new_mode)) for p, v in ours.items() if p in theirs}
            for kept_side, (dropped, other) in ((0, (theirs, ours)), (1, (ours, theirs))):
                stale = {p: v for p, v in dropped.items() if p not in other}  # equal to the kept side
                if stale:
                    changed = self._changed_since_base(parents[0], parents[1], 1 - kept_side, rules)
                    picked.update({p: (v, "revert (merge keeps a stale side)") for p, v in stale.items()
                                   if p in changed})
        else:
            picked = {}
            for changes in per_parent:
                for p, v in changes.items():
                    picked.setdefault(p, (v, change_kind(v[0].old_mode, v[0].new_mode)))
        return [Written(c.path, kind, hits) for (c, hits), kind in picked.values()]

    def _changed_since_base(self, a: str | None, b: str | None, side: int, rules: Sequence[FreezeRule]) -> set[bytes]:
        """Frozen paths that parent `side` (0: a, 1: b) changed since the merge base of a and b."""
        assert a is not None and b is not None
        base = self.repo.merge_base(a, b)
        base_tree = None if base is None else self.info(base).tree_id
        tip_tree = self.info(a if side == 0 else b).tree_id
        return {c.path for c, _ in self.frozen_changes(base_tree, tip_tree, rules)}


def info_violations(checker: FrozenChecker, info: CommitInfo, rules: Sequence[FreezeRule], ref: str,
                    pusher: str | None, commit_label: str | None = None) -> list[Violation]:
    """The frozen paths one commit (or a commit-to-be, in the client's commit hook) writes."""
    by_rule = {}
    for r in rules:
        who = r.restricted_identity(info.author_email, info.committer_email, pusher)
        if who is not None:
            by_rule[r.index] = who
    if not by_rule:
        return []
    applicable = [r for r in rules if r.index in by_rule]
    return [
        Violation(code="GATE-FROZEN-PATH", ref=ref, commit=commit_label or info.id, identity=by_rule[r.index],
                  path=display(w.path), rule=r.label, detail=f"{w.kind} of a frozen path")
        for w in checker.written(info, applicable) for r in w.rules
    ]


def commit_violations(checker: FrozenChecker, commits: Iterable[str], rules: Sequence[FreezeRule],
                      ref: str, pusher: str | None) -> list[Violation]:
    out: list[Violation] = []
    restricted: dict[tuple[str, str], bool] = {}  # identities repeat: match each pair once
    for c in commits:
        info = checker.info(c)
        pair = (info.author_email, info.committer_email)
        hit = restricted.get(pair)
        if hit is None:
            hit = restricted[pair] = any(r.restricted_identity(*pair, pusher) is not None for r in rules)
        if hit:  # only then are trees read
            out += info_violations(checker, info, rules, ref, pusher)
    return out


def discarded_violations(checker: FrozenChecker, old: str, new: str, rules: Sequence[FreezeRule],
                         ref: str, pusher: str) -> list[Violation]:
    """A non-fast-forward update that drops frozen-path changes made on the ref since the fork.

    Rebasing onto newer history (which changes frozen paths through others' commits) is
    fine; rewinding or force-pushing away a change to a frozen path is not.
    """
    base = checker.repo.merge_base(old, new)
    base_tree = None if base is None else checker.info(base).tree_id
    old_tree, new_tree = checker.info(old).tree_id, checker.info(new).tree_id
    changed_on_ref = {c.path for c, _ in checker.frozen_changes(base_tree, old_tree, rules)}
    out: list[Violation] = []
    for c, hits in checker.frozen_changes(old_tree, new_tree, rules):
        if c.path in changed_on_ref:
            out.extend(Violation(
                code="GATE-FROZEN-REF", ref=ref, commit=new, identity=f"pusher:{pusher}",
                path=display(c.path), rule=r.label,
                detail="the update discards a change to a frozen path made on this ref",
            ) for r in hits)
    return out
