"""What every scenario shares: the sizes, the timings and cases the report reads, and `BenchCore`:
fresh server repositories, one timed push, a push staged so its hook can be run alone, commands
timed directly (`timed_case`), the reference of starting Python."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .. import hooks
from ..generate import Cache
from ..gitenv import Git, link_copy


@dataclass(frozen=True)
class Sizes:
    files: int = 2000            # files in the initial commit of every history
    small_commits: int = 10_000
    small_refs: int = 1_000
    small_files: int = 5
    large_commits: tuple[int, ...] = (10_000, 50_000)
    large_refs: int = 10
    wide_commits: int = 80_000    # the wide history: a 500-entry root tree, a merge every 4th commit
    wide_root_files: int = 470
    many_refs: int = 50_000
    few_refs: int = 10
    review_files: int = 2_000
    review_bytes: int = 50 * 1024 * 1024
    client_files: int = 5_000
    ledger_attempts: tuple[int, ...] = (50, 5_000, 50_000)
    real_back: int = 200          # incremental push: the real history's last N first-parent commits
    real_replays: tuple[int, ...] = (9,)  # the real history replayed N times in a row (9 x 5.5k: 50k commits)
    signed_commits: int = 10_000  # every commit SSH-signed, pushed into a signature-requiring scope
    new_branches: int = 200       # branches one push creates, into files and reftable refs (GATE_MODERN_GIT)
    policy_bundles: int = 99      # the policies scenario pushes this many real histories, smallest first
    agent_runs: int = 21          # timed runs of each agent check (at least; --runs may ask for more)


FULL = Sizes()
QUICK = Sizes(files=200, small_commits=300, small_refs=30, large_commits=(300, 600), many_refs=2_000,
              review_files=40, review_bytes=1024 * 1024, client_files=200, ledger_attempts=(5, 50, 500),
              wide_commits=2_000, wide_root_files=100,
              real_back=50, real_replays=(), signed_commits=100, new_branches=20, policy_bundles=1,
              agent_runs=3)


@dataclass
class Timing:
    times: list[float] = field(default_factory=list)   # seconds, one per run
    hook_ms: list[float] = field(default_factory=list)  # the gate's own elapsed_ms (audit log)
    alone: list[float] = field(default_factory=list)    # seconds: the hook run directly, no push around it
    cpu: list[float] = field(default_factory=list)      # seconds of CPU (user + system, git's processes too) of those
    peak_mib: float | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def alone_median(self) -> float | None:
        return statistics.median(self.alone) if self.alone else None

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu else None


@dataclass
class Case:
    scenario: str                 # small | large | refs | review | client
    label: str                    # what was pushed, into what
    variants: dict[str, Timing]
    baseline: str = "none"        # the variant overheads are measured against
    note: str = ""
    skipped: str | None = None
    size: int = 0                 # the scenario's main size (commits of a large push)
    paired: dict[str, list[float]] = field(default_factory=dict)
    short: str = ""               # the case in a few words (the chart, the README's table)

    @property
    def name(self) -> str:
        return self.short or self.label.split(":")[0]

    def median(self, variant: str) -> float | None:
        t = self.variants.get(variant)
        return None if t is None else t.median

    def overhead(self, variant: str) -> float | None:
        """Median over runs of (this variant's push - the no-hook push of the same run)."""
        diffs = self.paired.get(variant)
        if diffs:
            return statistics.median(diffs)
        m, b = self.median(variant), self.median(self.baseline)
        return None if m is None or b is None else m - b


@dataclass
class PushSpec:
    scenario: str
    label: str
    template: Path | None          # the server's repository before the push (None: empty)
    client: Path                   # the repository pushed from
    refspecs: list[str]
    variants: tuple[str, ...]
    base: str | None = None        # the reviewed base (native-digest)
    atomic: bool = False
    env: dict[str, str] | None = None
    size: int = 0
    note: str = ""
    read_all: bool = False         # pushed by agent-bench under READ_ALL_POLICY: every commit read
    policy: str = ""               # one of hooks.POLICIES (pushed by a human), against its careful peer
    short: str = ""                # the push in a few words


#: How a read-all push is made: the pusher every rule of READ_ALL_POLICY restricts.
READ_ALL_ENV = {"REMOTE_USER": hooks.READ_ALL_PUSHER}
#: How the policies scenario pushes: a human, whom no rule names.
POLICY_ENV = {"REMOTE_USER": hooks.POLICY_PUSHER}

Log = Callable[[str], None]


class BenchCore:
    """The machinery of the scenarios; `Bench` (bench/scenarios/__init__.py) adds each family's."""

    def __init__(self, git: Git, cache: Cache, work: Path, runs: int, sizes: Sizes, log: Log,
                 warmup: bool = True) -> None:
        self.git = git
        self.cache = cache
        self.work = work
        self.runs = runs
        self.sizes = sizes
        self.log = log
        self.warmup = warmup
        work.mkdir(parents=True, exist_ok=True)
        self.policy = work / "policy.toml"
        self.policy.write_text(hooks.POLICY)
        self.policy_read_all = work / "policy-read-all.toml"
        self.policy_read_all.write_text(hooks.READ_ALL_POLICY)
        self.policy_files: dict[str, Path] = {}
        for name, (text, _what) in hooks.POLICIES.items():
            self.policy_files[name] = work / f"policy-{name}.toml"
            self.policy_files[name].write_text(text)
        self._peers: dict[str, str] = {}
        self._keys: tuple[Path, Path, Path] | None = None
        self._serial = 0
        self.last_cpu = 0.0

    # --- keys (fresh per benchmark run, like the demo's) -----------------------------
    def keys(self) -> tuple[Path, Path, Path]:
        """(keyring, attempt key file, receipt key file)."""
        if self._keys is None:
            from gatecore.adapters.files import write_private
            from gatecore.configuration.configschema import generate_key

            kdir = self.work / "keys"
            kdir.mkdir(mode=0o700, exist_ok=True)
            entries = []
            for key_id, purpose in (("orchestrator-1", "attempt"), ("runner-1", "receipt")):
                made = generate_key("ed25519", key_id, purpose)
                write_private(kdir / f"{key_id}.key", made.keyfile_text)
                entries.append(made.keyring_entry)
            (self.work / "keyring.toml").write_text("\n".join(entries))
            self._keys = (self.work / "keyring.toml", kdir / "orchestrator-1.key", kdir / "runner-1.key")
        return self._keys

    # --- one push ----------------------------------------------------------------------
    def _fresh(self, template: Path | None, variant: str) -> Path:
        self._serial += 1
        dst = self.work / f"server-{self._serial:05d}-{variant}.git"
        if template is None:
            self.git.init_bare(dst)
        else:
            link_copy(template, dst)
            (dst / "bench-done").unlink(missing_ok=True)
        return dst

    def _push(self, client: Path, dst: Path, refspecs: list[str], atomic: bool,
              env: dict[str, str] | None) -> tuple[float, subprocess.CompletedProcess[bytes]]:
        args = ["git", "push", "--quiet", "--no-verify", *(["--atomic"] if atomic else []), str(dst), *refspecs]
        run_env = {**self.git.env, **(env or {})}
        t0 = time.perf_counter()
        proc = subprocess.run(args, cwd=client, env=run_env, capture_output=True, check=False)
        return time.perf_counter() - t0, proc

    # --- a staged push: the hook run directly, without git push around it -----------------
    def stage(self, template: Path | None, client: Path, refspecs: list[str], variant: str,
              install: Callable[[Path], None]) -> tuple[Path, bytes, dict[str, str]]:
        """A fresh server holding the push's objects in a quarantine, as receive-pack leaves them
        for its pre-receive hook, the hook's stdin, and the environment git would give it.

        The objects are fetched under refs/bench-staged/ into `objects/incoming-bench` (the
        repository's own store as its alternate) and those refs deleted again, so the pushed
        commits are "new" exactly as in the real push, and only the quarantine holds them.
        """
        dst = self._fresh(template, variant)
        install(dst)
        quarantine = dst / "objects" / "incoming-bench"
        quarantine.mkdir()
        qenv = {"GIT_OBJECT_DIRECTORY": str(quarantine), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(dst / "objects")}
        lines = []
        for spec in refspecs:
            src, _, target = spec.lstrip("+").partition(":")
            if src.endswith("/*"):
                names = self.git.out("for-each-ref", "--format=%(refname)", src[:-1], cwd=client).split()
                pairs = [(n, target[:-1] + n[len(src) - 1:]) for n in names]
            else:
                pairs = [(src, target)]
            for name, ref in pairs:
                new = self.git.out("rev-parse", name, cwd=client)
                got = self.git.run("rev-parse", "-q", "--verify", ref, cwd=dst, check=False)
                old = got.stdout.decode().strip() if got.returncode == 0 else hooks.ZERO
                lines.append(f"{old} {new} {ref}\n")
                self.git.run("fetch", "-q", "--no-tags", str(client), f"+{new}:refs/bench-staged/{len(lines)}",
                             cwd=dst, extra=qenv)
        staged = self.git.out("for-each-ref", "--format=%(refname)", "refs/bench-staged/", cwd=dst).split()
        self.git.run("update-ref", "--stdin", cwd=dst, extra=qenv,
                     input="".join(f"delete {r}\n" for r in staged).encode())
        # git forbids ref updates while GIT_QUARANTINE_PATH is set: only the hook gets it.
        return dst, "".join(lines).encode(), {**qenv, "GIT_QUARANTINE_PATH": str(quarantine)}

    def hook_alone(self, dst: Path, stdin: bytes, env: dict[str, str] | None) -> tuple[float, int, bytes]:
        """Run the installed pre-receive hook as receive-pack would (GIT_DIR=., stdin piped)."""
        run_env = {**self.git.env, **(env or {}), "GIT_DIR": "."}
        with cpu_of_children() as cpu:
            t0 = time.perf_counter()
            proc = subprocess.run([str(dst / "hooks" / "pre-receive")], cwd=dst, env=run_env, input=stdin,
                                  capture_output=True, check=False)
            elapsed = time.perf_counter() - t0
        self.last_cpu = cpu[0]
        return elapsed, proc.returncode, proc.stderr

    def push_case(self, spec: PushSpec, installers: dict[str, Callable[[Path], None]] | None = None) -> Case:
        installers = installers or self.installers(spec)
        template, client, refspecs, atomic, env = spec.template, spec.client, spec.refspecs, spec.atomic, spec.env
        expect_ok = True
        label = spec.label
        names = list(installers)
        case = Case(spec.scenario, label, {v: Timing() for v in names}, note=spec.note, size=spec.size,
                    short=spec.short)
        self.log(f"- {label}: {len(names)} variants x {self.runs} runs")

        def one(variant: str, memfile: Path | None = None) -> tuple[float, str | None, float | None]:
            dst = self._fresh(template, variant)
            try:
                installers[variant](dst)
                if memfile is not None:
                    hooks.wrap_for_memory(dst, memfile)
                elapsed, proc = self._push(client, dst, refspecs, atomic, env)
                problem = None
                if (proc.returncode == 0) != expect_ok:
                    tail = proc.stderr.decode(errors="replace").strip().splitlines()[-6:]
                    problem = (f"{variant}: push {'failed' if expect_ok else 'was accepted'} "
                               f"(exit {proc.returncode}): " + " | ".join(tail))
                hook_ms = _gate_elapsed(dst) if variant == "gate" else None
                return elapsed, problem, hook_ms
            finally:
                shutil.rmtree(dst, ignore_errors=True)

        if self.warmup:
            for v in names:
                one(v)
        base = names[0]
        for i in range(self.runs):
            order = names[i % len(names):] + names[:i % len(names)]
            this_run: dict[str, float] = {}
            for v in order:
                elapsed, problem, hook_ms = one(v)
                t = case.variants[v]
                t.times.append(elapsed)
                this_run[v] = elapsed
                if problem:
                    t.errors.append(problem)
                if hook_ms is not None:
                    t.hook_ms.append(hook_ms)
            for v in names[1:]:
                case.paired.setdefault(v, []).append(this_run[v] - this_run[base])
        for v in names[1:]:
            dst, stdin, qenv = self.stage(template, client, refspecs, v, installers[v])
            try:
                for i in range(self.runs + (1 if self.warmup else 0)):
                    elapsed, rc, err = self.hook_alone(dst, stdin, {**(env or {}), **qenv})
                    if (rc == 0) != expect_ok:
                        case.variants[v].errors.append(f"{v} run alone: exit {rc}: "
                                                       + err.decode(errors="replace").strip()[-300:])
                    if i > 0 or not self.warmup:
                        case.variants[v].alone.append(elapsed)
                        case.variants[v].cpu.append(self.last_cpu)
            finally:
                shutil.rmtree(dst, ignore_errors=True)
        for v in names[1:]:
            memfile = self.work / f"mem-{self._serial}-{v}.txt"
            _elapsed, problem, _ = one(v, memfile)
            case.variants[v].peak_mib = hooks.read_peak_mib(memfile)
            if problem:
                case.variants[v].errors.append("memory run: " + problem)
            memfile.unlink(missing_ok=True)
        for v in names:
            t = case.variants[v]
            med = t.median
            self.log(f"    {v:14s} median " + ("       -" if med is None else f"{med * 1000:8.1f}") + " ms" + (f"  peak {t.peak_mib:.1f} MiB" if t.peak_mib else "")
                     + (f"  alone {t.alone_median * 1000:.1f} ms" if t.alone_median else "")
                     + (f"  ERRORS: {t.errors[0]}" if t.errors else ""))
        return case

    # --- reference: starting Python and importing pygit2 -------------------------------
    def python_start(self) -> dict[str, float]:
        out = {}
        n = max(10, 2 * self.runs)
        for name, code in (("python -I -c pass", "pass"), ("python -I -c 'import pygit2'", "import pygit2")):
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-I", "-c", code], check=True, env=self.git.env)
                times.append(time.perf_counter() - t0)
            out[name] = statistics.median(times)
        return out

    # --- push scenarios: their hook variants and their pushes ----------------------------
    def _variants(self, *names: str, base: str | None = None, read_all: bool = False
                  ) -> dict[str, Callable[[Path], None]]:
        keyring = self.keys()[0]
        if read_all:
            return {n: hooks.installer(n, self.policy_read_all, keyring, base, hooks.READ_ALL_FROZEN) for n in names}
        return {n: hooks.installer(n, self.policy, keyring, base) for n in names}

    def installers(self, spec: PushSpec) -> dict[str, Callable[[Path], None]]:
        if spec.policy:
            keyring = self.keys()[0]
            if spec.policy not in self._peers:
                self._peers[spec.policy] = hooks.careful_peer(hooks.POLICIES[spec.policy][0])
            return {n: hooks.installer(n, self.policy_files[spec.policy], keyring, peer_text=self._peers[spec.policy])
                    for n in spec.variants}
        return self._variants(*spec.variants, base=spec.base, read_all=spec.read_all)

    def specs(self, scenario: str) -> list[PushSpec]:
        """The pushes of push scenario `scenario`, repositories generated as needed: each family's
        class answers for its own scenarios and hands the others on (`super().specs`)."""
        raise ValueError(f"no push scenario {scenario!r}")

    def run_specs(self, scenario: str) -> list[Case]:
        return [self.push_case(spec) for spec in self.specs(scenario)]

    def _count(self, repo: Path) -> int:
        return int(self.git.out("rev-list", "--count", "--branches", cwd=repo))

    def timed_case(self, scenario: str, label: str, cwd: Path, env: dict[str, str], commands: dict[str, list[str]],
                   note: str, short: str = "", *, inputs: dict[str, bytes] | None = None,
                   expect: dict[str, int] | None = None, runs: int | None = None) -> Case:
        """`commands` (variant -> command, the first the baseline) run in turn in `cwd`, timed,
        with their CPU, and once more under /usr/bin/time for the peak memory. `inputs`: a
        variant's stdin (default none); `expect`: a variant's exit status (default 0); `runs`:
        timed runs of each (default the bench's)."""
        inputs, expect, runs = inputs or {}, expect or {}, runs or self.runs
        names = list(commands)
        case = Case(scenario, label, {v: Timing() for v in commands}, note=note, short=short, baseline=names[0])
        self.log(f"- {label}: {len(commands)} variants x {runs} runs")
        for i in range(runs + (1 if self.warmup else 0)):
            order = names[i % len(names):] + names[:i % len(names)]
            this_run = {}
            for v in order:
                with cpu_of_children() as cpu:
                    t0 = time.perf_counter()
                    proc = subprocess.run(commands[v], cwd=cwd, env=env, input=inputs.get(v, b""), capture_output=True,
                                          check=False)
                    elapsed = time.perf_counter() - t0
                if self.warmup and i == 0:
                    continue
                t = case.variants[v]
                t.times.append(elapsed)
                t.alone.append(elapsed)  # the hook command is all there is
                t.cpu.append(cpu[0])
                this_run[v] = elapsed
                if proc.returncode != expect.get(v, 0):
                    t.errors.append(f"{v}: exit {proc.returncode}: " + proc.stderr.decode(errors="replace").strip()[-300:])
            if this_run:
                for v in names[1:]:
                    case.paired.setdefault(v, []).append(this_run[v] - this_run[names[0]])
        for v in names[1:]:
            memfile = self.work / f"mem-{note}-{v}.txt"
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(memfile), *commands[v]], cwd=cwd, env=env,
                           input=inputs.get(v, b""), capture_output=True, check=False)
            case.variants[v].peak_mib = hooks.read_peak_mib(memfile)
            memfile.unlink(missing_ok=True)
        for v in names:
            t = case.variants[v]
            self.log(f"    {v:14s} median {(t.median or 0) * 1000:8.1f} ms  CPU {(t.cpu_median or 0) * 1000:8.1f} ms"
                     + (f"  ERRORS: {t.errors[0]}" if t.errors else ""))
        return case


