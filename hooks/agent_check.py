"""`gate agents check`: a coding agent's pre-tool hook. Would the server refuse the commit this tool
call's writes would become?

The agent runs this before each tool call, with the call as JSON on stdin (docs/agent-hooks.md).
The call is read by its agent's adapter (`gatecore.toolcalls`: which tool, which paths, which
shell command), the paths made relative to the work tree, and the engine judges them as a
commit-to-be (`pipeline.judge` on `Writes`): the policy committed in HEAD (the client hooks' copy
and validated cache, `hooks/clientconfig.py`), the identity git would record (`git var`, as the
commit hook reads it), the marks the agent's commits carry (its catalogue entry), `GATE_PUSHER`.

Before the engine, what no policy needs to weigh: a shell command that switches a gate hook off
(`--no-verify`, `core.hooksPath`, `pre-commit uninstall`), and a write to any agent's hook
configuration or into the git directory's hooks and config, are refused
(`GATE-AGENT-HOOKS-OFF`). A write outside the work tree is not the gate's; a call that writes
nothing is allowed at once, without starting git.

The answer is the agent's (its adapter's `deny`): a refusal as the agent documents one, exit
status 2 wherever the agent honours it. One error boundary, `main`: anything that is not a proven
allow is a refusal in the agent's own words, with a `GATE-AGENT-*` code (an unreadable payload, a
write without a path, a policy that does not parse, an error of the gate's own), and so is a check
that runs past `DEADLINE_SECONDS` (a watchdog answers for it: Copilot takes a hook's time-out for
an allow).
"""

from __future__ import annotations

import os
import sys

from gatecore.errors import GateError
from gatecore.toolcalls.toolcall import DELETE, MODIFY, Answer, PathWrite, ToolCall, adapter, detect, read_payload
from gatecore.valueclass import valueclass

TYPE_CHECKING = False  # (typing's, as mypy reads it: `typing` is not imported on this road)
if TYPE_CHECKING:
    import argparse
    import signal as _signal
    from collections.abc import Iterator, Sequence

    from gatecore.configuration.policy import Policy
    from gatecore.toolcalls.toolcall import Adapter
else:
    import _signal  # (the C module under `signal`, loaded at every start: its enums cost half a millisecond)

#: How long the check may take before it refuses the call (well inside every agent's hook time-out).
DEADLINE_SECONDS = 20.0
#: git's variables that point it at a repository other than the one a path is in: the check finds each
#: path's repository from the path (and judges the one they name as well).
GIT_REPOSITORY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                            "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX")
#: The policy the client hooks read, as committed.
POLICY_FILE = ".gate/policy.toml"
#: Writes into the git directory that switch the client hooks off (relative to the git directory): `gate`
#: holds the committed policy's validated form, which the client hooks and this check take in its place.
GIT_DIR_HOOK_FILES = ("hooks", "config", "config.worktree", "info/attributes", "gate")
_GLOB = frozenset("*?[")


