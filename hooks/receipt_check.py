"""The check behind `gate-receipt-push` (hooks/receipt_push.py), for pushes that may carry
reserved refs: the server's own composition over them (`gatecore.pipeline.judge`, the reserved
stage; see receipt_push.py for what it needs and how the push's refs are found)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from gatecore.adapters import gitcmd
from gatecore.errors import GateError, unreadable
from gatecore.findings import Violation
from gatecore.git.objects import Objects, single_file
from gatecore.git.refs import (
    ATTEMPTS_PREFIX,
    DOCTOR_PREFIX,
    GENERATIONS_PREFIX,
    RECEIPTS_PREFIX,
    REVIEW_PREFIX,
    RefUpdate,
    ServerRefs,
    display,
    is_reserved,
)
from gatecore.pipeline import RESERVED_ONLY, Push, PushInput, judge
from gatecore.reserved.approvalrefs import is_approval_ref
from gatecore.valueclass import replace

from . import clientconfig, pushset
from .common import ClientRepo, open_repo, verdict_lines

TYPE_CHECKING = False  # (typing's, as mypy reads it)
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

FETCH_LEDGER = "git fetch {remote} '+refs/gate/*:refs/gate/*'"


#: Refs whose value the hook reads from the remote itself (receipts and records bind it).
EXACT_PREFIXES = (ATTEMPTS_PREFIX, GENERATIONS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX)


def remote_reserved(remote: str) -> dict[bytes, str]:
    """The remote's ledger, claim, receipt and review refs now (one ls-remote): name -> id. Read
    as the trusted side reads its transport (`gitcmd.run_git(transport=True)`): until git exits,
    not until an ssh helper it leaves behind lets go of its stderr."""
    out = gitcmd.run_git(["ls-remote", "--refs", remote, *(f"{p}*" for p in EXACT_PREFIXES)],
                         transport=True).stdout.decode("utf-8", "surrogateescape")
    found: dict[bytes, str] = {}
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if name.startswith(EXACT_PREFIXES):
            found[name.encode("utf-8", "surrogateescape")] = oid
    return found


def server_refs(repo: ClientRepo, remote: str, remote_now: Mapping[bytes, str]) -> ServerRefs:
    """The remote's refs as the server's checks see them: reserved ones from the one ls-remote,
    any other (the target branch) asked for when needed. A ledger the remote has but this clone
    has not fetched reads as missing (the check then says how to fetch it)."""

    def read(name: str) -> str | None:
        if name.startswith(EXACT_PREFIXES):
            value = remote_now.get(name.encode("utf-8", "surrogateescape"))
            if value is not None and name.startswith(ATTEMPTS_PREFIX) and not repo.exists(value):
                return None
            return value
        return gitcmd.ls_remote(".", remote, name).get(name)

    return ServerRefs(read)


def receipt_target(repo: ClientRepo, receipt_commit: str) -> tuple[str, str] | None:
    """(ref, new_commit) the receipt in a receipt commit is for, read without verifying it."""
    from gatecore.records import ledger
    from gatecore.records.receipt import parse_payload
    from gatecore.signing import envelope

    try:
        objects = Objects(repo)
        data = single_file(objects, objects.commit(receipt_commit).tree_id, ledger.RECEIPT_FILE,
                                  "GATE-REVIEW-RECEIPT-REF")
        receipt, _ = parse_payload(envelope.parse(data).payload)
    except GateError:
        return None  # the check itself reports what is wrong with it
    if receipt is None or receipt.ref is None or receipt.new_commit is None:
        return None
    return receipt.ref, receipt.new_commit


def companions(repo: ClientRepo, named: Sequence[RefUpdate], remote_now: Mapping[bytes, str]) -> list[RefUpdate]:
    """The reserved updates that travel with the named one, found locally (pre-commit names one ref).

    A local receipt ref that differs from the remote's is about to be pushed, and with it
    the review ref its receipt names, to the receipt's new_commit (the server checks the
    value really pushed); a ledger ref being created travels with the generation claim
    the remote does not have yet.
    """
    zero = repo.zero_id
    have = {u.raw_ref for u in named}
    out: list[RefUpdate] = []
    if any(u.ref.startswith(ATTEMPTS_PREFIX) and u.is_create for u in named):
        # An opening push carries the generation claim: a local claim the remote lacks goes with it.
        for name, tip in sorted(repo.ref_targets(lambda n: n.startswith(GENERATIONS_PREFIX.encode())).items()):
            if name not in have and name not in remote_now:
                out.append(RefUpdate(zero, tip, name))
                have.add(name)
    receipts = [u for u in named if u.ref.startswith(RECEIPTS_PREFIX)]
    for name, tip in sorted(repo.ref_targets(lambda n: n.startswith(RECEIPTS_PREFIX.encode())).items()):
        if name not in have and tip != remote_now.get(name):
            receipts.append(RefUpdate(remote_now.get(name, zero), tip, name))
    out += [u for u in receipts if u.raw_ref not in have]
    have |= {u.raw_ref for u in out}
    for u in receipts:
        target = receipt_target(repo, u.new) if repo.exists(u.new) else None
        if target is None:
            continue
        ref, new = target
        raw = ref.encode("utf-8", "surrogateescape")
        if ref != REVIEW_PREFIX + u.ref[len(RECEIPTS_PREFIX):] or raw in have or remote_now.get(raw) == new:
            continue
        out.append(RefUpdate(remote_now.get(raw, zero), new, raw))
        have.add(raw)
    return out


def with_remote_old(updates: Sequence[RefUpdate], remote_now: Mapping[bytes, str], zero: str) -> list[RefUpdate]:
    """Ledger, receipt and review refs with the remote's exact current value as the old id."""
    return [RefUpdate(remote_now.get(u.raw_ref, zero), u.new, u.raw_ref)
            if u.ref.startswith(EXACT_PREFIXES) else u for u in updates]


