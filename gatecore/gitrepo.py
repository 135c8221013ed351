"""The one module that talks to pygit2.

Everything the gate reads from or writes to a repository goes through `GitRepo`. The
repository is opened with `RepositoryOpenFlag.FROM_ENV` so that, inside a pre-receive
hook, objects still in git's quarantine directory are visible; an object that cannot be
read raises `GitReadError` (fail closed), never "nothing to check".
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import ObjectType, RepositoryOpenFlag

from .errors import ConfigError, DeadlineExceeded, GitReadError

MODE_TREE = 0o040000
MODE_BLOB = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000


@dataclass(frozen=True, slots=True)
class Change:
    """One path that differs between two trees (recursive, no rename detection).

    A side where the path is absent has mode 0 and the zero id.
    """

    path: bytes
    old_mode: int
    new_mode: int
    old_id: str
    new_id: str


@dataclass(frozen=True, slots=True)
class CommitInfo:
    id: str
    tree_id: str
    parent_ids: tuple[str, ...]
    author_email: str
    committer_email: str


#: Trees whose kept entries are remembered (a walk reads a commit's tree, then its parent's).
KEPT_CACHE_ENTRIES = 4096

Entries = dict[bytes, tuple[int, str]]
Level = tuple[bytes, Entries, Entries]


def _duplicate_entries(tree_id: str) -> Exception:
    from .errors import InputError

    return InputError("GATE-GIT-MALFORMED", f"tree {tree_id} has two entries of one name (git fsck: duplicateEntries)")


#: Decides, for a directory path (no trailing slash, b"" for the root), whether any path
#: below it could matter. Used to prune tree walks; `None` walks everything.
DescendFilter = Callable[[bytes], bool]


def _sha256_repository(git_dir: str) -> bool:
    """True if the repository at git_dir declares the sha256 object format."""
    try:
        text = (Path(git_dir) / "config").read_text("utf-8", errors="replace")
    except OSError:
        return False
    squashed = text.replace(" ", "").replace("\t", "").lower()
    return "objectformat=sha256" in squashed


class GitRepo:
    """A repository handle. Not thread-safe; one per process."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self._blob_digests: dict[str, str] = {}
        self._kept: dict[tuple[str, bytes, DescendFilter], dict[bytes, tuple[int, str]]] = {}
        self.object_format = "sha1"
        self.zero_id = "0" * 40

    # --- opening -------------------------------------------------------------
    @classmethod
    def from_env(cls) -> GitRepo:
        """Open the repository of a running hook: GIT_DIR plus the quarantine, from the env."""
        git_dir = os.environ.get("GIT_DIR", ".")
        # A hook is its own short process that keeps what it needs (tree entries, digests):
        # libgit2's object cache for commits and trees would only hold memory (30+ MiB at 50k commits).
        pygit2.settings.cache_object_limit(ObjectType.COMMIT, 0)
        pygit2.settings.cache_object_limit(ObjectType.TREE, 0)
        return cls._open(git_dir, RepositoryOpenFlag.FROM_ENV)

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> GitRepo:
        """Open a repository by path (work tree or git dir), for commands outside hooks."""
        return cls._open(os.fspath(path), RepositoryOpenFlag(0))

    @classmethod
    def _open(cls, path: str, flags: RepositoryOpenFlag) -> GitRepo:
        try:
            repo = pygit2.Repository(path, flags=flags)
        except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
            if _sha256_repository(path) or _sha256_repository(os.path.join(path, ".git")):
                raise ConfigError(
                    "GATE-GIT-OBJECT-FORMAT", f"{path} uses the sha256 object format, which this gate cannot read"
                ) from None
            raise GitReadError(f"cannot open repository {path}: {exc}", "GATE-GIT-REPOSITORY") from None
        return cls(repo)

    @property
    def path(self) -> str:
        return str(self._repo.path)

    @property
    def workdir(self) -> str | None:
        wd = self._repo.workdir
        return None if wd is None else str(wd)

    # --- objects ---------------------------------------------------------------
    def _get(self, oid: str) -> pygit2.Object:
        try:
            obj = self._repo.get(oid)
        except (pygit2.GitError, ValueError) as exc:
            raise GitReadError(f"cannot read object {oid}: {exc}") from None
        if obj is None:
            raise GitReadError(f"object {oid} is not in the repository (quarantine not visible?)")
        return obj

    def object_type(self, oid: str) -> str:
        """'commit', 'tree', 'blob' or 'tag'; GitReadError if the object is absent."""
        try:
            otype, _size = self._repo.odb.read_header(oid)
        except (KeyError, pygit2.GitError, ValueError):
            raise GitReadError(f"object {oid} is not in the repository (quarantine not visible?)") from None
        names = {ObjectType.COMMIT: "commit", ObjectType.TREE: "tree",
                 ObjectType.BLOB: "blob", ObjectType.TAG: "tag"}
        return names.get(otype, "unknown")

    def object_size(self, oid: str) -> int:
        try:
            _otype, size = self._repo.odb.read_header(oid)
        except (KeyError, pygit2.GitError, ValueError):
            raise GitReadError(f"object {oid} is not in the repository") from None
        return int(size)

    def exists(self, oid: str) -> bool:
        try:
            return oid in self._repo.odb
        except (pygit2.GitError, ValueError):
            return False

    def peel_to_commit(self, oid: str) -> str | None:
        """The commit an object (commit or tag chain) resolves to, or None for trees/blobs."""
        obj = self._get(oid)
        for _ in range(32):
            if isinstance(obj, pygit2.Commit):
                return str(obj.id)
            if isinstance(obj, pygit2.Tag):
                obj = self._get(str(obj.target))
                continue
            return None
        raise GitReadError(f"tag chain at {oid} is too deep")

    def commit(self, oid: str) -> CommitInfo:
        obj = self._get(oid)
        if not isinstance(obj, pygit2.Commit):
            raise GitReadError(f"object {oid} is not a commit")
        return CommitInfo(
            id=str(obj.id),
            tree_id=str(obj.tree_id),
            parent_ids=tuple(str(p) for p in obj.parent_ids),
            author_email=obj.author.raw_email.decode("utf-8", "surrogateescape"),
            committer_email=obj.committer.raw_email.decode("utf-8", "surrogateescape"),
        )

    def blob(self, oid: str) -> bytes:
        obj = self._get(oid)
        if not isinstance(obj, pygit2.Blob):
            raise GitReadError(f"object {oid} is not a blob")
        return bytes(obj.data)

    def blob_sha256(self, oid: str) -> str:
        """SHA-256 of a blob's bytes; each blob is read at most once per process."""
        digest = self._blob_digests.get(oid)
        if digest is None:
            obj = self._get(oid)
            if not isinstance(obj, pygit2.Blob):
                raise GitReadError(f"object {oid} is not a blob")
            # The buffer protocol hands libgit2's bytes to OpenSSL: `obj.data` costs a second
            # pass over every blob (as much as reading it).
            digest = hashlib.sha256(memoryview(obj)).hexdigest()
            self._blob_digests[oid] = digest
        return digest

    def tree_entries(self, tree_id: str) -> dict[bytes, tuple[int, str]]:
        """Top-level entries of a tree: name -> (mode, id)."""
        tree = self._get(tree_id)
        if not isinstance(tree, pygit2.Tree):
            raise GitReadError(f"object {tree_id} is not a tree")
        out = {e.raw_name or b"": (int(e.filemode), str(e.id)) for e in tree}
        if len(out) != len(tree):
            raise _duplicate_entries(tree_id)
        return out

    def _kept_entries(self, tree_id: str, prefix: bytes, descend: DescendFilter) -> dict[bytes, tuple[int, str]]:
        """The entries of a tree at `prefix` whose path `descend` keeps; each (tree, prefix, filter) read once.

        Only kept entries pay for their mode and id (pygit2 builds a FileMode enum per
        entry); the others are skipped by name.
        """
        key = (tree_id, prefix, descend)
        got = self._kept.get(key)
        if got is None:
            tree = self._get(tree_id)
            if not isinstance(tree, pygit2.Tree):
                raise GitReadError(f"object {tree_id} is not a tree")
            got = {}
            names: set[bytes] = set()
            for e in tree:
                name = e.raw_name or b""
                if name in names:
                    raise _duplicate_entries(tree_id)
                names.add(name)
                if descend(prefix + name):
                    got[name] = (int(e.filemode), str(e.id))
            if len(self._kept) >= KEPT_CACHE_ENTRIES:
                self._kept.clear()  # bounded: a parent's tree is needed right after its child's
            self._kept[key] = got
        return got

    # --- refs ------------------------------------------------------------------
    def ref_targets(self, keep: Callable[[bytes], bool] | None = None) -> dict[bytes, str]:
        """Direct refs (name -> target id); symbolic refs are skipped."""
        out: dict[bytes, str] = {}
        try:
            for ref in self._repo.listall_reference_objects():
                name: bytes = ref.raw_name
                if keep is not None and not keep(name):
                    continue
                target = ref.target
                if isinstance(target, pygit2.Oid):
                    out[name] = str(target)
        except pygit2.GitError as exc:
            raise GitReadError(f"cannot list refs: {exc}") from None
        return out

    def _lookup(self, name: str) -> pygit2.Reference | None:
        try:
            return self._repo.references.get(name)
        except (pygit2.GitError, ValueError) as exc:
            raise GitReadError(f"cannot read ref {name}: {exc}") from None

    def ref_target(self, name: str) -> str | None:
        ref = self._lookup(name)
        target = None if ref is None else ref.target
        return str(target) if isinstance(target, pygit2.Oid) else None

    def symbolic_target(self, name: str) -> str | None:
        """The ref a symbolic ref points to, or None for a direct or absent ref."""
        ref = self._lookup(name)
        target = None if ref is None else ref.target
        return target if isinstance(target, str) else None

    # --- history ---------------------------------------------------------------
    def new_commits(self, tips: Iterable[str], hide: Iterable[str] | None,
                    deadline: float | None = None) -> list[str]:
        """Commits reachable from `tips` and from none of `hide` (`rev-list TIPS --not HIDE`)."""
        return [c.id for c in self.new_commit_infos(tips, hide, deadline)]

    def new_commit_infos(self, tips: Iterable[str], hide: Iterable[str] | None,
                         deadline: float | None = None) -> list[CommitInfo]:
        """`new_commits`, each with what the frozen-file check needs, from one `git rev-list`.

        `hide` None means every branch and tag (`--not --branches --tags`). Run by git
        itself: it walks past many hidden refs far faster than libgit2's revwalk, and in a
        hook it inherits GIT_DIR and the quarantine's object directories, so it sees the
        pushed objects (a missing object is an error, never "nothing new"). Tree, parents
        and emails come with each id, so no commit is read a second time.
        """
        start = [c for c in (self.peel_to_commit(t) for t in tips) if c is not None]
        if not start:
            return []
        args = ["git", f"--git-dir={self.path}", "-c", "i18n.logOutputEncoding=", "rev-list",
                "--no-commit-header", "--format=%H %T %P%x00%ae%x00%ce", *start]
        data = b""
        if hide is None:
            args += ["--not", "--branches", "--tags"]
        else:
            args.append("--stdin")
            data = "".join(f"^{oid}\n" for oid in hide).encode("ascii")
        timeout = None if deadline is None else deadline - time.monotonic()
        if timeout is not None and timeout <= 0:
            raise DeadlineExceeded("out of time before walking history")
        try:
            proc = subprocess.run(args, input=data, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise DeadlineExceeded("walking history: git rev-list ran out of time") from None
        except OSError as exc:
            raise GitReadError(f"cannot run git rev-list: {exc.strerror}") from None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitReadError(f"cannot walk history: {err[-1] if err else f'git exit {proc.returncode}'}")
        out = []
        for line in proc.stdout.split(b"\n"):
            if not line:
                continue
            try:
                ids, author, committer = line.split(b"\0")
            except ValueError:
                raise GitReadError(f"git rev-list printed an unexpected line {line[:80]!r}") from None
            oid, tree, *parents = ids.decode("ascii").split()
            out.append(CommitInfo(oid, tree, tuple(parents), author.decode("utf-8", "surrogateescape"),
                                  committer.decode("utf-8", "surrogateescape")))
        return out

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if ancestor == descendant:
            return True
        try:
            return bool(self._repo.descendant_of(descendant, ancestor))
        except (pygit2.GitError, KeyError, ValueError) as exc:
            raise GitReadError(f"cannot compare {ancestor} and {descendant}: {exc}") from None

    # --- tree deltas -----------------------------------------------------------
    def tree_changes(self, old_tree: str | None, new_tree: str | None,
                     descend: DescendFilter | None = None) -> list[Change]:
        """Recursive tree-to-tree changes, no rename detection, identical subtrees skipped.

        `None` for a side means the empty tree. With `descend`, directories for which it
        returns False are not entered (their changes are not reported).
        """
        out: list[Change] = []
        # An explicit stack, not recursion: a pushed tree may be nested thousands deep.
        stack = [(b"", self._entries(old_tree, b"", descend), self._entries(new_tree, b"", descend))]
        while stack:
            prefix, old, new = stack.pop()
            self._diff_level(prefix, old, new, descend, out, stack)
        out.sort(key=lambda c: c.path)
        return out

    def _entries(self, tree_id: str | None, prefix: bytes,
                 descend: DescendFilter | None) -> dict[bytes, tuple[int, str]]:
        if tree_id is None:
            return {}
        if descend is None:
            return self.tree_entries(tree_id)
        # A path descend() rejects cannot match below itself, so it cannot match either.
        return self._kept_entries(tree_id, prefix, descend)

    def _diff_level(self, prefix: bytes, old: dict[bytes, tuple[int, str]], new: dict[bytes, tuple[int, str]],
                    descend: DescendFilter | None, out: list[Change], stack: list[Level]) -> None:
        """The changes at one directory level; subdirectories to compare go on `stack`."""
        zero = self.zero_id
        for name in old.keys() | new.keys():
            o = old.get(name)
            n = new.get(name)
            if o == n:
                continue
            path = prefix + name
            o_tree = o is not None and o[0] == MODE_TREE
            n_tree = n is not None and n[0] == MODE_TREE
            if (o_tree or n_tree) and descend is not None and not descend(path):
                # Nothing below can matter; a non-tree side at this path still can.
                o = None if o_tree else o
                n = None if n_tree else n
                o_tree = n_tree = False
                if o == n:
                    continue
            if o_tree or n_tree:
                sub_old = self._entries(o[1], path + b"/", descend) if o_tree and o is not None else {}
                sub_new = self._entries(n[1], path + b"/", descend) if n_tree and n is not None else {}
                stack.append((path + b"/", sub_old, sub_new))
                # The non-tree side (file <-> directory swap) is its own change.
                o = None if o_tree else o
                n = None if n_tree else n
                if o is None and n is None:
                    continue
            out.append(Change(
                path=path,
                old_mode=o[0] if o else 0,
                new_mode=n[0] if n else 0,
                old_id=o[1] if o else zero,
                new_id=n[1] if n else zero,
            ))

    # --- writing (trusted side and tests only; never from a hook) --------------
    def write_tree(self, files: dict[str, bytes]) -> str:
        """A flat tree of regular files (names without '/')."""
        builder = self._repo.TreeBuilder()
        for name, data in sorted(files.items()):
            builder.insert(name, self._repo.create_blob(data), MODE_BLOB)
        return str(builder.write())

    def write_commit(self, tree_id: str, parents: list[str], message: str,
                     name: str, email: str, when: int | None = None) -> str:
        stamp = int(time.time()) if when is None else when
        sig = pygit2.Signature(name, email, stamp, 0)
        oid = self._repo.create_commit(None, sig, sig, message, pygit2.Oid(hex=tree_id),
                                       [pygit2.Oid(hex=p) for p in parents])
        return str(oid)

    def set_ref(self, name: str, target: str, expected_old: str | None) -> None:
        """Compare-and-swap a direct ref (`expected_old` None means: must not exist)."""
        current = self.ref_target(name)
        if current != expected_old:
            raise GitReadError(f"ref {name} moved: expected {expected_old}, found {current}",
                               "GATE-LEDGER-REWRITE")
        self._repo.references.create(name, pygit2.Oid(hex=target), force=current is not None)

    def resolve(self, rev: str) -> str:
        """A revision expression to a commit id."""
        try:
            obj = self._repo.revparse_single(rev)
        except (KeyError, pygit2.GitError, ValueError) as exc:
            raise GitReadError(f"cannot resolve {rev!r}: {exc}") from None
        commit = self.peel_to_commit(str(obj.id))
        if commit is None:
            raise GitReadError(f"{rev!r} does not name a commit")
        return commit


    def merge_base(self, a: str, b: str) -> str | None:
        try:
            oid = self._repo.merge_base(a, b)
        except (pygit2.GitError, KeyError, ValueError) as exc:
            raise GitReadError(f"cannot find the merge base of {a} and {b}: {exc}") from None
        return None if oid is None else str(oid)
