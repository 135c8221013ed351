"""`./dev compat`: git's own push tests, run with and without the gate (docs/architecture.md).

A gate that does not refuse a push must be invisible: the same result as git without it. Git's
test suite is the best catalogue of legitimate pushes there is, so this runs its push-side
scripts twice, from the source tree of the git being tested:

* **without the gate**: git as built;
* **with the gate**: the same git, the gate a config-defined pre-receive hook (git 2.54+:
  `hook.<name>.command`, `hook.<name>.event = pre-receive`) of every `receive-pack` the tests
  start, so that the tests' own hooks stay where they are. git's test library clears every
  `GIT_*` variable but its `GIT_TEST_*` knobs and sets its own `HOME`, so the config cannot come
  from the environment or a global file: `GIT_TEST_INSTALLED` and `GIT_TEST_EXEC_PATH` point the
  tests at a copy of git's bin and exec directories (symbolic links) whose `git` and
  `git-receive-pack` are small scripts adding `-c hook.pushgate.command=... -c
  hook.pushgate.event=pre-receive` to `receive-pack` and to nothing else. Both runs go
  through the same scripts; only the hook differs.

The gate runs under `tests/compat/policy.toml` (every identity restricted at a path no test writes,
deleting and forcing allowed), installed once with `gate server install` and copied for each
script, so that each script's decisions are in its own audit log.

A test that passes without the gate and fails with it is a difference. The differences the
gate is right to make are listed in `tests/compat/expected.toml`, each with the code the gate gives
and the reason it is the right decision; any other difference, a listed one that no longer
happens, or a decision of the internal class (exit 3: the gate could not read what it judges
and blames the machine) makes the command fail. Every script runs in SHA-1, SHA-256
(`GIT_TEST_DEFAULT_HASH`) and reftable (`GIT_TEST_DEFAULT_REF_FORMAT`) repositories.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
POLICY = HERE / "policy.toml"
EXPECTED = HERE / "expected.toml"

#: git's push-side scripts: t5400-t5411, t5516, t5531-t5548, t1416.
SCRIPT_PATTERNS = ("t540[0-9]-*.sh", "t541[01]-*.sh", "t5516-*.sh", "t553[1-9]-*.sh", "t554[0-8]-*.sh",
                   "t1416-*.sh")
#: The repository formats, as git's test library's knobs choose them.
MODES: dict[str, dict[str, str]] = {
    "sha1": {},
    "sha256": {"GIT_TEST_DEFAULT_HASH": "sha256"},
    "reftable": {"GIT_TEST_DEFAULT_REF_FORMAT": "reftable"},
}
#: Config-defined hooks (`hook.<name>.event`) came with git 2.54.
MIN_GIT = (2, 54)
HOOK_NAME = "pushgate"
SCRIPT_TIMEOUT = 1800.0

_TAP = re.compile(r"^(not ok|ok) (\d+)\b(.*)$")
_CODE = re.compile(r"GATE-[A-Z0-9]+-[A-Z0-9-]+")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- git's test results ------------------------------------------------------------------

@dataclass
class Case:
    number: int
    title: str
    status: str  # ok | fail | skip | todo (known breakage) | fixed (a known breakage that passed)
    codes: list[str] = field(default_factory=list)  # the codes of the gate's rejections during this test
    decisions: list[tuple[int, str]] = field(default_factory=list)  # (exit status, first line) of each


@dataclass
class Run:
    script: str
    mode: str
    gated: bool
    tests: dict[int, Case] = field(default_factory=dict)
    skipped: str | None = None  # the script skipped itself whole (1..0 # SKIP reason)
    exit: int | None = None
    seconds: float = 0.0
    timed_out: bool = False
    decisions: list[dict[str, object]] = field(default_factory=list)  # the gate's audit lines
    orphans: list[tuple[int, str]] = field(default_factory=list)  # decisions no test's output encloses
    log: Path | None = None
    tail: str = ""  # the end of what the script printed (shown when it reported no test at all)

    @property
    def silent(self) -> bool:
        """The script reported no test, and no skip: git's test library did not get as far as its
        first test (its setup failed before any push), which says nothing of the gate."""
        return not self.tests and self.skipped is None and not self.timed_out


def parse_tap(stdout: str) -> tuple[dict[int, Case], str | None]:
    """The tests of one script's TAP output, and why it skipped itself whole (or None)."""
    tests: dict[int, Case] = {}
    skipped = None
    for line in stdout.splitlines():
        if line.startswith("1..0"):
            skipped = line.partition("#")[2].strip().removeprefix("SKIP").strip() or "skipped"
            continue
        m = _TAP.match(line)
        if m is None:
            continue
        verdict, number, rest = m.group(1), int(m.group(2)), m.group(3)
        if rest.startswith(" # skip "):
            tests[number] = Case(number, rest[len(" # skip "):], "skip")
            continue
        title = rest.removeprefix(" - ")
        status = "ok" if verdict == "ok" else "fail"
        if " # TODO " in title:
            title = title.partition(" # TODO ")[0]
            status = "fixed" if verdict == "ok" else "todo"
        tests[number] = Case(number, title, status)
    return tests, skipped


