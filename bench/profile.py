"""`python -m bench.profile SCENARIO`: one of the benchmark's pushes, staged, with the gate profiled.

The server repository gets the push's objects but not its ref updates, so the gate's hook
can be run directly, as receive-pack runs it (GIT_DIR=., the ref updates on stdin):

    python -m bench.profile small                 # wall time of the hook, N runs
    python -m bench.profile refs --cprofile       # cProfile of server.prereceive (top 30, cumulative)
    python -m bench.profile large --importtime    # python -X importtime: the heaviest imports
    python -m bench.profile review --keep         # leave the staged repository (path printed)
    python -m bench.profile policies --case 'authors = ["*"]: pallets-flask' --floor
                                                  # the hook beside its careful peer and the floors under
                                                  # it: Python's start, the imports, git's listing, the
                                                  # commits parsed with no tree read (bench/floor.py)

SCENARIO is small, large (the largest history), wide, real (the largest real history), refs
(the many-refs one) or review; `--case TEXT` picks another push of the scenario by its label
(`--case ohmyzsh`, `--case "flask, "`). With --keep, the staged repository keeps the hook's
input (bench-stdin) and environment (bench-env) to run it again by hand.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .cli import HERE, _log
from .generate import Cache
from .gitenv import Git, base_env
from .scenarios import FULL, QUICK, Bench, clean_env_for_process
from .scenarios.core import PushSpec


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", choices=("small", "large", "wide", "widepolicies", "real", "policies", "refs", "review"))
    p.add_argument("--quick", action="store_true", help="smoke sizes")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--cprofile", action="store_true")
    p.add_argument("--importtime", action="store_true")
    p.add_argument("--floor", action="store_true", help="the hook, its careful peer and the floors under it")
    p.add_argument("--sort", default="cumulative", help="cProfile sort key (default cumulative)")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--keep", action="store_true")
    p.add_argument("--case", default=None, help="the push whose label holds this text (default: the largest)")
    p.add_argument("--cache-dir", type=Path, default=HERE / ".cache")
    args = p.parse_args(argv)

    cache_dir = args.cache_dir.resolve()
    git = Git(base_env(cache_dir / "home"))
    clean_env_for_process(git.env)
    cache = Cache(cache_dir / ("repos-quick" if args.quick else "repos"), git, _log)
    work = cache_dir / f"profile-{time.strftime('%Y%m%d-%H%M%S')}"
    bench = Bench(git, cache, work, args.runs, QUICK if args.quick else FULL, _log)
    try:
        specs = [s for s in bench.specs(args.scenario) if args.case is None or args.case in s.label]
        if not specs:
            p.error(f"no {args.scenario} push has {args.case!r} in its label")
        spec = max(specs, key=lambda s: s.size)
        installer = bench.installers(spec)["gate"]
        dst, stdin, qenv = bench.stage(spec.template, spec.client, spec.refspecs, "gate", installer)
        env = {**git.env, **(spec.env or {}), **qenv, "GIT_DIR": "."}
        (dst / "bench-stdin").write_bytes(stdin)  # the hook's input, to run it again by hand (--keep)
        (dst / "bench-env").write_text("".join(f"export {k}={v}\n" for k, v in {**(spec.env or {}), **qenv}.items()))
        print(f"{spec.label}\nstaged in {dst} (input in bench-stdin, environment in bench-env); stdin:\n"
              f"{stdin.decode()}", flush=True)
        gate_cmd = [sys.executable, "-I", "-m", "server.prereceive", "--gate-dir", str(dst / "gate")]
        if args.importtime:
            proc = subprocess.run([sys.executable, "-I", "-X", "importtime", *gate_cmd[2:]], cwd=dst, env=env,
                                  input=stdin, capture_output=True, check=False)
            rows = []
            for line in proc.stderr.decode().splitlines():
                if line.startswith("import time:") and "self [us]" not in line:
                    own_us, cum_us, name = line[len("import time:"):].split("|")
                    rows.append((int(cum_us), int(own_us), name.rstrip()))
            total = sum(c for c, _, n in rows if not n.startswith("  "))
            print(f"exit {proc.returncode}; top-level imports {total / 1000:.1f} ms; heaviest (cumulative):")
            for cum, own, name in sorted(rows, reverse=True)[: args.top]:
                print(f"  {cum / 1000:8.1f} ms  (self {own / 1000:6.1f})  {name}")
            heavy = [n.strip() for _, _, n in rows if n.strip().split(".")[0] in ("typer", "pydantic", "click",
                                                                                  "cryptography", "rich")]
            print("heavy modules imported: " + (", ".join(sorted(set(heavy))) or "none"))
        elif args.floor:
            _floors(bench, spec, dst, env, stdin, gate_cmd, args.runs, work)
        elif args.cprofile:
            out = work / "gate.prof"
            proc = subprocess.run([sys.executable, "-I", "-m", "cProfile", "-o", str(out), "-m", "server.prereceive",
                                   "--gate-dir", str(dst / "gate")], cwd=dst, env=env, input=stdin,
                                  capture_output=True, check=False)
            print(f"exit {proc.returncode} {proc.stderr.decode()[-500:]}")
            import pstats

            pstats.Stats(str(out)).sort_stats(args.sort).print_stats(args.top)
        else:
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                proc = subprocess.run(gate_cmd, cwd=dst, env=env, input=stdin, capture_output=True, check=False)
                times.append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    print(proc.stderr.decode()[-1000:])
            print(f"gate hook alone: median {statistics.median(times) * 1000:.1f} ms over {len(times)} runs "
                  f"(min {min(times) * 1000:.1f})")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _floors(bench: Bench, spec: PushSpec, dst: Path, env: dict[str, str], stdin: bytes, gate_cmd: list[str],
            runs: int, work: Path) -> None:
    """The gate's hook and the push's careful peer, timed in turn with what lies under any hook in
    Python: its start, the gate's imports, git's listing of the commits, and those commits parsed
    by the gate's reader without a tree read (bench/floor.py). Medians, and each over the peer's."""
    (work / "peer").mkdir()
    bench.installers(spec)["peer"](work / "peer")  # (the push's own peer, as the bench times it)
    peer = work / "peer" / "hooks" / "pre-receive"
    news = [line.split()[1] for line in stdin.decode().splitlines() if set(line.split()[1]) != {"0"}]
    py = [sys.executable, "-I"]
    commands = {
        "careful peer (the hook in native git)": ["sh", str(peer)],
        "python -I -c pass": [*py, "-c", "pass"],
        "python -I, the hook's imports": [*py, "-c", "import server.prereceive"],
        "git rev-list --header (the listing alone)": ["git", "rev-list", "--header", *news, "--not", "--all"],
        "floor: commits listed and parsed, no tree": [*py, str(Path(__file__).with_name("floor.py")), *news],
        "the gate's hook": gate_cmd,
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    exits: dict[str, set[int]] = {name: set() for name in commands}
    for run in range(runs):
        names = list(commands)
        for name in names[run % len(names):] + names[:run % len(names)]:  # (the order rotated, as the bench's)
            t0 = time.perf_counter()
            proc = subprocess.run(commands[name], cwd=dst, env=env, input=stdin, capture_output=True, check=False)
            times[name].append(time.perf_counter() - t0)
            exits[name].add(proc.returncode)
    peer_ms = statistics.median(times["careful peer (the hook in native git)"]) * 1000
    print(f"{runs} runs each, interleaved; medians:")
    for name, values in times.items():
        ms = statistics.median(values) * 1000
        status = "" if exits[name] == {0} else f"  (exit {', '.join(map(str, sorted(exits[name])))})"
        print(f"  {name:45s} {ms:8.1f} ms  {ms / peer_ms:5.2f}x the peer{status}")


if __name__ == "__main__":
    sys.exit(main())