def ledger_repository(repo: ClientRepo, updates: Sequence[RefUpdate], now: int) -> str:
    """The repository id the local ledger of the first reviewed attempt names ('' if none)."""
    from gatecore.records.ledger import read_state

    for u in updates:
        if u.ref.startswith(REVIEW_PREFIX):
            attempt = u.ref[len(REVIEW_PREFIX):]
            tip = repo.ref_target(ATTEMPTS_PREFIX + attempt)
            if tip is None:
                continue
            try:
                return read_state(Objects(repo), tip, None, now, attempt).repository
            except GateError:
                continue  # an unreadable ledger is reported by the check itself
    return ""


def explain_missing(violations: Sequence[Violation], remote: str) -> list[Violation]:
    """GATE-LEDGER-MISSING on the client usually means: not fetched. Say how to fetch it."""
    hint = FETCH_LEDGER.format(remote=remote)
    return [replace(v, detail=f"{v.detail} in this repository; the ledger lives on the server: fetch it "
                              f"with {hint} and push again") if v.code == "GATE-LEDGER-MISSING" else v
            for v in violations]


def reserved_violations(repo: ClientRepo, args: SimpleNamespace, env: Mapping[str, str], remote: str,
                        special: Sequence[RefUpdate], updates: Sequence[RefUpdate], remote_now: Mapping[bytes, str],
                        now: int) -> tuple[int, list[str]]:
    """The server's check of the reserved updates `special` (`updates`: the whole push, for the config revisions)."""
    revisions = pushset.config_revisions(remote, updates)
    policy, origin = clientconfig.load_policy(repo, revisions, args.policy)
    pusher = env.get("GATE_PUSHER", "").strip()
    repository_id = args.repository_id or ledger_repository(repo, special, now)
    keyring, problem = None, ""
    try:
        keyring = clientconfig.load_keyring(repo, revisions, args.keyring)
    except GateError as exc:  # reported as the server would: only once a check needs the keyring
        problem = exc.detail
    inp = PushInput(objects=Objects(repo), policy=policy, pusher=pusher, now=now, repository_id=repository_id,
                    server=server_refs(repo, remote, remote_now), keyring=keyring,
                    keyring_problem=problem or "no keyring", head_branch=lambda: gitcmd.remote_head(".", remote))
    violations = explain_missing(judge(inp, Push(special), stages=RESERVED_ONLY).violations, remote)
    notes = [f"gate: note: checked {', '.join(display(u.raw_ref) for u in special)}; policy {origin}; "
             f"repository {repository_id or '(unknown: pass --repository-id)'}; "
             f"pusher {pusher or '(unknown: set GATE_PUSHER)'}"]
    if not violations:
        return 0, [*notes, "gate: reserved refs: nothing the server would reject"]  # shown with verbose: true
    return verdict_lines(violations, policy, "push", notes)