@contextlib.contextmanager
def cpu_of_children() -> Iterator[list[float]]:
    """CPU seconds (user + system) of the child processes waited for inside the block (with
    theirs): a hook's cost that other load on the machine does not inflate."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    got = [0.0]
    yield got
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    got[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _gate_elapsed(git_dir: Path) -> float | None:
    """The last decision's `elapsed_ms` (post-receive's "landed" line, which may follow it, has none)."""
    try:
        lines = (git_dir / "gate" / "audit.log").read_text().splitlines()
        return next(float(doc["elapsed_ms"]) for doc in map(json.loads, reversed(lines)) if "elapsed_ms" in doc)
    except (OSError, ValueError, StopIteration):
        return None


def _project(bundle_name: str) -> str:
    """`pallets-flask` -> flask, `ohmyzsh-ohmyzsh` -> ohmyzsh."""
    return bundle_name.split("-", 1)[-1] if "-" in bundle_name else bundle_name


def _k(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def clean_env_for_process(env: dict[str, str]) -> None:
    """The trusted-side helpers (gatecore.trusted) run git with os.environ: give them the bench's."""
    for k in list(os.environ):
        if k.startswith(("GIT_", "GL_", "GITEA_", "GITHUB_", "REMOTE_USER")):
            del os.environ[k]
    os.environ.update(env)
