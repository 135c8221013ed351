"""The markdown table and the targets (the current ones, then the earlier ones kept), PASS/FAIL with the margin."""

from __future__ import annotations

import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .scenarios import Case, Timing, _k
from .scenarios.agent import PYTHON

IMPORT_REF = "python -I -c 'import pygit2'"
GITHUB_DEADLINE_MS = 4000.0  # GitHub Enterprise's pre-receive limit (`PLATFORM_DEADLINES`)
MEMORY_LIMIT_MIB = 100.0
#: A push that moves 999 branches at once: the hook alone (one git process per ref took 3 s)
MOVED_REFS_SECONDS = 1.0


@dataclass
class Target:
    name: str
    measured: str
    limit: str
    ok: bool | None  # None: not measured
    detail: str


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _verdict(ratio: float | None, limit: float) -> tuple[bool | None, str]:
    if ratio is None:
        return None, "not measured"
    if ratio <= limit:
        return True, f"PASS ({(1 - ratio / limit) * 100:.0f}% headroom)"
    return False, f"FAIL by {(ratio / limit - 1) * 100:.0f}%"


def _alone(c: Case, v: str) -> float | None:
    t = c.variants.get(v)
    return None if t is None else t.alone_median


def _measured(a: float | None, b: float | None, cross: str = "") -> str:
    """'a ms / b ms = r' and the cross-checks; with no ratio (a peer's overhead not above zero: the
    no-hook push varied more than the peer costs), the figures and the cross-checks still."""
    r = _ratio(a, b)
    if r is None:
        return "-" if a is None or b is None else f"{_ms(a)} ms and {_ms(b)} ms: no ratio{cross}"
    return f"{_ms(a)} ms / {_ms(b)} ms = {r:.2f}x{cross}"


def _cpu_of(c: Case, v: str) -> float | None:
    t = c.variants.get(v)
    return None if t is None else t.cpu_median


def _cpu(a: float | None, b: float | None) -> str:
    r = _ratio(a, b)
    return "" if r is None else f" (CPU: {_ms(a)} / {_ms(b)} ms = {r:.2f}x)"


def _cross(a: float | None, b: float | None) -> str:
    r = _ratio(a, b)
    return "" if r is None else f" (hook run alone: {_ms(a)} / {_ms(b)} ms = {r:.2f}x)"


#: The hook's default deadline (`[limits] deadline_seconds` unset, `gatecore.configuration.policy`).
DEADLINE_SECONDS = 30.0
#: First pushes whose overhead is held to the peer's: generated and real histories.
FIRST_PUSHES = ("large", "wide", "real")


def _first_push(c: Case) -> bool:
    return c.scenario in ("large", "wide") or (c.scenario == "real" and c.note in ("first", "replayed"))


#: A history over this many commits is held to 1.0x the careful peer's overhead, others to 1.5x.
BIG_HISTORY = 50_000


