"""The short table of a run's targets (what the README shows): `python -m bench.summary [RESULTS.json]`
(`--judge-again`: the targets judged again from the run's figures by the current bench/report.py).

One row per target: the target, the measured ratio (with the hook-alone and CPU ratios where
the run has them), the limit, and whether it is met. The full table stays in the run's
markdown (bench/results/latest.md) and in bench/README.md's history.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _short(measured: str) -> str:
    """'a ms / b ms = 1.04x (hook run alone: ... = 0.91x) (CPU: ... = 0.85x)' -> '1.04x (alone 0.91x, CPU 0.85x)'.

    The cross-checks are named by their labels (the small push and the pre-commit commit give a
    CPU ratio and no hook-alone one); a push overhead with no ratio (the peer's overhead not above
    zero) shows as '-' before them."""
    head = re.match(r"[0-9.]+ ms / [0-9.]+ ms = ([0-9.]+x)", measured)
    extra = [f"{label} {r}" for key, label in (("hook run alone", "alone"), ("CPU", "CPU"))
             for r in re.findall(rf"\({key}: [^)]*= ([0-9.]+x)\)", measured)]
    if head is None and not extra:
        return measured
    first = head.group(1) if head else "-"
    text = first + (f" ({', '.join(extra)})" if extra else "")
    m = re.match(r"([0-9.]+ ms / [0-9.]+ ms)", measured)
    return f"{text}: {m.group(1)}" if m else text


def table(results: dict[str, Any]) -> str:
    lines = ["| target | measured | limit | met |", "|---|---|---:|:---:|"]
    for t in results["targets"]:
        measured = t["measured"] if "MiB" in t["measured"] or " s (" in t["measured"] else _short(t["measured"])
        met = "yes" if t["ok"] else ("-" if t["ok"] is None else "**no**")
        name = re.sub(r"^first push, (.*, first push):", r"\1:", t["name"])  # (how runs before 2026-12-05 named it)
        lines.append(f"| {name} | {measured} | {t['limit']} | {met} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    again = "--judge-again" in args  # the targets judged again from the run's figures, by today's report
    args = [a for a in args if a != "--judge-again"]
    src = Path(args[0]) if args else HERE / "results" / "latest.json"
    results = json.loads(src.read_text())
    if again:
        from .report import cases_from, targets

        ref = {k: v / 1000 for k, v in results["reference_ms"].items() if v is not None}
        results["targets"] = [{"name": t.name, "measured": t.measured, "limit": t.limit, "ok": t.ok,
                               "detail": t.detail} for t in targets(cases_from(results), ref)]
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
