"""`gate server install | uninstall | doctor`: putting the hook on a real git server.

`gate server doctor` is in `server/doctor.py`. Where the hook goes, by platform (docs/servers.md):

| platform | hook file | notes |
|---|---|---|
| git (plain, gitolite) | `GIT_DIR/hooks/pre-receive` | a foreign hook is refused, or chained (`--chain`) |
| gitlab | `GIT_DIR/custom_hooks/pre-receive.d/gate` | GitLab runs every file there |
| gitea / forgejo | `GIT_DIR/hooks/pre-receive.d/gate` | Gitea owns `hooks/pre-receive` and runs `pre-receive.d/*` |

The hook pins the interpreter that ran the installer (`sys.executable`, started with
`-I` so that no environment variable can redirect its imports) and points it at
`GIT_DIR/gate/`, which holds copies of the policy and keyring: server-side files, never
read from a pushed tree.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from gatecore import __version__, ids
from gatecore.adapters import config
from gatecore.adapters.files import atomic_write
from gatecore.errors import GateError

from . import installation

MARKER = "# managed-by: gate server install"
GATE_DIR_NAME = "gate"
CHAINED_SUFFIX = ".gate-chained"


@dataclass(frozen=True, slots=True)
class Layout:
    platform: str
    hook: Path


def detect_platform(git_dir: Path) -> str:
    if (git_dir / "custom_hooks").is_dir():
        return "gitlab"
    existing = git_dir / "hooks" / "pre-receive"
    try:
        text = existing.read_text("utf-8", errors="replace")
    except OSError:
        text = ""
    if "gitea" in text.lower() or "forgejo" in text.lower():
        return "gitea"
    return "git"


def layout(git_dir: Path, platform: str) -> Layout:
    if platform == "gitlab":
        return Layout(platform, git_dir / "custom_hooks" / "pre-receive.d" / "gate")
    if platform == "gitea":
        return Layout(platform, git_dir / "hooks" / "pre-receive.d" / "gate")
    return Layout(platform, git_dir / "hooks" / "pre-receive")


def hook_script(gate_dir: Path) -> str:
    py = shlex.quote(sys.executable)
    return (
        "#!/bin/sh\n"
        f"{MARKER} (push-gate {__version__}); re-run the installer instead of editing\n"
        f"exec {py} -I -m server.prereceive --gate-dir {shlex.quote(str(gate_dir))} \"$@\"\n"
    )


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text("utf-8", errors="replace")
    except OSError:
        return False


def git_dir_of(path: Path) -> Path:
    from gatecore.adapters.gitrepo import GitRepo

    repo = GitRepo.at(path)
    return Path(repo.path).resolve()


#: What `--fsck` sets: git itself refuses malformed objects, and bad modes, in every pushed tree
#: (the gate reads only the trees of restricted commits); zero-padded modes of old histories pass.
FSCK_CONFIG = (("receive.fsckObjects", "true"), ("receive.fsck.badFilemode", "error"),
               ("receive.fsck.zeroPaddedFilemode", "ignore"))


def install(git_dir: Path, policy: Path | None, keyring: Path | None, platform: str = "auto",
            repository_id: str | None = None, chain: bool = False, fsck: bool = False,
            allowed_signers: Path | None = None, openpgp_keys: Path | None = None) -> list[str]:
    """Install (or re-install) the gate; returns what was done, one line each."""
    git_dir = git_dir_of(git_dir)
    if platform == "auto":
        platform = detect_platform(git_dir)
    if platform not in ("git", "gitlab", "gitea"):
        raise GateError("GATE-CONFIG-INSTALL", f"unknown platform {platform!r}")
    gate_dir = git_dir / GATE_DIR_NAME
    done: list[str] = []
    previous = None
    if (gate_dir / installation.CONFIG_FILE).exists():
        previous = installation.read(gate_dir)
    repo_id = repository_id or (previous.repository_id if previous else git_dir.name.removesuffix(".git"))
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

    where = layout(git_dir, platform)
    chained: list[Path] = list(previous.chain) if previous else []
    if where.hook.exists() and not is_ours(where.hook):
        if not chain:
            raise GateError("GATE-CONFIG-INSTALL",
                              f"{where.hook} exists and is not the gate's; re-run with --chain to run it after "
                              "the gate, or move it away")
        target = where.hook.with_name(where.hook.name + CHAINED_SUFFIX)
        if target.exists():
            raise GateError("GATE-CONFIG-INSTALL", f"{target} already exists; resolve it by hand")
        where.hook.rename(target)
        chained.append(target)
        done.append(f"moved the existing hook to {target} (runs after the gate)")

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
    inst = installation.Installation(gate_dir, platform, repo_id, has_keyring, tuple(chained))
    atomic_write(gate_dir / installation.CONFIG_FILE, inst.to_json().encode(), 0o640)
    atomic_write(where.hook, hook_script(gate_dir).encode(), 0o755)
    if fsck:
        from gatecore.adapters.gitcmd import run_git

        for key, value in FSCK_CONFIG:
            run_git([f"--git-dir={git_dir}", "config", key, value], code="GATE-CONFIG-INSTALL")
        done.append("set " + ", ".join(f"{k}={v}" for k, v in FSCK_CONFIG))
    done.append(f"installed the {platform} pre-receive hook {where.hook}")
    done.append(f"audit log: {inst.audit_log}")
    return done


def uninstall(git_dir: Path) -> list[str]:
    git_dir = git_dir_of(git_dir)
    gate_dir = git_dir / GATE_DIR_NAME
    done = []
    inst = installation.read(gate_dir) if (gate_dir / installation.CONFIG_FILE).exists() else None
    for platform in ("git", "gitlab", "gitea"):
        hook = layout(git_dir, platform).hook
        if hook.exists() and is_ours(hook):
            hook.unlink()
            done.append(f"removed {hook}")
    for chained in inst.chain if inst else ():
        original = chained.with_name(chained.name.removesuffix(CHAINED_SUFFIX))
        if chained.exists() and not original.exists():
            chained.rename(original)
            done.append(f"restored {original}")
    if inst is not None:
        (gate_dir / installation.CONFIG_FILE).unlink()
        done.append(f"removed {gate_dir / installation.CONFIG_FILE}; kept policy, keyring and audit log in {gate_dir}")
    if not done:
        done.append("nothing to remove: the gate is not installed here")
    return done
