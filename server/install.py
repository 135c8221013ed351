"""`gate server install | uninstall | doctor`: putting the hook on a real git server.

`gate server doctor` is in `server/doctor.py`. Where the hook goes, by platform (docs/servers.md):

| platform | hook file | notes |
|---|---|---|
| git (plain, gitolite) | `GIT_DIR/hooks/pre-receive` | a foreign hook is refused, or chained (`--chain`) |
| gitlab | `GIT_DIR/custom_hooks/pre-receive.d/gate` | GitLab runs every file there |
| gitea / forgejo | `GIT_DIR/hooks/pre-receive.d/gate` | Gitea owns `hooks/pre-receive` and runs `pre-receive.d/*` |
| git 2.54+, `--config-hook` | `GIT_DIR/gate/hooks/pre-receive` | run as `hook.gate` (repository or system config) |

`install` is a plan, then its writes: `plan_install` checks every file and option against what
is installed and writes nothing (`--dry-run` prints it); `apply_install` writes, the hook last.

The hook pins the interpreter that ran the installer (`sys.executable`, started with
`-I` so that no environment variable can redirect its imports) and push-gate's own
`server/launch.py`, run by its path so that the hook runs push-gate's packages even where
another distribution ships a `server` or `hooks` package, and points it at `GIT_DIR/gate/`,
which holds copies of the policy and keyring: server-side files, never read from a pushed
tree. The hook's first lines name the push-gate version that wrote it (`gate server doctor`
flags a hook of another version; `gate server upgrade` rewrites it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from gatecore import __version__, ids
from gatecore.adapters import config
from gatecore.adapters.files import atomic_write
from gatecore.errors import GateError
from gatecore.valueclass import valueclass

from . import gitolite, installation
from .access import LAUNCH
from .hooklist import (
    CONFIG_HOOK,
    CONFIG_HOOKS_SINCE,
    CONFIG_LANDED,
    MARKER,
    SYSTEM_HOOK,
    SYSTEM_LANDED,
    git_version,
    is_ours,
)

GATE_DIR_NAME = "gate"
CHAINED_DIR = "gate-chained"  # hooks/gate-chained/pre-receive: a chained hook keeps its own name
PLATFORMS = ("git", "github", "gitlab", "gitea", "gitolite", "git-daemon")
LANDED_MODULE = "server.postreceive"


#: The platforms whose pushes plain git's receive-pack runs the hooks of (not a forge's own runner).
CONFIG_HOOK_PLATFORMS = ("git", "git-daemon")


@valueclass(frozen=True, slots=True)
class Layout:
    platform: str
    hook: Path  # pre-receive: the gate's decision
    landed: Path  # post-receive: one audit line for what landed
    config_hook: str | None = None  # "repository" or "system": git runs `hook` as hook.gate; None: by its name


def detect_platform(git_dir: Path) -> str:
    if (git_dir / "custom_hooks").is_dir():
        return "gitlab"
    existing = git_dir / "hooks" / "pre-receive"
    if gitolite.is_driver(existing) or ".gitolite/hooks" in os.path.realpath(git_dir / "hooks" / "update"):
        return "gitolite"
    try:
        text = existing.read_text("utf-8", errors="replace")
    except OSError:
        text = ""
    if "gitea" in text.lower() or "forgejo" in text.lower():
        return "gitea"
    return "git"


def layout(git_dir: Path, platform: str, inst: installation.Installation | None = None,
           config_hook: str | None = None) -> Layout:
    """Where the platform runs hooks from. gitolite's come from its LOCAL_CODE (the installation
    record remembers where, so that doctor and uninstall need not ask gitolite). A config-defined
    gate's hook files are in GIT_DIR/gate/hooks/, which git finds by no name of its own."""
    scope = inst.config_hook if inst is not None else config_hook
    if scope is not None:
        hooks = git_dir / GATE_DIR_NAME / "hooks"
        return Layout(platform, hooks / "pre-receive", hooks / "post-receive", scope)
    if platform == "gitlab":
        return Layout(platform, git_dir / "custom_hooks" / "pre-receive.d" / "gate",
                      git_dir / "custom_hooks" / "post-receive.d" / "gate")
    if platform == "gitea":
        return Layout(platform, git_dir / "hooks" / "pre-receive.d" / "gate",
                      git_dir / "hooks" / "post-receive.d" / "gate")
    if platform == "gitolite":
        if inst is not None and inst.hook is not None:
            return Layout(platform, Path(inst.hook),
                          Path(inst.landed) if inst.landed else Path(inst.hook).with_name(gitolite.LANDED_NAME))
        where = gitolite.site()
        return Layout(platform, where.hook, where.landed)
    return Layout(platform, git_dir / "hooks" / "pre-receive", git_dir / "hooks" / "post-receive")


VERSION_LINE = re.compile(r"\(push-gate ([^)\s]+)\)")


