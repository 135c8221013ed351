"""`gate check`: the pre-receive hook's judgement of a proposed change, on a forge's CI clone.

Where no pre-receive hook runs (github.com, gitlab.com, Bitbucket Cloud), the gate judges a pull
request, merge request or merge-queue group at the merge, as a required check
(docs/forges.md). The change is a `pipeline.Range`: `head` landing on `ref`, everything `base`
reaches judged already; the engine judges it as the hook judges the push of `ref` from `base` to
`head`, with the same policy, catalogue, rules, codes and gate-json lines:

* the base: `--base`, or the merge base of `--target` (the target branch's tip) and `head`; a
  merge-queue group (`--merge-group`) lands on `--base` itself, its parent;
* the policy and the keyring: `--policy` / `--keyring`, else `.gate/policy.toml` and
  `.gate/keyring.toml` as committed in the target's tip (`--target`; with `--base`, the base),
  never in the head (a change cannot rewrite the gate that judges it). The tip, not the merge
  base: the hook judges a push by the policy installed now, and a branch made before a path was
  frozen (or a key revoked) must not be judged by the policy of its branch point;
* the forge's refs, as the clone fetched them: `refs/gate/*` (the ledger, receipts, approvals,
  the archive), and the target branch at its tip; a review ref (`--ref
  refs/heads/review/runner/ID`) is judged as it stands (`reviewrefs.standing_review`);
* who pushed: `--pusher`, the account the forge names for the event (no platform variable is read),
  trimmed of surrounding blanks as the hook trims the platform's variable (`environment.pusher_identity`):
  `" agent-1"` is the account agent-1 to both.

Nothing is fetched or written (but the OpenPGP keys given, dearmored for gpgv into a temporary
directory for the run): a commit the clone lacks, or a range it holds only in part (a
shallow clone cut inside it), is `GATE-GIT-INCOMPLETE` (fetch it).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gatecore.errors import GateError
from gatecore.git.refs import GATE_PREFIX, REVIEW_PREFIX
from gatecore.valueclass import valueclass

if TYPE_CHECKING:
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.configuration.policy import Policy
    from gatecore.pipeline import Judged
    from gatecore.signing.keys import Keyring

POLICY_FILE = ".gate/policy.toml"
KEYRING_FILE = ".gate/keyring.toml"


@valueclass(frozen=True, slots=True)
class Request:
    """What the forge's event names (every revision as given: a commit id, or anything git resolves)."""

    repo: Path
    ref: str
    head: str
    base: str | None = None
    target: str | None = None
    merge_group: bool = False
    onto: str | None = None  # a review ref's target branch (default: the ledger's)
    pusher: str = ""
    policy: Path | None = None
    keyring: Path | None = None
    allowed_signers: Path | None = None
    openpgp_keys: Path | None = None
    repository_id: str = ""


@valueclass(frozen=True, slots=True)
class Checked:
    """The judgement, and what it was made on."""

    judged: Judged
    policy: Policy
    ref: str
    base: str
    head: str
    origin: str  # where the policy came from


def _commit(repo: GitRepo, rev: str, what: str) -> str:
    """The commit `rev` names in the clone (GATE-GIT-INCOMPLETE when it holds none)."""
    from gatecore.adapters.gitcmd import run_git
    from gatecore.git.objects import Objects

    out = run_git(["rev-parse", "-q", "--verify", "--end-of-options", f"{rev}^{{commit}}"], cwd=repo.path, ok=None)
    oid = out.stdout.decode("ascii", "replace").strip() if out.ok else ""
    commit = Objects(repo).peel_to_commit(oid) if oid else None
    if commit is None:
        raise GateError("GATE-GIT-INCOMPLETE", f"{what} {rev} is not a commit this clone holds: fetch it "
                                               "(a shallow clone needs fetch-depth: 0)")
    return commit


def _whole(repo: GitRepo, base: str, head: str) -> None:
    """GATE-GIT-INCOMPLETE when the clone is shallow inside the range: git walks a boundary commit
    without its parents, and the engine reads it as a root (docs/policy.md, shallow repositories),
    so what the change did below the boundary is in no tree the clone holds (an agent's deletion
    of a frozen file there would pass). A push brings its whole range; a check needs it fetched."""
    from gatecore.adapters.gitcmd import run_git, shallow_commits

    shallow = shallow_commits(repo.path)
    if not shallow:
        return
    out = run_git([f"--git-dir={repo.path}", "rev-list", "--stdin"], input=f"{head}\n^{base}\n".encode("ascii"))
    cut = sorted(shallow.intersection(out.stdout.decode("ascii").split()))
    if cut:
        raise GateError("GATE-GIT-INCOMPLETE", f"the clone is shallow inside the range {base[:12]}..{head[:12]} "
                                               f"(its history is cut at {cut[0][:12]}): fetch the whole history "
                                               "(fetch-depth: 0, or git fetch --unshallow)")


