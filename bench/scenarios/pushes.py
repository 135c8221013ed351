"""The generated histories' pushes: small (one agent commit into 10k commits, and the sanity push),
large (first pushes of 10k and 50k commits), wide (80k commits, a 500-entry root tree), refs (50k
refs against 10; 999 branches moved at once) and reftable (200 new branches into files and
reftable refs, on GATE_MODERN_GIT's git)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from .. import hooks
from ..gitenv import Git, link_copy
from .core import POLICY_ENV, READ_ALL_ENV, BenchCore, Case, PushSpec, _k


class Pushes(BenchCore):
    def specs(self, scenario: str) -> list[PushSpec]:
        """The pushes of the small, large, wide and refs scenarios."""
        if scenario not in ("small", "large", "wide", "widepolicies", "refs"):
            return super().specs(scenario)
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
        if scenario == "widepolicies":
            return self._wide_policy_specs()
        client = self.cache.push_client(hist, s.small_files)
        new = self.git.out("rev-parse", "refs/heads/bench-new", cwd=client)
        return [PushSpec("refs", f"many refs: the small push into {_k(s.small_commits)} commits / {_k(n)} refs",
                         self.cache.with_refs(hist, n), client, [f"{new}:refs/heads/main"], all4, size=n,
                         short=f"small push, {_k(n)} refs")
                for n in (s.many_refs, s.few_refs)] + [self._moved_branches_spec(hist, client, new)]

    def _moved_branches_spec(self, hist: Path, client: Path, new: str) -> PushSpec:
        """One push that moves 999 branches at once, each a fast-forward to the same new commit
        (the ref rules' per-ref questions: symbolic ref? fast-forward? asked of git in batches)."""
        s = self.sizes
        n = min(999, s.many_refs // 2)
        refspecs = [f"{new}:refs/heads/feature/f{2 * i:06d}" for i in range(n)]
        return PushSpec("refs", f"many refs: {n} branches moved in one push (fast-forwards), {_k(s.many_refs)} refs",
                        self.cache.with_refs(hist, s.many_refs), client, refspecs, ("none", "floor", "peer", "gate"),
                        size=n, note="moved", short=f"{n} branches moved at once")

    def small(self) -> list[Case]:
        cases = []
        for spec in self.specs("small"):
            cases.append(self.push_case(spec))
            cases[-1].note = self.sanity(spec)
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

    def large(self) -> list[Case]:
        return self.run_specs("large")

    def wide(self) -> list[Case]:
        return self.run_specs("wide")

    def widepolicies(self) -> list[Case]:
        return self.run_specs("widepolicies")

    def _wide_policy_specs(self) -> list[PushSpec]:
        """The wide history's first push (git's shape: 80,000 commits, some 2,800 people, messages with
        trailers) under each of the policies people write (`hooks.POLICIES`), pushed by a human,
        against each policy's careful native peer, as the policies scenario pushes real histories:
        issue 47's "over 50,000 commits, under every policy". (Its own scenario: the careful peer of
        the minimal policy asks git one walk per rule and identity kind, about a minute a run here.)"""
        s = self.sizes
        client = self.cache.wide_history(s.wide_commits, s.wide_root_files)
        return [PushSpec("widepolicies", f"policy {what}: the wide history's first push, {_k(s.wide_commits)} commits",
                         None, client, ["refs/heads/*:refs/heads/*"], ("none", "floor", "peer", "gate"),
                         size=s.wide_commits, note=policy, env=POLICY_ENV, policy=policy,
                         short=f"wide {_k(s.wide_commits)}, {policy}")
                for policy, (_text, what) in hooks.POLICIES.items()]

    def refs(self) -> list[Case]:
        return self.run_specs("refs")

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
