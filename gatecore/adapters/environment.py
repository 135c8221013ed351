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
| plain git over http | `REMOTE_USER` | set by the web server after authentication |
| plain git over http, no `REMOTE_USER` | `anonymous` | a CGI request (`GATEWAY_INTERFACE`) nobody authenticated |
| `git daemon` | `anonymous` | `REMOTE_ADDR` without `SSH_CONNECTION` or CGI variables |
| plain git over ssh / file | the account running the hook | |

The transport (`http`, `ssh`, `git-daemon`, `local`, or the platform's own `GL_PROTOCOL`),
the client's address and a signed push's certificate (`GIT_PUSH_CERT_*`) are read for the
audit log only: no decision depends on them, except that http and git-daemon pushes nobody
authenticated are anonymous.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import GateError
from ..valueclass import valueclass

PLATFORMS = ("auto", "git", "github", "gitlab", "gitea", "gitolite", "git-daemon")

#: platform -> (variable holding the pusher account, variable holding a numeric id or None)
_IDENTITY_VARS: dict[str, tuple[str, str | None]] = {
    "github": ("GITHUB_USER_LOGIN", None),
    "gitlab": ("GL_USERNAME", "GL_ID"),
    "gitea": ("GITEA_PUSHER_NAME", "GITEA_PUSHER_ID"),
    "gitolite": ("GL_USER", None),
}


#: Informational values (audit only) are cut to this many characters.
MAX_INFO = 256


@valueclass(frozen=True, slots=True)
class PushCert:
    """A signed push's certificate as receive-pack describes it (`git push --signed` to a server
    with `receive.certNonceSeed`): informational, for the audit log."""

    cert: str  # GIT_PUSH_CERT: the certificate's blob id
    signer: str | None  # GIT_PUSH_CERT_SIGNER
    key: str | None  # GIT_PUSH_CERT_KEY
    status: str | None  # GIT_PUSH_CERT_STATUS: G good, B bad, U unknown validity, N no signature/key, E error...
    nonce_status: str | None  # GIT_PUSH_CERT_NONCE_STATUS: OK, BAD, MISSING, UNSOLICITED, SLOP

    def audit(self) -> dict[str, str | None]:
        return {"cert": self.cert, "signer": self.signer, "key": self.key, "status": self.status,
                "nonce_status": self.nonce_status}


@valueclass(frozen=True, slots=True)
class HookEnv:
    platform: str
    pusher: str
    pusher_source: str
    via: str | None
    git_dir: str  # the repository the hook opens (GIT_DIR; the quarantine comes with the environment)
    quarantine: str | None = None  # GIT_QUARANTINE_PATH: where this push's objects wait
    transport: str = "local"  # http | ssh | git-daemon | local | the platform's GL_PROTOCOL (audit only)
    client_address: str | None = None  # REMOTE_ADDR, or the first field of SSH_CONNECTION / SSH_CLIENT
    push_cert: PushCert | None = None
    namespace: str | None = None  # GIT_NAMESPACE: receive-pack writes the refs under refs/namespaces/<it>/

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


def _info(env: Mapping[str, str], var: str) -> str | None:
    value = env.get(var, "").strip()
    return value[:MAX_INFO] or None


def channel(env: Mapping[str, str]) -> str:
    """How the push reached receive-pack, from what the serving process put in the environment:
    `http` (a CGI request: git-http-backend behind a web server), `ssh` (sshd), `git-daemon`
    (it exports the client's REMOTE_ADDR, nothing else does) or `local`."""
    if env.get("GATEWAY_INTERFACE") is not None or env.get("REQUEST_METHOD") is not None:
        return "http"
    # REMOTE_ADDR before SSH_*: a git daemon started from an ssh login inherits SSH_CONNECTION,
    # and sshd never sets REMOTE_ADDR (a client cannot send it unless sshd's AcceptEnv lets it,
    # which would let it send REMOTE_USER too: docs/servers.md). Reading a push as the daemon's
    # makes its pusher anonymous, never someone trusted.
    if env.get("REMOTE_ADDR") is not None:
        return "git-daemon"
    if env.get("SSH_CONNECTION") is not None or env.get("SSH_CLIENT") is not None:
        return "ssh"
    return "local"


def transport(env: Mapping[str, str]) -> str:
    """The transport for the audit log: the platform's own protocol variable, else `channel`."""
    return _info(env, "GL_PROTOCOL") or channel(env)


def client_address(env: Mapping[str, str]) -> str | None:
    """The client's address: REMOTE_ADDR (web servers, git daemon), else the first field of
    SSH_CONNECTION or SSH_CLIENT (sshd)."""
    remote = _info(env, "REMOTE_ADDR")
    if remote:
        return remote
    for var in ("SSH_CONNECTION", "SSH_CLIENT"):
        fields = env.get(var, "").split()
        if fields:
            return fields[0][:MAX_INFO]
    return None


def push_cert(env: Mapping[str, str]) -> PushCert | None:
    cert = _info(env, "GIT_PUSH_CERT")
    if cert is None:
        return None
    return PushCert(cert, _info(env, "GIT_PUSH_CERT_SIGNER"), _info(env, "GIT_PUSH_CERT_KEY"),
                    _info(env, "GIT_PUSH_CERT_STATUS"), _info(env, "GIT_PUSH_CERT_NONCE_STATUS"))


def _account() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid:{os.geteuid()}"


def _anonymous() -> str:
    """The policy's name for a pusher nobody authenticated, imported only for such a push: post-receive,
    which logs the pusher, does not load the policy's module otherwise."""
    from ..configuration.policy import ANONYMOUS

    return ANONYMOUS


def pusher_identity(env: Mapping[str, str], platform: str) -> tuple[str, str]:
    """(pusher account, where it came from). Fails closed if the platform's variable is unset.

    Plain git: `REMOTE_USER` (a web server's authenticated user); else, over http or git
    daemon, which authenticate nobody, `anonymous` (the account running the hook there is
    the server's, not the pusher's); else (ssh, local) the account running the hook."""
    if platform == "git-daemon":  # installed for git daemon (inetd mode too): nobody is authenticated
        return _anonymous(), "git-daemon"
    if platform in _IDENTITY_VARS:
        var, _id_var = _IDENTITY_VARS[platform]
        value = env.get(var, "").strip()
        if not value:
            raise GateError("GATE-INPUT-PUSHER", f"platform {platform} but {var} is not set")
        return value, var
    remote = env.get("REMOTE_USER", "").strip()
    if remote:
        return remote, "REMOTE_USER"
    if channel(env) in ("http", "git-daemon"):
        return _anonymous(), "anonymous"
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
        transport="git-daemon" if resolved == "git-daemon" else transport(e),
        client_address=client_address(e), push_cert=push_cert(e), namespace=e.get("GIT_NAMESPACE") or None,
    )


def shallow_file(env: Mapping[str, str] | None = None) -> str | None:
    """The shallow list git reads instead of the repository's `shallow` file, if any:
    `GIT_SHALLOW_FILE`, which receive-pack sets for the hooks of a push that brings new shallow
    roots (receive.shallowUpdate). An empty value means no shallow list at all, as to git."""
    return (os.environ if env is None else env).get("GIT_SHALLOW_FILE")


def git_dir(env: Mapping[str, str] | None = None) -> str:
    """The repository a hook runs in: GIT_DIR, else the current directory (discovered from it)."""
    return (os.environ if env is None else env).get("GIT_DIR", ".")


def client_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variables a client hook reads: pre-commit's push refs and the pusher the server will see."""
    e = os.environ if env is None else env
    keys = ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_BRANCH",
            "PRE_COMMIT_LOCAL_BRANCH", "GATE_PUSHER")
    return {k: e[k] for k in keys if k in e}
