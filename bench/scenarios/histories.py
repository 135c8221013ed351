"""Real projects' histories (../shared/data): real (flask's first and incremental pushes, flask
replayed to 50k commits, ohmyzsh; read-all) and policies (every history's first push by a human
under each of the policies people write, against the policy's careful native peer)."""

from __future__ import annotations

from pathlib import Path

from .. import hooks
from ..generate import all_bundles, other_bundles, real_bundle
from .core import POLICY_ENV, READ_ALL_ENV, BenchCore, Case, PushSpec, _k, _project


class Histories(BenchCore):
    def specs(self, scenario: str) -> list[PushSpec]:
        if scenario == "real":
            return self._real_specs()
        if scenario == "policies":
            return self._policy_specs()
        return super().specs(scenario)

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

    def real(self) -> list[Case]:
        if real_bundle() is None and not other_bundles():
            return [Case("real", "real histories", {}, skipped="../shared/data/pallets-flask.bundle not found "
                                                                "(set GATE_BENCH_BUNDLE)")]
        return self.run_specs("real")

    def policies(self) -> list[Case]:
        if not all_bundles():
            return [Case("policies", "policies people write", {}, skipped="no bundle in ../shared/data")]
        return self.run_specs("policies")
