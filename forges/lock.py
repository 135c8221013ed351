"""`./dev forge-lock`: write forges/requirements.txt, what the forges' checks install besides
push-gate itself, each release pinned with the hashes of all its files on PyPI.

The releases are the ones the development environment holds (.venv: what the tests ran on), the
closure of pyproject.toml's dependencies and its build backend (hatchling: the checks build push-gate
from its source without an isolated build environment, so nothing unpinned runs at install). The
hashes come from PyPI's JSON API (the only network use: run by a developer, never by CI or a check).
Markers are read for CPython 3.11 to 3.14 on Linux and macOS, the runners the checks support.

    python forges/lock.py [--python .venv/bin/python] [--out forges/requirements.txt]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "forges" / "requirements.txt"
HEADER = """\
# push-gate's dependencies for the forges' checks (the GitHub action, the GitLab and Bitbucket files):
# each release pinned with the sha256 of every file PyPI holds for it, installed with
#   pip install --require-hashes --only-binary :all: --no-deps -r forges/requirements.txt
# then push-gate itself with --no-deps --no-build-isolation (hatchling, its build backend, is here).
# Written by ./dev forge-lock from the development environment's releases (docs/forges.md,
# "What the check installs"); do not edit by hand.
"""

#: Run in the environment whose releases are locked: the closure of `roots`, as name -> version.
_CLOSURE = r"""
import json, sys
from importlib.metadata import distribution
from packaging.requirements import Requirement
envs = [{"sys_platform": p, "platform_system": s, "platform_python_implementation": "CPython",
         "implementation_name": "cpython", "python_version": v, "python_full_version": v + ".0", "extra": ""}
        for p, s in (("linux", "Linux"), ("darwin", "Darwin")) for v in ("3.11", "3.12", "3.13", "3.14")]
found, todo = {}, [Requirement(r).name for r in json.loads(sys.argv[1])]
while todo:
    dist = distribution(todo.pop())
    name = dist.metadata["Name"]
    if name.lower().replace("_", "-") in found:
        continue
    found[name.lower().replace("_", "-")] = dist.version
    for line in dist.requires or []:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate(e) for e in envs):
            todo.append(req.name)
print(json.dumps(found))
"""


def roots(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The requirements the checks install: the project's dependencies and its build backend."""
    doc = tomllib.loads(pyproject.read_text())
    return [*doc["project"]["dependencies"], *doc["build-system"]["requires"]]


def closure(python: Path, reqs: list[str]) -> dict[str, str]:
    out = subprocess.run([str(python), "-I", "-c", _CLOSURE, json.dumps(reqs)], capture_output=True, text=True,
                         check=True)
    found: dict[str, str] = json.loads(out.stdout)
    return dict(sorted(found.items()))


def hashes(name: str, version: str) -> list[str]:
    url = f"https://pypi.org/pypi/{name}/json"  # (every release's files: some mirrors serve no per-release page)
    with urllib.request.urlopen(url, timeout=60) as resp:
        doc = json.load(resp)
    found = sorted({f["digests"]["sha256"] for f in doc["releases"].get(version, []) if not f.get("yanked")})
    if not found:
        raise SystemExit(f"forge-lock: PyPI lists no file of {name} {version}")
    return found


def render(pins: dict[str, list[str]], versions: dict[str, str]) -> str:
    lines = [HEADER]
    for name, version in versions.items():
        lines.append(f"{name}=={version} \\\n" + " \\\n".join(f"    --hash=sha256:{h}" for h in pins[name]) + "\n")
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev forge-lock", description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, default=ROOT / ".venv" / "bin" / "python")
    parser.add_argument("--out", type=Path, default=LOCK)
    args = parser.parse_args(argv)
    versions = closure(args.python, roots())
    pins = {name: hashes(name, version) for name, version in versions.items()}
    args.out.write_text(render(pins, versions))
    print(f"forge-lock: {len(versions)} releases, {sum(map(len, pins.values()))} files -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