def attach_decisions(tests: dict[int, Case], verbose_log: bytes, hook_log: bytes) -> list[tuple[int, str]]:
    """Each gate decision's exit status and first line, given to the test that pushed it; returns
    the decisions no test's output encloses (test number 0).

    The hook records how long the script's `--verbose-log` was when it started (`hook_script`);
    a test's output comes before its TAP line, so a decision belongs to the first test whose
    TAP line starts at or after that offset."""
    ends: list[tuple[int, int]] = []  # (offset of a TAP line, test number)
    at = 0
    for line in verbose_log.splitlines(keepends=True):
        m = _TAP.match(line.decode("utf-8", "replace"))
        if m is not None:
            ends.append((at, int(m.group(2))))
        at += len(line)
    orphans: list[tuple[int, str]] = []
    for entry in hook_log.split(b"\n@@ ")[1:] if hook_log.startswith(b"\n@@ ") else []:
        head, _, err = entry.partition(b"\n")
        offset, status = (int(x) for x in head.split()[:2])
        lines = [x for x in err.decode("utf-8", "replace").splitlines() if x.strip()]
        codes = []
        for x in lines:
            if x.startswith("gate-json: "):
                with contextlib.suppress(ValueError, AttributeError):
                    codes.append(str(json.loads(x.removeprefix("gate-json: ")).get("code")))
        said = next((x for x in lines if x.startswith("gate:")), lines[0] if lines else "")
        if said and not _CODE.search(said):  # "gate: push rejected: 2 violations", then one line each
            said = "; ".join([said, *(x for x in lines if _CODE.match(x))])
        number = next((n for end, n in ends if end >= offset), 0)
        test = tests.get(number)
        if test is None:
            orphans.append((status, said))
            continue
        test.decisions.append((status, said))
        test.codes = sorted(set(test.codes) | set(codes))
    return orphans


# --- the git being tested --------------------------------------------------------------

@dataclass(frozen=True)
class GitUnderTest:
    bin: Path  # the installed git's bin directory
    exec_path: Path  # its exec path (libexec/git-core)
    src: Path  # the built source tree it came from (t/ and t/helper)
    version: str


def _version(text: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(x or 0) for x in m.groups()) if m else ()


def find_git(bin_dir: Path, src: Path | None) -> GitUnderTest:
    git = bin_dir / "git"
    out = subprocess.run([str(git), "--version"], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"compat: cannot run {git}: {out.stderr.strip()}")
    version = out.stdout.strip().removeprefix("git version ")
    if _version(version)[:2] < MIN_GIT:
        raise SystemExit(f"compat: git {version} has no config-defined hooks (needs {'.'.join(map(str, MIN_GIT))}+: "
                         "./dev modern-git builds one)")
    exec_path = Path(subprocess.run([str(git), "--exec-path"], capture_output=True, text=True,
                                    check=True).stdout.strip())
    src = src or bin_dir.parent.parent / "src"
    if not (src / "t" / "test-lib.sh").is_file() or not (src / "GIT-BUILD-OPTIONS").is_file():
        raise SystemExit(f"compat: {src} is not a built git source tree (t/test-lib.sh, GIT-BUILD-OPTIONS): "
                         "pass --git-src")
    # the tests must be the ones of the git being tested
    built = (src / "GIT-VERSION-FILE").read_text().strip().removeprefix("GIT_VERSION = ") \
        if (src / "GIT-VERSION-FILE").is_file() else ""
    if built and _version(built) != _version(version):
        raise SystemExit(f"compat: {src} is git {built}'s source, {git} is git {version}")
    return GitUnderTest(bin_dir, exec_path, src, version)


