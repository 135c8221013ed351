"""`gate server install | uninstall | doctor`: putting the hook on a real git server.

Where the hook goes, by platform (docs/servers.md):

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

import os
import shlex
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from gatecore import __version__, configcache, ids
from gatecore.errors import ConfigError, GateError

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


def _atomic_write(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _git_dir(path: Path) -> Path:
    from gatecore.gitrepo import GitRepo

    repo = GitRepo.at(path)
    return Path(repo.path).resolve()


def install(git_dir: Path, policy: Path | None, keyring: Path | None, platform: str = "auto",
            repository_id: str | None = None, chain: bool = False) -> list[str]:
    """Install (or re-install) the gate; returns what was done, one line each."""
    from gatecore.configcache import read_capped
    from gatecore.keyfiles import read_keyring_bytes, validate_keyring_bytes
    from gatecore.policy import MAX_POLICY_BYTES
    from gatecore.policyfile import validate_bytes

    git_dir = _git_dir(git_dir)
    if platform == "auto":
        platform = detect_platform(git_dir)
    if platform not in ("git", "gitlab", "gitea"):
        raise ConfigError("GATE-CONFIG-INSTALL", f"unknown platform {platform!r}")
    gate_dir = git_dir / GATE_DIR_NAME
    done: list[str] = []
    previous = None
    if (gate_dir / installation.CONFIG_FILE).exists():
        previous = installation.read(gate_dir)
    repo_id = repository_id or (previous.repository_id if previous else git_dir.name.removesuffix(".git"))
    if not ids.is_repository_id(repo_id):
        raise ConfigError("GATE-CONFIG-INSTALL", f"repository id {repo_id!r} is not of the allowed form")

    # Validate everything before touching anything.
    policy_bytes = None
    if policy is not None:
        policy_bytes = read_capped(policy, "GATE-CONFIG-POLICY", "policy", MAX_POLICY_BYTES)
        policy_plain = validate_bytes(policy_bytes, str(policy))
    elif not (gate_dir / installation.POLICY_FILE).exists():
        raise ConfigError("GATE-CONFIG-POLICY", "no policy is installed yet: pass --policy FILE (see docs/policy.md)")
    keyring_bytes = None
    if keyring is not None:
        keyring_bytes = read_keyring_bytes(keyring)
        keyring_plain = validate_keyring_bytes(keyring_bytes, str(keyring))
    has_keyring = keyring is not None or (previous is not None and previous.has_keyring)

    where = layout(git_dir, platform)
    chained: list[Path] = list(previous.chain) if previous else []
    if where.hook.exists() and not is_ours(where.hook):
        if not chain:
            raise ConfigError("GATE-CONFIG-INSTALL",
                              f"{where.hook} exists and is not the gate's; re-run with --chain to run it after "
                              "the gate, or move it away")
        target = where.hook.with_name(where.hook.name + CHAINED_SUFFIX)
        if target.exists():
            raise ConfigError("GATE-CONFIG-INSTALL", f"{target} already exists; resolve it by hand")
        where.hook.rename(target)
        chained.append(target)
        done.append(f"moved the existing hook to {target} (runs after the gate)")

    gate_dir.mkdir(mode=0o750, exist_ok=True)
    if policy_bytes is not None:
        _atomic_write(gate_dir / installation.POLICY_FILE, policy_bytes, 0o640)
        configcache.write(configcache.cache_path(gate_dir / installation.POLICY_FILE),
                          _sha(policy_bytes), policy_plain)
        done.append(f"installed policy {gate_dir / installation.POLICY_FILE}")
    if keyring_bytes is not None:
        _atomic_write(gate_dir / installation.KEYRING_FILE, keyring_bytes, 0o640)
        configcache.write(configcache.cache_path(gate_dir / installation.KEYRING_FILE),
                          _sha(keyring_bytes), keyring_plain)
        done.append(f"installed keyring {gate_dir / installation.KEYRING_FILE}")
    inst = installation.Installation(gate_dir, platform, repo_id, has_keyring, tuple(chained))
    _atomic_write(gate_dir / installation.CONFIG_FILE, inst.to_json().encode(), 0o640)
    _atomic_write(where.hook, hook_script(gate_dir).encode(), 0o755)
    done.append(f"installed the {platform} pre-receive hook {where.hook}")
    done.append(f"audit log: {inst.audit_log}")
    return done


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def uninstall(git_dir: Path) -> list[str]:
    git_dir = _git_dir(git_dir)
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


def doctor(git_dir: Path) -> tuple[list[str], bool]:
    """Check an installation end to end; returns (report lines, all good)."""
    lines: list[str] = []
    ok = True

    def check(good: bool, what: str) -> bool:
        nonlocal ok
        ok &= good
        lines.append(f"{'ok  ' if good else 'FAIL'} {what}")
        return good

    try:
        git_dir = _git_dir(git_dir)
    except GateError as exc:
        check(False, f"repository: {exc.code}: {exc.detail}")
        return lines, False
    gate_dir = git_dir / GATE_DIR_NAME
    try:
        inst = installation.read(gate_dir)
    except GateError as exc:
        check(False, f"installation record: {exc.code}: {exc.detail}")
        return lines, False
    check(True, f"installation record {gate_dir / installation.CONFIG_FILE} (platform {inst.platform})")
    hook = layout(git_dir, inst.platform).hook
    if check(hook.is_file(), f"hook present: {hook}"):
        check(os.access(hook, os.X_OK), "hook is executable")
        check(is_ours(hook), "hook is the gate's")
        text = hook.read_text("utf-8", errors="replace")
        interp = shlex.split(text.splitlines()[-1])[1] if text.strip() else ""
        check(bool(interp) and os.access(interp, os.X_OK), f"interpreter runs: {interp}")
    from gatecore.policyfile import check_messages

    problems = check_messages(inst.policy)
    check(not problems, f"policy valid: {inst.policy}" + ("" if not problems else " - " + "; ".join(problems)))
    if inst.has_keyring:
        from gatecore.keyfiles import load_keyring

        try:
            ring = load_keyring(inst.keyring)
            check(True, f"keyring valid: {inst.keyring} ({len(ring)} keys)")
        except GateError as exc:
            check(False, f"keyring: {exc.detail}")
    else:
        lines.append("note no keyring installed: pushes to refs/gate/* and refs/heads/review/runner/* are refused")
    check(os.access(gate_dir, os.W_OK), f"audit log directory writable: {gate_dir}")
    for c in inst.chain:
        check(os.access(c, os.X_OK), f"chained hook runs: {c}")
    if ok:
        good, detail = _probe(git_dir, inst.platform)
        check(good, detail)
    return lines, ok


#: What the platform's hook runner would set, so that the probe runs as it would there.
_PROBE_ENV = {
    "git": {},
    "gitlab": {"GL_USERNAME": "gate-doctor", "GL_ID": "user-0", "GL_PROTOCOL": "ssh"},
    "gitea": {"GITEA_PUSHER_NAME": "gate-doctor", "GITEA_PUSHER_ID": "0"},
}


def _probe(git_dir: Path, platform: str) -> tuple[bool, str]:
    """A real throwaway push: the hook must see the quarantined commit and refuse the probe.

    For GitLab and Gitea layouts, whose hooks plain git does not run, the push goes through
    a temporary hooks directory whose pre-receive runs the installed hook file the way the
    platform does (same input, the platform's identity variables).
    """
    ref = f"refs/gate/doctor/probe-{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="gate-doctor-") as tmp:
        env = {**os.environ, "GIT_AUTHOR_NAME": "gate doctor", "GIT_AUTHOR_EMAIL": "doctor@gate.invalid",
               "GIT_COMMITTER_NAME": "gate doctor", "GIT_COMMITTER_EMAIL": "doctor@gate.invalid"}
        for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
            env.pop(k, None)

        def git(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["git", *args], cwd=tmp, env=env, capture_output=True, text=True, check=False)

        git("init", "-q")
        Path(tmp, "probe").write_text(uuid.uuid4().hex)
        git("add", "probe")
        git("commit", "-q", "-m", "gate doctor probe")
        env.update(_PROBE_ENV.get(platform, {}))
        hooks_dir = Path(tmp) / ".probe-hooks"
        config: tuple[str, ...] = ()
        if platform != "git":
            hooks_dir.mkdir()
            runner = hooks_dir / "pre-receive"
            runner.write_text(f"#!/bin/sh\nexec {shlex.quote(str(layout(git_dir, platform).hook))} \"$@\"\n")
            runner.chmod(0o755)
            config = (f"--receive-pack=git -c core.hooksPath={shlex.quote(str(hooks_dir))} receive-pack",)
        push = git("push", "--porcelain", *config, f"file://{git_dir}", f"HEAD:{ref}")
    landed = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "--verify", "-q", ref],
                            capture_output=True, text=True, check=False)
    if landed.returncode == 0:
        subprocess.run(["git", "--git-dir", str(git_dir), "update-ref", "-d", ref], check=False)
        return False, "probe push was ACCEPTED: the hook is not running (probe ref removed)"
    text = push.stdout + push.stderr
    if "GATE-DOCTOR-PROBE" in text:
        return True, "probe push: the hook ran, read the quarantined objects, and refused the probe"
    codes = sorted({w for w in text.replace("=", " ").split() if w.startswith("GATE-")})
    return False, (f"probe push rejected without the probe code ({', '.join(codes) or 'no gate code'}): "
                   f"{text.strip()[-300:]}")