def _config(repo: GitRepo, commit: str, given: Path | None, path: str, code: str, cap: int
            ) -> tuple[bytes | None, str]:
    """A configuration file: `given`, else as committed in `commit` (None: not there)."""
    from gatecore.adapters.files import read_capped
    from gatecore.git.objects import Objects, committed_file

    if given is not None:
        return read_capped(given, code, path, cap), str(given)
    return committed_file(Objects(repo), commit, path, code, cap), f"{commit[:12]}:{path}"


def check(req: Request, now: int | None = None) -> Checked:
    """Judge the request's change (the module's docstring)."""
    from gatecore.adapters import config
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.configuration.policy import MAX_POLICY_BYTES
    from gatecore.git.objects import Objects
    from gatecore.git.refs import ServerRefs
    from gatecore.pipeline import PushInput, Range, judge
    from gatecore.signing.keys import MAX_KEYRING_BYTES

    if not req.ref.startswith("refs/heads/") or req.ref.startswith(GATE_PREFIX):
        raise GateError("GATE-INPUT-ARGUMENT", f"--ref {req.ref}: a change lands on a branch (refs/heads/...)")
    if (req.base is None) == (req.target is None):
        raise GateError("GATE-INPUT-ARGUMENT", "give --base (the side already judged) or --target (the target "
                                               "branch's tip: the base is its merge base with --head), not both")
    repo = GitRepo.at(req.repo)
    head = _commit(repo, req.head, "--head")
    if req.base is not None:
        base = target = _commit(repo, req.base, "--base")
    else:
        assert req.target is not None
        if req.merge_group:
            raise GateError("GATE-INPUT-ARGUMENT", "--merge-group lands on the group's parent: give it as --base")
        target = _commit(repo, req.target, "--target")
        fork = repo.merge_base(target, head)
        if fork is None:
            raise GateError("GATE-GIT-INCOMPLETE", f"--head {head[:12]} shares no history with --target "
                                                   f"{target[:12]} in this clone (fetch-depth: 0?)")
        base = fork
    _whole(repo, base, head)
    # the gate's configuration as the target holds it now (`target` is the base when --base is given)
    policy_bytes, origin = _config(repo, target, req.policy, POLICY_FILE, "GATE-CONFIG-POLICY", MAX_POLICY_BYTES)
    if policy_bytes is None:
        raise GateError("GATE-CONFIG-POLICY", f"the target {target[:12]} holds no {POLICY_FILE}: commit it to the "
                                              "target branch first, or give --policy FILE")
    policy = config.policy_from_bytes(policy_bytes, origin)
    keyring, problem = _keyring(repo, target, req.keyring, MAX_KEYRING_BYTES)
    review = req.ref.startswith(REVIEW_PREFIX)
    if review and not req.repository_id:
        raise GateError("GATE-INPUT-ARGUMENT", "a review ref is judged for a repository: give --repository-id "
                                               "(the id the receipts name)")
    onto = req.onto if review else req.ref
    gate_refs = repo.ref_targets(lambda name: name.startswith(GATE_PREFIX.encode()))

    def forge_ref(name: str) -> str | None:
        """The forge's refs as the clone fetched them: refs/gate/*, and the branch the change lands on
        at the target's tip (a review without --onto: whichever branch its ledger names)."""
        if name.startswith(GATE_PREFIX):
            return gate_refs.get(name.encode("utf-8", "surrogateescape"))
        if name == onto or (review and onto is None and name.startswith("refs/heads/")):
            return target
        return None

    with tempfile.TemporaryDirectory(prefix="gate-check-") as scratch:
        signers = None
        if policy.needs_signers:
            signers = config.load_trusted_keys(req.allowed_signers, _binary_keyring(req.openpgp_keys, scratch))
        inp = PushInput(
            objects=Objects(repo), policy=policy, pusher=req.pusher.strip(),
            now=int(time.time()) if now is None else now, repository_id=req.repository_id,
            server=ServerRefs(forge_ref), keyring=keyring, keyring_problem=problem, head_branch=lambda: onto,
            signers=signers, load_ssh_signers=lambda: (None if req.allowed_signers is None
                                                       else config.load_allowed_signers(req.allowed_signers)))
        judged = judge(inp, Range(req.ref, base, head))
    return Checked(judged, policy, req.ref, base, head, origin)


def _binary_keyring(given: Path | None, scratch: str) -> str | None:
    """The OpenPGP keys given (`gpg --export`, armored or not) as the binary keyring gpgv reads: as
    `gate server install --openpgp-keys` takes them, the forge's own public key among them."""
    if given is None:
        return None
    from gatecore.adapters import config
    from gatecore.adapters.files import atomic_write

    path = os.path.join(scratch, "openpgp-keys.gpg")
    atomic_write(path, config.read_openpgp_keys(given), 0o600)
    return path


def _keyring(repo: GitRepo, target: str, given: Path | None, cap: int) -> tuple[Keyring | None, str | None]:
    from gatecore.adapters import config

    data, origin = _config(repo, target, given, KEYRING_FILE, "GATE-CONFIG-KEYRING", cap)
    if data is None:
        return None, (f"the target {target[:12]} holds no {KEYRING_FILE} (the receipts' and the ledger's public "
                      "keys): commit it to the target branch, or give --keyring FILE")
    return config.keyring_from_bytes(data, origin), None
