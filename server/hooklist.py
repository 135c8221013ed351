"""What git runs at pre-receive (and at post-receive), read through git as the running version reads it.

Git runs the hook file it finds by name in its hooks directory (`core.hooksPath`, from any
config, moves that directory) and, from 2.54 on, the hooks its configuration defines
(`hook.<name>.command` with `hook.<name>.event = pre-receive`, from the system, global or
repository config), those first. `git hook list --show-scope` says which it will run, the
scope that set each, and which `hook.<name>.enabled = false` or `hook.pre-receive.enabled =
false` turned off. Measured on 2.55: `hook.pre-receive.enabled = false` stops the
config-defined hooks only, never the hook file; `core.hooksPath` stops the hook file only.
Nothing here guesses from files what git would do: the answers are git's.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from gatecore.adapters.gitcmd import GitResult, run_git
from gatecore.errors import GateError
from gatecore.valueclass import valueclass

#: The line that marks a hook file as the gate's (`gate server install` writes it).
MARKER = "# managed-by: gate server install"

#: Config-defined hooks (git 2.54+): `hook.gate.*` runs the gate at pre-receive, `hook.gate-landed.*`
#: logs what landed at post-receive.
CONFIG_HOOK = "gate"
CONFIG_LANDED = "gate-landed"
CONFIG_HOOKS_SINCE = (2, 54)

#: The system config's commands: each repository's own hook file, or (no gate installed there)
#: a refusal with the gate's code, never a push let through.
SYSTEM_HOOK = ('h="${GIT_DIR:-.}/gate/hooks/pre-receive"; [ -x "$h" ] && exec "$h"; echo "gate: GATE-CONFIG-INSTALL: '
               'the gate is not installed in this repository: run gate server install --config-hook system GIT_DIR '
               '(docs/servers.md)" >&2; exit 2')
SYSTEM_LANDED = 'h="${GIT_DIR:-.}/gate/hooks/post-receive"; [ -x "$h" ] && exec "$h"; exit 0'


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text("utf-8", errors="replace")
    except OSError:
        return False


def git_version() -> tuple[int, int]:
    """The (major, minor) version of the git on PATH: the git that serves the pushes."""
    text = run_git(["version"], code="GATE-GIT-REPOSITORY").stdout.decode("utf-8", "replace")
    found = re.match(r"git version (\d+)\.(\d+)", text)
    if found is None:
        raise GateError("GATE-GIT-REPOSITORY", f"cannot read git's version from {text.strip()!r}")
    return int(found[1]), int(found[2])


#: `git hook list` prints this for the hook file (translated: git is run with LC_ALL=C).
HOOKDIR_ENTRY = "hook from hookdir"


@valueclass(frozen=True, slots=True)
class ConfiguredHook:
    name: str
    scope: str  # the config that set it, in git's words: system, global, local, worktree, command ("": not said)
    state: str  # "" runs; "disabled": hook.<name>.enabled = false; "event-disabled": hook.pre-receive.enabled = false
    command: str | None  # hook.<name>.command, the last value git reads (None: unset)

    @property
    def runs(self) -> bool:
        return not self.state

    @property
    def label(self) -> str:
        """`hook.NAME (SCOPE config)`, as the reports name it."""
        return f"hook.{self.name} ({self.scope + ' ' if self.scope else ''}config)"


@valueclass(frozen=True, slots=True)
class EventHooks:
    """What git runs at one hook event (pre-receive, post-receive) in one repository."""

    version: tuple[int, int]
    hook_file: Path  # the file git runs by name (core.hooksPath honoured), absolute
    hook_file_runs: bool  # git lists it (2.54+), or it is an executable file (older git)
    hooks_path: tuple[str, str] | None  # core.hooksPath's value and where it is set, when set
    configured: tuple[ConfiguredHook, ...]  # in the order git runs them; () before git 2.54


def _git(git_dir: Path, *args: str) -> GitResult:
    return run_git([f"--git-dir={git_dir}", *args], cwd=git_dir, ok=None, env={"LC_ALL": "C", "LANGUAGE": ""})


def setting(git_dir: Path, key: str) -> tuple[str, str] | None:
    """(value, where it is set: `PATH (scope config)`) of a config key as git reads it (the last
    value), or None when no config sets it."""
    out = _git(git_dir, "config", "--show-origin", "--show-scope", "--get", key)
    if not out.ok:
        return None
    scope, origin, value = [*out.stdout.decode("utf-8", "replace").rstrip("\n").split("\t", 2), "", ""][:3]
    if origin.startswith("file:"):
        origin = os.path.normpath(git_dir / origin.removeprefix("file:"))  # the repository's own: a relative name
    return value, f"{origin} ({scope} config)"


def pre_receive(git_dir: Path) -> EventHooks:
    """What the git on PATH runs at pre-receive in `git_dir`."""
    return event_hooks(git_dir, "pre-receive")


def event_hooks(git_dir: Path, event: str) -> EventHooks:
    """What the git on PATH runs at `event` in `git_dir` (hooks run in the git dir, so a
    relative `core.hooksPath` is taken from there, as receive-pack takes it)."""

    version = git_version()
    named = _git(git_dir, "rev-parse", "--git-path", f"hooks/{event}").stdout.decode("utf-8", "replace").strip()
    hook_file = Path(os.path.normpath(git_dir / named))
    hooks_path = setting(git_dir, "core.hooksPath")
    if version < CONFIG_HOOKS_SINCE:
        return EventHooks(version, hook_file, hook_file.is_file() and os.access(hook_file, os.X_OK), hooks_path, ())
    listed = _git(git_dir, "hook", "list", "-z", "--show-scope", event)
    scoped = listed.returncode != 129  # a git that lists hooks without --show-scope: usage, exit 129
    if not scoped:
        listed = _git(git_dir, "hook", "list", "-z", event)
    entries = [e for e in listed.stdout.decode("utf-8", "replace").split("\0") if e]
    configured = []
    for entry in entries:
        if entry == HOOKDIR_ENTRY:
            continue
        fields = entry.split("\t")
        scope = fields.pop(0) if scoped and len(fields) > 1 else ""
        state, name = (fields[0], fields[-1]) if len(fields) > 1 else ("", fields[0])
        command = setting(git_dir, f"hook.{name}.command")
        configured.append(ConfiguredHook(name, scope, state, None if command is None else command[0]))
    return EventHooks(version, hook_file, HOOKDIR_ENTRY in entries, hooks_path, tuple(configured))


def is_gate_command(command: str | None, git_dir: Path) -> bool:
    """A config-defined hook's command runs the gate: the system config's command, a hook file
    the gate wrote, or the gate's launcher itself (an admin's own line)."""

    if command is None:
        return False
    if command == SYSTEM_HOOK:
        return True
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) == 1:
        return is_ours(git_dir / words[0])  # an absolute path stays itself; hooks run in the git dir
    return any(w.endswith("launch.py") for w in words) and "server.prereceive" in words


def listed_gate(git_dir: Path) -> tuple[bool, str]:
    """Does git run the config-defined gate in this repository? (what install reports)"""

    runs = pre_receive(git_dir)
    for hook in runs.configured:
        if hook.name == CONFIG_HOOK:
            if hook.runs and is_gate_command(hook.command, git_dir):
                return True, f"git runs the gate as {hook.label} at pre-receive"
            state = hook.state or "running another command"
            return False, f"git lists {hook.label} {state}"
    return False, f"git lists no hook.{CONFIG_HOOK} at pre-receive (gate server doctor {shlex.quote(str(git_dir))})"
