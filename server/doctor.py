"""`gate server doctor`: check an installation end to end, with a real throwaway probe push.

The probe pushes a fresh commit to `refs/gate/doctor/probe-*`, which the gate always
refuses with `GATE-DOCTOR-PROBE` after reading the quarantined objects: the hook ran,
saw the pushed objects and decided. For GitLab and Gitea layouts, whose hooks plain git
does not run, the push goes through a temporary hooks directory that runs the installed
hook file the way the platform does.

The checks are the functions of CHECKS, each taking the `Site` (the repository, its
installation record and hook layout) and returning its findings, `(status, line)`; one loop
runs them in order and the probe is the last: it runs only when nothing failed before it, and
says so when it does not. A new check is a function and its place in the tuple.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

from gatecore.adapters.gitcmd import object_format
from gatecore.configuration.policy import Policy
from gatecore.errors import GateError
from gatecore.git.gitmodel import GitReader
from gatecore.git.refs import REPLACE_PREFIX, display

from . import gitolite, installation
from .hooklist import CONFIG_HOOK, CONFIG_HOOKS_SINCE, EventHooks, is_ours
from .install import (
    GATE_DIR_NAME,
    Layout,
    account_name,
    git_dir_of,
    layout,
    owner_problem,
)

#: One line of the report: ("ok" | "FAIL" | "warn" | "note" | "", text); only "FAIL" fails doctor.
Finding = tuple[str, str]


class Site:
    """One gated repository as doctor sees it: its git dir, installation record and hook layout,
    and what the checks learn that later ones need (read once, when first asked)."""

    def __init__(self, git_dir: Path, inst: installation.Installation, where: Layout) -> None:
        self.git_dir, self.inst, self.where = git_dir, inst, where
        self.failed: list[str] = []  # the checks that failed so far (the probe runs only when none did)

    @functools.cached_property
    def hook_ours(self) -> bool:
        return self.where.hook.is_file() and is_ours(self.where.hook)

    @functools.cached_property
    def policy_problems(self) -> list[str]:
        from gatecore.adapters.config import policy_problems

        return policy_problems(self.inst.policy)

    @functools.cached_property
    def policy(self) -> Policy | None:
        """The installed policy, None when it is invalid (the policy check fails then)."""
        from gatecore.adapters.config import load_policy

        return None if self.policy_problems else load_policy(self.inst.policy)


def doctor(git_dir: Path) -> tuple[list[str], bool]:
    """Check an installation end to end; returns (report lines, all good). Every check of
    CHECKS runs, in order; the probe push last, and only when nothing failed before it."""
    problem = owner_problem(git_dir)
    if problem is not None:  # nothing below may create a file as the wrong account (the probe would)
        raise GateError("GATE-CONFIG-INSTALL", problem)
    site, findings = open_site(git_dir)
    lines = [_line(f) for f in findings]
    if site is None:
        return lines, False
    for check in CHECKS:
        for status, text in check(site):
            if status == "FAIL":
                site.failed.append(text)
            lines.append(_line((status, text)))
    return lines, not site.failed


def _line(finding: Finding) -> str:
    status, text = finding
    return f"{status:<4} {text}"


def _ok(good: bool) -> str:
    return "ok" if good else "FAIL"


def _version(version: tuple[int, int]) -> str:
    return ".".join(map(str, version))


def open_site(git_dir: Path) -> tuple[Site | None, list[Finding]]:
    """The repository, its installation record and its hook layout, or the first that cannot be read."""
    try:
        git_dir = git_dir_of(git_dir)
    except GateError as exc:
        return None, [("FAIL", f"repository: {exc.code}: {exc.detail}")]
    try:
        inst = installation.read(git_dir / GATE_DIR_NAME)
    except GateError as exc:
        return None, [("FAIL", f"installation record: {exc.code}: {exc.detail}")]
    layout_words = f", hook.{CONFIG_HOOK} in the {inst.config_hook} config" if inst.config_hook else ""
    found: list[Finding] = [("ok", f"installation record {os.path.join(inst.gate_dir, installation.CONFIG_FILE)} "
                                   f"(platform {inst.platform}{layout_words})")]
    try:
        where = layout(git_dir, inst.platform, inst)
    except GateError as exc:
        return None, [*found, ("FAIL", f"hook location: {exc.code}: {exc.detail}")]
    return Site(git_dir, inst, where), found


def hook_file(site: Site) -> list[Finding]:
    """The hook file is there, executable and the gate's (gitolite's driver is named, not misread)."""
    hook = site.where.hook
    if not hook.is_file():
        return [("FAIL", f"hook present: {hook}")]
    found: list[Finding] = [("ok", f"hook present: {hook}"),
                            (_ok(os.access(hook, os.X_OK)), "hook is executable"),
                            (_ok(site.hook_ours), "hook is the gate's")]
    if not site.hook_ours and gitolite.is_driver(hook):
        found.append(("", "it is gitolite's multi-hook driver: gitolite rewrites hooks/pre-receive; install with "
                          "--platform gitolite (docs/servers.md)"))
    return found


def hook_version(site: Site) -> list[Finding]:
    """The hook was written by this push-gate, else which of the two builds is older (version_age)."""
    from gatecore import __version__

    from .install import written_by

    if not site.hook_ours:
        return []
    good, text = version_age(written_by(site.where.hook), __version__, site.git_dir)
    return [(_ok(good), text)]


def interpreter(site: Site) -> list[Finding]:
    """The hook's own interpreter and launcher run, and load push-gate's files (what_runs)."""
    if not site.hook_ours:
        return []
    kinds = {"ok": "ok", "fail": "FAIL", "note": "warn"}
    return [(kinds[kind], what) for kind, what in what_runs(site.where.hook, site.git_dir)]


def gitolite_link(site: Site) -> list[Finding]:
    """gitolite links the shared wrapper into this repository and its driver runs it."""
    if site.inst.platform != "gitolite":
        return []
    running, detail = gitolite.active(site.git_dir, site.where.hook)
    return [(_ok(running), detail)]


def one_gate(site: Site) -> list[Finding]:
    """Exactly one gate runs at pre-receive, read through git as the running version reads it;
    a setting that takes the gate out is named with the file that sets it."""
    if site.inst.platform == "gitlab":
        return []  # Gitaly runs custom_hooks itself, whatever git's own hook settings say
    from .hooklist import pre_receive

    runs = pre_receive(site.git_dir)
    found = _hook_file_findings(site, runs) + _config_hook_findings(site, runs)
    gates = _gates(site, runs)
    if len(gates) == 1:
        found.append(("ok", f"one gate runs at pre-receive (git {_version(runs.version)}): {gates[0]}"))
    elif gates:
        found.append(("FAIL", f"{len(gates)} gates run at pre-receive: {', '.join(gates)}: every push is judged "
                              "twice (two audit lines, two deadlines); keep the installed one, remove the other"))
    elif site.inst.platform == "gitea":  # Gitea writes its runner itself (and rewrites it): absent, it is Gitea's
        found.append(("note", f"{runs.hook_file} (Gitea's runner of hooks/pre-receive.d) is not there to run: Gitea "
                              "writes it (Site Administration: resynchronize hooks)"))
    elif not any(status == "FAIL" for status, _ in found):
        found.append(("FAIL", f"no gate runs at pre-receive (git {_version(runs.version)}): run gate server install "
                              f"{site.git_dir}"))
    return found


def _expected_file(site: Site) -> Path | None:
    """The hook file git must run for the gate to run: the gate's own, or the platform's runner
    (Gitea's hooks/pre-receive, gitolite's driver) that runs it; None for a config-defined gate."""
    if site.inst.config_hook is not None:
        return None
    if site.inst.platform in ("gitea", "gitolite"):
        return site.git_dir / "hooks" / "pre-receive"
    return site.where.hook


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _hook_file_findings(site: Site, runs: EventHooks) -> list[Finding]:
    """`core.hooksPath` moves the hook file git runs away from the gate's (or the runner's)."""
    expected = _expected_file(site)
    if expected is not None and not _same(runs.hook_file, expected) and runs.hooks_path is not None:
        value, where = runs.hooks_path
        return [("FAIL", f"core.hooksPath = {value} ({where}) takes the gate out: git runs {runs.hook_file}, not "
                         f"{expected}; remove the setting, or install with --config-hook repository (git 2.54+)")]
    if expected is None and runs.hook_file_runs and not is_ours(runs.hook_file):
        return [("note", f"{runs.hook_file} (not the gate's) runs too, after the gate")]
    return []


def _config_hook_findings(site: Site, runs: EventHooks) -> list[Finding]:
    """A config-defined gate: git new enough, listed, and neither it nor its event disabled."""
    from .hooklist import is_gate_command, setting

    scope = site.inst.config_hook
    found: list[Finding] = []
    if scope is not None and runs.version < CONFIG_HOOKS_SINCE:
        found.append(("FAIL", f"git {_version(runs.version)} runs no config-defined hook, so not the gate "
                              f"(hook.{CONFIG_HOOK}): install with --config-hook off (the hook file), or run git "
                              f"{_version(CONFIG_HOOKS_SINCE)} or newer"))
    for hook in runs.configured:
        gate = hook.name == CONFIG_HOOK or is_gate_command(hook.command, site.git_dir)
        if hook.state and gate and scope is not None:
            key = f"hook.{hook.name}.enabled" if hook.state == "disabled" else "hook.pre-receive.enabled"
            value, where = setting(site.git_dir, key) or ("false", "git's config")
            found.append(("FAIL", f"{key} = {value} ({where}) takes the gate out"
                                  + ("" if hook.state == "disabled" else
                                     ": git runs no config-defined pre-receive hook") + "; remove the setting"))
        elif hook.runs and not gate:
            found.append(("note", f"{hook.label} runs at pre-receive too: {hook.command}"))
    if scope is not None and runs.version >= CONFIG_HOOKS_SINCE and \
            not any(h.name == CONFIG_HOOK for h in runs.configured):
        found.append(("FAIL", f"git lists no hook.{CONFIG_HOOK} at pre-receive, so the gate does not run: "
                              + ("run gate server install again" if scope == "repository" else
                                 "set it in git's system config as root (gate server install says how)")))
    return found


def _gates(site: Site, runs: EventHooks) -> list[str]:
    """Every gate git runs at pre-receive, in words."""
    from .hooklist import is_gate_command

    gates = [h.label for h in runs.configured
             if h.runs and is_gate_command(h.command, site.git_dir)]
    expected = _expected_file(site)
    runner = expected is not None and _same(runs.hook_file, expected) and site.inst.platform in ("gitea", "gitolite")
    if runs.hook_file_runs and (is_ours(runs.hook_file) or runner):
        gates.append(f"the hook file {runs.hook_file}")
    return gates


def post_receive(site: Site) -> list[Finding]:
    """The post-receive hook that logs what landed: the gate's file, and git running it, read
    through git as pre-receive's is (`core.hooksPath`, a config-defined hook disabled or gone)."""
    inst = site.inst
    if inst.landed is None:
        return [("note", f"no post-receive hook of the gate's ({site.where.landed} is someone else's): the audit "
                         "log says what the gate decided, not what landed")]
    if inst.platform == "gitolite":
        landed, detail = gitolite.active(site.git_dir, Path(inst.landed), "post-receive")
        return [("ok" if landed else "note", detail)]
    what = f"post-receive hook (logs what landed): {inst.landed}"
    if not (is_ours(Path(inst.landed)) and os.access(inst.landed, os.X_OK)):
        return [("FAIL", what)]
    if inst.platform == "gitlab":
        return [("ok", what)]  # Gitaly runs custom_hooks itself, whatever git's own hook settings say
    from .hooklist import event_hooks

    runs = event_hooks(site.git_dir, "post-receive")
    if site.inst.platform == "gitea" and site.inst.config_hook is None and not runs.hook_file_runs:
        return [("note", f"{what}: {runs.hook_file} (Gitea's runner of hooks/post-receive.d) is not there to run "
                         "it: Gitea writes it (Site Administration: resynchronize hooks)")]
    why = _landed_not_run(site, runs, Path(inst.landed))
    if why is not None:
        return [("FAIL", f"{what}, but {why}: the audit log says what the gate decided, not what landed")]
    return [("ok", what)]


