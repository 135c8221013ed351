"""Reading the hook's environment (gatecore.adapters.environment) from plain dicts: who pushed,
over which transport, from where, and a signed push's certificate.

The dicts are what the servers really put there (tests/servers/ dumps them from real pushes):
git-http-backend under Apache passes CGI variables and, after authentication, REMOTE_USER;
git daemon exports REMOTE_ADDR and REMOTE_PORT; sshd sets SSH_CONNECTION and SSH_CLIENT.
"""

from __future__ import annotations

import pwd

import pytest

from gatecore.adapters.environment import PushCert, channel, client_address, push_cert, read_hook_env
from gatecore.errors import GateError

ME = pwd.getpwuid(__import__("os").geteuid()).pw_name

#: What git-http-backend under Apache passed to the hook (trimmed), as dumped from a real push.
CGI = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST", "REMOTE_ADDR": "127.0.0.1",
       "REMOTE_PORT": "46960", "SERVER_SOFTWARE": "Apache/2.4", "CONTENT_TYPE": "application/x-git-receive-pack-request",
       "PATH_INFO": "/r.git/git-receive-pack", "GIT_PROJECT_ROOT": "/srv/git", "GIT_HTTP_EXPORT_ALL": "",
       "GIT_COMMITTER_NAME": "anonymous", "GIT_COMMITTER_EMAIL": "anonymous@http.127.0.0.1", "GIT_DIR": "."}
