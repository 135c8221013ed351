"""`gate server doctor`: check an installation end to end, with a real throwaway probe push.

The probe pushes a fresh commit to `refs/gate/doctor/probe-*`, which the gate always
refuses with `GATE-DOCTOR-PROBE` after reading the quarantined objects: the hook ran,
saw the pushed objects and decided. For GitLab and Gitea layouts, whose hooks plain git
does not run, the push goes through a temporary hooks directory that runs the installed
hook file the way the platform does.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
import uuid
from pathlib import Path

from gatecore.adapters.gitcmd import object_format
from gatecore.errors import GateError
from gatecore.gitmodel import GitReader
from gatecore.policy import Policy
from gatecore.refs import REPLACE_PREFIX, display

from . import gitolite, installation
from .install import GATE_DIR_NAME, account_name, git_dir_of, is_ours, layout, owner_problem


def doctor(git_dir: Path) -> tuple[list[str], bool]:
    """Check an installation end to end; returns (report lines, all good)."""
    lines: list[str] = []
    ok = True

    def check(good: bool, what: str) -> bool:
        nonlocal ok
        ok &= good
        lines.append(f"{'ok  ' if good else 'FAIL'} {what}")
        return good

    problem = owner_problem(git_dir)
    if problem is not None:  # nothing below may create a file as the wrong account (the probe would)
        raise GateError("GATE-CONFIG-INSTALL", problem)
    try:
        git_dir = git_dir_of(git_dir)
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
    try:
        where = layout(git_dir, inst.platform, inst)
    except GateError as exc:
        check(False, f"hook location: {exc.code}: {exc.detail}")
        return lines, False
    hook = where.hook
    if check(hook.is_file(), f"hook present: {hook}"):
        check(os.access(hook, os.X_OK), "hook is executable")
        if check(is_ours(hook), "hook is the gate's"):
            for good, what in hook_version(hook, git_dir):
                check(good, what)
            for kind, what in what_runs(hook, git_dir):
                if kind == "note":
                    lines.append("warn " + what)
                else:
                    check(kind == "ok", what)
        elif gitolite.is_driver(hook):
            lines.append("     it is gitolite's multi-hook driver: gitolite rewrites hooks/pre-receive; install "
                         "with --platform gitolite (docs/servers.md)")
    if inst.platform == "gitolite":
        running, detail = gitolite.active(git_dir, hook)
        check(running, detail)
    if inst.landed is None:
        lines.append(f"note no post-receive hook of the gate's ({where.landed} is someone else's): the audit "
                     "log says what the gate decided, not what landed")
    elif inst.platform == "gitolite":
        landed, detail = gitolite.active(git_dir, inst.landed, "post-receive")
        lines.append(("ok   " if landed else "note ") + detail)
    else:
        check(is_ours(inst.landed) and os.access(inst.landed, os.X_OK),
              f"post-receive hook (logs what landed): {inst.landed}")
    from gatecore.adapters.config import load_keyring, load_policy, policy_problems

    problems = policy_problems(inst.policy)
    check(not problems, f"policy valid: {inst.policy}" + ("" if not problems else " - " + "; ".join(problems)))
    if not problems:
        policy = load_policy(inst.policy)
        lines += frozen_patterns(git_dir, policy)
        for good, what in replacements(git_dir, policy):
            check(good, what)
        if policy.needs_signers:
            for good, what in signature_keys(inst):
                check(good, what)
    if inst.has_keyring:
        try:
            ring = load_keyring(inst.keyring, cached=False)
            check(True, f"keyring valid: {inst.keyring} ({len(ring)} keys)")
        except GateError as exc:
            check(False, f"keyring: {exc.detail}")
    else:
        lines.append("note no keyring installed: pushes to refs/gate/* and refs/heads/review/runner/* are refused")
    for good, what in gate_files(gate_dir):
        check(good, what)
    if inst.syslog is not None:
        check(*syslog_sink(inst.syslog))
    if _config(git_dir, "receive.fsckObjects") != "true":
        lines.append("note receive.fsckObjects is off: bad modes in commits the gate does not read (unrestricted "
                     "identities) are left to git; gate server install --fsck turns it on")
    for c in inst.chain:
        check(os.access(c, os.X_OK), f"chained hook runs: {c}")
    if ok:
        good, detail = _probe(git_dir, inst.platform)
        check(good, detail)
    return lines, ok


def summary(git_dir: Path) -> tuple[list[str], bool]:
    """One line for `gate server doctor --all`: the first failure, or that all is well."""
    lines, ok = doctor(git_dir)
    if not ok:
        return [next(ln for ln in lines if ln.startswith("FAIL")).removeprefix("FAIL").strip()], False
    warned = sum(ln.startswith("warn") for ln in lines)
    note = f" ({warned} warning{'s' if warned != 1 else ''}: gate server doctor {git_dir})" if warned else ""
    return ["every check passed, the probe push refused as it should be" + note], True


def frozen_patterns(git_dir: Path, policy: Policy) -> list[str]:
    """A warning for every frozen path pattern that matches no path on the default branch (it
    freezes nothing there: a typo such as `.github/workflow/**`, or a path yet to come)."""
    from gatecore.adapters.gitcmd import default_branch_paths
    from gatecore.policyreport import unmatched_warnings

    listed = default_branch_paths(git_dir)
    if listed is None:
        return ["note no commit on the default branch yet: frozen path patterns not checked against it"]
    return ["warn " + w for w in unmatched_warnings(policy, *listed)]


def _exec_words(hook: Path) -> list[str]:
    """The command the gate's hook runs: the words after `exec` on its exec line."""
    for line in hook.read_text("utf-8", errors="replace").splitlines():
        if line.startswith("exec ") and "<&" not in line:
            try:
                return shlex.split(line)[1:]
            except ValueError:
                return []
    return []