def plain(text: str) -> str:
    """`text` on one line, as the model is shown what the tool call named: line breaks, controls and
    other unprintable characters (bidirectional overrides) escaped, so it adds no line of its own."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def refusal(code: str, detail: str, hint: str | None = None) -> str:
    """The reason the model reads: the code, what is refused, and what to do instead."""
    if hint is None:
        from gatecore import codes

        hint = codes.CODES[code].hint if code in codes.CODES else ""
    return f"{code}: {plain(detail)}" + (f"\nWhat to do: {hint}" if hint else "") + \
        "\n(push-gate's agent check, run before each tool call: docs/agent-hooks.md)"


def _relative(top: str, path: str) -> str | None:
    """`path` (absolute, normalised) relative to the work tree `top`, or None outside it."""
    if path == top:
        return ""
    if path.startswith(top.rstrip("/") + "/"):
        return path[len(top.rstrip("/")) + 1:]
    return None


def _expand(base: str, path: str) -> list[str]:
    """`path` as the tool names it, absolute: `~` and globs expanded as the shell would (a glob that
    matches nothing stays as written, as in the shell)."""
    full = os.path.normpath(os.path.join(base, os.path.expanduser(path)))
    if _GLOB & set(path):
        import glob

        return sorted(glob.glob(full)) or [full]
    return [full]


class Targets:
    """The call's writes as paths of the work trees they are in (a write through a symlink counted at
    both ends: the path named and the file it reaches), and the writes that switch a hook off.

    The repository is the written path's, not the call's directory's (a session's directory follows
    its `cd`s; a write may reach another work tree, an outer one, or a git directory): each path is
    judged in every work tree found holding it (`Repositories`)."""

    def __init__(self, repositories: Repositories) -> None:
        self.repositories = repositories
        self._hooks: dict[str | None, Sequence[str]] = {}
        self._links: dict[str, dict[tuple[int, int], list[str]]] = {}  # `_hard_links`'
        self.writes: dict[str, tuple[Where, list[tuple[str, str, bool]]]] = {}  # top -> (relative path, kind, tree)
        self.off: list[str] = []

    def hook_files(self, top: str | None, full: str, tree: bool) -> Sequence[str]:
        """The agents' hook files (in the work tree `top`, and in the home), listed once the first path
        that could be one, or hold one, is seen (every one of them is below a directory whose name
        starts with a dot)."""
        if "/." not in full and not tree:
            return ()
        if top not in self._hooks:
            self._hooks[top] = hook_files(top)
        return self._hooks[top]

    def add(self, base: str, w: PathWrite) -> None:
        for full in _expand(base, w.path):
            spread = _spread(base, full, w) if w.tree else None
            if spread is None and w.tree and w.kind == DELETE and not w.source:
                spread = self._tracked_below(full)
            for candidate in sorted({full, os.path.realpath(full)}):
                self._one(candidate, w, spread is None)
            flat = PathWrite(w.path, w.kind)
            for path in spread or ():
                for candidate in sorted({path, os.path.realpath(path)}):
                    self._one(candidate, flat)

    def _tracked_below(self, full: str) -> list[str] | None:
        """A recursive delete of a directory too large to judge file by file (`MAX_TREE_FILES`: a
        `node_modules`, a `.venv`) as what it changes in a commit: the directory and the files git
        tracks below it (deleting an untracked file changes no commit). None where that is not known:
        a link, a directory in no work tree or in several, a repository below it, a directory that
        cannot be read, git failing, or more than `MAX_TREE_FILES` tracked files."""
        from gatecore.adapters.gitcmd import run_git

        if os.path.islink(full) or not os.path.isdir(full):
            return None
        holders = self.repositories.of(full)
        rel = _relative(holders[0].top, full) if len(holders) == 1 else None
        if not rel or _inside_git_dir(holders[0], full) is not None:
            return None
        try:
            for _root, dirs, files in os.walk(full, onerror=_raise):
                if ".git" in dirs or ".git" in files:
                    return None  # a nested repository, a submodule: its own files, its own policy
        except OSError:
            return None
        out = run_git(["--literal-pathspecs", "ls-files", "-z", "--", rel], cwd=holders[0].top, ok=None)
        tracked = [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
        if not out.ok or len(tracked) > MAX_TREE_FILES:
            return None
        return [full] + [os.path.join(holders[0].top, p) for p in tracked]

    def _one(self, full: str, w: PathWrite, judged: bool = True) -> None:
        """One path: a write that switches a hook off, and (`judged`) a write of the work trees holding it."""
        holders = self.repositories.of(full)
        if self._switches_off(full, w, holders) or not judged:
            return
        if w.tree:  # a work tree below the directory, whole (its files past `MAX_TREE_FILES`)
            for where in self.repositories.known:
                if _relative(full, where.top) and where not in holders:
                    self.writes.setdefault(where.top, (where, []))[1].append(("", w.kind, True))
        for where in holders:
            rel = _relative(where.top, full)
            if rel or (rel == "" and w.tree):
                self.writes.setdefault(where.top, (where, []))[1].append((rel, w.kind, w.tree))
            if rel and not w.tree and w.kind != DELETE:  # (a delete unlinks this name only: the others keep it)
                for other in _hard_links(where.top, full, self._links):  # (the same file, other names: written too)
                    self.writes[where.top][1].append((other, MODIFY, False))

    def _switches_off(self, full: str, w: PathWrite, holders: Sequence[Where]) -> bool:
        """Note a write that switches a hook off; True for one in a git directory (no work tree's)."""
        if _runs_the_check(full, w.tree):
            self.off.append(f"a write to {full} (what runs this check: the gate program, its Python)")
        key = _fold(full)
        if any(key == f or (w.tree and _relative(key, f)) for f in _git_config_files()):
            self.off.append(f"a write to {full} (git's own configuration, which can name other hooks)")
        for where in self.repositories.known:  # `core.hooksPath`: a directory of the work tree, or any
            hooks = _fold(where.hooks_dir)
            if _inside_git_dir(where, where.hooks_dir) is None and (
                    _relative(hooks, key) is not None or (w.tree and _relative(key, hooks)
                                                          and os.path.lexists(where.hooks_dir))):
                self.off.append(f"a write to {full} (the directory git runs the hooks from: core.hooksPath)")
        for where in holders:
            inside_git = _inside_git_dir(where, full)
            if inside_git is not None:
                if inside_git == "" or any(inside_git == f or inside_git.startswith(f + "/")
                                           for f in GIT_DIR_HOOK_FILES):
                    self.off.append(f"a write to {full} (the git directory's hooks and configuration)")
                return True
        tops: list[str | None] = [where.top for where in holders] or [None]
        for top in tops:
            if any(key == _fold(f.rstrip("/")) or (f.endswith("/") and _relative(_fold(f.rstrip("/")), key))
                   or (w.tree and _relative(key, _fold(f.rstrip("/"))) and os.path.lexists(f))
                   for f in self.hook_files(top, full, w.tree)):
                self.off.append(f"a write to {full} (an agent's hook configuration)")
        return False


def _hard_links(top: str, full: str, indexes: dict[str, dict[tuple[int, int], list[str]]]) -> list[str]:
    """The other names of the regular file `full` in the work tree `top` (relative to it), where it
    has more than one: a write to it is a write to each. (`indexes`: each work tree's hard-linked
    files by inode, `_hard_link_index`, read once for the call: not a walk of the work tree per file.)"""
    try:
        st = os.lstat(full)
    except OSError:
        return []
    if st.st_nlink < 2 or not os.path.isfile(full) or os.path.islink(full):
        return []
    if top not in indexes:
        indexes[top] = _hard_link_index(top, full)
    return [p for p in indexes[top].get((st.st_dev, st.st_ino), ()) if os.path.join(top, p) != full]


def _hard_link_index(top: str, full: str) -> dict[tuple[int, int], list[str]]:
    """The regular files of the work tree `top` with more than one name, by (device, inode)."""
    import stat

    index: dict[tuple[int, int], list[str]] = {}
    try:
        for root, _dirs, files in _walk(top):
            for name in files:
                path = os.path.join(root, name)
                try:
                    other = os.lstat(path)
                except OSError:
                    continue
                if other.st_nlink > 1 and stat.S_ISREG(other.st_mode):
                    index.setdefault((other.st_dev, other.st_ino), []).append(os.path.relpath(path, top))
    except OSError as exc:  # (an unreadable directory may hold another name of it: not proven none)
        raise GateError("GATE-AGENT-CONFIG", f"the work tree {top} cannot be read whole to find the other names "
                                             f"of the hard-linked file {full}: {exc}") from None
    return index


#: How many files below a directory a write that reaches below it is judged by, one by one (past it:
#: the directory as a whole, where any rule that may match below it counts).
MAX_TREE_FILES = 20000


def _spread(base: str, full: str, w: PathWrite) -> list[str] | None:
    """A write that reaches below a directory as the paths it reaches: the path itself, and the files
    below its `source` (a copy, a move: as they will be below it) or, without one, below it (a
    recursive delete, a mode change). None where that is not on disk to be read (or is larger than
    `MAX_TREE_FILES`): the directory is then judged whole."""
    source = os.path.normpath(os.path.join(base, os.path.expanduser(w.source))) if w.source else None
    origin = source if source is not None and os.path.lexists(source) else None if source is not None else full
    if origin is None or not os.path.lexists(origin):
        # nothing there: nothing below it to reach, but what a checkout brings back (or a copy of what is not there yet)
        return [full] if source is None and w.kind != MODIFY else None
    if not os.path.isdir(origin):
        return [full]
    # a link to a directory: what is below its target (`rm -rf link/` empties the target), as named there
    walked, named = (os.path.realpath(origin), full if source is not None else os.path.realpath(full)) \
        if os.path.islink(origin) else (origin, full)
    out = [full]
    try:
        for root, dirs, files in _walk(walked):
            for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
                out.append(os.path.join(named, os.path.relpath(os.path.join(root, name), walked)))
                if len(out) > MAX_TREE_FILES:
                    return None
    except OSError:
        return None  # a directory below it that cannot be read: what it holds is not known, the whole is judged
    return out


def _walk(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)` past the git directories (no work tree's files), raising the OSError of a
    directory it cannot read (`os.walk` alone skips one silently: its files would go unjudged)."""
    for root, dirs, files in os.walk(top, onerror=_raise):
        dirs[:] = [d for d in dirs if d != ".git"]
        yield root, dirs, files


def _raise(exc: OSError) -> None:
    raise exc


def _fold(path: str) -> str:
    """`path` as a case-insensitive, normalising file system may take it (macOS: `.GIT/HOOKS` is
    `.git/hooks`): the frozen paths' comparison (`normalize_path`), for what is always refused.
    (Remembered: the same directories and names come back for each file of a tree.)"""
    folded = _FOLDED.get(path)
    if folded is None:
        from gatecore.configuration.policy import normalize_path

        folded = _FOLDED[path] = normalize_path(path)
    return folded


_FOLDED: dict[str, str] = {}


def _inside_git_dir(where: Where, full: str) -> str | None:
    """`full` relative to the repository's git directory, or to the common one a linked worktree
    shares (its hooks and configuration: a linked worktree's own config.worktree below
    `worktrees/NAME/` counted as one); None outside both."""
    key = _fold(full)
    common = _relative(_fold(where.common_dir), key)
    if common is not None and common.startswith("worktrees/") and common.count("/") >= 2:
        return common.split("/", 2)[2]  # (also where the common directory is `where`'s own: the main worktree's)
    inside = _relative(_fold(where.git_dir), key)
    return inside if inside is not None else common


_OWN: list[str] = []
_GIT_CONFIG: list[str] = []


def _git_config_files() -> list[str]:
    """git's configuration outside the repositories (folded: `_fold`): the user's (`~/.gitconfig`,
    the XDG one, `GIT_CONFIG_GLOBAL`) and the system's, any of which can set `core.hooksPath`."""
    if not _GIT_CONFIG:
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        found = [os.path.join(os.path.expanduser("~"), ".gitconfig"), os.path.join(xdg, "git/config"),
                 os.environ.get("GIT_CONFIG_GLOBAL", ""), os.environ.get("GIT_CONFIG_SYSTEM", ""), "/etc/gitconfig"]
        _GIT_CONFIG.extend(dict.fromkeys(_fold(p) for f in found if f for p in (os.path.abspath(f),
                                                                              os.path.realpath(f))))
    return _GIT_CONFIG


def _runs_the_check(full: str, tree: bool) -> bool:
    """Whether a write to `full` changes what the agent's hook runs for this check (below it, for a
    `tree` write): the `gate` program, a `gate` put in a directory of PATH ahead of it, the Python
    environment it runs in (its site-packages: the gate's code, the `.pth` files run at every start;
    the standard library). (The gate's code installed editable, from a checkout, is the checkout's
    to freeze in its policy.)"""
    if not _OWN:
        import site
        import sys

        program = [sys.argv[0]] if os.path.basename(sys.argv[0]) == "gate" else []
        found = [*program, sys.executable, *site.getsitepackages(), site.getusersitepackages(),
                 os.path.dirname(os.__file__)]
        _OWN.extend(dict.fromkeys(_fold(p) for f in found if f for p in (os.path.abspath(f), os.path.realpath(f))))
    key = _fold(full)
    if any(key == f or _relative(f, key) or (tree and _relative(key, f)) for f in _OWN):
        return True
    if os.path.basename(key) == "gate":
        folder = os.path.dirname(key)
        return any(folder in (_fold(os.path.abspath(d)), _fold(os.path.realpath(d)))
                   for d in os.environ.get("PATH", "").split(os.pathsep) if d)
    return False


def hook_files(top: str | None) -> list[str]:
    """Every agent's hook configuration files: in the work tree `top` (None: none), and in the user's home."""
    from gatecore.toolcalls.toolcall import AGENTS

    home = os.path.realpath(os.path.expanduser("~"))
    out = []
    for name in AGENTS:
        module = adapter(name)
        out += [os.path.join(top, f) for f in module.PROJECT_FILES if top is not None]
        out += [os.path.join(home, f) for f in module.USER_FILES]
    return out


@valueclass(frozen=True, slots=True)
class Where:
    """The repository a tool call writes in, from one `git rev-parse`."""

    git_dir: str
    common_dir: str  # the git directory a linked worktree shares with the main one (its hooks, its config)
    hooks_dir: str  # where git runs hooks from (`core.hooksPath`, else the common directory's `hooks`)
    top: str  # the work tree (its real path)
    object_format: str
    branch: str | None  # the checked-out branch (None: a detached HEAD)
    policy_blob: str | None  # `.gate/policy.toml` in HEAD (None: not there, or no HEAD yet)


def locate(base: str, env: dict[str, str] | None = None) -> Where | None:
    """The work tree `base` is in (None: none, a bare repository: the writes are not the gate's).
    One git process when HEAD holds the policy, the common case; two otherwise. (`env`: git's
    variables that name a repository, where the agent's environment sets them.)"""
    from gatecore.adapters.gitcmd import run_git

    asked = ["rev-parse", "--absolute-git-dir", "--git-common-dir", "--show-toplevel", "--show-object-format",
             "--git-path", "hooks"]
    out = run_git([*asked, f"HEAD:{POLICY_FILE}", "--symbolic-full-name", "HEAD"], cwd=base, ok=None, env=env)
    lines = out.stdout.decode("utf-8", "surrogateescape").splitlines()
    blob: str | None = None
    if out.ok and len(lines) == 7:
        git_dir, common, top, fmt, hooks, blob, head = lines
    else:
        again = run_git([*asked, "--symbolic-full-name", "HEAD"], cwd=base, ok=None, env=env)
        if not again.ok and not again.stdout:
            return None  # not a repository, or no work tree: nothing the gate judges
        lines = again.stdout.decode("utf-8", "surrogateescape").splitlines()
        if len(lines) < 5:
            return None  # a bare repository, or inside a git directory: no work tree
        git_dir, common, top, fmt, hooks = lines[:5]
        head = lines[5] if again.ok and len(lines) > 5 else "HEAD"  # (no HEAD yet: an unborn branch)
    real = os.path.realpath
    return Where(real(git_dir), real(os.path.join(base, common)), real(os.path.join(base, hooks)), real(top), fmt,
                 head if head.startswith("refs/") else None, blob)


class Repositories:
    """The work trees that hold the paths a call writes, each found once by `locate`, from the paths
    themselves (git's variables that name a repository taken out of the environment first:
    `GIT_REPOSITORY_VARIABLES`)."""

    def __init__(self) -> None:
        self.known: list[Where] = []
        self._asked: dict[str, Where | None] = {}
        self._of: dict[tuple[str, int], list[Where]] = {}  # (directory, work trees known) -> those holding it

    def named(self, base: str, env: dict[str, str]) -> None:
        """The repository `GIT_DIR`/`GIT_WORK_TREE` in the agent's environment name, known too."""
        where = locate(base, env)
        if where is not None and all(k.top != where.top for k in self.known):
            self.known.append(where)

    def at(self, directory: str) -> Where | None:
        if directory not in self._asked:
            where = self._asked[directory] = None if self._outside(directory) else locate(directory)
            if where is not None and all(k.top != where.top for k in self.known):
                self.known.append(where)
        return self._asked[directory]

    def _outside(self, directory: str) -> bool:
        """Whether `directory` is below one found in no work tree, with no `.git` between them: git finds
        none from it either (it looks no further than that `.git` and the directories above it), and is
        not asked again (a recursive write outside any repository: one directory asked, not each)."""
        while not os.path.lexists(os.path.join(directory, ".git")):
            parent = os.path.dirname(directory)
            if parent == directory:
                return False
            if parent in self._asked:
                return self._asked[parent] is None
            directory = parent
        return False

    def of(self, full: str) -> list[Where]:
        """Every known work tree that holds `full` (absolute, normalised), and the innermost one, found
        from the path's own directory: the work tree a `.git` in the path belongs to, else the
        nearest directory of the path that exists."""
        parts = full.split("/")
        git_at = next((i for i in range(len(parts) - 1, 0, -1) if _fold(parts[i]) == ".git"), -1)
        if git_at >= 0:  # (as the file system may take it: `.GIT` is `.git` on macOS)
            directory = "/".join(parts[:git_at]) or "/"
        else:
            directory = full
            while not os.path.isdir(directory) and directory != os.path.dirname(directory):
                directory = os.path.dirname(directory)
        holders = self._of.get((directory, len(self.known)))  # (a tree's files: their directory's, once)
        if holders is None:
            holders = [w for w in self.known if _relative(w.top, directory) is not None]
            if not any(not _nested(w.top, directory) for w in holders):
                found = self.at(directory)
                if found is not None and all(h.top != found.top for h in holders):
                    holders.append(found)
            self._of[(directory, len(self.known))] = holders
        return holders + [w for w in self.known if w not in holders and _inside_git_dir(w, full) is not None]


def _nested(top: str, directory: str) -> bool:
    """Whether `directory`, in the work tree `top`, is in another repository below it (a `.git`
    between them: a nested repository, a submodule, a linked worktree)."""
    while directory != top and _relative(top, directory):
        if os.path.lexists(os.path.join(directory, ".git")):
            return True
        directory = os.path.dirname(directory)
    return False


def judge_call(module: Adapter, call: ToolCall, policy_path: str | None) -> Answer:
    """The call's writes judged (the module's docstring); the agent's allow or its refusal."""
    writes = list(call.writes)
    if call.command is not None:
        from gatecore.toolcalls.shellwrites import read_command

        reading = read_command(call.command)
        if reading.off:
            return module.deny(call, refusal("GATE-AGENT-HOOKS-OFF", "; ".join(reading.off)))
        writes += reading.writes
        if reading.patches:
            writes += _patch_writes(call.cwd or os.getcwd(), reading.patches)
    if not writes:
        return module.allow(call)
    base = os.path.realpath(call.cwd or os.getcwd())
    named = {k: os.environ.pop(k) for k in GIT_REPOSITORY_VARIABLES if k in os.environ}
    repositories = Repositories()
    if os.path.isdir(base):
        repositories.at(base)  # the call's own work tree: judged for what it holds (a submodule's outer one)
        if "GIT_DIR" in named or "GIT_WORK_TREE" in named:  # the one the agent's git would commit to as well
            repositories.named(base, {k: os.path.normpath(os.path.join(base, named[k]))  # (as the agent's git: from
                                      for k in ("GIT_DIR", "GIT_WORK_TREE") if k in named})  # the call's directory)
    own = {where.top for where in repositories.known}  # (the call's own work tree, and the one git's variables name)
    targets = Targets(repositories)
    for w in writes:
        targets.add(base, w)
    if targets.off:
        return module.deny(call, refusal("GATE-AGENT-HOOKS-OFF", "; ".join(dict.fromkeys(targets.off))))
    for where, written in targets.writes.values():
        policy = _policy_of(where, policy_path, where.top in own)
        if policy is None or not _freezes_any(policy, where.branch, written):
            continue  # no rule freezes a path it writes: whoever writes it, no rule applies
        reason = _judged(module, where, policy, written)
        if reason is not None:
            return module.deny(call, reason)
    return module.allow(call)


def _policy_of(where: Where, explicit: str | None, own: bool) -> Policy | None:
    """`_policy`, a failure `GATE-AGENT-CONFIG`; None for a repository the call does not work in (`own`
    False: a clone elsewhere, a nested one) that has no policy: no rule of its own applies, and what it
    holds inside the call's own work tree is judged there too."""
    try:
        return _policy(where, explicit)
    except GateError as exc:
        if exc.code == "GATE-CLIENT-NO-POLICY" and not own:
            return None
        raise GateError("GATE-AGENT-CONFIG", f"{exc.code}: {exc.detail}") from None


def _policy(where: Where, explicit: str | None) -> Policy:
    """The policy the client hooks read: `--policy`, else `.gate/policy.toml` as committed in HEAD
    (its validated form found by the blob's id in the client hooks' cache), else as
    `clientconfig` finds it (the work tree's copy before the first commit that has one)."""
    from gatecore.adapters import config

    cache = os.path.join(where.git_dir, "gate", "client-policy.toml")
    if explicit is None and where.policy_blob is not None:
        blob = where.policy_blob
        return config.policy_from_blob_cached(blob, lambda: _blob(where, blob), f"HEAD:{POLICY_FILE}", cache)
    from . import clientconfig
    from .common import ClientRepo

    repo = ClientRepo(where.git_dir, where.top, where.object_format)
    try:
        with _GitDir(where.git_dir):  # (its HEAD, not the HEAD of the repository the hook started in)
            return clientconfig.load_policy(repo, ["HEAD"], explicit)[0]
    finally:
        repo.close()


class _GitDir:
    """The git processes started inside read the repository of `git_dir` (`GIT_DIR`), not the one
    the check's own directory is in (`HEAD` resolved, `git var`'s configuration: a work tree that
    `GIT_DIR` names has no `.git` to be found by)."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir

    def __enter__(self) -> None:
        os.environ["GIT_DIR"] = self.git_dir

    def __exit__(self, *_exc: object) -> None:
        os.environ.pop("GIT_DIR", None)


def _blob(where: Where, blob: str) -> bytes:
    from gatecore.adapters.gitcmd import run_git
    from gatecore.configuration.policy import MAX_POLICY_BYTES

    data = run_git([f"--git-dir={where.git_dir}", "cat-file", "blob", blob]).stdout
    if len(data) > MAX_POLICY_BYTES:
        raise GateError("GATE-CONFIG-POLICY", f"HEAD:{POLICY_FILE} is larger than {MAX_POLICY_BYTES} bytes")
    return data


def _freezes_any(policy: Policy, branch: str | None, writes: Sequence[tuple[str, str, bool]]) -> bool:
    """Does a rule of this branch freeze any path written (the rule's own matching; whoever the writer)?"""
    from gatecore.configuration.policy import normalize_path

    rules = [r for r in policy.rules if branch is None or r.applies_to_ref(branch)]
    for path, _kind, tree in writes:
        norm = normalize_path(path)
        if any(r.matches_path(norm) or (tree and r.may_match_below(norm)) for r in rules):
            return True
    return False


def _patch_writes(base: str, patches: Sequence[str]) -> list[PathWrite]:
    """What the patch files a shell command applies would write (unreadable ones: nothing known)."""
    from gatecore.adapters.files import read_capped
    from gatecore.toolcalls.shellwrites import patch_paths

    out: list[PathWrite] = []
    for p in patches:
        try:
            text = read_capped(os.path.join(base, os.path.expanduser(p)), "GATE-AGENT-PAYLOAD", "patch", 16 << 20)
        except GateError:
            continue  # the patch itself decides nothing here: the server reads the commit
        out += patch_paths(text.decode("utf-8", "surrogateescape"))
    return out


def _judged(module: Adapter, where: Where, policy: Policy, writes: Sequence[tuple[str, str, bool]]) -> str | None:
    """The writes judged by the engine as the commit they would become (`pipeline.judge` on `Writes`):
    the refusal's reason, or None (allowed)."""
    from gatecore.adapters import environment
    from gatecore.checks.frozen import ProposedWrite, writer_for
    from gatecore.git.objects import Objects
    from gatecore.git.refs import ServerRefs
    from gatecore.pipeline import PushInput, Writes, judge

    from .common import ClientRepo
    from .frozen_commit import commit_identities

    os.chdir(where.top)
    with _GitDir(where.git_dir):
        (author, _), (committer, _) = commit_identities()
    pusher = environment.client_env().get("GATE_PUSHER", "").strip() or None
    agents = [a for a in policy.agents if a.id in module.CATALOGUE]
    writer = writer_for((author.name, author.email), (committer.name, committer.email), pusher, agents)
    repo = ClientRepo(where.git_dir, where.top, where.object_format)
    try:
        inp = PushInput(objects=Objects(repo), policy=policy, pusher=pusher or "", now=0, repository_id="",
                        server=ServerRefs(lambda _name: None))
        judged = judge(inp, Writes(where.branch, [ProposedWrite(p, k, t) for p, k, t in writes], writer))
    finally:
        repo.close()
    if judged.verdict.exit_code == 0:
        return None
    lines = []
    for v in judged.violations:
        why = (v.evidence or "").split("; ")[0]  # the strongest reason (the rest are other marks of the same agent)
        lines.append(plain(f"{v.code}: {v.path}: {v.detail} under rule {v.rule}, which restricts this agent's "
                           f"commits ({why})"))
    from gatecore import codes

    hint = codes.CODES["GATE-FROZEN-PATH"].hint
    reason = "\n".join(lines) + f"\nWhat to do: do not write {'it' if len(lines) == 1 else 'them'} from this " \
        f"session. {hint}" + "\n(push-gate's agent check: the server refuses the same commit at push; " \
        "docs/agent-hooks.md)"
    return reason


def arguments(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """(--agent, --policy), read without argparse (an agent runs this before every tool call:
    `hooks.argv`); `--help` and a command line it does not take go to argparse, for its messages."""
    from .argv import namespace

    read = namespace(argv, parser, ("--agent", "--policy"))
    return read.agent, read.policy


def parser() -> argparse.ArgumentParser:
    import argparse

    from gatecore.toolcalls.toolcall import AGENTS

    p = argparse.ArgumentParser(prog="gate agents check", description=(
        "A coding agent's pre-tool hook: read one tool call as JSON on stdin, refuse it in the agent's "
        "own format when the commit it would become writes a frozen path (docs/agent-hooks.md)."))
    p.add_argument("--agent", choices=AGENTS, default=None,
                   help="the agent whose payload this is (default: recognised from the payload's shape)")
    p.add_argument("--policy", default=None,
                   help=".gate/policy.toml as committed in HEAD, unless this file is given")
    return p


class _Held:
    """What the boundary and the deadline answer with: the agent, once known, and the call."""

    module: Adapter | None = None
    call: ToolCall | None = None

    def refuse(self, reason: str) -> Answer:
        if self.module is not None:
            return self.module.deny(self.call, reason)
        from gatecore.toolcalls.claude import deny  # the agent is not known: the form most agents read

        return deny(None, reason)


def _arm_deadline(held: _Held) -> None:
    """Refuse the call if the check has not answered by the deadline (SIGALRM: the process then ends).
    (`_signal`, the C module under `signal`: its enums cost every tool call half a millisecond.)"""

    def expire(_signum: int, _frame: object) -> None:
        answer = held.refuse(refusal("GATE-AGENT-INTERNAL", f"the check did not finish within "
                                                           f"{DEADLINE_SECONDS:.0f} s"))
        _emit(answer)
        os._exit(answer.exit_code)

    _signal.signal(_signal.SIGALRM, expire)
    _signal.setitimer(_signal.ITIMER_REAL, DEADLINE_SECONDS)


def _emit(answer: Answer) -> None:
    if answer.stdout:
        sys.stdout.write(answer.stdout)
        sys.stdout.flush()
    if answer.stderr:
        sys.stderr.write(answer.stderr)
        sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """The one error boundary: every path that is not a proven allow answers with a refusal."""
    agent, policy = arguments(sys.argv[1:] if argv is None else argv)
    held = _Held()
    _arm_deadline(held)
    try:
        if agent is not None:
            held.module = adapter(agent)
        payload = read_payload(sys.stdin.buffer.read())
        if held.module is None:
            held.module = adapter(detect(payload))
        held.call = held.module.read(payload)
        # (`--policy` from where the hook started: `_judged` moves into each work tree it judges)
        answer = judge_call(held.module, held.call, None if policy is None else os.path.abspath(policy))
    except GateError as exc:
        code = exc.code if exc.code.startswith("GATE-AGENT-") else "GATE-AGENT-CONFIG"
        detail = exc.detail if code == exc.code else f"{exc.code}: {exc.detail}"
        answer = held.refuse(refusal(code, detail))
    except Exception as exc:  # the boundary: an error of the gate's own refuses, never allows
        answer = held.refuse(refusal("GATE-AGENT-INTERNAL", f"{type(exc).__name__}: {exc}"))
    _signal.setitimer(_signal.ITIMER_REAL, 0)
    _emit(answer)
    return answer.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
