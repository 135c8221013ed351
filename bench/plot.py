"""The benchmark's chart: for each push, the floor, the native peer and the gate side by side.

    ./dev bench --plot                      # run, then draw bench/results/latest.png
    python -m bench.plot [RESULTS.json] [OUT.png]   # draw a run again (default: the latest)

Bars are each hook run alone (median ms, log scale: a small push costs milliseconds, an
80,000-commit history seconds), so that the gate reads against the two native references of
the same push; the label over the gate's bar is its ratio to the peer. matplotlib is the
optional `bench` extra (`pip install -e '.[bench]'`; `./dev bench --plot` installs it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: The variants drawn, and what the review push's native reference is called.
SHOWN = (("floor", "floor: git rev-list NEW --not --all"),
         ("peer", "peer: the same check in native git (git log --raw | awk; policies: their careful peers;\n"
                  "commit via pre-commit: pre-commit with one trivial hook)"),
         ("gate", "gate"))
PEERS = ("peer", "native-digest")


def rows(results: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
    """(label, variant -> hook-alone ms) of each push that has a peer."""
    out = []
    for case in results["cases"]:
        if case.get("skipped"):
            continue
        alone = {v: t["alone_ms"] for v, t in case["variants"].items() if t.get("alone_ms")}
        peer = next((p for p in PEERS if p in alone), None)
        if peer is None or "gate" not in alone:
            continue
        alone["peer"] = alone[peer]
        out.append((case["short"], alone))
    return out


def draw(results: dict[str, Any], out: Path) -> Path:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        raise SystemExit("bench --plot needs matplotlib: pip install -e '.[bench]' (./dev bench --plot installs it)"
                         ) from None
    data = rows(results)
    if not data:
        raise SystemExit("nothing to draw: no push with a peer in these results")
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(data) + 2.0))
    height = 0.26
    colours = {"floor": "#b0b0b0", "peer": "#4c78a8", "gate": "#f58518"}
    for i, (_label, alone) in enumerate(reversed(data)):
        for j, (v, _name) in enumerate(SHOWN):
            if v in alone:
                y = i + (1 - j) * height
                ax.barh(y, alone[v], height=height, color=colours[v])
        if "peer" in alone:
            ratio = alone["gate"] / alone["peer"]
            ax.text(alone["gate"] * 1.08, i - height, f"{ratio:.2f}x peer", va="center", fontsize=8)
    ax.set_yticks(range(len(data)), [label for label, _ in reversed(data)], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("the hook run alone, median ms (log scale)")
    ax.set_title(f"push-gate: hook cost per push ({results['when']})", fontsize=10)
    ax.legend(handles=[Patch(color=colours[v], label=n) for v, n in SHOWN],
              loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.9 / (len(data) + 2)), ncol=3, fontsize=8,
              frameon=False)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    src = Path(args[0]) if args else HERE / "results" / "latest.json"
    out = Path(args[1]) if len(args) > 1 else src.with_suffix(".png")
    print(draw(json.loads(src.read_text()), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
