"""Can the hosting account run this environment, and the Python it was made from? (the venv trap)

The hook runs as the account that owns the repository, with the interpreter the installer
ran. An interpreter under a private home (pyenv in a 0700 /root, a venv made from one, a
`--copies` venv whose libpython stays there) runs for root and fails for the account with
`exec: ... Permission denied` on every push. So before it suggests running as the owner, the
installer checks that the owner can reach the interpreter through every symlink on the way,
execute it, and read its library and push-gate's files: from the permission bits as the kernel
reads them, and, when it runs as root, by running the interpreter as the owner (what the kernel
and the loader say). `gate server doctor` names the directory that blocks the way. The fix
names a Python the account can run (the system's, not `python3` from a private home) to make
the environment from.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

#: Where the docs recommend a dedicated environment (docs/servers.md).
RECOMMENDED = "/opt/push-gate"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
#: The file the hook runs by its path (`server/launch.py`): the account that runs the hook must read it.
LAUNCH = Path(__file__).resolve().with_name("launch.py")
#: Where a Python outside any private home usually is, first to last (the distribution's, then a local build).
SYSTEM_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python3.13", "/usr/bin/python3.12",
                  "/usr/bin/python3.11")
MIN_PYTHON = (3, 11)


def _groups(uid: int) -> tuple[str, int, set[int]]:
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return str(uid), uid, set()
    return entry.pw_name, entry.pw_gid, set(os.getgrouplist(entry.pw_name, entry.pw_gid))


def _allowed(info: os.stat_result, uid: int, gids: set[int], want: int) -> bool:
    if uid == 0:
        return True
    shift = 6 if info.st_uid == uid else 3 if info.st_gid in gids else 0
    return ((info.st_mode >> shift) & want) == want


def _describe(path: str, info: os.stat_result) -> str:
    try:
        owner = pwd.getpwuid(info.st_uid).pw_name
    except KeyError:
        owner = str(info.st_uid)
    return f"{path} (mode {stat.S_IMODE(info.st_mode):04o}, owner {owner})"


def hops(path: str | Path) -> list[str]:
    """The path as written, every symlink it leads through (the kernel must reach each one), and
    its resolved target."""
    found = [os.path.abspath(path)]
    for _ in range(40):  # the kernel's own limit on a chain of links
        if not os.path.islink(found[-1]):
            break
        found.append(os.path.normpath(os.path.join(os.path.dirname(found[-1]), os.readlink(found[-1]))))
    found.append(os.path.realpath(path))
    return list(dict.fromkeys(found))


def blocked(path: str | Path, uid: int, want: int = os.R_OK) -> str | None:
    """Why account `uid` cannot reach `path` for `want` (os.R_OK or os.X_OK), or None: the
    first directory it cannot search, or the file it cannot read or execute. Checked along the
    path as written, along every symlink it leads through, and along its resolved target."""
    name, _, gids = _groups(uid)
    unreachable = None  # a link whose target cannot be reached: the next hop says which directory is in the way
    for candidate in hops(path):
        parts = Path(candidate).parts
        for i in range(1, len(parts)):
            directory = os.path.join(*parts[:i])
            try:
                info = os.stat(directory)
            except OSError as exc:
                return f"{directory}: {exc.strerror}"
            if not _allowed(info, uid, gids, os.X_OK):
                return f"{_describe(directory, info)} is not searchable by {name}"
        try:
            info = os.stat(candidate)
        except OSError as exc:
            unreachable = unreachable or f"{candidate}: {exc.strerror}"
            continue
        if not _allowed(info, uid, gids, want):
            return f"{_describe(candidate, info)} is not {'executable' if want == os.X_OK else 'readable'} by {name}"
    return unreachable


def _own_library() -> list[str]:
    """The running interpreter's own files besides its executable: the standard library and,
    for a shared build (pyenv's), libpython, which a `--copies` venv still loads from there."""
    import sysconfig

    found = [os.__file__]
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
        if libdir and soname and os.path.exists(os.path.join(libdir, soname)):
            found.append(os.path.join(libdir, soname))
    return found


def run_as(uid: int, argv: list[str]) -> str | None:
    """Run `argv` as account `uid` (only root can): None when it ran, else what the kernel, the
    loader or the program said."""
    _, gid, gids = _groups(uid)
    try:
        proc = subprocess.run(argv, user=uid, group=gid, extra_groups=sorted(gids), cwd="/", capture_output=True,
                              text=True, check=False, timeout=120, stdin=subprocess.DEVNULL,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    except OSError as exc:
        return f"{argv[0]}: {exc.strerror}"
    except subprocess.TimeoutExpired:
        return f"{argv[0]} did not finish in 120 s"
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or [f"{argv[0]}: exit {proc.returncode}"])[-1]
    return None


def environment_problem(uid: int, executable: str) -> str | None:
    """Why account `uid` could not run the hook with `executable` and this push-gate, or None:
    the interpreter through every symlink, its own library, push-gate's files; and, run as
    root, the interpreter itself started as the account."""

    checks = [(executable, os.X_OK), (str(LAUNCH), os.R_OK), (str(PACKAGE_ROOT / "gatecore" / "__init__.py"), os.R_OK)]
    if os.path.realpath(executable) == os.path.realpath(sys.executable):
        checks += [(path, os.R_OK) for path in _own_library()]  # a venv's base Python
    for path, want in checks:
        why = blocked(path, uid, want)
        if why is not None:
            return why
    if os.geteuid() == 0 and uid != 0:
        return run_as(uid, [executable, "-I", str(LAUNCH), "--where"])
    return None


def python_for(uid: int) -> tuple[str, str] | None:
    """(path, version) of a Python (3.11 or newer) outside any private home that account `uid`
    can run, to make a dedicated environment from; None when there is none."""
    import shutil

    for candidate in dict.fromkeys([*SYSTEM_PYTHONS, shutil.which("python3") or SYSTEM_PYTHONS[0]]):
        if not os.path.isfile(candidate) or blocked(candidate, uid, os.X_OK) is not None:
            continue
        probe = [candidate, "-I", "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"]
        if os.geteuid() == 0 and uid != 0 and run_as(uid, probe) is not None:
            continue
        out = subprocess.run(probe, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
        version = out.stdout.strip()
        if out.returncode == 0 and tuple(int(x) for x in version.split(".")) >= MIN_PYTHON:
            return candidate, version
    return None


def fix(account: str, gate_args: list[str]) -> str:
    """What to do instead: a dedicated environment made from a Python the account can run (named,
    found on this machine), and the command again."""
    import shlex

    try:
        uid = pwd.getpwnam(account).pw_uid
    except KeyError:
        uid = os.geteuid()
    found = python_for(uid)
    clear = " --clear" if os.path.realpath(sys.prefix) == os.path.realpath(RECOMMENDED) else ""
    if found is not None:
        python, version = found
        make = (f"make it from a Python {account} can run ({python}, Python {version}; not a python3 under a "
                f"private home such as pyenv's): {python} -m venv{clear} {RECOMMENDED}")
    else:
        make = (f"no Python {'.'.join(map(str, MIN_PYTHON))}+ that {account} can run was found: install one outside "
                f"any private home (apt-get install python3 python3-venv) and make it from that: "
                f"/usr/bin/python3 -m venv{clear} {RECOMMENDED}")
    command = shlex.join(["runuser", "-u", account, "--", f"{RECOMMENDED}/bin/gate", *gate_args])
    return (f"put push-gate in a dedicated environment {account} can run: {make}, then {RECOMMENDED}/bin/pip install "
            f"push-gate from a wheel, a clone or a git URL (docs/servers.md), then run: {command}")