def scripts(src: Path, only: Sequence[str]) -> list[str]:
    found = sorted({p.name.removesuffix(".sh") for pat in SCRIPT_PATTERNS for p in (src / "t").glob(pat)})
    if only:
        found = [s for s in found if any(s.startswith(o) for o in only)]
    return found


# --- the gate, as a config-defined hook -------------------------------------------------

WRAPPER = """#!/bin/sh
# ./dev compat: git, {what}
real={real}
skip=
for a do
\tif test -n "$skip"; then skip=; continue; fi
\tcase "$a" in
\t-c|-C|--git-dir|--work-tree|--namespace|--config-env) skip=1 ;;
\t-*) ;;
\treceive-pack) {receive} ;;
\t*) break ;;
\tesac
done
exec "$real" "$@"
"""


HOOK = """#!/bin/sh
# ./dev compat: the gate's pre-receive hook as `gate server install` writes it (this environment's
# interpreter, push-gate's own launch.py run by its path). What it says is also kept, with how long
# the script's --verbose-log was when it started: that ties each decision to the test that pushed.
at=$(wc -c <{verbose_log} 2>/dev/null || echo 0)
err={gate_dir}/hook.$$.err
{python} -I {launch} server.prereceive --gate-dir {gate_dir} 2>"$err"
status=$?
cat "$err" >&2
{{ printf '\\n@@ %s %s\\n' "$at" "$status"; cat "$err"; }} >>{gate_dir}/hook.log
rm -f "$err"
exit $status
"""


def make_git(where: Path, git: GitUnderTest, hook: Path | None) -> tuple[Path, Path]:
    """A bin and an exec directory of links to git's own, but `git` and `git-receive-pack`:
    scripts that add `hook` to `receive-pack` as a config-defined pre-receive hook (None: that
    add nothing)."""
    bin_dir, exec_dir = where / "bin", where / "exec"
    for src, dst in ((git.bin, bin_dir), (git.exec_path, exec_dir)):
        dst.mkdir(parents=True)
        for entry in src.iterdir():
            if entry.name not in ("git", "git-receive-pack"):
                (dst / entry.name).symlink_to(entry)
    real = shlex.quote(str(git.bin / "git"))
    if hook is None:
        receive = 'exec "$real" "$@"'
        what = "as built (no hook added)"
    else:
        cmd = shlex.quote(f"hook.{HOOK_NAME}.command={shlex.quote(str(hook))}")
        receive = f'exec "$real" -c {cmd} -c hook.{HOOK_NAME}.event=pre-receive "$@"'
        what = "with the gate as a config-defined pre-receive hook of every receive-pack"
    script = WRAPPER.format(what=what, real=real, receive=receive)
    dashed = f'#!/bin/sh\nexec {shlex.quote(str(bin_dir / "git"))} receive-pack "$@"\n'
    for d in (bin_dir, exec_dir):
        (d / "git").write_text(script)
        (d / "git-receive-pack").write_text(dashed)
        (d / "git").chmod(0o755)
        (d / "git-receive-pack").chmod(0o755)
    return bin_dir, exec_dir


def install_gate(work: Path) -> Path:
    """`gate server install` into a scratch repository, once; its gate directory is copied for each script."""
    scratch = work / "install.git"
    subprocess.run(["git", "init", "-q", "--bare", str(scratch)], check=True)
    gate = Path(sys.executable).with_name("gate")
    out = subprocess.run([str(gate), "server", "install", str(scratch), "--policy", str(POLICY), "--platform", "git",
                          "--repository-id", "compat"], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"compat: gate server install failed:\n{out.stdout}{out.stderr}")
    return scratch / "gate"


# --- running -----------------------------------------------------------------------------

