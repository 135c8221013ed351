"""Can the hosting account run this environment? (issue 26 item 2: the venv trap)

The hook runs as the account that owns the repository, with the interpreter the installer
ran. An interpreter under a private home (pyenv in a 0700 /root, a venv made from one) runs
for root and fails for the account with `exec: ... Permission denied` on every push. So
before it suggests running as the owner, the installer checks, from the permission bits as
the kernel reads them, that the owner can search every directory on the way to the
interpreter (as written and with its symlinks resolved), execute it, and read push-gate's
own files; `gate server doctor` names the directory that blocks the way.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

#: Where the docs recommend a dedicated environment (docs/servers.md).
RECOMMENDED = "/opt/push-gate"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def _groups(uid: int) -> tuple[str, set[int]]:
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return str(uid), set()
    return entry.pw_name, set(os.getgrouplist(entry.pw_name, entry.pw_gid))


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


def blocked(path: str | Path, uid: int, want: int = os.R_OK) -> str | None:
    """Why account `uid` cannot reach `path` for `want` (os.R_OK or os.X_OK), or None: the
    first directory it cannot search, or the file it cannot read or execute. Checked along the
    path as written and along its resolved target."""
    name, gids = _groups(uid)
    seen: set[str] = set()
    for candidate in (os.path.abspath(path), os.path.realpath(path)):
        if candidate in seen:
            continue
        seen.add(candidate)
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
            return f"{candidate}: {exc.strerror}"
        if not _allowed(info, uid, gids, want):
            return f"{_describe(candidate, info)} is not {'executable' if want == os.X_OK else 'readable'} by {name}"
    return None


def environment_problem(uid: int, executable: str) -> str | None:
    """Why account `uid` could not run the hook with `executable` and this push-gate, or None."""
    import sys

    checks = [(executable, os.X_OK), (str(PACKAGE_ROOT / "server" / "launch.py"), os.R_OK),
              (str(PACKAGE_ROOT / "gatecore" / "__init__.py"), os.R_OK)]
    if os.path.realpath(executable) == os.path.realpath(sys.executable):
        checks.append((os.__file__, os.R_OK))  # the interpreter's own library (a venv's base Python)
    for path, want in checks:
        why = blocked(path, uid, want)
        if why is not None:
            return why
    return None


def fix(account: str, gate_args: list[str]) -> str:
    """What to do instead: a dedicated environment the account can read, and the command again."""
    import shlex

    command = shlex.join(["runuser", "-u", account, "--", f"{RECOMMENDED}/bin/gate", *gate_args])
    return (f"put push-gate in an environment {account} can read (a dedicated one: python3 -m venv {RECOMMENDED}, "
            f"then {RECOMMENDED}/bin/pip install from a wheel, a clone or a git URL: docs/servers.md), then run: "
            f"{command}")
