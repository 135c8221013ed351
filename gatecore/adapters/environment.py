"""The one module that reads the process environment.

Everything the gate needs from the environment - who pushed, on which platform, where
the quarantine is - is read here once into plain values. Push options
(`GIT_PUSH_OPTION_*`) are client-controlled and never used for identity.

Pusher identity, by platform (docs/servers.md):

| platform | variable | notes |
|---|---|---|
| GitHub Enterprise | `GITHUB_USER_LOGIN` | `GITHUB_VIA` says web/API pushes |
| GitLab | `GL_USERNAME` (`GL_ID`) | `GL_PROTOCOL`, `GL_REPOSITORY` |
| Gitea / Forgejo | `GITEA_PUSHER_NAME` (`GITEA_PUSHER_ID`) | |
| gitolite | `GL_USER` | |
| plain git over http | `REMOTE_USER` | set by the web server |
| plain git over ssh / file | the account running the hook | |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import GateError

PLATFORMS = ("auto", "git", "github", "gitlab", "gitea", "gitolite")

#: platform -> (variable holding the pusher account, variable holding a numeric id or None)
_IDENTITY_VARS: dict[str, tuple[str, str | None]] = {
    "github": ("GITHUB_USER_LOGIN", None),
    "gitlab": ("GL_USERNAME", "GL_ID"),
    "gitea": ("GITEA_PUSHER_NAME", "GITEA_PUSHER_ID"),
    "gitolite": ("GL_USER", None),
}


@dataclass(frozen=True, slots=True)
class HookEnv:
    platform: str
    pusher: str
    pusher_source: str
    via: str | None
    git_dir: str  # the repository the hook opens (GIT_DIR; the quarantine comes with the environment)
    quarantine: str | None = None  # GIT_QUARANTINE_PATH: where this push's objects wait

    @property
    def gitlab(self) -> bool:
        return self.platform == "gitlab"


def detect_platform(env: Mapping[str, str]) -> str:
    if env.get("GITHUB_USER_LOGIN") is not None or env.get("GITHUB_REPO_NAME") is not None:
        return "github"
    if env.get("GL_ID") is not None or env.get("GL_USERNAME") is not None or env.get("GL_PROTOCOL") is not None:
        return "gitlab"
    if env.get("GITEA_PUSHER_NAME") is not None or env.get("GITEA_REPO_NAME") is not None:
        return "gitea"
    if env.get("GL_USER") is not None:
        return "gitolite"
    return "git"


def _account() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid:{os.geteuid()}"


def pusher_identity(env: Mapping[str, str], platform: str) -> tuple[str, str]:
    """(pusher account, where it came from). Fails closed if the platform's variable is unset."""
    if platform in _IDENTITY_VARS:
        var, _id_var = _IDENTITY_VARS[platform]
        value = env.get(var, "").strip()
        if not value:
            raise GateError("GATE-INPUT-PUSHER", f"platform {platform} but {var} is not set")
        return value, var
    remote = env.get("REMOTE_USER", "").strip()
    if remote:
        return remote, "REMOTE_USER"
    return _account(), "account"


def read_hook_env(platform: str = "auto", env: Mapping[str, str] | None = None) -> HookEnv:
    e = os.environ if env is None else env
    resolved = detect_platform(e) if platform == "auto" else platform
    pusher, source = pusher_identity(e, resolved)
    return HookEnv(
        platform=resolved, pusher=pusher, pusher_source=source,
        via=e.get("GITHUB_VIA") or e.get("GL_PROTOCOL") or None,
        git_dir=e.get("GIT_DIR", "."),
        quarantine=e.get("GIT_QUARANTINE_PATH") or None,
    )


def git_dir(env: Mapping[str, str] | None = None) -> str:
    """The repository a hook runs in: GIT_DIR, else the current directory (discovered from it)."""
    return (os.environ if env is None else env).get("GIT_DIR", ".")


def client_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variables a client hook reads: pre-commit's push refs and the pusher the server will see."""
    e = os.environ if env is None else env
    keys = ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_BRANCH",
            "PRE_COMMIT_LOCAL_BRANCH", "GATE_PUSHER")
    return {k: e[k] for k in keys if k in e}