def policy_targets(cases: list[Case]) -> list[Target]:
    """The policies people write against their careful native peers, the small push
    against the native peer, a commit through pre-commit against pre-commit with one trivial hook."""
    out: list[Target] = []

    def clean(c: Case, ok: bool | None) -> bool | None:
        return False if c.variants.get("gate") and c.variants["gate"].errors else ok

    for c in cases:
        if c.skipped or c.scenario != "policies":
            continue
        limit = 1.0 if c.size > BIG_HISTORY else 1.5
        ok, text = _verdict(_ratio(c.overhead("gate"), c.overhead("peer")), limit)
        out.append(Target(f"{_short(c)}: gate overhead <= {limit:.1f}x the careful peer's",
                          _measured(c.overhead("gate"), c.overhead("peer"),
                                    _cross(_alone(c, "gate"), _alone(c, "peer"))
                                    + _cpu(_cpu_of(c, "gate"), _cpu_of(c, "peer"))), f"{limit:.2f}x",
                          clean(c, ok), text))
    for c in cases:
        if c.skipped or not (c.scenario == "small" or (c.scenario == "real" and c.note == "incremental")):
            continue
        limit = 2.5 if c.scenario == "small" else 1.5
        what = ("the whole hook (run alone) <= 2.5x the native peer's" if c.scenario == "small"
                else "gate overhead <= 1.5x the peer's")
        a, b = ((_alone(c, "gate"), _alone(c, "peer")) if c.scenario == "small"
                else (c.overhead("gate"), c.overhead("peer")))
        ok, text = _verdict(_ratio(a, b), limit)
        cross = (_cpu(_cpu_of(c, "gate"), _cpu_of(c, "peer")) if c.scenario == "small"
                 else _cross(_alone(c, "gate"), _alone(c, "peer")) + _cpu(_cpu_of(c, "gate"), _cpu_of(c, "peer")))
        out.append(Target(f"{_short(c)}: {what}", _measured(a, b, cross), f"{limit:.2f}x", clean(c, ok), text))
    for c in cases:
        if c.skipped or c.note != "precommit":
            continue
        for v, what in (("gate", "the gate's commit hooks as the README configures them"),
                        ("gate-msg", "the commit-msg hook alone")):
            if v not in c.variants:
                continue
            ok, text = _verdict(_ratio(c.median(v), c.median("peer")), 1.3)
            out.append(Target(f"client: a commit through pre-commit with {what} <= 1.3x with one trivial hook",
                              _measured(c.median(v), c.median("peer"), _cpu(_cpu_of(c, v), _cpu_of(c, "peer"))),
                              "1.30x", clean(c, ok), text))
    return out


#: The agent check's whole process, allowed or refused, against `python -I -c pass` (issue 48).
AGENT_LIMIT = 2.0


def agent_targets(cases: list[Case]) -> list[Target]:
    """`gate agents check` on an allowed and on a refused write, each against starting Python."""
    out: list[Target] = []
    for c in cases:
        if c.skipped or c.scenario != "agent":
            continue
        base = _alone(c, PYTHON)
        for v, what in (("allowed", "a write allowed"), ("denied", "a write refused")):
            ok, text = _verdict(_ratio(_alone(c, v), base), AGENT_LIMIT)
            if c.variants.get(v) is not None and c.variants[v].errors:
                ok = False
            out.append(Target(f"agent check, {what}: the whole `gate agents check` process <= {AGENT_LIMIT:.0f}x "
                              f"`{PYTHON}`", _measured(_alone(c, v), base, _cpu(_cpu_of(c, v), _cpu_of(c, PYTHON))),
                              f"{AGENT_LIMIT:.2f}x", ok, text))
    return out