def hook_version(hook: Path, git_dir: Path) -> list[tuple[bool, str]]:
    """The hook was written by this push-gate (an older one's hook may start it another way)."""
    from gatecore import __version__

    from .install import written_by

    return [version_age(written_by(hook), __version__, git_dir)]


def version_age(hook: str | None, here: str, git_dir: Path) -> tuple[bool, str]:
    """The installed hook's version against this environment's: the same, or which one is older
    (gatecore.versions), and the command that makes them one."""
    from gatecore.versions import FORM, order

    if hook == here:
        return True, f"hook written by push-gate {hook} (this version)"
    upgrade = f"run gate server upgrade {git_dir}"
    if hook is None:
        return False, f"hook written by an unknown push-gate version, this environment holds {here}: {upgrade}"
    older = order(hook, here)
    if older == -1:
        return False, f"hook written by push-gate {hook}, older than this environment's {here}: {upgrade}"
    if older == 1:
        return False, (f"hook written by push-gate {hook}, newer than this environment's {here} (rolled back, or "
                       f"another environment's gate wrote it): {upgrade} with the version it should run")
    if FORM.fullmatch(hook) and FORM.fullmatch(here):
        return False, (f"hook written by push-gate {hook}, this environment holds {here}, built from another "
                       f"commit (neither is older): {upgrade}")
    return False, f"hook written by push-gate {hook}, this environment holds {here} (not to be ordered): {upgrade}"