def _landed_not_run(site: Site, runs: EventHooks, landed: Path) -> str | None:
    """Why git would not run the gate's post-receive hook, or None: a config-defined one must be
    listed, running the gate's file (or the system's line); a hook file must be the one git runs by
    name (Gitea's runner, hooks/post-receive, runs the gate's from post-receive.d)."""
    import shlex

    from .hooklist import CONFIG_LANDED, SYSTEM_LANDED, setting

    if site.inst.config_hook is not None:
        if runs.version < CONFIG_HOOKS_SINCE:
            return f"git {_version(runs.version)} runs no config-defined hook (hook.{CONFIG_LANDED})"
        hook = next((h for h in runs.configured if h.name == CONFIG_LANDED), None)
        if hook is None:
            return f"git lists no hook.{CONFIG_LANDED} at post-receive"
        if hook.state:
            key = f"hook.{hook.name}.enabled" if hook.state == "disabled" else "hook.post-receive.enabled"
            value, where = setting(site.git_dir, key) or ("false", "git's config")
            return f"{key} = {value} ({where}) takes it out"
        try:
            words = shlex.split(hook.command or "")
        except ValueError:
            words = []
        if hook.command != SYSTEM_LANDED and not (len(words) == 1 and _same(site.git_dir / words[0], landed)):
            return f"{hook.label} runs {hook.command!r}, not it"
        return None
    expected = site.git_dir / "hooks" / "post-receive" if site.inst.platform == "gitea" else landed
    if not _same(runs.hook_file, expected):
        value, where = runs.hooks_path or ("?", "git's config")
        return f"core.hooksPath = {value} ({where}) moves it: git runs {runs.hook_file}"
    if not runs.hook_file_runs:
        return f"git does not run {runs.hook_file}"
    return None


