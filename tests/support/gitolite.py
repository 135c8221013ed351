"""gitolite3 over a real sshd on 127.0.0.1, set up the way docs/servers.md tells an admin to.

`Gitolite` creates the hosting account, runs `gitolite setup` with an admin key, turns
on LOCAL_CODE and repo-specific hooks in `~/.gitolite.rc`, and starts `sshd` on a free
loopback port with its own host key and configuration (key logins for the hosting
account only). Users push over `ssh://` with their own keys; gitolite names them by
their key file (`keydir/alice.pub` is `alice`) and hands the name to hooks as `GL_USER`.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from pathlib import Path

from .gitutil import HUMAN, git
from .hosting import account, as_account, gate_cmd
from .keygen import ssh_key
from .net import free_port, wait_for_port

USER = "gate-gitolite"
HOME = Path("/var/tmp/gate-gitolite-home")
SSHD = "/usr/sbin/sshd"


class Gitolite:
    def __init__(self, tmp: Path, users: tuple[str, ...] = ("alice", "agent-1")) -> None:
        self.tmp = tmp
        self.home = HOME
        account(USER, HOME)
        self.keys = tmp / "keys"
        self.keys.mkdir()
        for name in ("admin", *users):
            ssh_key(self.keys / name, name)
        shutil.copy(self.keys / "admin.pub", HOME / "admin.pub")
        shutil.chown(HOME / "admin.pub", USER, USER)
        self.run("gitolite", "setup", "-pk", str(HOME / "admin.pub"))
        rc = HOME / ".gitolite.rc"
        text = rc.read_text()
        text = re.sub(r"#\s*(LOCAL_CODE\s*=>\s*\"\$ENV\{HOME\}/local\",)", r"\1", text, count=1)
        text = re.sub(r"#\s*('repo-specific-hooks',)", r"\1", text, count=1)
        rc.write_text(text)
        self.users = users
        self.port = free_port()
        self._sshd = self._start_sshd()
        self.admin = tmp / "gitolite-admin"
        git(tmp, "clone", "-q", self.url("gitolite-admin"), str(self.admin), env=self.ssh_env("admin"))
        for name in users:
            shutil.copy(self.keys / f"{name}.pub", self.admin / "keydir" / f"{name}.pub")

    # --- the server ------------------------------------------------------------------------------

    def _start_sshd(self) -> subprocess.Popen[bytes]:
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
        host_key = self.tmp / "ssh_host_ed25519_key"
        ssh_key(host_key)
        config = self.tmp / "sshd_config"
        config.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nPidFile {self.tmp / 'sshd.pid'}\n"
            "AuthorizedKeysFile .ssh/authorized_keys\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin no\n"
            f"AllowUsers {USER}\nLogLevel ERROR\n")
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                                stderr=open(self.tmp / "sshd.log", "wb"))  # noqa: SIM115 - lives as long as sshd
        wait_for_port(self.port, proc, self.tmp / "sshd.log")
        return proc

    def close(self) -> None:
        self._sshd.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._sshd.wait(timeout=30)

    def run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A command as the hosting account, in its home (gitolite reads ~/.gitolite.rc)."""
        return as_account(USER, *cmd, cwd=HOME, check=check)

    def gate(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        """`gate ...` as the hosting account, with an interpreter it can run."""
        return self.run(*gate_cmd(), *args, check=check)

    def repo(self, name: str) -> Path:
        return HOME / "repositories" / f"{name}.git"

    # --- clients ---------------------------------------------------------------------------------

    def url(self, repo: str) -> str:
        return f"ssh://{USER}@127.0.0.1:{self.port}/{repo}"

    def ssh_env(self, user: str) -> dict[str, str]:
        key = self.keys / user
        return {"GIT_SSH_COMMAND": f"ssh -F /dev/null -i {key} -p {self.port} -o IdentitiesOnly=yes -o BatchMode=yes "
                                   "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"}

    def configure(self, conf: str) -> subprocess.CompletedProcess[str]:
        """Push a new conf/gitolite.conf (and the users' keys) to gitolite-admin: gitolite compiles it."""
        (self.admin / "conf" / "gitolite.conf").write_text(conf)
        git(self.admin, "add", "-A")
        git(self.admin, "commit", "-q", "--allow-empty", "-m", "conf")
        return git(self.admin, "push", "-q", "origin", "HEAD", env=self.ssh_env("admin"))

    def push(self, work: Path, user: str, *refspecs: str, identity: tuple[str, str] = HUMAN,
             repo: str = "project") -> subprocess.CompletedProcess[str]:
        return git(work, "push", "--porcelain", self.url(repo), *refspecs, check=False, identity=identity,
                   env=self.ssh_env(user))