def hook_script(gate_dir: Path | None, module: str = "server.prereceive") -> str:
    """The hook file. `gate_dir` None: the repository's own `GIT_DIR/gate`, found when the hook runs
    (a gitolite wrapper serves every repository; its driver runs hooks in the repository).

    The post-receive hook decides nothing, so it runs in the background with its input (fd 3:
    an asynchronous command's stdin is /dev/null) and no output: the push does not wait for it."""
    run = f"{shlex.quote(sys.executable)} -I {shlex.quote(str(LAUNCH))} {module}"
    where = '"${GIT_DIR:-.}/gate"' if gate_dir is None else shlex.quote(str(gate_dir))
    head = f"#!/bin/sh\n{MARKER} (push-gate {__version__}); re-run the installer instead of editing\n"
    if module == LANDED_MODULE:
        return head + f"exec 3<&0\n{run} --gate-dir {where} <&3 >/dev/null 2>&1 3<&- &\n"
    return head + f"exec {run} --gate-dir {where} \"$@\"\n"


def written_by(hook: Path) -> str | None:
    """The push-gate version a hook of the gate's names (its marker line), or None."""
    try:
        text = hook.read_text("utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(MARKER):
            m = VERSION_LINE.search(line)
            return m.group(1) if m else None
    return None


def account_name(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _this_command() -> list[str]:
    """The command line that is running, as another account can run it again: the `gate` script
    as it was called, or (`python -m gatecore.cli`, a .py path) the interpreter and the module."""
    argv = list(sys.argv) or ["gate"]
    if argv[0].endswith(".py") or argv[0] in ("-m", "-c"):
        return [sys.executable, "-m", "gatecore.cli", *argv[1:]]
    return argv


def _gate_args() -> list[str]:
    """The arguments of the running `gate` command (after the program, or `python -m gatecore.cli`)."""
    argv = _this_command()
    return argv[3:] if argv[1:3] == ["-m", "gatecore.cli"] else argv[1:]


def owner_problem(path: Path) -> str | None:
    """The hook runs as the account that owns the repository; a file another account makes in it
    (root's caches, an audit log) breaks every later push. None when the running account owns it.
    When the owner could not even run this environment (the venv trap), the fix says so."""
    from .access import environment_problem, fix

    try:
        owner = path.stat().st_uid
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    if owner == os.geteuid():
        return None
    name = account_name(owner)
    head = f"{path} belongs to {name}, but this runs as {account_name(os.geteuid())}"
    why = environment_problem(owner, sys.executable)
    if why is not None:
        return (f"{head}, and {name} cannot run this environment: {why}; a hook installed from it would fail on "
                f"every push with 'Permission denied'. {fix(name, _gate_args())}")
    command = shlex.join(["runuser", "-u", name, "--", *_this_command()])
    return f"{head}: run it as the repository's owner: {command}"


def git_dir_of(path: Path) -> Path:
    """The repository's git dir, as git finds it (git itself: the hook reads SHA-256 repositories
    too, which libgit2 cannot open)."""
    from gatecore.adapters.gitcmd import run_git

    out = run_git(["-C", str(path), "rev-parse", "--absolute-git-dir"], ok=None)
    if not out.ok:
        raise GateError("GATE-GIT-REPOSITORY", f"cannot open repository {path}: {out.last_error()}")
    return Path(out.stdout.decode("utf-8", "surrogateescape").strip()).resolve()


def _installed_at(path: Path) -> tuple[Path, Path, installation.Installation | None]:
    """The repository at `path` as the installer may change it (owned by the running account), its
    gate directory, and the installation recorded there (None: none yet)."""
    problem = owner_problem(path)
    if problem is not None:
        raise GateError("GATE-CONFIG-INSTALL", problem)
    git_dir = git_dir_of(path)
    gate_dir = git_dir / GATE_DIR_NAME
    return git_dir, gate_dir, installation.read(gate_dir) if (gate_dir / installation.CONFIG_FILE).exists() else None


#: What `--fsck` sets: git itself refuses malformed objects, and bad modes, in every pushed tree
#: (the gate reads only the trees of restricted commits); zero-padded modes of old histories pass.
#: `--fsck`: git itself refuses what `git fsck` flags, but bad modes are errors and what old public
#: histories hold and every reader reads alike is let through, as the gate decides it
#: (docs/security.md, the fsck table): `040000` trees, and odd dates and time zones.
FSCK_CONFIG = (("receive.fsckObjects", "true"), ("receive.fsck.badFilemode", "error"),
               ("receive.fsck.zeroPaddedFilemode", "ignore"),
               *((f"receive.fsck.{msg}", "ignore") for msg in ("badDate", "badDateOverflow", "badTimezone",
                                                             "zeroPaddedDate", "missingSpaceBeforeDate")))


@valueclass(frozen=True, slots=True)
class InstallRequest:
    """What the admin asked for (the command line), nothing of it checked yet."""

    policy: Path | None = None
    keyring: Path | None = None
    platform: str = "auto"
    repository_id: str | None = None
    chain: bool = False
    fsck: bool = False
    allowed_signers: Path | None = None
    openpgp_keys: Path | None = None
    audit_syslog: str | None = None  # a syslog socket, "off", or None: as installed before
    config_hook: str | None = None  # "repository", "system", "off" (a hook file), or None: as installed before
    keep_own: bool = False  # --all without --replace-policy: a repository's own differing policy or keyring stays


@valueclass(frozen=True, slots=True)
class Inputs:
    """The files to install, validated (None: the installed one stays), and what a repository keeps."""

    policy: config.Validated | None
    keyring: config.Validated | None
    signers: bytes | None
    openpgp: bytes | None
    kept: tuple[str, ...] = ()  # "its own policy (differs from FILE: ...)", one per file kept


@valueclass(frozen=True, slots=True)
class InstallPlan:
    """Everything `install` checked before writing anything: what `apply_install` writes."""

    git_dir: Path
    where: Layout
    record: installation.Installation  # written as GIT_DIR/gate/config.json
    inputs: Inputs
    keep: Path | None  # where a foreign hook goes to run after the gate (--chain)
    retire: tuple[Path, ...]  # the gate's hook files of a layout left behind: removed once the new one is in
    restore: tuple[Path, ...]  # chained hooks put back where they were (git runs them beside a config-defined gate)
    unset_config: bool  # the repository config's hook.gate settings of a layout left behind: removed
    fsck: bool
    notes: tuple[str, ...]  # what planning found (a chained hook gone, a foreign post-receive left alone)

    @property
    def gate_dir(self) -> Path:
        return Path(self.record.gate_dir)

    @property
    def shared(self) -> bool:
        """One wrapper serves every repository (gitolite's LOCAL_CODE): it finds GIT_DIR/gate itself."""
        return self.record.platform == "gitolite"


def install(git_dir: Path, policy: Path | None = None, keyring: Path | None = None, platform: str = "auto",
            repository_id: str | None = None, chain: bool = False, fsck: bool = False,
            allowed_signers: Path | None = None, openpgp_keys: Path | None = None,
            audit_syslog: str | None = None, config_hook: str | None = None) -> list[str]:
    """Install (or re-install) the gate; returns what was done, one line each."""
    return apply_install(plan_install(git_dir, InstallRequest(
        policy, keyring, platform, repository_id, chain, fsck, allowed_signers, openpgp_keys, audit_syslog,
        config_hook)))


def plan_install(git_dir: Path, request: InstallRequest) -> InstallPlan:
    """Check everything and write nothing: every file validated, every option resolved against
    what is installed, the hook's place found. Raises GateError for the first problem."""
    git_dir, gate_dir, previous = _installed_at(git_dir)
    platform = detect_platform(git_dir) if request.platform == "auto" else request.platform
    if platform not in PLATFORMS:
        raise GateError("GATE-CONFIG-INSTALL", f"unknown platform {platform!r}")
    repo_id = _repository_id(git_dir, request.repository_id, previous)
    inputs = _inputs(gate_dir, request)
    syslog = _syslog(previous, request.audit_syslog)
    scope = _config_scope(platform, previous, request)
    where = layout(git_dir, platform, config_hook=scope)
    if scope is None:
        _no_system_gate(git_dir)
        place = _file_placement(git_dir, where, previous, request.chain)
    else:
        place = _config_placement(git_dir, platform, previous)
    has_keyring = request.keyring is not None or (previous is not None and previous.has_keyring)
    landed = place.landed(where)
    record = installation.Installation(str(gate_dir), platform, repo_id, has_keyring, tuple(map(str, place.chained)),
                                       str(where.hook) if platform == "gitolite" else None,
                                       None if landed is None else str(landed), syslog, scope)
    unset = previous is not None and previous.config_hook == "repository" and scope != "repository"
    return InstallPlan(git_dir, where, record, inputs, place.keep, place.retire, place.restore, unset, request.fsck,
                       place.notes)


def _repository_id(git_dir: Path, given: str | None, previous: installation.Installation | None) -> str:
    """The id receipts must name: the one given, the one installed, else the directory's name
    (without `.git`), which must be a valid id: a name that is not (`My Project.git`) is refused
    with one that is, never changed in silence (the trusted side must name the same id)."""
    if given is not None:
        if not ids.is_repository_id(given):
            raise GateError("GATE-CONFIG-INSTALL", f"repository id {given!r} is not of the allowed form "
                                                   f"({REPOSITORY_ID_FORM})")
        return given
    if previous is not None:
        return previous.repository_id
    named = git_dir.parent if git_dir.name == ".git" else git_dir  # a work tree's .git: the work tree's name
    derived = named.name.removesuffix(".git")
    if ids.is_repository_id(derived):
        return derived
    raise GateError("GATE-CONFIG-INSTALL",
                    f"the repository's directory name {derived!r} is not a valid repository id ({REPOSITORY_ID_FORM}):"
                    f" name the id receipts will carry: gate server install {shlex.quote(str(git_dir))} "
                    f"--repository-id {suggest_repository_id(derived)}")


#: What a repository id may hold (gatecore.ids.REPOSITORY_ID_RE), in words.
REPOSITORY_ID_FORM = "ASCII letters, digits, '.', '_', '/', ':', '-', starting with a letter or digit, no '..'"


def suggest_repository_id(name: str) -> str:
    """A valid repository id close to a directory name: every run of other characters becomes '-'."""
    cleaned = re.sub(r"[^A-Za-z0-9._/:-]+", "-", name)
    cleaned = re.sub(r"\.{2,}", ".", cleaned).lstrip("._/:-")[:256]
    return cleaned if cleaned and ids.is_repository_id(cleaned) else "org/project"


def _inputs(gate_dir: Path, request: InstallRequest) -> Inputs:
    """Every file given, validated; with `keep_own`, a repository's own policy or keyring that
    says something else than the one given stays (and what differs is named)."""
    policy = None if request.policy is None else config.validated_policy(request.policy)
    if policy is None and not (gate_dir / installation.POLICY_FILE).exists():
        raise GateError("GATE-CONFIG-POLICY", "no policy is installed yet: pass --policy FILE (see docs/policy.md)")
    keyring = None if request.keyring is None else config.validated_keyring(request.keyring)
    signers = None if request.allowed_signers is None else config.read_allowed_signers(request.allowed_signers)
    openpgp = None if request.openpgp_keys is None else config.read_openpgp_keys(request.openpgp_keys)
    kept: list[str] = []
    if request.keep_own and policy is not None and request.policy is not None:
        differs = _differs(gate_dir / installation.POLICY_FILE, policy.data, request.policy)
        if differs is not None:
            policy = None
            kept.append(f"its own policy ({differs})")
    if request.keep_own and keyring is not None and request.keyring is not None:
        differs = _differs(gate_dir / installation.KEYRING_FILE, keyring.data, request.keyring, by_key_id=True)
        if differs is not None:
            keyring = None
            kept.append(f"its own keyring ({differs})")
    _signature_keys_present(policy, gate_dir, signers is not None or openpgp is not None)
    return Inputs(policy, keyring, signers, openpgp, tuple(kept))


def _differs(installed: Path, given: bytes, source: Path, by_key_id: bool = False) -> str | None:
    """What the repository's installed file says that the given one does not (None: the same
    settings, or nothing installed); a keyring's `[[key]]` entries are told apart by their id."""
    import tomllib

    try:
        mine = installed.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"its installed file cannot be read: {exc.strerror}"
    if mine == given:
        return None
    try:
        ours, theirs = tomllib.loads(mine.decode("utf-8")), tomllib.loads(given.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return f"differs from {source}; its installed file is not valid TOML"
    if by_key_id:
        ours, theirs = _by_id(ours), _by_id(theirs)
    found = toml_differences(ours, theirs)
    if not found:
        return None
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return f"differs from {source}: {shown}"


def _by_id(keyring: dict[str, object]) -> dict[str, object]:
    """A keyring with its `[[key]]` list as a table by key id (`key.runner-1`), so that what
    differs is named by the keys'."""
    keys = keyring.get("key")
    if not isinstance(keys, list) or not all(isinstance(k, dict) and isinstance(k.get("id"), str) for k in keys):
        return keyring
    return {**keyring, "key": {k["id"]: k for k in keys}}


def toml_differences(mine: object, given: object, where: str = "") -> list[str]:
    """The dotted keys at which two parsed TOML documents differ, `(only in its own)` or
    `(only in the given)` where one lacks the key."""
    if isinstance(mine, dict) and isinstance(given, dict):
        found: list[str] = []
        for key in sorted(set(mine) | set(given)):
            at = f"{where}.{key}" if where else str(key)
            if key not in given:
                found.append(f"{at} (only in its own)")
            elif key not in mine:
                found.append(f"{at} (only in the given)")
            else:
                found += toml_differences(mine[key], given[key], at)
        return found
    if isinstance(mine, list) and isinstance(given, list) and len(mine) == len(given):
        return [d for i, (a, b) in enumerate(zip(mine, given, strict=True))
                for d in toml_differences(a, b, f"{where}[{i}]")]
    return [] if mine == given else [where or "(the whole file)"]


def _syslog(previous: installation.Installation | None, asked: str | None) -> str | None:
    """`--audit-syslog SOCKET|off`; None keeps what is installed."""
    if asked is None:
        return previous.syslog if previous else None
    if asked == "off":
        return None
    if not os.path.isabs(asked):
        raise GateError("GATE-INPUT-ARGUMENT", f"--audit-syslog {asked!r}: give the socket's absolute path "
                                               "(/dev/log), or off")
    return asked


def _config_scope(platform: str, previous: installation.Installation | None, request: InstallRequest) -> str | None:
    """`--config-hook repository|system|off`; None keeps what is installed. A config-defined
    hook needs git 2.54 or newer and a platform whose pushes plain git's receive-pack runs."""
    asked = request.config_hook
    if asked not in (None, "off", *installation.CONFIG_HOOK_SCOPES):
        raise GateError("GATE-INPUT-ARGUMENT", f"--config-hook {asked!r}: repository, system or off")
    if asked is None:
        scope = previous.config_hook if previous is not None else None
    else:
        scope = None if asked == "off" else asked
    if scope is None:
        return None
    if platform not in CONFIG_HOOK_PLATFORMS:
        raise GateError("GATE-CONFIG-LAYOUT", f"--config-hook {scope}: the {platform} platform runs hooks its own way "
                                              "(docs/servers.md, where the hook goes); install without --config-hook")
    if request.chain:
        raise GateError("GATE-INPUT-ARGUMENT", "--chain is for the hook file: beside a config-defined hook, git runs "
                                               "hooks/pre-receive by itself")
    version = git_version()
    if version < CONFIG_HOOKS_SINCE:
        raise GateError("GATE-CONFIG-LAYOUT",
                        f"config-defined hooks (hook.{CONFIG_HOOK}.command) need git "
                        f"{'.'.join(map(str, CONFIG_HOOKS_SINCE))} or newer; this git is "
                        f"{'.'.join(map(str, version))}, which would not run the gate at all: install without "
                        "--config-hook (the hook file), or with --config-hook off")
    return scope


def _no_system_gate(git_dir: Path) -> None:
    """A hook file beside the system config's gate would be a second gate, and the system's
    command, finding no GIT_DIR/gate/hooks/pre-receive, would refuse every push: refused."""
    from .hooklist import pre_receive

    if git_version() < CONFIG_HOOKS_SINCE:
        return  # an older git runs no config-defined hook
    for hook in pre_receive(git_dir).configured:
        if hook.name == CONFIG_HOOK and hook.scope == "system" and hook.runs and hook.command == SYSTEM_HOOK:
            raise GateError("GATE-CONFIG-LAYOUT", f"git's system config runs the gate in every repository "
                                                  f"(hook.{CONFIG_HOOK}): install this one with --config-hook system "
                                                  "(a hook file here would be a second gate)")


@valueclass(frozen=True, slots=True)
class _Placement:
    chained: tuple[Path, ...] = ()
    keep: Path | None = None
    foreign_landed: bool = False
    retire: tuple[Path, ...] = ()
    restore: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()

    def landed(self, where: Layout) -> Path | None:
        return None if self.foreign_landed else where.landed


def _file_placement(git_dir: Path, where: Layout, previous: installation.Installation | None,
                    chain: bool) -> _Placement:
    """The hook file git finds by name: a foreign one in its place is refused, or moved to run
    after the gate (`--chain`); a foreign post-receive is left alone."""
    notes: list[str] = []
    chained: list[Path] = []
    for c in (Path(p) for p in previous.chain) if previous else ():
        if c.exists():
            chained.append(c)
        else:
            notes.append(f"dropped the chained hook {c}: it no longer exists")
    keep: Path | None = None  # where a foreign hook goes to run after the gate
    if where.hook.exists() and not is_ours(where.hook):
        if gitolite.is_driver(where.hook):
            raise GateError("GATE-CONFIG-INSTALL", f"{where.hook} is gitolite's hook driver, which gitolite rewrites: "
                                                   "install with --platform gitolite (docs/servers.md)")
        if where.platform == "gitolite" or not chain:
            raise GateError("GATE-CONFIG-INSTALL",
                            f"{where.hook} exists and is not the gate's; "
                            + ("move it away" if where.platform == "gitolite" else
                               "re-run with --chain to run it after the gate, or move it away"))
        keep = where.hook.parent / CHAINED_DIR / where.hook.name
        if keep.exists():
            raise GateError("GATE-CONFIG-INSTALL", f"{keep} already exists; resolve it by hand")
        chained.append(keep)
    foreign_landed = where.landed.exists() and not is_ours(where.landed)
    if foreign_landed:
        notes.append(f"note {where.landed} is not the gate's: left alone, so the audit log says what the gate "
                     "decided, not what landed (docs/servers.md, the audit log)")
    retire: tuple[Path, ...] = ()
    if previous is not None and previous.config_hook is not None:
        old = layout(git_dir, previous.platform, previous)
        retire = tuple(p for p in (old.hook, old.landed) if p.exists())
    return _Placement(tuple(chained), keep, foreign_landed, retire, (), tuple(notes))


def _config_placement(git_dir: Path, platform: str, previous: installation.Installation | None) -> _Placement:
    """A config-defined gate: its hook files live in GIT_DIR/gate/hooks/, the gate's hook files
    of a file layout go (two gates would judge every push), a chained hook goes back where it
    was (git runs hooks/pre-receive after the config-defined hooks, whatever they decide)."""
    files = layout(git_dir, platform)
    retire = tuple(p for p in (files.hook, files.landed) if p.exists() and is_ours(p))
    restore = tuple(c for c in (Path(p) for p in (previous.chain if previous else ())) if c.exists())
    notes = [f"note {p} is not the gate's: git runs it too, after the gate, and refuses the push if either refuses"
             for p in (files.hook,) if p.exists() and not is_ours(p)]
    return _Placement((), None, False, retire, restore, tuple(notes))


def describe(plan: InstallPlan) -> list[str]:
    """What apply_install would do (`--dry-run`), one line each, the summary last."""
    gate_dir, inputs = plan.gate_dir, plan.inputs
    lines = list(plan.notes)
    for what, given, name in (("policy", inputs.policy, installation.POLICY_FILE),
                              ("keyring", inputs.keyring, installation.KEYRING_FILE)):
        if given is not None:
            lines.append(f"would install {what} {gate_dir / name}")
        elif (gate_dir / name).exists():
            lines.append(f"would keep the installed {what} {gate_dir / name}")
    if plan.keep is not None:
        lines.append(f"would move the existing hook to {plan.keep} (runs after the gate)")
    lines.append(f"would write {_hook_words(plan.where)}")
    if plan.where.config_hook is not None:
        lines.append(f"would set hook.{CONFIG_HOOK} and hook.{CONFIG_LANDED} in the {plan.where.config_hook} config")
    if plan.unset_config:
        lines.append(f"would remove hook.{CONFIG_HOOK} and hook.{CONFIG_LANDED} from {plan.git_dir / 'config'}")
    lines += [f"would remove {p} (the gate's hook of the layout left behind)" for p in plan.retire]
    lines += [f"would restore {chained_origin(c)}" for c in plan.restore]
    if plan.fsck:
        lines.append("would set " + ", ".join(f"{k}={v}" for k, v in FSCK_CONFIG))
    lines.append("would install" + _summary(plan))
    return lines


def _hook_words(where: Layout) -> str:
    if where.config_hook is None:
        return f"the {where.platform} pre-receive hook {where.hook}"
    return f"the pre-receive hook {where.hook}, run by git as hook.{CONFIG_HOOK} ({where.config_hook} config)"


def _summary(plan: InstallPlan) -> str:
    record = plan.record
    line = f" push-gate {__version__} ({record.platform}, repository id {record.repository_id})"
    return line + "".join(f"; kept {k}" for k in plan.inputs.kept)


def apply_install(plan: InstallPlan) -> list[str]:
    """The writes, in the order that keeps the repository guarded: the gate's files first, the
    hook last. A foreign hook is copied to run after the gate and stays in place until the
    gate's hook replaces it (atomically); the hook of a layout left behind goes only once the
    new one is in place: whatever fails on the way, some hook guards the repository."""
    done = list(plan.notes)
    done += _write_files(plan)
    done += _write_hooks(plan)
    done += _retire(plan)
    if plan.fsck:
        from gatecore.adapters.gitcmd import run_git

        for key, value in FSCK_CONFIG:
            run_git([f"--git-dir={plan.git_dir}", "config", key, value], code="GATE-CONFIG-INSTALL")
        done.append("set " + ", ".join(f"{k}={v}" for k, v in FSCK_CONFIG))
    done += _active(plan)
    record = plan.record
    done.append(f"audit log: {record.audit_log}"
                + (f", each line also to syslog at {record.syslog}" if record.syslog else ""))
    done.append("installed" + _summary(plan))
    return done


def _write_files(plan: InstallPlan) -> list[str]:
    gate_dir, inputs = plan.gate_dir, plan.inputs
    done = []
    gate_dir.mkdir(mode=0o750, exist_ok=True)
    if inputs.policy is not None:
        config.install(inputs.policy, gate_dir / installation.POLICY_FILE)
        done.append(f"installed policy {gate_dir / installation.POLICY_FILE}")
    if inputs.keyring is not None:
        config.install(inputs.keyring, gate_dir / installation.KEYRING_FILE)
        done.append(f"installed keyring {gate_dir / installation.KEYRING_FILE}")
    if inputs.signers is not None:
        atomic_write(gate_dir / installation.ALLOWED_SIGNERS_FILE, inputs.signers, 0o640)
        done.append(f"installed allowed signers {gate_dir / installation.ALLOWED_SIGNERS_FILE}")
    if inputs.openpgp is not None:
        atomic_write(gate_dir / installation.OPENPGP_KEYS_FILE, inputs.openpgp, 0o640)
        done.append(f"installed OpenPGP keyring {gate_dir / installation.OPENPGP_KEYS_FILE}")
    atomic_write(gate_dir / installation.CONFIG_FILE, plan.record.to_json().encode(), 0o640)
    return done


def _write_hooks(plan: InstallPlan) -> list[str]:
    where, done = plan.where, []
    where.hook.parent.mkdir(parents=True, exist_ok=True)
    if plan.keep is not None:
        plan.keep.parent.mkdir(mode=0o755, exist_ok=True)
        shutil.copy2(where.hook, plan.keep)
        done.append(f"moved the existing hook to {plan.keep} (runs after the gate, under its own name)")
    pinned = None if plan.shared else plan.gate_dir
    atomic_write(where.hook, hook_script(pinned).encode(), 0o755)
    landed = plan.record.landed
    if landed is not None:
        atomic_write(landed, hook_script(pinned, LANDED_MODULE).encode(), 0o755)
    if where.config_hook is not None:
        done += _set_config_hooks(plan.git_dir, where)
    done.append(f"installed {_hook_words(where)}")
    if landed is not None:
        done.append(f"installed the post-receive hook {landed} (logs what landed)")
    return done


def config_hooks(where: Layout) -> dict[str, str]:
    """The settings of a config-defined gate: `hook.gate.*` at pre-receive, `hook.gate-landed.*`
    at post-receive. In the repository's config they name its own hook files; in the system's
    (every repository) they find GIT_DIR/gate/hooks/ when they run (git runs hooks in the git dir)."""
    if where.config_hook == "system":
        run, landed = SYSTEM_HOOK, SYSTEM_LANDED
    else:
        run, landed = shlex.quote(str(where.hook)), shlex.quote(str(where.landed))
    return {f"hook.{CONFIG_HOOK}.command": run, f"hook.{CONFIG_HOOK}.event": "pre-receive",
            f"hook.{CONFIG_LANDED}.command": landed, f"hook.{CONFIG_LANDED}.event": "post-receive"}


def _set_config_hooks(git_dir: Path, where: Layout) -> list[str]:
    """Write the settings (the repository's config; the system's where this account may, else
    the commands to run as root)."""
    from gatecore.adapters.gitcmd import run_git

    settings = config_hooks(where)
    if where.config_hook == "repository":
        for key, value in settings.items():
            run_git([f"--git-dir={git_dir}", "config", "--local", "--replace-all", key, value],
                    code="GATE-CONFIG-INSTALL")
        return [f"set hook.{CONFIG_HOOK} and hook.{CONFIG_LANDED} in {git_dir / 'config'}"]
    for key, value in settings.items():
        if not run_git(["config", "--system", "--replace-all", key, value], ok=None).ok:
            commands = "; ".join(shlex.join(["git", "config", "--system", k, v]) for k, v in settings.items())
            return [f"NOT ACTIVE YET: this account cannot write git's system config; as root: {commands}"]
    return [f"set hook.{CONFIG_HOOK} and hook.{CONFIG_LANDED} in git's system config (every repository)"]


def _retire(plan: InstallPlan) -> list[str]:
    """The layout left behind: its hook files and settings go, chained hooks go back."""
    done = []
    for path in plan.retire:
        path.unlink(missing_ok=True)
        done.append(f"removed {path} (the gate's hook of the layout left behind)")
    if plan.unset_config:
        done += _unset_config_hooks(plan.git_dir)
    for chained in plan.restore:
        original = chained_origin(chained)
        if original.exists():
            done.append(f"note {chained} left where it is: {original} exists")
            continue
        chained.rename(original)
        done.append(f"restored {original} (git runs it after the gate)")
    return done


def _unset_config_hooks(git_dir: Path) -> list[str]:
    from gatecore.adapters.gitcmd import run_git

    removed = []
    for name in (CONFIG_HOOK, CONFIG_LANDED):
        if run_git([f"--git-dir={git_dir}", "config", "--local", "--remove-section", f"hook.{name}"], ok=None).ok:
            removed.append(f"hook.{name}")
    return [f"removed {' and '.join(removed)} from {git_dir / 'config'}"] if removed else []


def _active(plan: InstallPlan) -> list[str]:
    """Whether the platform runs what was written: gitolite links the wrapper in, git lists the
    config-defined hook."""
    done = []
    if plan.shared:
        for hook, path in (("pre-receive", plan.where.hook), ("post-receive", plan.record.landed)):
            if path is None:
                continue
            running, detail = gitolite.active(plan.git_dir, Path(path), hook)
            done.append(detail if running else "NOT ACTIVE YET: " + detail)
    if plan.where.config_hook is not None:
        from .hooklist import listed_gate

        running, detail = listed_gate(plan.git_dir)
        done.append(detail if running else "NOT ACTIVE YET: " + detail)
    return done


def _signature_keys_present(new_policy: config.Validated | None, gate_dir: Path, given: bool) -> None:
    """A policy that reads commit signatures needs keys to read them with: without any, every
    push would be refused (GATE-CONFIG-SIGNERS); refuse the installation instead."""
    if given or any((gate_dir / name).exists()
                    for name in (installation.ALLOWED_SIGNERS_FILE, installation.OPENPGP_KEYS_FILE)):
        return
    policy = (config.load_policy(gate_dir / installation.POLICY_FILE) if new_policy is None
              else config.policy_of(new_policy))
    if policy.needs_signers:
        raise GateError("GATE-CONFIG-SIGNERS", "the policy reads commit signatures (signers, [signatures] require) "
                                               "but no signature keys are installed: pass --allowed-signers FILE "
                                               "or --openpgp-keys FILE (docs/policy.md#signatures)")


def chained_origin(chained: Path) -> Path:
    """Where a chained hook came from: hooks/gate-chained/NAME was hooks/NAME (older installs
    kept it beside the hook as NAME.gate-chained)."""
    if chained.parent.name == CHAINED_DIR:
        return chained.parent.parent / chained.name
    return chained.with_name(chained.name.removesuffix(".gate-chained"))


def uninstall(git_dir: Path) -> list[str]:
    git_dir, gate_dir, inst = _installed_at(git_dir)
    done = []
    for where in [layout(git_dir, p) for p in ("git", "gitlab", "gitea")] + [layout(git_dir, "git", None, "system")]:
        for hook in (where.hook, where.landed):
            if hook.exists() and is_ours(hook):
                hook.unlink()
                done.append(f"removed {hook}")
    done += _unset_config_hooks(git_dir)
    if inst is not None and inst.platform == "gitolite":
        done.append(f"kept gitolite's shared hooks {inst.hook} (other repositories use them); with no "
                    f"installation here, pushes to {git_dir} are refused until the option hook.pre-receive line "
                    "is removed from gitolite.conf")
    if inst is not None and inst.config_hook == "system":
        done.append(f"kept hook.{CONFIG_HOOK} in git's system config (other repositories use it); with no "
                    f"installation here, pushes to {git_dir} are refused until it is removed there, or disabled "
                    f"here: git --git-dir {shlex.quote(str(git_dir))} config hook.{CONFIG_HOOK}.enabled false")
    for chained in (Path(c) for c in inst.chain) if inst else ():
        original = chained_origin(chained)
        if chained.exists() and not original.exists():
            chained.rename(original)
            done.append(f"restored {original}")
    if inst is not None:
        (gate_dir / installation.CONFIG_FILE).unlink()
        done.append(f"removed {gate_dir / installation.CONFIG_FILE}; kept policy, keyring and audit log in {gate_dir}")
    if not done:
        done.append("nothing to remove: the gate is not installed here")
    return done


#: One repository's outcome under `--all`: its lines (the last one is shown) and its state:
#: "ok", "kept" (installed, keeping its own policy or keyring) or "FAIL".
Outcome = tuple[list[str], str]


def install_one(git_dir: Path, request: InstallRequest, dry_run: bool = False) -> Outcome:
    """`gate server install`: the plan, then (unless `dry_run`) its writes."""
    plan = plan_install(git_dir, request)
    lines = describe(plan) if dry_run else apply_install(plan)
    return lines, "kept" if plan.inputs.kept else "ok"


def upgrade(git_dir: Path, dry_run: bool = False) -> list[str]:
    """Re-install a gated repository with this push-gate: its installed policy and keyring
    validated again (a newer schema may refuse what an older one took: then nothing changes and
    the problem is named), their caches and the hooks rewritten; chained hooks, signature keys,
    the layout and the syslog setting kept."""
    gate_dir = git_dir_of(git_dir) / GATE_DIR_NAME
    inst = installation.read(gate_dir)
    before = written_by(layout(gate_dir.parent, inst.platform, inst).hook) or "(unknown version)"
    plan = plan_install(git_dir, InstallRequest(Path(inst.policy), Path(inst.keyring) if inst.has_keyring else None,
                                                inst.platform, inst.repository_id))
    from gatecore.configuration.versions import moved

    if dry_run:
        return [*describe(plan)[:-1], moved(before, __version__, dry_run=True)]
    return [*apply_install(plan), moved(before, __version__)]


def is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def repositories(root: Path) -> list[Path]:
    """Every repository under `root`: bare ones and work trees' `.git`, in path order; the walk
    does not descend into a repository nor follow symlinks."""
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        here = Path(dirpath)
        if is_git_dir(here):
            found.append(here)
            dirnames[:] = []
        elif ".git" in dirnames and is_git_dir(here / ".git"):
            found.append(here / ".git")
            dirnames[:] = []
        else:
            dirnames.sort()
    return found


def is_gated(git_dir: Path) -> bool:
    return (git_dir / GATE_DIR_NAME / installation.CONFIG_FILE).is_file()


def not_gated(git_dir: Path) -> str | None:
    """Why `doctor` and `upgrade --all` skip a repository: the gate is not installed there."""
    return None if is_gated(git_dir) else "not gated"


def uninstalled(git_dir: Path) -> str | None:
    """Why `install --all` skips a repository: the admin uninstalled the gate there (its
    GIT_DIR/gate/ stays, without an installation record). Naming it installs it again."""
    if is_gated(git_dir) or not (git_dir / GATE_DIR_NAME).is_dir():
        return None
    return f"uninstalled: left ungated; name it to install it again (gate server install {shlex.quote(str(git_dir))})"


def over_all(root: Path, action: str, run: Callable[[Path], Outcome],
             skip: Callable[[Path], str | None] = lambda _: None) -> tuple[list[str], bool]:
    """`--all ROOT`: `run` on every repository under ROOT that `skip` gives no reason to skip, one
    line each (`ok   REPO: ...`, `kept REPO: ...`, `FAIL REPO: ...`, `---- REPO: why skipped`), then
    the counts; all good when none failed."""
    if not root.is_dir():
        raise GateError("GATE-INPUT-ARGUMENT", f"--all {root}: not a directory")
    lines: list[str] = []
    counts: dict[str, int] = {"ok": 0, "kept": 0, "FAIL": 0}
    for repo in repositories(root):
        why = skip(repo)
        if why is not None:
            lines.append(f"---- {repo}: {why}")
            label = why.split(":")[0]
            counts[label] = counts.get(label, 0) + 1
            continue
        try:
            detail, state = run(repo)
        except GateError as exc:
            detail, state = [f"{exc.code}: {exc.detail}"], "FAIL"
        counts[state] += 1
        lines.append(f"{state:<4} {repo}: {detail[-1] if detail else action}")
    failed = counts.pop("FAIL")
    parts = [f"{counts.pop('ok')} ok", f"{failed} failed"]
    kept = counts.pop("kept")
    if kept:
        parts.insert(1, f"{kept} kept their own policy or keyring")
    parts += [f"{n} {label}" for label, n in counts.items()]
    lines.append(f"{action} over {root}: " + ", ".join(parts))
    return lines, failed == 0