def push_updates(repo: ClientRepo, args: SimpleNamespace, env: Mapping[str, str],
                 stdin: bytes) -> tuple[str, list[RefUpdate], dict[bytes, str]]:
    """(remote, every update of the push the hook can know of, the remote's reserved refs now)."""
    cache: dict[str, dict[bytes, str]] = {}
    push = pushset.read_push(repo, env, stdin, args.remote, args.url is not None, cache)
    updates = list(push.updates)
    local_receipts = repo.ref_targets(lambda n: n.startswith(RECEIPTS_PREFIX.encode()))
    if not local_receipts and not any(is_reserved(u.ref) for u in updates):
        return push.remote, updates, {}
    remote_now = remote_reserved(push.remote)
    if not push.exact:
        updates = with_remote_old(updates, remote_now, repo.zero_id)
        updates += companions(repo, updates, remote_now)
    return push.remote, updates, remote_now


def check(args: SimpleNamespace, env: Mapping[str, str], stdin: bytes) -> tuple[int, list[str]]:
    repo = open_repo()
    remote, updates, remote_now = push_updates(repo, args, env, stdin)
    # Approvals (refs/gate/approvals/*) are the server's to judge: signed by the maintainer
    # pushing them, with keys the client does not hold.
    special = [u for u in updates if is_reserved(u.ref) and not u.ref.startswith(DOCTOR_PREFIX) and not u.is_noop
               and not is_approval_ref(u.ref)]
    if not special:
        return 0, []
    for u in special:
        if not u.is_delete and not repo.exists(u.new):
            raise unreadable(f"{u.new} (pushed to {display(u.raw_ref)}) is not in this repository")
        if not u.is_create and not repo.exists(u.old):
            raise unreadable(f"{u.old} (what {remote} has at {display(u.raw_ref)}) is not in this repository; "
                             f"fetch it: git fetch {remote} && {FETCH_LEDGER.format(remote=remote)}")
    return reserved_violations(repo, args, env, remote, special, updates, remote_now, int(time.time()))


def parser() -> argparse.ArgumentParser:
    import argparse

    p = argparse.ArgumentParser(prog="gate-receipt-push", description=(
        "pre-push stage: check a push to refs/heads/review/runner/* (and the ledger) as the server would "
        "(docs/client.md)."))
    p.add_argument("remote", nargs="?", default=None, help="the remote (git passes it to a pre-push hook)")
    p.add_argument("url", nargs="?", default=None, help=argparse.SUPPRESS)
    p.add_argument("--policy", default=None,
                   help=f"policy file (default: {clientconfig.POLICY_FILE} as the remote has it, else in HEAD)")
    p.add_argument("--keyring", default=None,
                   help=f"keyring file (default: {clientconfig.KEYRING_FILE}, found like the policy)")
    p.add_argument("--repository-id", default=None,
                   help="the id the server was installed with (default: the one the attempt's ledger names)")
    return p


def run(argv: Sequence[str], stdin: bytes) -> int:
    """The whole check (what `gate-receipt-push` runs unless nothing reserved can be pushed)."""
    return pushset.run_push_hook(parser, check, argv, stdin, options=("--policy", "--keyring", "--repository-id"))