CGI_AUTH = {**CGI, "AUTH_TYPE": "Basic", "REMOTE_USER": "alice", "GIT_COMMITTER_NAME": "alice"}
DAEMON = {"REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "44626", "GIT_DIR": "."}
SSH = {"SSH_CONNECTION": "192.0.2.7 51234 192.0.2.1 22", "SSH_CLIENT": "192.0.2.7 51234 22", "GIT_DIR": "."}
LOCAL = {"GIT_DIR": "."}


@pytest.mark.parametrize("env,pusher,source,transport,address", [
    (CGI_AUTH, "alice", "REMOTE_USER", "http", "127.0.0.1"),
    (CGI, "anonymous", "anonymous", "http", "127.0.0.1"),
    ({**CGI, "REMOTE_USER": "  "}, "anonymous", "anonymous", "http", "127.0.0.1"),  # blank is nobody
    ({k: v for k, v in CGI.items() if k != "GATEWAY_INTERFACE"}, "anonymous", "anonymous", "http", "127.0.0.1"),
    (DAEMON, "anonymous", "anonymous", "git-daemon", "127.0.0.1"),
    ({"REMOTE_ADDR": "[::1]", "REMOTE_PORT": "5"}, "anonymous", "anonymous", "git-daemon", "[::1]"),
    (SSH, ME, "account", "ssh", "192.0.2.7"),
    ({"SSH_CLIENT": "192.0.2.8 1 22"}, ME, "account", "ssh", "192.0.2.8"),
    (LOCAL, ME, "account", "local", None),
    # A git daemon started from an ssh login inherits SSH_CONNECTION: REMOTE_ADDR (which sshd never
    # sets) makes it the daemon's anonymous push, not the daemon account's (a review found this).
    ({**SSH, "REMOTE_ADDR": "10.0.0.1"}, "anonymous", "anonymous", "git-daemon", "10.0.0.1"),
])
def test_plain_git_pusher_transport_and_address(env: dict[str, str], pusher: str, source: str, transport: str,
                                                address: str | None) -> None:
    got = read_hook_env("auto", env)
    assert (got.platform, got.pusher, got.pusher_source) == ("git", pusher, source)
    assert (got.transport, got.client_address) == (transport, address)
    assert got.push_cert is None


@pytest.mark.parametrize("extra,platform,pusher,source", [
    ({"GL_USER": "bob"}, "gitolite", "bob", "GL_USER"),
    ({"GITHUB_USER_LOGIN": "octo", "GITHUB_VIA": "git"}, "github", "octo", "GITHUB_USER_LOGIN"),
    ({"GL_USERNAME": "carol", "GL_ID": "user-3", "GL_PROTOCOL": "http"}, "gitlab", "carol", "GL_USERNAME"),
    ({"GITEA_PUSHER_NAME": "dave", "GITEA_PUSHER_ID": "4"}, "gitea", "dave", "GITEA_PUSHER_NAME"),
])
@pytest.mark.parametrize("base", [CGI, DAEMON, SSH], ids=["cgi", "daemon", "ssh"])
def test_platform_variables_win_over_anonymous(base: dict[str, str], extra: dict[str, str], platform: str,
                                               pusher: str, source: str) -> None:
    got = read_hook_env("auto", {**base, **extra})
    assert (got.platform, got.pusher, got.pusher_source) == (platform, pusher, source)


def test_a_platform_without_its_variable_still_fails_closed_over_anonymous_transports() -> None:
    for base in (CGI, DAEMON):
        with pytest.raises(GateError) as exc:
            read_hook_env("gitlab", base)
        assert exc.value.code == "GATE-INPUT-PUSHER"


def test_transport_is_the_platforms_own_protocol_variable_when_it_has_one() -> None:
    assert read_hook_env("auto", {"GL_USERNAME": "c", "GL_ID": "user-3", "GL_PROTOCOL": "web"}).transport == "web"
    assert read_hook_env("auto", {**SSH, "GL_USERNAME": "c", "GL_PROTOCOL": "ssh"}).transport == "ssh"


@pytest.mark.parametrize("env", [DAEMON, SSH, LOCAL, {**SSH, "REMOTE_USER": "alice"}, {"GL_USER": "bob"}])
def test_installed_for_git_daemon_every_pusher_is_anonymous(env: dict[str, str]) -> None:
    """`--platform git-daemon`: git daemon authenticates nobody, and under inetd it may pass no
    REMOTE_ADDR at all; whatever the environment says, the pusher is anonymous."""
    got = read_hook_env("git-daemon", env)
    assert (got.platform, got.pusher, got.pusher_source, got.transport) == (
        "git-daemon", "anonymous", "git-daemon", "git-daemon")


def test_channel_and_address_helpers() -> None:
    assert [channel(e) for e in (CGI, DAEMON, SSH, LOCAL)] == ["http", "git-daemon", "ssh", "local"]
    assert client_address({"SSH_CONNECTION": ""}) is None
    assert client_address({"REMOTE_ADDR": "x" * 1000}) == "x" * 256


def test_push_certificate_fields() -> None:
    env = {**DAEMON, "GIT_PUSH_CERT": "c37abe00370315cdf3990034d8a4f41baf01ee77", "GIT_PUSH_CERT_KEY": "",
           "GIT_PUSH_CERT_NONCE": "1796352144-e63d", "GIT_PUSH_CERT_NONCE_STATUS": "OK",
           "GIT_PUSH_CERT_SIGNER": "", "GIT_PUSH_CERT_STATUS": "N"}
    got = read_hook_env("auto", env)
    assert got.push_cert == PushCert("c37abe00370315cdf3990034d8a4f41baf01ee77", None, None, "N", "OK")
    signed = push_cert({**env, "GIT_PUSH_CERT_SIGNER": "alice@example.com", "GIT_PUSH_CERT_STATUS": "G",
                        "GIT_PUSH_CERT_KEY": "SHA256:abc"})
    assert signed is not None
    assert signed.audit() == {"cert": "c37abe00370315cdf3990034d8a4f41baf01ee77", "signer": "alice@example.com",
                              "key": "SHA256:abc", "status": "G", "nonce_status": "OK"}
    # A signed push never makes anyone the pusher: it is for the audit log only.
    assert got.pusher == "anonymous"
    assert push_cert({"GIT_PUSH_CERT_STATUS": "G"}) is None  # no certificate blob: no certificate