def policy_file(site: Site) -> list[Finding]:
    problems = site.policy_problems
    return [(_ok(not problems), f"policy valid: {site.inst.policy}" + (" - " + "; ".join(problems) if problems
                                                                       else ""))]


def policy_paths(site: Site) -> list[Finding]:
    """A policy that leaves the gate's own files unfrozen, and each frozen path pattern that matches
    nothing on the default branch (warnings)."""
    from gatecore.configuration.policyreport import gate_files_warnings

    if site.policy is None:
        return []
    return [("warn", w) for w in gate_files_warnings(site.policy)] + frozen_patterns(site.git_dir, site.policy)


def replace_refs(site: Site) -> list[Finding]:
    if site.policy is None:
        return []
    return [(_ok(good), what) for good, what in replacements(site.git_dir, site.policy)]


def signature_key_files(site: Site) -> list[Finding]:
    if site.policy is None or not site.policy.needs_signers:
        return []
    return [(_ok(good), what) for good, what in signature_keys(site.inst)]


def keyring(site: Site) -> list[Finding]:
    from gatecore.adapters.config import load_keyring

    inst = site.inst
    if not inst.has_keyring:
        return [("note", "no keyring installed: pushes to refs/gate/* and refs/heads/review/runner/* are refused")]
    try:
        ring = load_keyring(inst.keyring, cached=False)
    except GateError as exc:
        return [("FAIL", f"keyring: {exc.detail}")]
    return [("ok", f"keyring valid: {inst.keyring} ({len(ring)} keys)")]


