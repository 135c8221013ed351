"""The markdown table and the targets of issue 16 (PASS/FAIL, with the margin)."""

from __future__ import annotations

import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .scenarios import Case, _k

IMPORT_REF = "python -I -c 'import pygit2'"
DEFAULT_DEADLINE_MS = 4000.0
MEMORY_LIMIT_MIB = 100.0


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
    r = _ratio(a, b)
    return "-" if r is None else f"{_ms(a)} ms / {_ms(b)} ms = {r:.2f}x{cross}"


def _cross(a: float | None, b: float | None) -> str:
    r = _ratio(a, b)
    return "" if r is None else f" (hook run alone: {_ms(a)} / {_ms(b)} ms = {r:.2f}x)"


def targets(cases: list[Case], ref: dict[str, float]) -> list[Target]:
    out: list[Target] = []
    by: dict[str, list[Case]] = {}
    for c in cases:
        if not c.skipped:
            by.setdefault(c.scenario, []).append(c)

    def clean(c: Case, ok: bool | None) -> bool | None:
        return False if c.variants.get("gate") and c.variants["gate"].errors else ok

    if "small" in by:
        c = by["small"][0]
        imp = ref.get(IMPORT_REF)
        ok, text = _verdict(_ratio(_alone(c, "gate"), imp), 1.2)
        out.append(Target("small push: the whole hook (run alone) <= 1.2x starting Python + importing pygit2",
                          _measured(_alone(c, "gate"), imp,
                                    f" (overhead in the push: {_ms(c.overhead('gate'))} ms)"), "1.20x",
                          clean(c, ok), text))
    if "large" in by:
        c = max(by["large"], key=lambda c: c.size)
        ok, text = _verdict(_ratio(c.overhead("gate"), c.overhead("peer")), 1.0)
        out.append(Target(f"large push ({_k(c.size)} commits): gate overhead <= 1.0x the peer's",
                          _measured(c.overhead("gate"), c.overhead("peer"),
                                    _cross(_alone(c, "gate"), _alone(c, "peer"))), "1.00x", clean(c, ok), text))
    for c in by.get("real", []):
        limit = {"first": 1.15, "replayed": 1.0}.get(c.note)
        if limit is None:
            continue
        ok, text = _verdict(_ratio(c.median("gate"), c.median("peer")), limit)
        out.append(Target(f"{c.label.split(',')[0]} ({_k(c.size)} commits): whole push with the gate <= "
                          f"{limit:.2f}x with the peer hook",
                          _measured(c.median("gate"), c.median("peer"),
                                    _cross(_alone(c, "gate"), _alone(c, "peer"))), f"{limit:.2f}x",
                          clean(c, ok), text))
    if "refs" in by and len(by["refs"]) == 2:
        many, few = sorted(by["refs"], key=lambda c: -c.size)
        ok, text = _verdict(_ratio(many.overhead("gate"), few.overhead("gate")), 1.2)
        whole = _ratio(many.median("gate"), few.median("gate"))
        git_own = _ratio(many.median("none"), few.median("none"))
        note = "" if whole is None or git_own is None else (
            f"; whole push {whole:.2f}x, but git's own push (no hook) is already {git_own:.2f}x")
        out.append(Target(f"many refs: gate overhead at {_k(many.size)} refs <= 1.2x at {_k(few.size)} refs",
                          _measured(many.overhead("gate"), few.overhead("gate"),
                                    _cross(_alone(many, "gate"), _alone(few, "gate"))), "1.20x",
                          clean(many, clean(few, ok)), text + note))
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
    peaks = [(c, c.variants["gate"].peak_mib) for c in cases if "gate" in c.variants]
    measured = [(c, p) for c, p in peaks if p is not None]
    if measured:
        worst_case, worst = max(measured, key=lambda cp: cp[1] or 0.0)
        ok = all(p <= MEMORY_LIMIT_MIB for _, p in measured) and len(measured) == len(peaks)
        text = (f"PASS ({(1 - worst / MEMORY_LIMIT_MIB) * 100:.0f}% headroom)" if ok
                else f"FAIL by {(worst / MEMORY_LIMIT_MIB - 1) * 100:.0f}%" if worst > MEMORY_LIMIT_MIB
                else "FAIL: not measured everywhere")
        over = [f"{c.label.split(':')[0]} {p:.0f}" for c, p in measured if p > MEMORY_LIMIT_MIB]
        out.append(Target("peak memory of the gate's hook <= 100 MiB in every scenario",
                          f"max {worst:.1f} MiB ({worst_case.label.split(':')[0]}, {_k(worst_case.size)})"
                          + (f"; over: {', '.join(over)}" if over else ""), "100 MiB", ok, text))
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
            f"{cmd('git', '--version')}; Python {sys.version.split()[0]}; pygit2 {pygit2.__version__} "
            f"(libgit2 {pygit2.LIBGIT2_VERSION})")


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
    lines.append("| scenario | variant | push ms | hook overhead ms | x peer | hook alone ms | gate's own ms "
                 "| hook peak MiB | notes |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for c in cases:
        if c.skipped:
            lines.append(f"| {c.label} | - | - | - | - | - | - | - | skipped: {c.skipped} |")
            continue
        peer_over = c.overhead("peer")
        for v, t in c.variants.items():
            over = None if v == c.baseline else c.overhead(v)
            xp = _ratio(over, peer_over) if v not in ("peer", c.baseline) else None
            own = f"{sorted(t.hook_ms)[len(t.hook_ms) // 2]:.0f}" if t.hook_ms else "-"
            notes = []
            if t.errors:
                notes.append("ERROR: " + t.errors[0].replace("|", "/")[:200])
            if v == "gate" and over is not None and over * 1000 > DEFAULT_DEADLINE_MS:
                notes.append("over the default 4 s deadline")
            lines.append(f"| {c.label if v == c.baseline else ''} | {v} | {_ms(t.median)} | "
                         f"{'-' if over is None else f'{over * 1000:.0f}'} | {'-' if xp is None else f'{xp:.2f}'} | "
                         f"{_ms(t.alone_median)} | {own} | {'-' if t.peak_mib is None else f'{t.peak_mib:.1f}'} | "
                         f"{'; '.join(notes)} |")
        if c.note:
            lines.append(f"| | | | | | | | | {c.note} |")
    lines.append("")
    lines.append("## Targets (issue 16)")
    lines.append("")
    lines.append("| target | measured | limit | result |")
    lines.append("|---|---|---|---|")
    for t in targets(cases, ref):
        lines.append(f"| {t.name} | {t.measured} | {t.limit} | {t.detail} |")
    lines.append("")
    return "\n".join(lines)
