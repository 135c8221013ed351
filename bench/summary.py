"""The short table of a run's targets (what the README shows): `python -m bench.summary [RESULTS.json]`.

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
    """'a ms / b ms = 1.04x (hook run alone: ... = 0.91x) (CPU: ... = 0.85x)' -> '1.04x (alone 0.91x, CPU 0.85x)'."""
    ratios = re.findall(r"= ([0-9.]+x)", measured)
    if not ratios:
        return measured
    extra = [f"{label} {r}" for label, r in zip(("alone", "CPU"), ratios[1:], strict=False)]
    head = ratios[0] + (f" ({', '.join(extra)})" if extra else "")
    m = re.match(r"([0-9.]+ ms / [0-9.]+ ms)", measured)
    return f"{head}: {m.group(1)}" if m else head


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
    src = Path(args[0]) if args else HERE / "results" / "latest.json"
    print(table(json.loads(src.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
