"""`gate server install | uninstall | doctor`: putting the hook on a real git server.

`gate server doctor` is in `server/doctor.py`. Where the hook goes, by platform (docs/servers.md):

| platform | hook file | notes |
|---|---|---|
| git (plain, gitolite) | `GIT_DIR/hooks/pre-receive` | a foreign hook is refused, or chained (`--chain`) |
| gitlab | `GIT_DIR/custom_hooks/pre-receive.d/gate` | GitLab runs every file there |
| gitea / forgejo | `GIT_DIR/hooks/pre-receive.d/gate` | Gitea owns `hooks/pre-receive` and runs `pre-receive.d/*` |

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
from dataclasses import dataclass
from pathlib import Path

from gatecore import __version__, ids
from gatecore.adapters import config
from gatecore.adapters.files import atomic_write
from gatecore.errors import GateError

from . import gitolite, installation

MARKER = "# managed-by: gate server install"
GATE_DIR_NAME = "gate"
CHAINED_DIR = "gate-chained"  # hooks/gate-chained/pre-receive: a chained hook keeps its own name
PLATFORMS = ("git", "github", "gitlab", "gitea", "gitolite", "git-daemon")
LANDED_MODULE = "server.postreceive"


@dataclass(frozen=True, slots=True)
class Layout:
    platform: str
    hook: Path  # pre-receive: the gate's decision
    landed: Path  # post-receive: one audit line for what landed


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


def layout(git_dir: Path, platform: str, inst: installation.Installation | None = None) -> Layout:
    """Where the platform runs hooks from. gitolite's come from its LOCAL_CODE (the installation
    record remembers where, so that doctor and uninstall need not ask gitolite)."""
    if platform == "gitlab":
        return Layout(platform, git_dir / "custom_hooks" / "pre-receive.d" / "gate",
                      git_dir / "custom_hooks" / "post-receive.d" / "gate")
    if platform == "gitea":
        return Layout(platform, git_dir / "hooks" / "pre-receive.d" / "gate",
                      git_dir / "hooks" / "post-receive.d" / "gate")
    if platform == "gitolite":
        if inst is not None and inst.hook is not None:
            return Layout(platform, inst.hook, inst.landed or inst.hook.with_name(gitolite.LANDED_NAME))
        where = gitolite.site()
        return Layout(platform, where.hook, where.landed)
    return Layout(platform, git_dir / "hooks" / "pre-receive", git_dir / "hooks" / "post-receive")


LAUNCH = Path(__file__).resolve().with_name("launch.py")
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


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text("utf-8", errors="replace")
    except OSError:
        return False


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


#: What `--fsck` sets: git itself refuses malformed objects, and bad modes, in every pushed tree
#: (the gate reads only the trees of restricted commits); zero-padded modes of old histories pass.
#: `--fsck`: git itself refuses what `git fsck` flags, but bad modes are errors and what old public
#: histories hold and every reader reads alike is let through, as the gate decides it
#: (docs/security.md, the fsck table): `040000` trees, and odd dates and time zones.
FSCK_CONFIG = (("receive.fsckObjects", "true"), ("receive.fsck.badFilemode", "error"),
               ("receive.fsck.zeroPaddedFilemode", "ignore"),
               *((f"receive.fsck.{msg}", "ignore") for msg in ("badDate", "badDateOverflow", "badTimezone",
                                                             "zeroPaddedDate", "missingSpaceBeforeDate")))


def install(git_dir: Path, policy: Path | None, keyring: Path | None, platform: str = "auto",
            repository_id: str | None = None, chain: bool = False, fsck: bool = False,
            allowed_signers: Path | None = None, openpgp_keys: Path | None = None,
            audit_syslog: str | None = None) -> list[str]:
    """Install (or re-install) the gate; returns what was done, one line each. `audit_syslog`: a
    syslog socket each audit line also goes to ("off": none; None: as installed before)."""
    problem = owner_problem(git_dir)
    if problem is not None:
        raise GateError("GATE-CONFIG-INSTALL", problem)
    git_dir = git_dir_of(git_dir)
    if platform == "auto":
        platform = detect_platform(git_dir)
    if platform not in PLATFORMS:
        raise GateError("GATE-CONFIG-INSTALL", f"unknown platform {platform!r}")
    gate_dir = git_dir / GATE_DIR_NAME
    done: list[str] = []
    previous = None
    if (gate_dir / installation.CONFIG_FILE).exists():
        previous = installation.read(gate_dir)
    named = git_dir.parent if git_dir.name == ".git" else git_dir  # a work tree's .git: the work tree's name
    repo_id = repository_id or (previous.repository_id if previous else named.name.removesuffix(".git"))
    if not ids.is_repository_id(repo_id):
        raise GateError("GATE-CONFIG-INSTALL", f"repository id {repo_id!r} is not of the allowed form")

    # Validate everything before touching anything.
    new_policy = None if policy is None else config.validated_policy(policy)
    if new_policy is None and not (gate_dir / installation.POLICY_FILE).exists():
        raise GateError("GATE-CONFIG-POLICY", "no policy is installed yet: pass --policy FILE (see docs/policy.md)")
    new_keyring = None if keyring is None else config.validated_keyring(keyring)
    new_signers = None if allowed_signers is None else config.read_allowed_signers(allowed_signers)
    new_openpgp = None if openpgp_keys is None else config.read_openpgp_keys(openpgp_keys)
    has_keyring = keyring is not None or (previous is not None and previous.has_keyring)
    _signature_keys_present(new_policy, gate_dir, new_signers is not None or new_openpgp is not None)
    syslog = (previous.syslog if previous else None) if audit_syslog is None else \
        (None if audit_syslog == "off" else audit_syslog)
    if syslog is not None and not os.path.isabs(syslog):
        raise GateError("GATE-INPUT-ARGUMENT", f"--audit-syslog {syslog!r}: give the socket's absolute path "
                                               "(/dev/log), or off")

    where = layout(git_dir, platform)
    chained: list[Path] = []
    for c in previous.chain if previous else ():
        if c.exists():
            chained.append(c)
        else:
            done.append(f"dropped the chained hook {c}: it no longer exists")
    keep: Path | None = None  # where a foreign hook goes to run after the gate
    if where.hook.exists() and not is_ours(where.hook):
        if gitolite.is_driver(where.hook):
            raise GateError("GATE-CONFIG-INSTALL", f"{where.hook} is gitolite's hook driver, which gitolite rewrites: "
                                                   "install with --platform gitolite (docs/servers.md)")
        if platform == "gitolite" or not chain:
            raise GateError("GATE-CONFIG-INSTALL",
                            f"{where.hook} exists and is not the gate's; "
                            + ("move it away" if platform == "gitolite" else
                               "re-run with --chain to run it after the gate, or move it away"))
        keep = where.hook.parent / CHAINED_DIR / where.hook.name
        if keep.exists():
            raise GateError("GATE-CONFIG-INSTALL", f"{keep} already exists; resolve it by hand")
        chained.append(keep)
    shared = platform == "gitolite"  # one wrapper in LOCAL_CODE serves every repository
    landed: Path | None = None
    if where.landed.exists() and not is_ours(where.landed):
        done.append(f"note {where.landed} is not the gate's: left alone, so the audit log says what the gate "
                    "decided, not what landed (docs/servers.md, the audit log)")
    else:
        landed = where.landed

    # Then write: the gate's files first, the hook last. A foreign hook is copied to run after
    # the gate and stays in place until the gate's hook replaces it (atomically): whatever
    # fails on the way, some hook guards the repository.
    gate_dir.mkdir(mode=0o750, exist_ok=True)
    if new_policy is not None:
        config.install(new_policy, gate_dir / installation.POLICY_FILE)
        done.append(f"installed policy {gate_dir / installation.POLICY_FILE}")
    if new_keyring is not None:
        config.install(new_keyring, gate_dir / installation.KEYRING_FILE)
        done.append(f"installed keyring {gate_dir / installation.KEYRING_FILE}")
    if new_signers is not None:
        atomic_write(gate_dir / installation.ALLOWED_SIGNERS_FILE, new_signers, 0o640)
        done.append(f"installed allowed signers {gate_dir / installation.ALLOWED_SIGNERS_FILE}")
    if new_openpgp is not None:
        atomic_write(gate_dir / installation.OPENPGP_KEYS_FILE, new_openpgp, 0o640)
        done.append(f"installed OpenPGP keyring {gate_dir / installation.OPENPGP_KEYS_FILE}")
    inst = installation.Installation(gate_dir, platform, repo_id, has_keyring, tuple(chained),
                                     where.hook if shared else None, landed, syslog)
    atomic_write(gate_dir / installation.CONFIG_FILE, inst.to_json().encode(), 0o640)
    where.hook.parent.mkdir(parents=True, exist_ok=True)
    if keep is not None:
        keep.parent.mkdir(mode=0o755, exist_ok=True)
        shutil.copy2(where.hook, keep)
        done.append(f"moved the existing hook to {keep} (runs after the gate, under its own name)")
    atomic_write(where.hook, hook_script(None if shared else gate_dir).encode(), 0o755)
    if landed is not None:
        atomic_write(landed, hook_script(None if shared else gate_dir, LANDED_MODULE).encode(), 0o755)
    if fsck:
        from gatecore.adapters.gitcmd import run_git

        for key, value in FSCK_CONFIG:
            run_git([f"--git-dir={git_dir}", "config", key, value], code="GATE-CONFIG-INSTALL")
        done.append("set " + ", ".join(f"{k}={v}" for k, v in FSCK_CONFIG))
    done.append(f"installed the {platform} pre-receive hook {where.hook}")
    if landed is not None:
        done.append(f"installed the post-receive hook {landed} (logs what landed)")
    if shared:
        for hook, path in (("pre-receive", where.hook), ("post-receive", landed)):
            if path is None:
                continue
            running, detail = gitolite.active(git_dir, path, hook)
            done.append(detail if running else "NOT ACTIVE YET: " + detail)
    done.append(f"audit log: {inst.audit_log}" + (f", each line also to syslog at {syslog}" if syslog else ""))
    done.append(f"installed push-gate {__version__} ({platform}, repository id {repo_id})")
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
    problem = owner_problem(git_dir)
    if problem is not None:
        raise GateError("GATE-CONFIG-INSTALL", problem)
    git_dir = git_dir_of(git_dir)
    gate_dir = git_dir / GATE_DIR_NAME
    done = []
    inst = installation.read(gate_dir) if (gate_dir / installation.CONFIG_FILE).exists() else None
    for platform in ("git", "gitlab", "gitea"):
        where = layout(git_dir, platform)
        for hook in (where.hook, where.landed):
            if hook.exists() and is_ours(hook):
                hook.unlink()
                done.append(f"removed {hook}")
    if inst is not None and inst.platform == "gitolite":
        done.append(f"kept gitolite's shared hooks {inst.hook} (other repositories use them); with no "
                    f"installation here, pushes to {git_dir} are refused until the option hook.pre-receive line "
                    "is removed from gitolite.conf")
    for chained in inst.chain if inst else ():
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


def upgrade(git_dir: Path) -> list[str]:
    """Re-install a gated repository with this push-gate: its installed policy and keyring
    validated again (a newer schema may refuse what an older one took: then nothing changes and
    the problem is named), their caches and the hooks rewritten, chained hooks and signature
    keys kept."""
    gate_dir = git_dir_of(git_dir) / GATE_DIR_NAME
    inst = installation.read(gate_dir)
    before = written_by(layout(gate_dir.parent, inst.platform, inst).hook)
    done = install(git_dir, inst.policy, inst.keyring if inst.has_keyring else None, inst.platform,
                   inst.repository_id)
    return [*done, f"upgraded from push-gate {before or '(unknown version)'} to {__version__}"]


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


def over_all(root: Path, action: str, run: Callable[[Path], tuple[list[str], bool]],
             gated_only: bool = False) -> tuple[list[str], bool]:
    """`--all ROOT`: `run` on every repository under ROOT (every gated one with `gated_only`),
    one summary line each and a count: `ok   REPO: ...`, `FAIL REPO: ...`, `---- REPO: not gated`."""
    if not root.is_dir():
        raise GateError("GATE-INPUT-ARGUMENT", f"--all {root}: not a directory")
    lines, counts = [], {"ok": 0, "FAIL": 0, "not gated": 0}
    for repo in repositories(root):
        if gated_only and not is_gated(repo):
            lines.append(f"---- {repo}: not gated")
            counts["not gated"] += 1
            continue
        try:
            detail, good = run(repo)
        except GateError as exc:
            detail, good = [f"{exc.code}: {exc.detail}"], False
        state = "ok" if good else "FAIL"
        counts[state] += 1
        lines.append(f"{state:<4} {repo}: {detail[-1] if detail else action}")
    lines.append(f"{action} over {root}: {counts['ok']} ok, {counts['FAIL']} failed"
                 + (f", {counts['not gated']} not gated" if gated_only else ""))
    return lines, counts["FAIL"] == 0
