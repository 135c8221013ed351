"""gitolite: the gate as a gitolite repo-specific hook, the one place gitolite leaves alone.

gitolite owns every repository's `hooks/` directory. `gitolite setup` and
`gitolite setup --hooks-only` symlink `LOCAL_CODE/hooks/common/*` over the repositories'
hooks, and the `repo-specific-hooks` trigger (run by `gitolite compile`'s POST_COMPILE and
by POST_CREATE for new and wild repositories) replaces `hooks/pre-receive` with its
multi-hook driver: a gate written straight into `hooks/pre-receive` is silently removed.

What survives all of them is a repo-specific hook: a wrapper in
`LOCAL_CODE/hooks/repo-specific/gate`, named by `option hook.pre-receive = gate` in
gitolite.conf. gitolite then links it into each repository as `hooks/pre-receive.hNN-gate`
and its driver (`hooks/pre-receive`) runs it with the push's input, rejecting the push when
it fails. The wrapper is shared by every repository and finds the repository's own
installation in `GIT_DIR/gate/` (the driver runs hooks in the repository directory); a
repository without one is refused (GATE-CONFIG-INSTALL), so a new or wild repository is
never pushed to unchecked.

Everything here runs as the hosting account (gitolite reads `~/.gitolite.rc`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from gatecore.errors import GateError
from gatecore.valueclass import valueclass

HOOK_NAME = "gate"  # option hook.pre-receive = gate
LANDED_NAME = "gate-landed"  # option hook.post-receive = gate-landed
#: What identifies gitolite's multi-hook driver (its text; `hooks/pre-receive` links to it).
DRIVER_SIGNATURE = "for h in $0.*"
RC_HINT = ('in ~/.gitolite.rc set LOCAL_CODE => "$ENV{HOME}/local" and enable \'repo-specific-hooks\' '
           "(docs/servers.md, gitolite)")


@valueclass(frozen=True, slots=True)
class Site:
    local_code: Path

    @property
    def hooks_dir(self) -> Path:
        return self.local_code / "hooks" / "repo-specific"

    @property
    def hook(self) -> Path:
        return self.hooks_dir / HOOK_NAME

    @property
    def landed(self) -> Path:
        return self.hooks_dir / LANDED_NAME


def _query_rc(key: str) -> str | None:
    exe = shutil.which("gitolite")
    if exe is None:
        raise GateError("GATE-CONFIG-INSTALL", "--platform gitolite but no gitolite command on PATH "
                                               "(run the installer as the gitolite hosting account)")
    got = subprocess.run([exe, "query-rc", key], capture_output=True, text=True, check=False)
    value = got.stdout.strip()
    return value if got.returncode == 0 and value else None


def site() -> Site:
    """The gitolite site of the running account, checked: LOCAL_CODE set, repo-specific hooks enabled."""
    local = _query_rc("LOCAL_CODE")
    if local is None:
        raise GateError("GATE-CONFIG-INSTALL", f"gitolite's LOCAL_CODE is not set: {RC_HINT}")
    enabled = _query_rc("ENABLE") or ""
    if "repo-specific-hooks" not in enabled.split():
        raise GateError("GATE-CONFIG-INSTALL", f"gitolite's repo-specific-hooks are not enabled: {RC_HINT}")
    return Site(Path(local))


def is_driver(path: Path) -> bool:
    try:
        return DRIVER_SIGNATURE in path.read_text("utf-8", errors="replace")
    except OSError:
        return False


def entries(git_dir: Path, hook: str, wrapper: Path) -> list[Path]:
    """The repository's `hooks/<hook>.hNN-*` links that resolve to the wrapper."""
    target = os.path.realpath(wrapper)
    return sorted(p for p in (git_dir / "hooks").glob(f"{hook}.h*")
                  if os.path.realpath(p) == target)


def active(git_dir: Path, wrapper: Path, hook: str = "pre-receive") -> tuple[bool, str]:
    """Does gitolite run the wrapper for this repository? (what doctor and install report)"""
    main = git_dir / "hooks" / hook
    option = (f"'option hook.{hook} = {wrapper.name}' for the repository (or its group) in gitolite.conf "
              "and push gitolite-admin (or run gitolite setup)")
    if not is_driver(main):
        target = os.path.realpath(main)
        if main.is_symlink() and f"{os.sep}hooks{os.sep}common{os.sep}" in target:
            return False, (f"{main} is gitolite's common hook {target}, not its multi-hook driver: the gate does "
                           f"not run; remove {target} and run gitolite setup (its POST_COMPILE trigger links the "
                           "driver back), or keep it as a repo-specific hook instead")
        return False, f"{main} is not gitolite's multi-hook driver: the gate does not run; add {option}"
    found = entries(git_dir, hook, wrapper)
    if not found:
        return False, f"no {hook}.hNN-{wrapper.name} link in {git_dir / 'hooks'}: add {option}"
    if not all(os.access(p, os.X_OK) for p in found):
        return False, f"{found[0]} is not executable: gitolite's driver skips it"
    return True, f"gitolite runs the gate: {found[0]} -> {wrapper}"
