"""`python -m bench`: run the scenarios, print the markdown table, write it to bench/results/."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from . import report
from .generate import Cache
from .gitenv import Git, base_env
from .scenarios import FULL, QUICK, Bench, Case, clean_env_for_process

HERE = Path(__file__).resolve().parent
SCENARIOS = ("small", "large", "wide", "widepolicies", "real", "policies", "refs", "review", "signed", "client",
             "ledger", "reftable", "agent")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _project_rev() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=False).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "gatecore", "server"],
                               capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "?"
    return (rev or "?") + (" (gatecore/server modified)" if dirty else "")


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("--runs", type=int, default=5, help="timed runs per variant (median; default 5)")
    p.add_argument("--quick", "--smoke", dest="quick", action="store_true",
                   help="tiny sizes, one run, no warm-up: shows that the benchmark works (well under a minute)")
    p.add_argument("--scenario", action="append", choices=SCENARIOS,
                   help="run only this scenario (repeatable; default all)")
    p.add_argument("--cache-dir", type=Path, default=HERE / ".cache",
                   help="generated repositories are kept here (default bench/.cache)")
    p.add_argument("--out", type=Path, default=None,
                   help="where to write the table (default bench/results/latest.md, smoke: bench/results/smoke.md)")
    p.add_argument("--keep", action="store_true", help="keep the per-run work directory")
    p.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up push of each variant")
    p.add_argument("--plot", nargs="?", const="", default=None, metavar="PNG",
                   help="also draw the chart (floor, peer and gate per push; needs the bench extra: matplotlib) "
                        "to PNG (default: beside the table, latest.png)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    runs = 1 if args.quick else max(1, args.runs)
    sizes = QUICK if args.quick else FULL
    chosen = args.scenario or list(SCENARIOS)
    cache_dir: Path = args.cache_dir.resolve()
    out = args.out or HERE / "results" / ("smoke.md" if args.quick else "latest.md")

    git = Git(base_env(cache_dir / "home"))
    clean_env_for_process(git.env)
    cache = Cache(cache_dir / ("repos-quick" if args.quick else "repos"), git, _log)
    work = cache_dir / f"work-{time.strftime('%Y%m%d-%H%M%S')}"
    bench = Bench(git, cache, work, runs, sizes, _log, warmup=not (args.quick or args.no_warmup))
    started = time.monotonic()
    cases: list[Case] = []
    try:
        _log(f"bench: {', '.join(chosen)}; {runs} run(s) per variant; cache {cache_dir}")
        ref = bench.python_start()
        for name in SCENARIOS:
            if name in chosen:
                cases += getattr(bench, name)()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = report.render(cases, ref, runs, args.quick, _project_rev())
    text += f"\n_total benchmark time {time.monotonic() - started:.0f} s_\n"
    print(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    data = report.results(cases, ref, runs, args.quick, _project_rev())
    out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    _log(f"bench: table written to {out} (the figures in {out.with_suffix('.json')})")
    if args.plot is not None:
        from .plot import draw

        _log(f"bench: chart drawn to {draw(data, Path(args.plot) if args.plot else out.with_suffix('.png'))}")
    errors = [e for c in cases for t in c.variants.values() for e in t.errors]
    return 1 if errors else 0