def targets(cases: list[Case], ref: dict[str, float]) -> list[Target]:
    """The agent check's and the policies' targets, then the first pushes', refs' and the earlier ones (kept so
    that nothing slips back)."""
    out: list[Target] = agent_targets(cases) + policy_targets(cases)
    by: dict[str, list[Case]] = {}
    for c in cases:
        if not c.skipped:
            by.setdefault(c.scenario, []).append(c)

    def clean(c: Case, ok: bool | None) -> bool | None:
        return False if c.variants.get("gate") and c.variants["gate"].errors else ok

    for c in cases:
        if c.skipped or not _first_push(c):
            continue
        ok, text = _verdict(_ratio(c.overhead("gate"), c.overhead("peer")), 1.0)
        out.append(Target(f"{_short(c)}: gate overhead <= 1.0x the peer's",
                          _measured(c.overhead("gate"), c.overhead("peer"),
                                    _cross(_alone(c, "gate"), _alone(c, "peer"))
                                    + _cpu(_cpu_of(c, "gate"), _cpu_of(c, "peer"))), "1.00x", clean(c, ok), text))
    histories = [c for c in cases if not c.skipped and c.scenario in ("large", "wide", "real", "policies", "signed")
                 and _alone(c, "gate") is not None]
    if histories:
        slowest = max(histories, key=lambda c: _alone(c, "gate") or 0.0)
        longest = _alone(slowest, "gate") or 0.0
        ok = longest <= DEADLINE_SECONDS and all(clean(c, True) for c in histories)
        out.append(Target(f"every history (under 100k commits): the gate's hook run alone within the default "
                          f"{DEADLINE_SECONDS:.0f} s deadline",
                          f"max {longest:.1f} s ({_short(slowest)})", f"{DEADLINE_SECONDS:.0f} s", ok,
                          f"PASS ({(1 - longest / DEADLINE_SECONDS) * 100:.0f}% headroom)" if ok
                          else f"FAIL ({longest:.1f} s)"))
    if "small" in by:
        c = by["small"][0]
        imp = ref.get(IMPORT_REF)
        ok, text = _verdict(_ratio(_alone(c, "gate"), imp), 1.2)
        out.append(Target("small push: the whole hook (run alone) <= 1.2x starting Python + importing pygit2",
                          _measured(_alone(c, "gate"), imp,
                                    f" (overhead in the push: {_ms(c.overhead('gate'))} ms)"), "1.20x",
                          clean(c, ok), text))
    server_small = _alone(by["small"][0], "gate") if "small" in by else None
    for c in by.get("client", []):
        limit = {"commit-small": 1.5, "pre-push": 1.2}.get(c.note)
        if limit is None:
            continue
        what = ("gate-frozen-commit on a small staged change" if c.note == "commit-small"
                else "a pre-push run with no review ref (gate-frozen-push + gate-receipt-push)")
        ok, text = _verdict(_ratio(_alone(c, "gate"), server_small), limit)
        out.append(Target(f"client: {what} <= {limit:.1f}x the server's hook on the small push",
                          _measured(_alone(c, "gate"), server_small), f"{limit:.2f}x", clean(c, ok), text))
    peaks = [(c, c.variants["gate"].peak_mib) for c in cases if "gate" in c.variants]
    measured = [(c, p) for c, p in peaks if p is not None]
    if measured:
        worst_case, worst = max(measured, key=lambda cp: cp[1] or 0.0)
        ok = all(p <= MEMORY_LIMIT_MIB for _, p in measured) and len(measured) == len(peaks)
        text = (f"PASS ({(1 - worst / MEMORY_LIMIT_MIB) * 100:.0f}% headroom)" if ok
                else f"FAIL by {(worst / MEMORY_LIMIT_MIB - 1) * 100:.0f}%" if worst > MEMORY_LIMIT_MIB
                else "FAIL: not measured everywhere")
        over = [f"{_short(c)} {p:.0f}" for c, p in measured if p > MEMORY_LIMIT_MIB]
        out.append(Target("peak memory of the gate's hook (git's processes included) <= 100 MiB in every scenario",
                          f"max {worst:.1f} MiB ({_short(worst_case)})"
                          + (f"; over: {', '.join(over)}" if over else ""), "100 MiB", ok, text))
    out += _earlier(by)
    return out


def _short(c: Case) -> str:
    return c.name


