"""The scenarios: each one a set of timed `git push` runs into fresh bare repositories."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
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

from . import hooks
from .generate import AGENTS, FROZEN_FILES, Cache, _bulk, all_bundles, allowed_signers_line, other_bundles, real_bundle
from .gitenv import Git, link_copy


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


FULL = Sizes()
QUICK = Sizes(files=200, small_commits=300, small_refs=30, large_commits=(300, 600), many_refs=2_000,
              review_files=40, review_bytes=1024 * 1024, client_files=200, ledger_attempts=(5, 50, 500),
              wide_commits=2_000, wide_root_files=100,
              real_back=50, real_replays=(), signed_commits=100, new_branches=20, policy_bundles=1)


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


class Bench:
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

    # --- scenarios -----------------------------------------------------------------------
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
        """The pushes of a push scenario (small, large, refs, review), repositories generated as needed."""
        s = self.sizes
        all4 = ("none", "floor", "peer", "gate")
        hist = self.cache.history(s.small_commits, s.files)
        if scenario == "small":
            server = self.cache.with_refs(hist, s.small_refs)
            client = self.cache.push_client(hist, s.small_files)
            new = self.git.out("rev-parse", "refs/heads/bench-new", cwd=client)
            label = (f"small push: 1 agent commit, {s.small_files} files, into {_k(s.small_commits)} commits / "
                     f"{_k(s.small_refs)} refs")
            return [PushSpec("small", label, server, client, [f"{new}:refs/heads/main"], all4, size=s.small_refs,
                             short=f"small push ({_k(s.small_commits)} commits, {_k(s.small_refs)} refs)")]
        if scenario == "large":
            out = []
            for n in s.large_commits:
                client = self.cache.with_refs(self.cache.history(n, s.files), s.large_refs)
                label = f"large first push: {_k(n)} commits, {s.large_refs} refs, into an empty repository"
                out.append(PushSpec("large", label, None, client,
                                    ["refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*"], all4, size=n,
                                    short=f"generated {_k(n)}, first push"))
            return out
        if scenario == "wide":
            client = self.cache.wide_history(s.wide_commits, s.wide_root_files)
            label = (f"wide first push: {_k(s.wide_commits)} commits, a root tree of {s.wide_root_files + 30} "
                     "entries, a merge every 4th commit, into an empty repository")
            return [PushSpec("wide", label, None, client, ["refs/heads/*:refs/heads/*"], all4, size=s.wide_commits,
                             note="first", env=READ_ALL_ENV, read_all=True,
                             short=f"wide {_k(s.wide_commits)} (500-entry root), first push")]
        if scenario == "refs":
            client = self.cache.push_client(hist, s.small_files)
            new = self.git.out("rev-parse", "refs/heads/bench-new", cwd=client)
            return [PushSpec("refs", f"many refs: the small push into {_k(s.small_commits)} commits / {_k(n)} refs",
                             self.cache.with_refs(hist, n), client, [f"{new}:refs/heads/main"], all4, size=n,
                             short=f"small push, {_k(n)} refs")
                    for n in (s.many_refs, s.few_refs)] + [self._moved_branches_spec(hist, client, new)]
        if scenario == "review":
            return [self._review_spec(hist)]
        if scenario == "real":
            return self._real_specs()
        if scenario == "policies":
            return self._policy_specs()
        raise ValueError(scenario)

    def _moved_branches_spec(self, hist: Path, client: Path, new: str) -> PushSpec:
        """One push that moves 999 branches at once, each a fast-forward to the same new commit
        (the ref rules' per-ref questions: symbolic ref? fast-forward? asked of git in batches)."""
        s = self.sizes
        n = min(999, s.many_refs // 2)
        refspecs = [f"{new}:refs/heads/feature/f{2 * i:06d}" for i in range(n)]
        return PushSpec("refs", f"many refs: {n} branches moved in one push (fast-forwards), {_k(s.many_refs)} refs",
                        self.cache.with_refs(hist, s.many_refs), client, refspecs, ("none", "floor", "peer", "gate"),
                        size=n, note="moved", short=f"{n} branches moved at once")

    def _real_specs(self) -> list[PushSpec]:
        """Pushes of real projects' histories (../shared/data), every commit read (pushed by
        agent-bench under READ_ALL_POLICY, at paths no commit writes, so both the peer and the
        gate accept): flask's first push, its last `real_back` first-parent commits onto its
        earlier state, flask replayed into about 50,000 commits; ohmyzsh's first push (1,633
        merges, plugin directories)."""
        s = self.sizes
        all4 = ("none", "floor", "peer", "gate")
        out = []
        flask = real_bundle()
        if flask is not None:
            real, n, name, first = self._real_first(flask)
            out.append(first)
            earlier = self.cache.real_earlier(real, s.real_back)
            new = n - self._count(earlier)
            out.append(PushSpec("real", f"real incremental push: {name}'s last {s.real_back} first-parent "
                                f"commits ({new} commits)", earlier, real, ["refs/heads/main:refs/heads/main"], all4,
                                size=new, note="incremental", env=READ_ALL_ENV, read_all=True,
                                short=f"{_project(name)}, {new} new commits"))
            for times in s.real_replays:
                replayed = self.cache.real_replayed(real, times)
                m = self._count(replayed)
                out.append(PushSpec("real", f"real first push: {name} replayed {times} times, {m} commits", None,
                                    replayed, ["refs/heads/*:refs/heads/*"], all4, size=m, note="replayed",
                                    env=READ_ALL_ENV, read_all=True,
                                    short=f"{_project(name)} x{times} ({m // 1000}k), first push"))
        out += [self._real_first(bundle)[3] for bundle in other_bundles()]
        return out

    def _policy_specs(self) -> list[PushSpec]:
        """Every real history's first push under each of the policies people write
        (`hooks.POLICIES`), pushed by a human: who is restricted is what each commit says. The peer
        is the policy's careful native hook (`hooks.careful_peer`)."""
        out = []
        for bundle in all_bundles()[:self.sizes.policy_bundles]:
            real = self.cache.real(bundle)
            n = self._count(real)
            name = bundle.name.removesuffix(".bundle")
            for policy, (_text, what) in hooks.POLICIES.items():
                out.append(PushSpec("policies", f"policy {what}: {name}'s first push, {n} commits", None, real,
                                    ["refs/heads/*:refs/heads/*"], ("none", "floor", "peer", "gate"), size=n,
                                    note=policy, env=POLICY_ENV, policy=policy,
                                    short=f"{_project(name)} {_k(n)}, {policy}"))
        return out

    def _real_first(self, bundle: Path) -> tuple[Path, int, str, PushSpec]:
        """A real history's first push, read whole: (its repository, commits, name, the push)."""
        real = self.cache.real(bundle)
        n = self._count(real)
        name = bundle.name.removesuffix(".bundle")
        return real, n, name, PushSpec("real", f"real first push: {name}, {n} commits, into an empty repository",
                                       None, real, ["refs/heads/*:refs/heads/*"], ("none", "floor", "peer", "gate"),
                                       size=n, note="first", env=READ_ALL_ENV, read_all=True,
                                       short=f"{_project(name)} {_k(n)}, first push")

    def _count(self, repo: Path) -> int:
        return int(self.git.out("rev-list", "--count", "--branches", cwd=repo))

    def run_specs(self, scenario: str) -> list[Case]:
        cases = []
        for spec in self.specs(scenario):
            cases.append(self.push_case(spec))
            if scenario == "small":
                cases[-1].note = self.sanity(spec)
        return cases

    def small(self) -> list[Case]:
        return self.run_specs("small")

    def large(self) -> list[Case]:
        return self.run_specs("large")

    def wide(self) -> list[Case]:
        return self.run_specs("wide")

    def refs(self) -> list[Case]:
        return self.run_specs("refs")

    def review(self) -> list[Case]:
        return self.run_specs("review")

    def real(self) -> list[Case]:
        if real_bundle() is None and not other_bundles():
            return [Case("real", "real histories", {}, skipped="../shared/data/pallets-flask.bundle not found "
                                                                "(set GATE_BENCH_BUNDLE)")]
        return self.run_specs("real")

    def policies(self) -> list[Case]:
        if not all_bundles():
            return [Case("policies", "policies people write", {}, skipped="no bundle in ../shared/data")]
        return self.run_specs("policies")

    def reftable(self) -> list[Case]:
        """One push creating `new_branches` branches into the small history's repository, its refs
        as files and as a reftable stack (`git refs migrate`), on the git of `GATE_MODERN_GIT`
        (reftable needs 2.45; `./dev modern-git` builds 2.55). The symbolic-ref questions of the
        push are one batch in either backend: the gate costs the same on both."""
        modern = os.environ.get("GATE_MODERN_GIT")
        if not modern or not (Path(modern) / "git").exists():
            return [Case("reftable", "reftable", {}, skipped="needs git >= 2.45: "
                                                          "GATE_MODERN_GIT=$(./dev modern-git) ./dev bench --scenario reftable")]
        s = self.sizes
        hist = self.cache.history(s.small_commits, s.files)
        client = self.cache.push_client(hist, s.small_files)
        new = self.git.out("rev-parse", "refs/heads/bench-new", cwd=client)
        refspecs = [f"{new}:refs/heads/new/b{i:04d}" for i in range(s.new_branches)]
        cases = []
        with self._git_of(modern):
            for backend in ("files", "reftable"):
                template = self.work / f"template-{backend}.git"
                link_copy(self.cache.with_refs(hist, s.small_refs), template)
                (template / "bench-done").unlink(missing_ok=True)
                if backend == "reftable":
                    self.git.run("refs", "migrate", "--ref-format=reftable", cwd=template)
                assert self.git.out("rev-parse", "--show-ref-format", cwd=template) == backend
                spec = PushSpec("reftable", f"{s.new_branches} branches created in one push, refs in {backend} "
                                f"({_k(s.small_commits)} commits / {_k(s.small_refs)} refs; git "
                                f"{self.git.out('version').split()[-1]})", template, client, refspecs,
                                ("none", "gate"), size=s.new_branches, note=backend,
                                short=f"{s.new_branches} new branches, {backend}")
                cases.append(self.push_case(spec))
        return cases

    @contextlib.contextmanager
    def _git_of(self, bin_dir: str) -> Iterator[None]:
        """Every git this bench runs (its own, the in-process installer's, the hooks') from `bin_dir`."""
        saved, saved_path = self.git, os.environ.get("PATH", "")
        path = f"{bin_dir}{os.pathsep}{saved.env.get('PATH', saved_path)}"
        self.git = Git({**saved.env, "PATH": path})
        os.environ["PATH"] = path
        try:
            yield
        finally:
            self.git = saved
            os.environ["PATH"] = saved_path

    def _ledger(self, attempts: int, archived: bool, path: Path) -> None:
        from .ledger import build

        build(self.git, path, attempts, archived)

    def ledger(self) -> list[Case]:
        """Opening, review and plain pushes with 50, 5,000 and 50,000 attempts on record (bench/ledger.py)."""
        from . import ledger

        cases = []
        for family in ("open", "archived"):
            for n in self.sizes.ledger_attempts:
                path = self.cache.get("ledger", {"attempts": n, "archived": family == "archived"},
                                      functools.partial(self._ledger, n, family == "archived"))
                seeded = ledger.Seeded.load(path)
                installers = {"none": hooks.installer("none", self.policy, seeded.keyring, None),
                              "gate": hooks.installer("gate", self.policy, seeded.keyring, None)}
                for push in ("open", "review", "plain"):
                    where = f"{_k(n)} attempts {'archived' if family == 'archived' else 'open'}"
                    spec = PushSpec("ledger", f"ledger: {push} push, {where}", seeded.template, seeded.client,
                                    seeded.refspecs[push], ("none", "gate"), atomic=push != "plain",
                                    env={"REMOTE_USER": "gate-runner"} if push != "plain" else None, size=n,
                                    note=f"{family}:{push}", short=f"ledger: {push}, {where}")
                    cases.append(self.push_case(spec, installers))
        return cases

    def sanity(self, spec: PushSpec) -> str:
        """The same push with ci/deploy.yml among its files: the peer and the gate must both reject it."""
        s = self.sizes
        bad = self.cache.push_client(self.cache.history(s.small_commits, s.files), s.small_files, frozen=True)
        new = self.git.out("rev-parse", "refs/heads/bench-new", cwd=bad)
        problems = []
        for v, install in self._variants("peer", "gate").items():
            dst = self._fresh(spec.template, v)
            try:
                install(dst)
                _, proc = self._push(bad, dst, [f"{new}:refs/heads/main"], False, None)
                text = proc.stderr.decode(errors="replace")
                marker = "GATE-FROZEN-PATH" if v == "gate" else "peer: frozen path ci/deploy.yml"
                if proc.returncode == 0 or marker not in text:
                    problems.append(f"{v} did not reject an agent's write to ci/deploy.yml")
            finally:
                shutil.rmtree(dst, ignore_errors=True)
        if problems:
            self.log("    SANITY: " + "; ".join(problems))
            return "SANITY FAILED: " + "; ".join(problems)
        return "sanity: the same push writing ci/deploy.yml is rejected by both peer and gate"

    def _review_spec(self, hist: Path) -> PushSpec:
        """A review/runner/<attempt> push with its sealed receipt, the ledger already on the server."""
        import time

        from gatecore.adapters.config import load_keyfile
        from gatecore.adapters.gitrepo import GitRepo
        from gatecore.git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX
        from gatecore.records.ledger import RECEIPT_FILE
        from gatecore.trusted.attempts import append_record, record_commit
        from gatecore.trusted.bootstrap import bootstrap
        from gatecore.trusted.runner import record_review

        s = self.sizes
        server_base = self.cache.with_refs(hist, s.few_refs)
        cached_client = self.cache.review_client(hist, s.review_files, s.review_bytes)
        _keyring, attempt_keyfile, receipt_keyfile = self.keys()
        root = self.work / "review"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        client = root / "client.git"
        link_copy(cached_client, client)
        server = root / "server.git"
        link_copy(server_base, server)
        base = self.git.out("rev-parse", "refs/heads/main", cwd=client)
        head = self.git.out("rev-parse", "refs/heads/review-head", cwd=client)

        ws = root / "workspace"
        ws.mkdir()
        now = int(time.time())
        boot = bootstrap(ws, now)
        prompt = b"Review this change. Reply with JSON: verdict, reasons.\n"
        akey = load_keyfile(attempt_keyfile)
        rkey = load_keyfile(receipt_keyfile)
        runner_env = {"REMOTE_USER": "gate-runner"}
        _, pushed = append_record(client, boot.attempt_id, akey, "opened", str(server), now,
                                  repository=hooks.REPOSITORY_ID, workspace="ws-1",
                                  workspace_generation=boot.workspace_generation,
                                  prompt_sha256=hashlib.sha256(prompt).hexdigest(), env=runner_env)
        assert pushed is not None and pushed.ok, pushed
        _, pushed = append_record(client, boot.attempt_id, akey, "model-selected", str(server), now,
                                  model_id="model-b", env=runner_env)
        assert pushed is not None and pushed.ok, pushed
        verdict = json.dumps({"verdict": "pass", "reasons": ["benchmark change, reviewed"]}).encode()
        receipt = record_review(client, boot.attempt_id, base, head, verdict, rkey,
                                boot.scoring_dir / "receipt.json", None, None, 3600, now)
        repo = GitRepo.at(client)
        receipts_ref = RECEIPTS_PREFIX + boot.attempt_id
        commit = record_commit(repo, RECEIPT_FILE, receipt.read_bytes(), None, f"gate receipt {boot.attempt_id}\n",
                               now)
        repo.set_ref(receipts_ref, commit, None)
        refspecs = [f"+{head}:{REVIEW_PREFIX}{boot.attempt_id}", f"{receipts_ref}:{receipts_ref}"]
        mb = s.review_bytes / (1 << 20)
        label = f"review push: {_k(s.review_files)} files / {mb:.0f} MB with its receipt"
        return PushSpec("review", label, server, client, refspecs,
                        ("none", "floor", "peer", "native-digest", "gate"), base=base, atomic=True,
                        env={"REMOTE_USER": "gate-runner"}, size=s.review_files,
                        short=f"review push ({_k(s.review_files)} files, {mb:.0f} MB)",
                        note="pusher gate-runner (trusted); ledger records already on the server")

    def signed(self) -> list[Case]:
        """A first push of `signed_commits` commits, every one SSH-signed, into `[signatures] require`
        (the gate verifies each in-process), beside the native baseline: `git verify-commit` over
        the same commits (one `ssh-keygen` per commit), timed once."""
        from server.install import install

        n = self.sizes.signed_commits
        repo = self.cache.signed(self.cache.history(n, self.sizes.files))
        signers = self.work / "allowed_signers"
        signers.write_text(allowed_signers_line())
        policy = self.work / "policy-signed.toml"
        policy.write_text(hooks.POLICY + '\n[signatures]\nrequire = ["refs/heads/**"]\n')
        keyring = self.keys()[0]
        def install_gate(git_dir: Path) -> None:
            install(git_dir, policy, keyring, "git", hooks.REPOSITORY_ID, allowed_signers=signers)

        installers = {"none": hooks.installer("none", policy, keyring), "gate": install_gate}
        label = f"signed first push: {_k(n)} commits, every one SSH-signed, into signatures.require"
        case = self.push_case(PushSpec("signed", label, None, repo, ["refs/heads/*:refs/heads/*"], ("none", "gate"),
                                       short=f"signed {_k(n)}, first push",
                                       size=n), installers)
        commits = self.git.out("rev-list", "refs/heads/main", cwd=repo).split()
        env = {**self.git.env, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "gpg.ssh.allowedSignersFile",
               "GIT_CONFIG_VALUE_0": str(signers)}
        t0 = time.perf_counter()
        bad = 0
        for c in commits:
            proc = subprocess.run(["git", "verify-commit", c], cwd=repo, env=env, capture_output=True, check=False)
            bad += proc.returncode != 0
        native = time.perf_counter() - t0
        gate = case.variants["gate"].alone_median
        case.note = (f"native baseline: git verify-commit over the same {len(commits)} commits took {native:.1f} s "
                     f"({native / len(commits) * 1000:.1f} ms each, {bad} failed); the gate's hook alone "
                     + ("-" if gate is None else f"{gate:.2f} s ({gate / native:.3f}x)"))
        self.log("    " + case.note)
        if bad:
            case.variants["gate"].errors.append(f"native verify-commit failed on {bad} commits")
        return [case]

    def client(self) -> list[Case]:
        """The client hooks, each command timed directly (no push around it), as pre-commit runs
        them: `gate-frozen-commit` on a small staged change and on 5,000 staged files, and a
        pre-push run (`gate-frozen-push` then `gate-receipt-push`) of one agent commit with no
        review ref. The policy is .gate/policy.toml, committed (and on the remote)."""
        s = self.sizes
        bindir = Path(sys.executable).parent
        scripts = {name: bindir / name for name in ("gate-frozen-commit", "gate-frozen-push", "gate-receipt-push")}
        missing = [str(p) for p in scripts.values() if not p.exists()]
        if missing or importlib.util.find_spec("hooks.frozen_commit") is None:
            return [Case("client", "client hooks", {}, skipped=f"console scripts missing: {', '.join(missing)}")]
        agent = AGENTS[0]
        as_agent = {**self.git.env, "GIT_AUTHOR_NAME": agent[0], "GIT_AUTHOR_EMAIL": agent[1],
                    "GIT_COMMITTER_NAME": agent[0], "GIT_COMMITTER_EMAIL": agent[1]}
        peer = self.work / "client-peer.sh"
        peer.write_text(CLIENT_PEER)
        push_peer = self.work / "pre-push-peer.sh"
        push_peer.write_text(PRE_PUSH_PEER)
        cases = []

        small = self._client_clone(s.small_files)
        commit_cmds = {"none": ["true"], "floor": ["git", "diff", "--cached", "--name-only", "-z"],
                       "peer": ["/bin/sh", str(peer)], "gate": [str(scripts["gate-frozen-commit"])]}
        cases.append(self.timed_case(
            "client", f"client: gate-frozen-commit, {s.small_files} staged files as an agent, in a clone of "
            f"{_k(s.small_commits)} commits", small, as_agent, commit_cmds, "commit-small",
            f"client: commit hook, {s.small_files} files"))
        self.git.run("commit", "-q", "-m", "agent: the pushed change", cwd=small, extra=as_agent)
        new = self.git.out("rev-parse", "HEAD", cwd=small)
        base = self.git.out("rev-parse", "refs/remotes/origin/main", cwd=small)
        precommit = {**as_agent, "PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": new,
                     "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
                     "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main", "GATE_PUSHER": "agent-1"}
        both = f"{scripts['gate-frozen-push']} && {scripts['gate-receipt-push']}"
        push_cmds = {"none": ["true"], "floor": ["git", "rev-list", new, "--not", "--remotes=origin"],
                     "peer": ["/bin/sh", str(push_peer)], "gate": ["/bin/sh", "-c", both]}
        cases.append(self.timed_case(
            "client", "client: a pre-push run with no review ref (gate-frozen-push + gate-receipt-push, as "
            "pre-commit runs them), one agent commit of "
            f"{s.small_files} files", small, precommit, push_cmds, "pre-push", "client: pre-push, no review ref"))
        shutil.rmtree(small, ignore_errors=True)
        cases += self.precommit_commits(as_agent)

        large = self.work / "client-repo"
        self._client_repo(large, s.client_files)
        cases.append(self.timed_case(
            "client", f"client: gate-frozen-commit, {_k(s.client_files)} staged files as an agent", large, as_agent,
            commit_cmds, "commit-large", f"client: commit hook, {_k(s.client_files)} files"))
        shutil.rmtree(large, ignore_errors=True)
        return cases

    def precommit_commits(self, env: dict[str, str]) -> list[Case]:
        """A commit through the real pre-commit framework: `git commit` of a small staged
        change, as an agent, in a clone whose `.pre-commit-config.yaml` runs the gate's commit hooks
        (`gate-frozen-files`, `gate-frozen-files-msg`, from this project as a hook repository, the
        environment pre-commit builds for it), against the same commit in a clone whose pre-commit
        runs one trivial hook (`language: system`, `entry: true`), and with no hook at all
        (`--no-verify`). Both configurations install the same hook types (pre-commit and
        commit-msg: git starts pre-commit twice either way). Each commit is undone after it is timed
        (`reset --soft`, in the same command for every variant)."""
        s = self.sizes
        home = self.cache.root.parent / "pre-commit-home"  # the hook environment is built once, and kept
        hook_repo = self.cache.root.parent / "hook-repo"  # (one path: pre-commit keys its environments by it)
        rev = _project_snapshot(self.git, hook_repo)
        pc_env = {**env, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
        configs = {
            "peer": ("repos:\n- repo: local\n  hooks:\n  - id: trivial\n    name: trivial\n    language: system\n"
                     "    entry: 'true'\n    pass_filenames: false\n    always_run: true\n"),
            "gate": (f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: gate-frozen-files\n"
                     "  - id: gate-frozen-files-msg\n"),
        }
        repos = {}
        for variant, config in configs.items():
            repo = self._client_clone(s.small_files, name=f"precommit-{variant}")
            self.git.run("reset", "-q", cwd=repo)
            (repo / ".pre-commit-config.yaml").write_text(
                "default_install_hook_types: [pre-commit, commit-msg]\n" + config)
            self.git.run("add", ".pre-commit-config.yaml", cwd=repo)
            self.git.run("commit", "-q", "--no-verify", "-m", "pre-commit configuration", cwd=repo)
            for args in (["install"], ["install-hooks"]):
                proc = subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=pc_env,
                                      capture_output=True, check=False)
                if proc.returncode != 0:
                    return [Case("client", "client: commits through pre-commit", {},
                                 skipped=f"pre-commit {args[0]}: " + (proc.stdout + proc.stderr).decode(errors="replace")[-300:])]
            paths = sorted(self.git.out("ls-files", "src", cwd=repo).splitlines())[:s.small_files]
            for i, rel in enumerate(paths):
                (repo / rel).write_text(f"changed by the agent {i}\n")
            self.git.run("add", *paths, cwd=repo)
            repos[variant] = repo

        def commit(repo: Path, *extra: str) -> list[str]:
            # (sh -c SCRIPT REPO: $0 is the repository)
            return ["/bin/sh", "-c", f"cd \"$0\" && git commit -q {' '.join(extra)} -m 'agent: a change' && "
                    "git reset -q --soft HEAD~1", str(repo)]

        commands = {"none": commit(repos["gate"], "--no-verify"), "peer": commit(repos["peer"]),
                    "gate": commit(repos["gate"])}
        case = self.timed_case("client", f"client: a commit through pre-commit ({s.small_files} staged files, as an "
                               "agent): the gate's commit hooks against one trivial hook", self.work, pc_env,
                               commands, "precommit", f"client: commit via pre-commit, {s.small_files} files")
        for repo in repos.values():
            shutil.rmtree(repo, ignore_errors=True)
        return [case]

    def _client_repo(self, repo: Path, files: int) -> None:
        """HEAD: the policy, the frozen files and `files` files; staged: half of them changed, as many new."""
        import random

        rng = random.Random(5)
        self.git.run("init", "-q", "-b", "main", str(repo))
        (repo / ".gate").mkdir()
        (repo / ".gate" / "policy.toml").write_text(hooks.POLICY)
        for p in FROZEN_FILES:
            (repo / p).parent.mkdir(parents=True, exist_ok=True)
            (repo / p).write_text(f"{p}\n")
        paths = [f"src/d{i % 50:02d}/f{i:05d}.txt" for i in range(files)]
        for p in paths:
            (repo / p).parent.mkdir(parents=True, exist_ok=True)
            (repo / p).write_bytes(_bulk(rng, 300))
        self.git.run("add", "-A", cwd=repo)
        self.git.run("commit", "-q", "-m", "base", cwd=repo)
        for p in paths[: files // 2]:
            (repo / p).write_bytes(_bulk(rng, 300))
        for i in range(files - files // 2):
            new = repo / f"new/d{i % 50:02d}/n{i:05d}.txt"
            new.parent.mkdir(parents=True, exist_ok=True)
            new.write_bytes(_bulk(rng, 300))
        self.git.run("add", "-A", cwd=repo)

    def _client_clone(self, files: int, name: str = "client-clone") -> Path:
        """A clone (with `origin`) of the small scenario's history, whose remote has the policy
        committed, with `files` changed files staged."""
        s = self.sizes
        hist = self.cache.history(s.small_commits, s.files)
        server = self.work / f"{name}-server.git"
        link_copy(hist, server)
        (server / "bench-done").unlink(missing_ok=True)
        repo = self.work / name
        self.git.run("clone", "-q", str(server), str(repo))
        (repo / ".gate").mkdir(exist_ok=True)
        (repo / ".gate" / "policy.toml").write_text(hooks.POLICY)
        self.git.run("add", ".gate/policy.toml", cwd=repo)
        self.git.run("commit", "-q", "-m", "the gate's policy", cwd=repo)
        self.git.run("push", "-q", "origin", "HEAD:refs/heads/main", cwd=repo)
        paths = sorted(self.git.out("ls-files", "src", cwd=repo).splitlines())[:files]
        for i, rel in enumerate(paths):
            (repo / rel).write_text(f"changed by the agent {i}\n")
        self.git.run("add", *paths, cwd=repo)
        return repo

    def timed_case(self, scenario: str, label: str, cwd: Path, env: dict[str, str], commands: dict[str, list[str]],
                   note: str, short: str = "") -> Case:
        """`commands` (variant -> command, the first the baseline) run in turn in `cwd`, timed,
        with their CPU, and once more under /usr/bin/time for the peak memory."""
        case = Case(scenario, label, {v: Timing() for v in commands}, note=note, short=short)
        self.log(f"- {label}: {len(commands)} variants x {self.runs} runs")
        names = list(commands)
        for i in range(self.runs + (1 if self.warmup else 0)):
            order = names[i % len(names):] + names[:i % len(names)]
            this_run = {}
            for v in order:
                with cpu_of_children() as cpu:
                    t0 = time.perf_counter()
                    proc = subprocess.run(commands[v], cwd=cwd, env=env, capture_output=True, check=False)
                    elapsed = time.perf_counter() - t0
                if self.warmup and i == 0:
                    continue
                t = case.variants[v]
                t.times.append(elapsed)
                t.alone.append(elapsed)  # the hook command is all there is
                t.cpu.append(cpu[0])
                this_run[v] = elapsed
                if proc.returncode != 0:
                    t.errors.append(f"{v}: exit {proc.returncode}: " + proc.stderr.decode(errors="replace").strip()[-300:])
            if this_run:
                for v in names[1:]:
                    case.paired.setdefault(v, []).append(this_run[v] - this_run[names[0]])
        for v in names[1:]:
            memfile = self.work / f"mem-{note}-{v}.txt"
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(memfile), *commands[v]], cwd=cwd, env=env,
                           capture_output=True, check=False)
            case.variants[v].peak_mib = hooks.read_peak_mib(memfile)
            memfile.unlink(missing_ok=True)
        for v in names:
            t = case.variants[v]
            self.log(f"    {v:14s} median {(t.median or 0) * 1000:8.1f} ms  CPU {(t.cpu_median or 0) * 1000:8.1f} ms"
                     + (f"  ERRORS: {t.errors[0]}" if t.errors else ""))
        return case

#: The native peers' frozen-path filter over `git log/diff --raw` lines (case-folded, trailing
#: dots and spaces dropped, as the gate reads names).
_FROZEN_AWK = """awk '
/^:/ {
  p = tolower(substr($0, index($0, "\\t") + 1))
  gsub(/[ .]+\\//, "/", p); sub(/[ .]+$/, "", p)
  if (p == "ci" || p ~ /^ci\\// || p == "gate.toml" || p ~ /^gate\\.toml\\// ||
      p == ".pre-commit-config.yaml" || p ~ /^\\.pre-commit-config\\.yaml\\//) { print "frozen: " p; bad = 1 }
}
END { exit bad }'
"""

PRE_PUSH_PEER = """#!/bin/sh
# bench pre-push peer: the pushed commits (pre-commit's variables) checked against the frozen
# paths in native git, every commit (GATE_PUSHER is an agent), as the server's peer does
git -c core.quotePath=false log --no-renames --full-history -c --raw --format='commit %H' \\
    "$PRE_COMMIT_TO_REF" --not --remotes="$PRE_COMMIT_REMOTE_NAME" -- ':(icase)ci*' ':(icase)gate.toml*' \\
    ':(icase).pre-commit-config.yaml*' | """ + _FROZEN_AWK


CLIENT_PEER = """#!/bin/sh
# bench client peer: the staged change checked against the frozen paths, in native git
case "$(git var GIT_AUTHOR_IDENT) $(git var GIT_COMMITTER_IDENT)" in
  *@[Aa][Gg][Ee][Nn][Tt][Ss].[Ee][Xx][Aa][Mm][Pp][Ll][Ee].[Cc][Oo][Mm]\\>*) ;;
  *) exit 0 ;;
esac
git -c core.quotePath=false diff --cached --raw --no-renames -- ':(icase)ci*' ':(icase)gate.toml*' \\
    ':(icase).pre-commit-config.yaml*' | """ + _FROZEN_AWK


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


#: What pre-commit needs of this project to build the hooks' environment (tests/support/snapshot.py).
SNAPSHOT = ("gatecore", "server", "hooks", "pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml",
            "hatch_build.py", "VERSION")  # the build's version hook and the release it reads


def _project_snapshot(git: Git, dest: Path) -> str:
    """This project's files as a git repository (a forge's copy, for pre-commit's `repo:`/`rev:`):
    the commit id. The same files give the same id, so pre-commit's environment is built once."""
    root = Path(__file__).resolve().parent.parent
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in SNAPSHOT:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_build.py"))
        else:
            shutil.copy2(src, dest / name)
    fixed = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    git.run("init", "-q", "-b", "main", cwd=dest)
    git.run("add", "-A", cwd=dest)
    git.run("commit", "-q", "-m", "snapshot", cwd=dest, extra=fixed)
    return git.out("rev-parse", "HEAD", cwd=dest)


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