def hook_files_owned(site: Site) -> list[Finding]:
    return [(_ok(good), what) for good, what in gate_files(Path(site.inst.gate_dir))]


def syslog(site: Site) -> list[Finding]:
    if site.inst.syslog is None:
        return []
    good, what = syslog_sink(site.inst.syslog)
    return [(_ok(good), what)]


def fsck(site: Site) -> list[Finding]:
    if _config(site.git_dir, "receive.fsckObjects") == "true":
        return []
    return [("note", "receive.fsckObjects is off: bad modes in commits the gate does not read (unrestricted "
                     "identities) are left to git; gate server install --fsck turns it on")]


def chain(site: Site) -> list[Finding]:
    return [(_ok(os.access(c, os.X_OK)), f"chained hook runs: {c}") for c in site.inst.chain]


def probe(site: Site) -> list[Finding]:
    """The real throwaway push, once every check before it passed (else it would fail for the
    same reason, or pass for none): when it is not run, doctor says so and why."""
    if site.failed:
        first = site.failed[0] if len(site.failed[0]) <= 100 else site.failed[0][:100] + "..."
        more = f" and {len(site.failed) - 1} more" if len(site.failed) > 1 else ""
        return [("note", f"probe push not run: a check above failed ({first}{more}); fix it and run gate server "
                         "doctor again")]
    good, detail = _probe(site.git_dir, site.inst.platform)
    return [(_ok(good), detail)]