def _earlier(by: dict[str, list[Case]]) -> list[Target]:
    """The earlier targets the later ones do not restate: many refs, moved refs, reftable, the review push, the ledger."""
    out: list[Target] = []

    def clean(c: Case, ok: bool | None) -> bool | None:
        return False if c.variants.get("gate") and c.variants["gate"].errors else ok

    growth = [c for c in by.get("refs", []) if c.note != "moved"]
    if len(growth) == 2:
        many, few = sorted(growth, key=lambda c: -c.size)
        ok, text = _verdict(_ratio(many.overhead("gate"), few.overhead("gate")), 1.2)
        whole = _ratio(many.median("gate"), few.median("gate"))
        git_own = _ratio(many.median("none"), few.median("none"))
        note = "" if whole is None or git_own is None else (
            f"; whole push {whole:.2f}x, but git's own push (no hook) is already {git_own:.2f}x")
        out.append(Target(f"many refs: gate overhead at {_k(many.size)} refs <= 1.2x at {_k(few.size)} refs",
                          _measured(many.overhead("gate"), few.overhead("gate"),
                                    _cross(_alone(many, "gate"), _alone(few, "gate"))), "1.20x",
                          clean(many, clean(few, ok)), text + note))
    for c in by.get("refs", []):
        if c.note != "moved":
            continue
        alone = _alone(c, "gate")
        ok, text = _verdict(alone, MOVED_REFS_SECONDS)
        out.append(Target(f"{_short(c)}: the gate's hook run alone <= {MOVED_REFS_SECONDS:.0f} s (GitHub Enterprise "
                          "gives all pre-receive hooks 5 s)",
                          "-" if alone is None else f"{alone * 1000:.0f} ms", f"{MOVED_REFS_SECONDS:.0f} s",
                          clean(c, ok), text))
    backends = {c.note: c for c in by.get("reftable", [])}
    if {"files", "reftable"} <= set(backends):
        files, reftable = backends["files"], backends["reftable"]
        ok, text = _verdict(_ratio(reftable.overhead("gate"), files.overhead("gate")), 1.2)
        out.append(Target(f"{reftable.size} branches created in one push: gate overhead with reftable refs <= 1.2x "
                          "with files",
                          _measured(reftable.overhead("gate"), files.overhead("gate"),
                                    _cross(_alone(reftable, "gate"), _alone(files, "gate"))
                                    + _cpu(_cpu_of(reftable, "gate"), _cpu_of(files, "gate"))), "1.20x",
                          clean(reftable, clean(files, ok)), text))
    if "review" in by:
        c = by["review"][0]
        ok, text = _verdict(_ratio(c.overhead("gate"), c.overhead("native-digest")), 1.5)
        out.append(Target("review push: gate overhead (digest + verification) <= 1.5x native diff-tree + sha256sum",
                          _measured(c.overhead("gate"), c.overhead("native-digest"),
                                    _cross(_alone(c, "gate"), _alone(c, "native-digest"))), "1.50x",
                          clean(c, ok), text))
    if "ledger" in by:
        groups: dict[str, list[Case]] = {}
        for c in by["ledger"]:
            groups.setdefault(c.note, []).append(c)
        for note, group in sorted(groups.items()):
            lo, hi = min(group, key=lambda c: c.size), max(group, key=lambda c: c.size)
            ok, text = _verdict(_ratio(hi.overhead("gate"), lo.overhead("gate")), 1.3)
            family, push = note.split(":")
            out.append(Target(f"ledger ({family} attempts), {push} push: gate overhead at {_k(hi.size)} attempts "
                              f"<= 1.3x at {_k(lo.size)}",
                              _measured(hi.overhead("gate"), lo.overhead("gate"),
                                        _cross(_alone(hi, "gate"), _alone(lo, "gate"))), "1.30x",
                              clean(hi, clean(lo, ok)), text))
    return out


