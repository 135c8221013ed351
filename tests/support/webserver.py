"""Real git servers on 127.0.0.1 run by a hosting account: Apache with git-http-backend.

The tests run as root, as an admin would set a server up; the servers drop to their hosting
account (Apache's `User www-data`, `git daemon` under `runuser -u gitdaemon`), and so the
repository and the gate's installation belong to that account and are made by it
(`as_account`). pytest's own temporary directories are private to root (mode 0700), so what a
hosting account reads lives in a `HostedArea` below the system temporary directory instead.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .hosting import as_account, gate_cmd
from .net import free_port, wait_for_port

APACHE = "/usr/sbin/apache2"
APACHE_MODULES = Path("/usr/lib/apache2/modules")
HTTP_BACKEND = Path("/usr/lib/git-core/git-http-backend")
WEB_ACCOUNT = "www-data"  # Debian's web server account
DAEMON_ACCOUNT = "gitdaemon"  # the account Debian's git-daemon-run package runs git daemon as

#: What the generated Apache configuration loads (mod_unixd, mod_log_config are built in).
MODULES = ("mpm_prefork", "authz_core", "authn_core", "authn_file", "auth_basic", "authz_user", "alias", "env",
           "cgi")


def missing_for_servers(*needs: str) -> str | None:
    """Why these real-server tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "real-server tests run as root (the servers drop to their hosting accounts)"
    if not shutil.which("runuser"):
        return "runuser is missing"
    if "apache" in needs:
        if not os.access(APACHE, os.X_OK):
            return f"{APACHE} is missing (apt-get install apache2)"
        absent = [m for m in MODULES if not (APACHE_MODULES / f"mod_{m}.so").exists()]
        if absent:
            return f"apache modules missing from {APACHE_MODULES}: {', '.join(absent)}"
        if not os.access(HTTP_BACKEND, os.X_OK):
            return f"{HTTP_BACKEND} is missing"
    if "git-daemon" in needs:
        daemon = Path(subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip(),
                      "git-daemon")
        if not os.access(daemon, os.X_OK):
            return f"{daemon} is missing (Debian's git package has it)"
    for account in (WEB_ACCOUNT,) if "apache" in needs else ():
        try:
            pwd.getpwnam(account)
        except KeyError:
            return f"no {account} account"
    if "git-daemon" in needs and not shutil.which("useradd"):
        try:
            pwd.getpwnam(DAEMON_ACCOUNT)
        except KeyError:
            return f"no {DAEMON_ACCOUNT} account and no useradd to make one"
    return None


def ensure_system_account(name: str) -> None:
    """A system account without login or home, made once (as an admin would for git daemon)."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "--user-group", name], check=True, capture_output=True)


def gate_as(account: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`runuser -u ACCOUNT -- python -I -m gatecore.cli ARGS`: the gate's CLI as the hosting account,
    with an interpreter every account can run (support.hosting.server_python)."""
    return as_account(account, *gate_cmd(), *args, check=check)


class HostedArea:
    """A directory the hosting account can reach (pytest's tmp is root's only), removed by `close`."""

    def __init__(self, prefix: str) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=prefix))
        self.path.chmod(0o755)

    def owned_dir(self, name: str, account: str) -> Path:
        """A directory below the area owned by `account`."""
        d = self.path / name
        d.mkdir()
        info = pwd.getpwnam(account)
        os.chown(d, info.pw_uid, info.pw_gid)
        return d

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def htpasswd_line(user: str, password: str) -> str:
    """One line of an htpasswd file: bcrypt by `htpasswd -B` when apache2-utils is there, else `{SHA}`."""
    if shutil.which("htpasswd"):
        out = subprocess.run(["htpasswd", "-n", "-b", "-B", "-C", "5", user, password], capture_output=True,
                             text=True, check=True)
        return out.stdout.strip()
    digest = base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()  # htpasswd's {SHA} form
    return f"{user}:{{SHA}}{digest}"


APACHE_CONF = """\
# Generated for the real-server tests: the documented setup (docs/servers.md), on 127.0.0.1.
ServerRoot "{root}"
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile "{root}/httpd.pid"
DefaultRuntimeDir "{root}"
ErrorLog "{root}/error.log"
LogLevel warn
LogFormat "%h %u \\"%r\\" %>s" short
CustomLog "{root}/access.log" short
{modules}
User {account}
Group {group}
DocumentRoot "{root}/htdocs"

SetEnv GIT_PROJECT_ROOT {projects}
SetEnv GIT_HTTP_EXPORT_ALL
ScriptAlias /git/ {backend}/
ScriptAlias /anon/ {backend}/

<Location "/git/">
    AuthType Basic
    AuthName "git"
    AuthBasicProvider file
    AuthUserFile "{root}/htpasswd"
    Require valid-user
</Location>
<Location "/anon/">
    Require all granted
</Location>
"""


@dataclass
class Apache:
    port: int
    root: Path
    projects: Path

    def url(self, repo: str, user: str | None = None, password: str | None = None) -> str:
        """The authenticated location (`/git/`) with credentials, or the anonymous one (`/anon/`)."""
        if user is None:
            return f"http://127.0.0.1:{self.port}/anon/{repo}"
        return f"http://{user}:{password}@127.0.0.1:{self.port}/git/{repo}"

    def error_log(self) -> str:
        path = self.root / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def apache(root: Path, projects: Path, users: dict[str, str], account: str = WEB_ACCOUNT) -> Iterator[Apache]:
    """Apache (prefork, mod_cgi) serving `projects` through git-http-backend: `/git/` behind basic
    auth with `users`, `/anon/` open. Started as root, its children run as `account`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "htdocs").mkdir(exist_ok=True)
    (root / "htpasswd").write_text("".join(htpasswd_line(u, p) + "\n" for u, p in users.items()))
    (root / "htpasswd").chmod(0o644)
    port = free_port()
    modules = "\n".join(f"LoadModule {m}_module {APACHE_MODULES}/mod_{m}.so" for m in MODULES)
    group = pwd.getpwnam(account).pw_gid
    conf = root / "httpd.conf"
    conf.write_text(APACHE_CONF.format(root=root, port=port, modules=modules, account=account, group=f"#{group}",
                                       projects=projects, backend=HTTP_BACKEND))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    check = subprocess.run([APACHE, "-t", "-f", str(conf)], env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    with (root / "stderr.log").open("wb") as log:
        # Its own session: at shutdown Apache signals its whole process group (SIGTERM), which
        # would otherwise be pytest's.
        proc = subprocess.Popen([APACHE, "-f", str(conf), "-DFOREGROUND"], env=env, stdout=log, stderr=log,
                                start_new_session=True)
    try:
        try:
            wait_for_port(port, proc, root / "stderr.log")
        except AssertionError as exc:
            raise AssertionError(f"{exc} {Apache(port, root, projects).error_log()}") from None
        yield Apache(port, root, projects)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
