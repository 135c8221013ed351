"""How the installed hooks start: `python -I .../server/launch.py MODULE --gate-dir DIR`.

The design card fixes the top-level names `gatecore`, `server` and `hooks`, and other
distributions ship `server` and `hooks` packages too. Started as `python -m
server.prereceive`, the hook would run whichever `server` comes first on the interpreter's
path, or fail. So the hook runs this file by its path (`-I`: no environment variable, no
script directory on the path) and `bind` makes the three names mean the directories next
to it before anything imports them; then MODULE's `main` runs. The `gate` command binds
the same way (`gatecore/cli.py`).

`--where` prints, as one JSON object, what the hook would run: the version, the
interpreter, the file of each package, and every other distribution in the environment that
ships one of the three names (`gate server doctor` shows it).
"""

from __future__ import annotations

import os
import sys

NAMES = ("gatecore", "server", "hooks")
MODULES = ("server.prereceive", "server.postreceive")
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
    if not args or args[0] not in MODULES:
        sys.stderr.write(f"usage: python -I {__file__} {{{','.join(MODULES)}}} --gate-dir DIR | --where\n")
        return 2
    module = args.pop(0)
    sys.argv[1:] = args
    __import__(module)
    code: int = sys.modules[module].main()
    return code


if __name__ == "__main__":
    sys.exit(main())
