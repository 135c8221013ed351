"""The server-side installation: where the gate's files live for one repository.

`gate server install` creates `GIT_DIR/gate/` (outside any work tree, never in a pushed
tree) holding `config.json`, `policy.toml`, optionally `keyring.toml`, their validated
caches and `audit.log`. The hook is started with `--gate-dir` pointing there. A record
without a key written by a later version (`syslog`, `config_hook`) reads as that key's default.
"""

from __future__ import annotations

import json
import os

from gatecore.errors import GateError
from gatecore.valueclass import valueclass

TYPE_CHECKING = False  # (not typing's: post-receive imports this module and nothing of typing)
if TYPE_CHECKING:
    from gatecore.adapters.files import StrPath

CONFIG_FILE = "config.json"
POLICY_FILE = "policy.toml"
KEYRING_FILE = "keyring.toml"
ALLOWED_SIGNERS_FILE = "allowed_signers"  # ssh-keygen's format; read when the policy reads signatures
OPENPGP_KEYS_FILE = "openpgp_keys.gpg"  # a binary OpenPGP keyring that gpgv verifies OpenPGP signatures with
AUDIT_FILE = "audit.log"
CONFIG_VERSION = 1
#: Where a config-defined hook is set: the repository's own config, or the system's (every repository).
CONFIG_HOOK_SCOPES = ("repository", "system")


@valueclass(frozen=True, slots=True)
class Installation:
    """An installation record. Its paths are strings: the hooks read it, and `pathlib` stays off their start-up."""

    gate_dir: str
    platform: str
    repository_id: str
    has_keyring: bool
    chain: tuple[str, ...]
    hook: str | None = None  # the pre-receive hook file, when the platform does not place it in GIT_DIR (gitolite)
    landed: str | None = None  # the post-receive hook that logs what landed, if installed
    syslog: str | None = None  # a syslog socket (/dev/log: syslog or journald) each audit line also goes to
    config_hook: str | None = None  # "repository" or "system": git runs the gate as a config-defined hook (2.54+)

    @property
    def policy(self) -> str:
        return os.path.join(self.gate_dir, POLICY_FILE)

    @property
    def keyring(self) -> str:
        return os.path.join(self.gate_dir, KEYRING_FILE)

    @property
    def allowed_signers(self) -> str:
        return os.path.join(self.gate_dir, ALLOWED_SIGNERS_FILE)

    @property
    def openpgp_keys(self) -> str:
        return os.path.join(self.gate_dir, OPENPGP_KEYS_FILE)

    @property
    def audit_log(self) -> str:
        return os.path.join(self.gate_dir, AUDIT_FILE)

    def to_json(self) -> str:
        return json.dumps({
            "version": CONFIG_VERSION, "platform": self.platform, "repository_id": self.repository_id,
            "keyring": self.has_keyring, "chain": [str(p) for p in self.chain],
            "hook": None if self.hook is None else str(self.hook),
            "landed": None if self.landed is None else str(self.landed),
            "syslog": self.syslog, "config_hook": self.config_hook,
        }, indent=2, sort_keys=True) + "\n"


def repository_of(gate_dir: str) -> str:
    """The directory the gate directory is in (the repository), as `pathlib`'s `parent` gives it."""
    return os.path.dirname(gate_dir.rstrip("/")) or ("/" if gate_dir.startswith("/") else ".")


def read(gate_dir: StrPath) -> Installation:
    path = os.path.join(gate_dir, CONFIG_FILE)
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read())
    except FileNotFoundError:
        raise GateError("GATE-CONFIG-INSTALL", f"the gate is not installed for this repository ({path} is missing): "
                                               "run gate server install GIT_DIR (docs/servers.md)") from None
    except OSError as exc:
        raise GateError("GATE-CONFIG-INSTALL", f"cannot read {path}: {exc.strerror}") from None
    except ValueError:
        raise GateError("GATE-CONFIG-INSTALL", f"{path} is not valid JSON") from None
    if not isinstance(doc, dict) or doc.get("version") != CONFIG_VERSION:
        raise GateError("GATE-CONFIG-INSTALL", f"{path}: unknown installation version")
    platform, repo_id = doc.get("platform"), doc.get("repository_id")
    keyring, chain = doc.get("keyring"), doc.get("chain")
    hook, landed, syslog = doc.get("hook"), doc.get("landed"), doc.get("syslog")
    config_hook = doc.get("config_hook")
    if (not isinstance(platform, str) or not isinstance(repo_id, str) or not isinstance(keyring, bool)
            or not isinstance(chain, list) or not all(isinstance(c, str) for c in chain)
            or not isinstance(hook, str | None) or not isinstance(landed, str | None)
            or not isinstance(syslog, str | None) or config_hook not in (None, *CONFIG_HOOK_SCOPES)):
        raise GateError("GATE-CONFIG-INSTALL", f"{path}: malformed installation record")
    return Installation(os.fspath(gate_dir), platform, repo_id, keyring, tuple(chain), hook, landed, syslog,
                        config_hook)