#: What must not leak from the caller into git's tests and the gate's hook: git's variables (git's
#: test library clears them all but its GIT_TEST_* knobs), and those a pusher's identity is read from.
_STRIP = ("GIT_", "TEST_", "GL_", "GITEA_", "GITHUB_", "REMOTE_USER", "GATE_", "PRE_COMMIT")


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(_STRIP)}


def run_script(git: GitUnderTest, work: Path, script: str, mode: str, gate_template: Path | None,
               timeout: float) -> Run:
    where = work / mode / ("gated" if gate_template else "plain") / script
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    out = where / "out"
    verbose_log = out / "test-results" / f"{script}.out"
    hook = gate_dir = None
    if gate_template is not None:
        gate_dir = where / "gate"
        shutil.copytree(gate_template, gate_dir, ignore=shutil.ignore_patterns("audit.log"))
        hook = where / "pre-receive"
        q = shlex.quote
        hook.write_text(HOOK.format(verbose_log=q(str(verbose_log)), gate_dir=q(str(gate_dir)),
                                    python=q(sys.executable), launch=q(str(ROOT / "server" / "launch.py"))))
        hook.chmod(0o755)
    bin_dir, exec_dir = make_git(where / "git", git, hook)
    env = {**_clean_env(), **MODES[mode], "GIT_TEST_INSTALLED": str(bin_dir), "GIT_TEST_EXEC_PATH": str(exec_dir),
           "TEST_OUTPUT_DIRECTORY": str(out)}
    run = Run(script, mode, gate_template is not None)
    start = time.monotonic()
    proc = subprocess.Popen(["sh", f"{script}.sh", f"--root={where / 'trash'}", "--verbose-log"],
                            cwd=git.src / "t", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        stdout, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, _ = proc.communicate()
        run.timed_out = True
    run.seconds = time.monotonic() - start
    run.exit = proc.returncode
    text = stdout.decode("utf-8", "replace")
    run.tests, run.skipped = parse_tap(text)
    run.tail = "\n".join(text.splitlines()[-15:])
    run.log = verbose_log if verbose_log.is_file() else None
    if gate_dir is not None:
        hook_log = gate_dir / "hook.log"
        run.orphans = attach_decisions(run.tests, verbose_log.read_bytes() if run.log else b"",
                                       hook_log.read_bytes() if hook_log.is_file() else b"")
        audit = gate_dir / "audit.log"
        for line in audit.read_text("utf-8", "replace").splitlines() if audit.is_file() else []:
            try:
                doc = json.loads(line)
            except ValueError:
                doc = {"unparsed": line[:200]}
            if doc.get("event", "decision") == "decision":
                run.decisions.append(doc)
    return run


# --- comparing -----------------------------------------------------------------------

@dataclass(frozen=True)
class Expected:
    script: str
    test: str
    modes: tuple[str, ...]
    code: str
    reason: str


def load_expected(path: Path = EXPECTED) -> list[Expected]:
    doc = tomllib.loads(path.read_text())
    out = []
    for i, d in enumerate(doc.get("difference", [])):
        unknown = set(d) - {"script", "test", "modes", "code", "reason"}
        if unknown or not all(isinstance(d.get(k), str) and d.get(k) for k in ("script", "test", "code", "reason")):
            raise SystemExit(f"compat: {path}: difference[{i}] needs script, test, code and reason (and may name "
                             f"modes){f'; unknown {sorted(unknown)}' if unknown else ''}")
        modes = tuple(d.get("modes", list(MODES)))
        if not set(modes) <= set(MODES):
            raise SystemExit(f"compat: {path}: difference[{i}]: modes are {', '.join(MODES)}")
        out.append(Expected(d["script"], d["test"], modes, d["code"], d["reason"]))
    return out


@dataclass
class Difference:
    mode: str
    script: str
    test: Case
    expected: Expected | None = None

    def line(self) -> str:
        said = [text for _, text in self.test.decisions if text] or ["no rejection by the gate"]
        return f"{self.mode:8} {self.script} #{self.test.number} {self.test.title!r} ({self.test.status}): " + \
            " | ".join(said)


def compare(plain: Run, gated: Run) -> list[Difference]:
    """The tests that pass without the gate and not with it."""
    out = []
    for number, base in sorted(plain.tests.items()):
        if base.status not in ("ok", "fixed"):
            continue
        with_gate = gated.tests.get(number)
        if with_gate is not None and with_gate.status in ("ok", "fixed"):
            continue
        out.append(Difference(plain.mode, plain.script, with_gate or Case(number, base.title, "missing")))
    return out


def matches(e: Expected, d: Difference) -> bool:
    """A listed difference: the same test, in a listed mode, refused by the gate with the listed code."""
    return e.script == d.script and e.test == d.test.title and d.mode in e.modes and e.code in d.test.codes


# --- the command ---------------------------------------------------------------------

def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./dev compat", description="git's own push tests, with and without the gate")
    p.add_argument("--git-bin", type=Path, required=True, help="the installed git's bin directory (2.54+)")
    p.add_argument("--git-src", type=Path, help="its built source tree (default: ../../src from --git-bin)")
    p.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)} (default all)")
    p.add_argument("--only", action="append", default=[], help="a script's name or prefix (t5538); repeatable")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2, help="scripts run at once")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "push-gate-compat",
                   help="where the runs go (emptied first; kept for reading afterwards)")
    p.add_argument("--timeout", type=float, default=SCRIPT_TIMEOUT, help="seconds one script may take")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or not set(modes) <= set(MODES):
        raise SystemExit(f"compat: --modes takes {', '.join(MODES)}")
    git = find_git(args.git_bin.resolve(), args.git_src.resolve() if args.git_src else None)
    expected = load_expected()
    names = scripts(git.src, args.only)
    if not names:
        raise SystemExit("compat: no script matches")
    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    gate_template = install_gate(work)
    _log(f"compat: git {git.version} ({git.bin}), tests from {git.src / 't'}; {len(names)} scripts x "
         f"{len(modes)} modes, with and without the gate, {args.jobs} at a time; runs in {work}")
    # the longest scripts first, so that the pool stays full to the end
    jobs = [(s, m, g) for s in sorted(names, key=lambda s: (not s.startswith("t5516"), s)) for m in modes
            for g in (True, False)]
    start = time.monotonic()
    runs: dict[tuple[str, str, bool], Run] = {}

    def one(job: tuple[str, str, bool]) -> Run:
        script, mode, gated = job
        run = run_script(git, work, script, mode, gate_template if gated else None, args.timeout)
        if run.silent:
            # once more: a script that stops before its first test (seen once in CI, not reproduced) is
            # the machine's failure or the test library's, not a difference; twice is reported below
            _log(f"  {mode:8} {'gated' if gated else 'plain':5} {script}: no test reported (exit {run.exit}), "
                 f"run again; it printed:\n{run.tail}")
            run = run_script(git, work, script, mode, gate_template if gated else None, args.timeout)
        counts = {s: sum(1 for t in run.tests.values() if t.status == s) for s in ("ok", "fail")}
        _log(f"  {mode:8} {'gated' if gated else 'plain':5} {script}: "
             + (f"skipped ({run.skipped})" if run.skipped else f"{counts['ok']} ok, {counts['fail']} failed")
             + (f", {len(run.decisions)} decisions" if gated else "") + f" ({run.seconds:.0f} s)"
             + (" TIMED OUT" if run.timed_out else ""))
        return run

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for job, run in zip(jobs, pool.map(one, jobs), strict=True):
            runs[job] = run
    elapsed = time.monotonic() - start
    return report(runs, names, modes, expected, elapsed, work)