def what_runs(hook: Path, git_dir: Path) -> list[tuple[str, str]]:
    """Run the hook's own interpreter and launcher the way the hook does, and report what they
    load: ("ok" | "fail" | "note", text). Proves which files run, names an interpreter the
    account cannot execute (and the directory in the way), and other distributions that ship a
    `server` or `hooks` package in the hook's environment."""
    import json

    from gatecore import __version__

    from .access import blocked, fix
    from .install import LAUNCH, account_name

    words = _exec_words(hook)
    if len(words) < 3 or words[1] != "-I" or not words[2].endswith("launch.py"):
        return [("fail", f"hook starts the gate the old way ({' '.join(words[:4])}): run gate server upgrade "
                         f"{git_dir}")]
    python, launch = words[0], words[2]
    me = account_name(os.geteuid())
    try:
        proc = subprocess.run([python, "-I", launch, "--where"], capture_output=True, text=True, check=False,
                              timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        why = blocked(python, os.geteuid(), os.X_OK) or blocked(launch, os.geteuid(), os.R_OK)
        return [("fail", f"interpreter runs: {python}: {reason}" + (f": {why}" if why else "")
                 + f"; every push fails the same way. {fix(me, ['server', 'install', str(git_dir)])}")]
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        why = blocked(launch, os.geteuid(), os.R_OK)
        return [("fail", f"interpreter runs: {python} {launch}: {last}" + (f" ({why})" if why else "")
                 + f"; every push fails the same way. {fix(me, ['server', 'install', str(git_dir)])}")]
    info = json.loads(proc.stdout)
    root = os.path.dirname(os.path.dirname(launch))
    files = info["files"]
    foreign = {name: path for name, path in files.items() if not path.startswith(root + os.sep)}
    out = [("ok", f"interpreter runs: {python} (Python {info['python']})")]
    shown = [(name, os.path.dirname(files[name])) for name in ("gatecore", "server", "hooks") if name in files]
    out.append(("fail" if foreign else "ok", "files the hook runs: " + ", ".join(f"{n} {d}" for n, d in shown)
                + (f"; NOT push-gate's: {', '.join(f'{n} {foreign[n]}' for n in foreign)}" if foreign else "")))
    if info["version"] != __version__:
        out.append(("fail", f"the hook's environment holds push-gate {info['version']}, this is {__version__} "
                            f"({LAUNCH.parent.parent}): upgrade that environment, or run gate server upgrade "
                            f"{git_dir} from this one"))
    out += [("note", f"{r} in the hook's environment (push-gate runs its own; a dedicated environment is "
                     "recommended, docs/servers.md)") for r in info["rivals"]]
    return out


def gate_files(gate_dir: Path) -> list[tuple[bool, str]]:
    """The hook appends to the audit log and replaces the validated caches in GIT_DIR/gate as the
    hosting account, and reads the installed files: those must be the account's, or readable.
    Anything else there (a rotated `audit.log.1` that root's logrotate left) is not the hook's
    business and fails nothing."""
    me = os.geteuid()
    written = [installation.AUDIT_FILE, *sorted(p.name for p in gate_dir.glob("*.validated.json"))]
    read = [installation.CONFIG_FILE, installation.POLICY_FILE, installation.KEYRING_FILE,
            installation.ALLOWED_SIGNERS_FILE, installation.OPENPGP_KEYS_FILE]
    present = {p.name: p for p in gate_dir.iterdir()}
    foreign = [n for n in written if n in present and present[n].lstat().st_uid != me]
    unreadable = [n for n in read if n in present and not os.access(present[n], os.R_OK)]
    out: list[tuple[bool, str]] = []
    out.append((not foreign and not unreadable,
                f"the hook's files in {gate_dir} are {account_name(me)}'s" if not foreign and not unreadable else
                f"{', '.join([*foreign, *unreadable])} in {gate_dir} "
                f"{'belong to another account' if foreign else 'cannot be read'}: the hook, running as "
                f"{account_name(me)}, fails on every push (chown them to {account_name(me)})"))
    others = sorted(n for n, p in present.items() if n not in (*written, *read) and p.lstat().st_uid != me)
    if others:
        verb = "belongs" if len(others) == 1 else "belong"
        out.append((True, f"not the hook's files (left alone): {', '.join(others)} {verb} to another account"))
    log = gate_dir / installation.AUDIT_FILE
    if log.exists():
        out.append((os.access(log, os.W_OK), f"audit log writable: {log}"))
    else:
        out.append((os.access(gate_dir, os.W_OK), f"audit log directory writable: {gate_dir}"))
    return out


def syslog_sink(socket_path: str) -> tuple[bool, str]:
    """The syslog socket takes a line (the hook sends one per decision, and never waits on it)."""
    from .audit import to_syslog

    try:
        to_syslog(socket_path, b'{"event":"doctor","note":"gate server doctor checks the syslog sink"}')
    except OSError as exc:
        return False, f"audit lines to syslog: cannot send to {socket_path}: {exc.strerror or exc}"
    return True, f"audit lines also go to syslog at {socket_path}"


def signature_keys(inst: installation.Installation) -> list[tuple[bool, str]]:
    """The keys a policy that reads signatures verifies with: present, valid, and gpgv for OpenPGP."""
    import shutil

    from gatecore.adapters.config import load_trusted_keys

    paths = [p if os.path.lexists(p) else None for p in (inst.allowed_signers, inst.openpgp_keys)]
    try:
        keys = load_trusted_keys(*paths)
    except GateError as exc:
        return [(False, f"signature keys: {exc.code}: {exc.detail}")]
    found = []
    if keys.ssh is not None:
        found.append((True, f"allowed signers valid: {inst.allowed_signers} ({len(keys.ssh.signers)} keys)"))
    if paths[1] is not None:
        gpgv = shutil.which("gpgv")
        found.append((gpgv is not None, f"OpenPGP keyring {inst.openpgp_keys}, verified by gpgv: "
                                        f"{gpgv or 'not installed (OpenPGP-signed commits: GATE-SIG-UNSUPPORTED)'}"))
    return found


def _config(git_dir: Path, key: str) -> str:
    from gatecore.adapters.gitcmd import run_git

    return run_git([f"--git-dir={git_dir}", "config", "--get", key], ok=None).stdout.decode().strip()


def replacements(git_dir: Path, policy: Policy) -> list[tuple[bool, str]]:
    """Every refs/replace/* ref: git serves its replacement wherever the original is read (show,
    archive, checkouts on the server). A commit replaced by one whose frozen paths differ, and any
    replaced tree or blob (which may sit at any path), fail the check."""
    from gatecore.adapters.gitstream import GitStream

    repo = GitStream(str(git_dir))  # git's own reading, as the hook's (sha1 and sha256 alike)
    try:
        return _replacements(repo, policy)
    finally:
        repo.close()


def _replacements(repo: GitReader, policy: Policy) -> list[tuple[bool, str]]:
    from gatecore.frozen import FrozenChecker
    from gatecore.objects import Objects

    objects = Objects(repo)
    found = repo.ref_targets(lambda n: n.startswith(REPLACE_PREFIX.encode()))
    out: list[tuple[bool, str]] = []
    rules = list(policy.rules)
    for name, replacement in sorted(found.items()):
        ref = display(name)
        original = ref[len(REPLACE_PREFIX):]
        try:
            kinds = objects.type_of(original), objects.type_of(replacement)
            if kinds != ("commit", "commit"):
                out.append((False, f"{ref} replaces a {kinds[0]} with a {kinds[1]}: git serves it at any path "
                                   f"that names {original[:12]}; remove it (git update-ref -d {ref})"))
                continue
            checker = FrozenChecker(objects)
            differ = checker.frozen_changes(checker.tree_of(original), checker.tree_of(replacement), rules)
        except GateError as exc:
            out.append((False, f"{ref}: {exc.code}: {exc.detail}"))
            continue
        if differ:
            paths = ", ".join(display(p) for p in sorted(differ)[:5])
            out.append((False, f"{ref} replaces commit {original[:12]} with one whose frozen paths differ ({paths})"))
        else:
            out.append((True, f"{ref}: the replacement changes no frozen path"))
    return out


#: What the platform's hook runner would set, so that the probe runs as it would there.
_PROBE_ENV = {
    "git": {},
    "gitlab": {"GL_USERNAME": "gate-doctor", "GL_ID": "user-0", "GL_PROTOCOL": "ssh"},
    "gitea": {"GITEA_PUSHER_NAME": "gate-doctor", "GITEA_PUSHER_ID": "0"},
    "gitolite": {"GL_USER": "gate-doctor"},
    "github": {"GITHUB_USER_LOGIN": "gate-doctor"},
    "git-daemon": {},
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

        git("init", "-q", f"--object-format={object_format(str(git_dir))}")  # a push carries one format
        Path(tmp, "probe").write_text(uuid.uuid4().hex)
        git("add", "probe")
        git("commit", "-q", "-m", "gate doctor probe")
        env.update(_PROBE_ENV.get(platform, {}))
        hooks_dir = Path(tmp) / ".probe-hooks"
        config: tuple[str, ...] = ()
        if platform in ("gitlab", "gitea"):
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
    codes = sorted(set(re.findall(r"GATE-[A-Z0-9]+(?:-[A-Z0-9]+)*", text)))
    if codes == ["GATE-DOCTOR-PROBE"]:
        return True, "probe push: the hook ran, read the quarantined objects, and refused the probe"
    # Any other code (GATE-AUDIT-WRITE, a configuration error...) means real pushes fail too.
    others = ", ".join(c for c in codes if c != "GATE-DOCTOR-PROBE") or "no gate code"
    return False, f"probe push rejected with {others} where only GATE-DOCTOR-PROBE was expected: {text.strip()[-300:]}"

