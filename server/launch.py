"""How the installed hooks start: `python -I .../server/launch.py MODULE --gate-dir DIR`.

The design card fixes the top-level names `gatecore`, `server` and `hooks`, and other
distributions ship `server` and `hooks` packages too. Started as `python -m
server.prereceive`, the hook would run whichever `server` comes first on the interpreter's
path, or fail. So the hook runs this file by its path (`-I`: no environment variable, no
script directory on the path) and `bind` makes the three names mean the directories next
to it before anything imports them; then MODULE's `main` runs. The `gate` command binds
the same way (`gatecore/cli/__init__.py`).

`--where` prints, as one JSON object, what the hook would run: the version, the
interpreter, the file of each package, and every other distribution in the environment that
ships one of the three names (`gate server doctor` shows it).

The hook's helper processes start the same way (`helper_argv`: the hook's interpreter, `-I`,
this file by its path, a module of `HELPERS`), so that they run the hook's own code in every
install layout (site-packages, `pip install --user` or `--target`, a source tree), never a
`gatecore` that happens to be importable by name. Before the helper's own output, this file
writes one line, `identity JSON` (`identity()`), which the hook compares with its own
(`gatecore/adapters/treescan.py`).
"""

from __future__ import annotations

import os
import sys

NAMES = ("gatecore", "server", "hooks")
MODULES = ("server.prereceive", "server.postreceive")
#: The helper processes a hook starts (`helper_argv`), which say first what code they run.
TREE_WORKER = "gatecore.adapters.treeworker"
HELPERS = (TREE_WORKER,)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _origin(module: object) -> str:
    return os.path.dirname(os.path.abspath(str(getattr(module, "__file__", "") or "")))


def bind(root: str = ROOT) -> None:
    """Import the three packages from `root` (only while they are imported is `root` first on
    the path: their `__init__` files import nothing); one already imported from elsewhere is an
    error, never silently used."""
    sys.path.insert(0, root)
    try:
        for name in NAMES:
            __import__(name)
    finally:
        sys.path.remove(root)
    for name in NAMES:
        if _origin(sys.modules[name]) != os.path.join(root, name):
            raise ImportError(f"the package {name!r} was imported from {_origin(sys.modules[name])}, not from "
                              f"push-gate's {os.path.join(root, name)}: give push-gate its own environment "
                              "(docs/servers.md)")


def rivals() -> list[str]:
    """Other distributions in this environment that ship a top-level gatecore, server or hooks."""
    from importlib.metadata import distributions

    found = []
    for dist in distributions():
        name = dist.metadata["Name"] or "?"
        if name.lower().replace("_", "-") == "push-gate":
            continue
        tops = sorted({f.parts[0].removesuffix(".py") for f in dist.files or () if f.parts}
                      & set(NAMES))
        found += [f"{name} {dist.version} ships {top}" for top in tops]
    return found


def where() -> dict[str, object]:
    from gatecore import __version__

    files = {}
    for name in (*NAMES, *MODULES):
        __import__(name)
        files[name] = os.path.abspath(str(sys.modules[name].__file__))
    return {"version": __version__, "executable": sys.executable, "python": sys.version.split()[0],
            "files": files, "rivals": rivals()}


def identity() -> str:
    """What code this process runs, as one line of JSON: push-gate's version, the interpreter
    (its path and version) and the directory each of the three packages was bound from. A
    helper started by `helper_argv` says it first; the hook compares it with its own."""
    import json

    from gatecore import __version__

    for name in NAMES:
        __import__(name)  # (bound already in a hook: `bind`)
    return json.dumps({"version": __version__, "executable": sys.executable, "python": sys.version,
                       "packages": {name: _origin(sys.modules[name]) for name in NAMES}}, sort_keys=True)


def helper_argv(module: str, *args: str) -> list[str]:
    """How the hook starts one of its `HELPERS`: as the hook itself is started, by this file's
    path, with the hook's interpreter, isolated (`-I`)."""
    if module not in HELPERS:
        raise ValueError(f"{module} is not a helper the hook starts")
    return [sys.executable, "-I", os.path.join(ROOT, "server", "launch.py"), module, *args]


def _quiet_collector() -> None:
    """The hook lives for one push and makes no reference cycles of its own: the collector is off
    while its module is imported (`main`: some 18 collections there found only the new classes' own
    cycles, about 3 ms of a hook's CPU), what the imports made is never collected (`gc.freeze`), and
    the collector runs a hundredth as often. (A walk of 50,000 commits makes millions of small
    tuples; collecting after every 700 of them scanned the young ones again and again, some 5-10% of
    the walk.) Cycles are still collected, only later."""
    import gc

    gc.freeze()
    gc.set_threshold(70_000, 10, 100)
    gc.enable()


def main() -> int:
    args = sys.argv[1:]
    try:
        bind()
    except ImportError as exc:
        sys.stderr.write(f"gate: push rejected: GATE-CONFIG-INSTALL: {exc}\n")
        return 2
    if args == ["--where"]:
        import json

        sys.stdout.write(json.dumps(where(), sort_keys=True) + "\n")
        return 0
    if not args or args[0] not in (*MODULES, *HELPERS):
        sys.stderr.write(f"usage: python -I {__file__} {{{','.join(MODULES)}}} --gate-dir DIR | --where\n")
        return 2
    module = args.pop(0)
    sys.argv[1:] = args
    import gc

    gc.disable()  # until the module is imported (`_quiet_collector`)
    __import__(module)
    _quiet_collector()
    if module in HELPERS:
        sys.stdout.buffer.write(b"identity " + identity().encode("utf-8", "surrogateescape") + b"\n")
        sys.stdout.buffer.flush()
    code: int = sys.modules[module].main()
    return code


if __name__ == "__main__":
    sys.exit(main())