#: The checks, in the order of the report (each returns its findings; the probe runs last).
CHECKS: tuple[Callable[[Site], list[Finding]], ...] = (
    hook_file, hook_version, interpreter, gitolite_link, one_gate, post_receive, policy_file, policy_paths,
    replace_refs, signature_key_files, keyring, hook_files_owned, syslog, fsck, chain, probe,
)


def summary(git_dir: Path) -> tuple[list[str], bool]:
    """One line for `gate server doctor --all`: the first failure, or that all is well."""
    lines, ok = doctor(git_dir)
    if not ok:
        return [next(ln for ln in lines if ln.startswith("FAIL")).removeprefix("FAIL").strip()], False
    warned = sum(ln.startswith("warn") for ln in lines)
    note = f" ({warned} warning{'s' if warned != 1 else ''}: gate server doctor {git_dir})" if warned else ""
    return ["every check passed, the probe push refused as it should be" + note], True


def frozen_patterns(git_dir: Path, policy: Policy) -> list[Finding]:
    """A warning for every frozen path pattern that matches no path on the default branch (it
    freezes nothing there: a typo such as `.github/workflow/**`, or a path yet to come)."""
    from gatecore.adapters.gitcmd import default_branch_paths
    from gatecore.configuration.policyreport import unmatched_warnings

    try:
        listed = default_branch_paths(git_dir)
    except GateError as exc:
        return [("FAIL", f"default branch: {exc.code}: {exc.detail}")]
    if listed is None:
        return [("note", "no commit on the default branch yet: frozen path patterns not checked against it")]
    return [("warn", w) for w in unmatched_warnings(policy, *listed)]


def _exec_words(hook: Path) -> list[str]:
    """The command the gate's hook runs: the words after `exec` on its exec line."""
    for line in hook.read_text("utf-8", errors="replace").splitlines():
        if line.startswith("exec ") and "<&" not in line:
            try:
                return shlex.split(line)[1:]
            except ValueError:
                return []
    return []


def version_age(hook: str | None, here: str, git_dir: Path) -> tuple[bool, str]:
    """The installed hook's version against this environment's: the same, or which one is older
    (gatecore.configuration.versions), and the command that makes them one."""
    from gatecore.configuration.versions import FORM, order

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

    from .access import LAUNCH, blocked, fix
    from .install import account_name

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
    from gatecore.checks.frozen import FrozenChecker
    from gatecore.git.objects import Objects

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