def report(runs: dict[tuple[str, str, bool], Run], names: list[str], modes: list[str], expected: list[Expected],
           elapsed: float, work: Path) -> int:
    failed = False
    differences: list[Difference] = []
    internal: list[str] = []
    summary: dict[str, object] = {"git_minutes": round(elapsed / 60, 1), "modes": {}}
    print(f"\ngit's push tests with and without the gate ({elapsed / 60:.1f} min)\n")
    print("| mode | scripts run | tests passing without the gate | differences | listed | gate decisions "
          "| rejections | slowest decision |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in modes:
        plain = {s: runs[(s, mode, False)] for s in names}
        gated = {s: runs[(s, mode, True)] for s in names}
        ran = [s for s in names if not plain[s].skipped]
        passing = sum(1 for s in names for t in plain[s].tests.values() if t.status in ("ok", "fixed"))
        found = [d for s in names for d in compare(plain[s], gated[s])]
        for d in found:
            d.expected = next((e for e in expected if matches(e, d)), None)
        differences += found
        decisions = [d for s in names for d in gated[s].decisions]
        rejected = sum(1 for d in decisions if d.get("exit") != 0)
        slowest = max((float(str(d.get("elapsed_ms") or 0)) for d in decisions), default=0.0)
        for s in names:
            for t in gated[s].tests.values():
                internal += [f"{mode:8} {s} #{t.number} {t.title!r}: {text}" for status, text in t.decisions
                             if status == 3]
            internal += [f"{mode:8} {s} (between tests): {text}" for status, text in gated[s].orphans if status == 3]
        print(f"| {mode} | {len(ran)} of {len(names)} | {passing} | {len(found)} | "
              f"{sum(1 for d in found if d.expected)} | {len(decisions)} | {rejected} | {slowest:.0f} ms |")
        summary["modes"][mode] = {  # type: ignore[index]
            "scripts_run": len(ran), "passing_without_gate": passing, "differences": len(found),
            "decisions": len(decisions), "rejected": rejected, "slowest_ms": slowest,
            "skipped_scripts": {s: plain[s].skipped for s in names if plain[s].skipped},
            "failing_without_gate": [f"{s} #{t.number}" for s in names for t in plain[s].tests.values()
                                     if t.status == "fail"],
        }
    failing = [f"{m} {s} #{t.number} {t.title!r} (log: {runs[(s, m, False)].log})" for m in modes for s in names
               for t in runs[(s, m, False)].tests.values() if t.status == "fail"]
    if failing:
        print("\nfailing without the gate (git's own test on this machine: nothing of the gate's, compared as is):")
        for line in failing:
            print(f"  {line}")
    listed = [d for d in differences if d.expected]
    unlisted = [d for d in differences if not d.expected]
    if listed:
        print("\nlisted differences (tests/compat/expected.toml):")
        for d in listed:
            print(f"  {d.line()}")
    if unlisted:
        failed = True
        print("\nUNEXPECTED differences (pass without the gate, fail with it):")
        for d in unlisted:
            print(f"  {d.line()}\n      log: {runs[(d.script, d.mode, True)].log}")
    ran_modes = {(s, m) for s in names for m in modes if not runs[(s, m, False)].skipped}
    stale = [(e, m) for e in expected for m in e.modes if (e.script, m) in ran_modes
             and not any(d.expected is e and d.mode == m for d in differences)]
    if stale:
        failed = True
        print("\nlisted differences that did not happen (remove them from tests/compat/expected.toml):")
        for e, m in stale:
            print(f"  {m:8} {e.script} {e.test!r}: {e.code}")
    if internal:
        failed = True
        print("\ndecisions of the internal class (exit 3: the gate blamed the machine for what the push is):")
        for line in internal:
            print(f"  {line}")
    broken = [f"{m} {'gated' if g else 'plain'} {s}" for s in names for m in modes for g in (True, False)
              if runs[(s, m, g)].timed_out]
    if broken:
        failed = True
        print(f"\nscripts that ran out of time: {', '.join(broken)}")
    silent = [(f"{m} {'gated' if g else 'plain'} {s}", runs[(s, m, g)]) for s in names for m in modes
              for g in (True, False) if runs[(s, m, g)].silent]
    if silent:
        failed = True
        print("\nscripts that reported no test, twice (their setup failed: nothing was compared):")
        for name, run in silent:
            print(f"  {name} (exit {run.exit}); the end of what it printed:")
            print("\n".join(f"      {line}" for line in run.tail.splitlines()))
    summary["listed"] = [d.line() for d in listed]
    summary["unexpected"] = [d.line() for d in unlisted]
    summary["stale"] = [f"{m} {e.script} {e.test}" for e, m in stale]
    summary["internal"] = internal
    summary["silent"] = [name for name, _ in silent]
    (work / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\n{'FAILED' if failed else 'ok'}: {len(listed)} listed difference(s), {len(unlisted)} unexpected, "
          f"{len(stale)} listed but not seen, {len(internal)} internal; runs and logs in {work}")
    return 1 if failed else 0
