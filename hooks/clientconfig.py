"""Where the client hooks find the policy and the keyring, and how they read them.

The policy is the server's schema (gatecore.configuration.configschema), kept in the repository as
`.gate/policy.toml`; the keyring is `.gate/keyring.toml` (public keys only). Both are read
from a commit, not from the work tree, so that an edit of the policy is checked against
the policy as committed before it (docs/client.md, "Where the policy lives"):

* pre-commit stage: the copy in HEAD;
* pre-push stage: the copy in the remote's HEAD (`refs/remotes/<remote>/HEAD`), else in
  the remote-tracking ref of a pushed branch, else in HEAD;
* when none of those commits has the file (the commit that adds it), the work tree copy;
* `--policy PATH` / `--keyring PATH` read that file instead.

Anything missing or invalid is a configuration error (exit 2): a file no commit and no work
tree holds is the developer's to commit (GATE-CLIENT-NO-POLICY, GATE-CLIENT-NO-KEYRING, naming
the file); an invalid one is GATE-CONFIG-POLICY, GATE-CONFIG-KEYRING.

The policy's validated form is kept in the repository's git directory
(`gate/client-policy.toml.validated.json`, with the SHA-256 of the bytes it came from), so
that a hook validates (and imports pydantic) only when the committed policy changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from gatecore.adapters import config, files
from gatecore.configuration.policy import MAX_POLICY_BYTES, Policy
from gatecore.errors import GateError
from gatecore.git.objects import Objects, committed_blob, committed_file
from gatecore.signing.keys import MAX_KEYRING_BYTES, Keyring
from gatecore.valueclass import valueclass

from .common import ClientRepo

POLICY_FILE = ".gate/policy.toml"
KEYRING_FILE = ".gate/keyring.toml"


@valueclass(frozen=True, slots=True)
class Found:
    data: bytes
    origin: str  # "HEAD:.gate/policy.toml", or a file path


def find(repo: ClientRepo, path: str, revisions: Sequence[str], explicit: str | None, *,
         code: str, missing: str, what: str, cap: int) -> Found:
    """The configuration file: `explicit`, else the first of `revisions` holding `path`, else the work tree."""
    objects = Objects(repo)
    if explicit is not None:
        return Found(files.read_capped(explicit, code, what, cap), str(explicit))
    tried = []
    for rev in revisions:
        commit = repo.commit_of(rev)
        if commit is None:
            continue
        tried.append(rev)
        data = committed_file(objects, commit, path, code, cap)
        if data is not None:
            return Found(data, f"{rev}:{path}")
    if repo.workdir is not None:
        file = os.path.join(repo.workdir, path)
        if os.path.lexists(file):
            return Found(files.read_capped(file, code, what, cap), file)
    where = f"not in {' or '.join(tried)} nor in the work tree" if tried else \
        "not in the work tree, and nothing is committed yet"
    raise GateError(missing, f"commit {path} (docs/client.md): the client hooks read the {what} from it, and it "
                             f"is {where}")


def load_policy(repo: ClientRepo, revisions: Sequence[str], explicit: str | None) -> tuple[Policy, str]:
    """The policy (`find`), and where it was found. Committed, it is known first by its blob (the
    first of `revisions` whose tree holds POLICY_FILE as a regular file: a symlink's blob holds its
    target's text, GATE-CONFIG-POLICY): while the cache holds that blob's validated form, the blob
    is not read."""

    def found() -> Found:
        return find(repo, POLICY_FILE, revisions, explicit, code="GATE-CONFIG-POLICY",
                    missing="GATE-CLIENT-NO-POLICY", what="policy", cap=MAX_POLICY_BYTES)

    cache = os.path.join(repo.path, "gate", "client-policy.toml")
    if explicit is None:
        objects = Objects(repo)
        for rev in revisions:
            commit = repo.commit_of(rev)
            blob = None if commit is None else committed_blob(objects, commit, POLICY_FILE, "GATE-CONFIG-POLICY")
            if blob is not None:
                origin = f"{rev}:{POLICY_FILE}"
                return config.policy_from_blob_cached(blob, lambda: found().data, origin, cache), origin
    got = found()
    return config.policy_from_bytes_cached(got.data, got.origin, cache), got.origin


def load_keyring(repo: ClientRepo, revisions: Sequence[str], explicit: str | None) -> Keyring:
    """The receipt hook's keyring. One read from the repository holds public keys only."""
    found = find(repo, KEYRING_FILE, revisions, explicit, code="GATE-CONFIG-KEYRING", missing="GATE-CLIENT-NO-KEYRING",
                 what="keyring",
                 cap=MAX_KEYRING_BYTES)
    ring = config.keyring_from_bytes(found.data, found.origin)
    secret = sorted(k.id for k in ring.values() if k.algorithm != "ed25519")
    if explicit is None and secret:
        # Everyone who can read the repository could forge receipts with these.
        raise GateError("GATE-CONFIG-KEYRING",
                        f"{found.origin} holds hmac-sha256 secrets ({', '.join(secret)}); a keyring committed "
                        f"to the repository holds ed25519 public keys only (pass --keyring for a private file)")
    return ring
