"""SSH keys as the tests make them: `ssh-keygen` itself, one way, in one place.

`ssh_key(path)` writes a key pair without a passphrase (`path` and `path.pub`) and returns the
public key line; `needs_ssh_keygen` skips a test (or a module, as `pytestmark`) where
`ssh-keygen` is not installed.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")

ED25519 = ("-t", "ed25519")


def ssh_key(path: Path, comment: str | None = None, kind: Sequence[str] = ED25519) -> str:
    """A new key pair at `path` (private) and `path.pub`, no passphrase; the public key line
    (`ssh-ed25519 AAAA... comment`). `kind`: ssh-keygen's type and size options."""
    args = ["ssh-keygen", "-q", *kind, "-N", "", *(() if comment is None else ("-C", comment)), "-f", str(path)]
    out = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, f"ssh-keygen {' '.join(args[1:])}: {out.stderr}"
    return public_key(path)


def public_key(path: Path) -> str:
    """The public key line of the pair at `path` (`path.pub`, stripped)."""
    return Path(f"{path}.pub").read_text().strip()
