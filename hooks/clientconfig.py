"""Where the client hooks find the policy and the keyring, and how they read them.

The policy is the server's schema (gatecore.policyfile), kept in the repository as
`.gate/policy.toml`; the keyring is `.gate/keyring.toml` (public keys only). Both are read
from a commit, not from the work tree, so that an edit of the policy is checked against
the policy as committed before it (docs/client.md, "Where the policy lives"):

* pre-commit stage: the copy in HEAD;
* pre-push stage: the copy in the remote's HEAD (`refs/remotes/<remote>/HEAD`), else in
  the remote-tracking ref of a pushed branch, else in HEAD;
* when none of those commits has the file (the commit that adds it), the work tree copy;
* `--policy PATH` / `--keyring PATH` read that file instead.

Anything missing or invalid is a configuration error (exit 2): GATE-CONFIG-POLICY,
GATE-CONFIG-KEYRING.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gatecore.errors import ConfigError
from gatecore.gitrepo import MODE_BLOB, MODE_EXEC, MODE_TREE, GitRepo
from gatecore.keys import Keyring
from gatecore.policy import Policy

from .common import rev_commit

POLICY_FILE = ".gate/policy.toml"
KEYRING_FILE = ".gate/keyring.toml"


@dataclass(frozen=True, slots=True)
class Found:
    data: bytes
    origin: str  # "HEAD:.gate/policy.toml", or a file path


def committed_file(repo: GitRepo, commit: str, path: str, code: str, cap: int) -> bytes | None:
    """The bytes of `path` in `commit`'s tree; None if absent; ConfigError if not a small regular file."""
    parts = path.split("/")
    tree = repo.commit(commit).tree_id
    where = f"{commit[:12]}:{path}"
    for name in parts[:-1]:
        entry = repo.tree_entries(tree).get(name.encode())
        if entry is None:
            return None
        if entry[0] != MODE_TREE:
            raise ConfigError(code, f"{where}: {name} is not a directory")
        tree = entry[1]
    entry = repo.tree_entries(tree).get(parts[-1].encode())
    if entry is None:
        return None
    if entry[0] not in (MODE_BLOB, MODE_EXEC):
        raise ConfigError(code, f"{where} is not a regular file")
    if repo.object_size(entry[1]) > cap:
        raise ConfigError(code, f"{where} is larger than {cap} bytes")
    return repo.blob(entry[1])


def find(repo: GitRepo, path: str, revisions: Sequence[str], explicit: Path | None, *, code: str,
         what: str, cap: int) -> Found:
    """The configuration file: `explicit`, else the first of `revisions` holding `path`, else the work tree."""
    from gatecore.configcache import read_capped

    if explicit is not None:
        return Found(read_capped(explicit, code, what, cap), str(explicit))
    tried = []
    for rev in revisions:
        commit = rev_commit(rev)
        if commit is None:
            continue
        tried.append(rev)
        data = committed_file(repo, commit, path, code, cap)
        if data is not None:
            return Found(data, f"{rev}:{path}")
    if repo.workdir is not None:
        file = Path(repo.workdir) / path
        if file.exists() or file.is_symlink():
            return Found(read_capped(file, code, what, cap), str(file))
    where = ", ".join(tried) if tried else "no commit"
    raise ConfigError(code, f"no {what}: {path} is in neither {where} nor the work tree; "
                            f"commit one (docs/client.md) or pass --{what} PATH")


def load_policy(repo: GitRepo, revisions: Sequence[str], explicit: Path | None) -> tuple[Policy, str]:
    from gatecore.policy import MAX_POLICY_BYTES
    from gatecore.policyfile import validate_bytes

    found = find(repo, POLICY_FILE, revisions, explicit, code="GATE-CONFIG-POLICY", what="policy",
                 cap=MAX_POLICY_BYTES)
    plain = validate_bytes(found.data, found.origin)
    try:
        return Policy.from_plain(plain), found.origin
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GATE-CONFIG-POLICY", f"{found.origin}: validated form unusable: {exc}") from None


def load_keyring(repo: GitRepo, revisions: Sequence[str], explicit: Path | None) -> Keyring:
    """The receipt hook's keyring. One read from the repository holds public keys only."""
    from gatecore.keyfiles import validate_keyring_bytes
    from gatecore.keys import MAX_KEYRING_BYTES, keyring_from_plain

    found = find(repo, KEYRING_FILE, revisions, explicit, code="GATE-CONFIG-KEYRING", what="keyring",
                 cap=MAX_KEYRING_BYTES)
    plain = validate_keyring_bytes(found.data, found.origin)
    try:
        ring = keyring_from_plain(plain)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GATE-CONFIG-KEYRING", f"{found.origin}: validated form unusable: {exc}") from None
    secret = sorted(k.id for k in ring.values() if k.algorithm != "ed25519")
    if explicit is None and secret:
        # Everyone who can read the repository could forge receipts with these.
        raise ConfigError("GATE-CONFIG-KEYRING",
                          f"{found.origin} holds hmac-sha256 secrets ({', '.join(secret)}); a keyring committed "
                          f"to the repository holds ed25519 public keys only (pass --keyring for a private file)")
    return ring