def machine() -> str:
    def cmd(*args: str) -> str:
        try:
            return subprocess.run(args, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return "?"

    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import pygit2

    return (f"{platform.system()} {platform.release()} {platform.machine()}, {cpu}, {cmd('nproc')} cores; "
            f"{cmd('git', '--version')}; Python {sys.version.split()[0]}; pygit2 {getattr(pygit2, '__version__', '?')} "
            f"(libgit2 {pygit2.LIBGIT2_VERSION})")


def results(cases: list[Case], ref: dict[str, float], runs: int, quick: bool, project_rev: str) -> dict[str, Any]:
    """The run as plain values (bench/results/latest.json): what `bench.plot` draws from."""
    def ms(x: float | None) -> float | None:
        return None if x is None else round(x * 1000, 1)

    return {
        "when": time.strftime("%Y-%m-%d %H:%M %Z"), "project": project_rev, "machine": machine(), "runs": runs,
        "quick": quick, "reference_ms": {k: ms(v) for k, v in ref.items()},
        "cases": [{"scenario": c.scenario, "label": c.label, "short": c.name, "note": c.note, "skipped": c.skipped,
                   "size": c.size,
                   "variants": {v: {"push_ms": ms(t.median), "overhead_ms": ms(None if v == c.baseline else c.overhead(v)),
                                    "alone_ms": ms(t.alone_median), "cpu_ms": ms(t.cpu_median), "peak_mib": t.peak_mib,
                                    "errors": t.errors[:3]}
                                for v, t in c.variants.items()}}
                  for c in cases],
        "targets": [{"name": t.name, "measured": t.measured, "limit": t.limit, "ok": t.ok, "detail": t.detail}
                    for t in targets(cases, ref)],
    }


def cases_from(results: dict[str, Any]) -> list[Case]:
    """A run's cases again from its figures (latest.json): each variant's medians as its one run,
    its overhead as its one paired difference, so that `targets` judges them as the run did."""
    def s(x: float | None) -> list[float]:
        return [] if x is None else [x / 1000]

    out = []
    for c in results["cases"]:
        variants = {v: Timing(times=s(t["push_ms"]), alone=s(t["alone_ms"]), cpu=s(t["cpu_ms"]),
                              peak_mib=t["peak_mib"], errors=list(t["errors"])) for v, t in c["variants"].items()}
        paired = {v: s(t["overhead_ms"]) for v, t in c["variants"].items() if t["overhead_ms"] is not None}
        out.append(Case(c["scenario"], c["label"], variants, note=c["note"], skipped=c["skipped"], size=c["size"],
                        paired=paired, short=c["short"]))
    return out


def render(cases: list[Case], ref: dict[str, float], runs: int, quick: bool, project_rev: str) -> str:
    lines = ["# push-gate benchmark", ""]
    lines.append(f"- when: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; project {project_rev}")
    lines.append(f"- machine: {machine()}")
    lines.append(f"- runs: {runs} per variant, interleaved; times are medians of whole `git push` runs into a "
                 "fresh bare repository; overhead = median over runs of (push with the hook - push without)")
    if quick:
        lines.append("- **smoke sizes** (`--quick`): the numbers only show that the benchmark runs; the "
                     "targets are stated for the full sizes")
    lines.append("- reference: " + "; ".join(f"`{k}` {v * 1000:.0f} ms" for k, v in ref.items()))
    lines.append("")
    lines.append("| scenario | variant | push ms | hook overhead ms | x peer | hook alone ms | hook CPU ms | gate's own ms "
                 "| hook peak MiB | notes |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in cases:
        if c.skipped:
            lines.append(f"| {c.label} | - | - | - | - | - | - | - | - | skipped: {c.skipped} |")
            continue
        peer_over = c.overhead("peer")
        for v, t in c.variants.items():
            over = None if v == c.baseline else c.overhead(v)
            xp = _ratio(over, peer_over) if v not in ("peer", c.baseline) else None
            own = f"{sorted(t.hook_ms)[len(t.hook_ms) // 2]:.0f}" if t.hook_ms else "-"
            notes = []
            if t.errors:
                notes.append("ERROR: " + t.errors[0].replace("|", "/")[:200])
            alone = t.alone_median
            if v == "gate" and alone is not None and alone > DEADLINE_SECONDS:
                notes.append(f"over the default {DEADLINE_SECONDS:.0f} s deadline")
            elif v == "gate" and alone is not None and alone * 1000 > GITHUB_DEADLINE_MS:
                notes.append("over GitHub's 4 s")
            lines.append(f"| {c.label if v == c.baseline else ''} | {v} | {_ms(t.median)} | "
                         f"{'-' if over is None else f'{over * 1000:.0f}'} | {'-' if xp is None else f'{xp:.2f}'} | "
                         f"{_ms(t.alone_median)} | {_ms(t.cpu_median)} | {own} | "
                         f"{'-' if t.peak_mib is None else f'{t.peak_mib:.1f}'} | {'; '.join(notes)} |")
        if c.note:
            lines.append(f"| | | | | | | | | | {c.note} |")
    lines.append("")
    lines.append("## Targets")
    lines.append("")
    lines.append("| target | measured | limit | result |")
    lines.append("|---|---|---|---|")
    for target in targets(cases, ref):
        lines.append(f"| {target.name} | {target.measured} | {target.limit} | {target.detail} |")
    lines.append("")
    return "\n".join(lines)
