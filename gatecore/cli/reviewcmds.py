"""`gate review record|run|push`: the trusted runner seals a review and pushes it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import GateError
from .clicommon import AttemptOpt, LedgerRemoteOpt, Opt, RepoDirOpt, VerboseOpt, command, err_line, push_lines

if TYPE_CHECKING:
    from ..trusted.runner import ReviewPush

group = typer.Typer(no_args_is_help=True, help="The trusted runner: record and push a review.")


#: The options `gate review record` and `gate review run` share.
ReceiptKeyOpt = Annotated[Path, Opt("--key", help="Signing key file (purpose receipt).")]


ReceiptOutOpt = Annotated[Path, Opt("--out", help="Receipt file to write (never overwritten).")]


ReviewRemoteOpt = Annotated[str | None, Opt("--remote", help="Sync the ledger and the review ref's value from here "
                                                             "(with --ledger-remote: the review ref and the target "
                                                             "branch only).")]


ReviewPushOpt = Annotated[bool, Opt("--push", help="Push the review ref and receipt to --remote at once (with "
                                                   "--ledger-remote: the receipt there first, then the review ref).")]


TtlOpt = Annotated[int, Opt("--ttl", help="Seconds the receipt stays valid.")]


ReviewBaseOpt = Annotated[str | None, Opt("--base", help="Base revision of the reviewed change (default: the merge "
                                                         "base with the attempt's target branch on --remote).")]


def _remotes(repo: Path, remote: str | None, push: bool, ledger_remote: str | None) -> None:
    """`--push` or `--ledger-remote` without `--remote`, or `--ledger-remote` naming the same
    repository: refused, before anything is read."""
    from ..trusted.attempts import ledger_of

    if push and remote is None:
        raise GateError("GATE-INPUT-ARGUMENT", "--push needs --remote")
    ledger_of(remote, ledger_remote, "--remote", repo)


def _review_landed(repo: Path, attempt: str, head: str, remote: str | None, push: bool,
                   ledger_remote: str | None) -> bool:
    """A retry whose review landed already (the review ref on --remote, its receipt on
    --ledger-remote or there) has nothing to do (said on stderr)."""
    from ..trusted.attempts import ALREADY
    from ..trusted.runner import review_landed

    _remotes(repo, remote, push, ledger_remote)
    if push and remote is not None and review_landed(repo, attempt, head, remote, ledger_remote=ledger_remote):
        err_line(f"the review of {head} is on {remote} already, with its receipt"
                 + (f" on {ledger_remote}" if ledger_remote else "") + f": {ALREADY}")
        return True
    return False


@command(group, "record")
def review_record(
    repo: RepoDirOpt, attempt: AttemptOpt,
    head: Annotated[str, Opt("--head", help="The reviewed revision.")],
    model_output: Annotated[Path, Opt("--model-output", help="The model's output: JSON with verdict and reasons "
                                                              "(other members ignored), or one fenced JSON block.")],
    key: ReceiptKeyOpt, out: ReceiptOutOpt, remote: ReviewRemoteOpt = None, push: ReviewPushOpt = False,
    ttl: TtlOpt = 86400, base: ReviewBaseOpt = None, ledger_remote: LedgerRemoteOpt = None,
    verbose: VerboseOpt = False,
) -> int:
    """The runner: seal a model's output file for the change from its server-side base to --head (the weaker
    path: gate review run calls the model itself)."""
    from ..adapters.config import load_keyfile
    from ..adapters.files import read_capped
    from ..records.modeloutput import read
    from ..strictjson import MAX_DOCUMENT_BYTES
    from ..trusted.runner import push_review, record_review

    _remotes(repo, remote, push, ledger_remote)
    output = read_capped(model_output, "GATE-INPUT-ARGUMENT", "model output", MAX_DOCUMENT_BYTES)
    for note in read(output, str(model_output)).notes(str(model_output)):
        err_line(note)
    now = int(time.time())
    if _review_landed(repo, attempt, head, remote, push, ledger_remote):
        return 0
    signing = load_keyfile(key)
    path = record_review(repo, attempt, base, head, output, signing, out, remote, None, ttl, now,
                         origin=str(model_output), ledger_remote=ledger_remote)
    err_line(f"wrote {path}")
    if push and remote is not None:
        return _pushed(push_review(repo, attempt, path, remote, now, ledger_remote=ledger_remote, key=signing),
                       attempt, path, remote, ledger_remote, verbose)
    return 0


@command(group, "run")
def review_run(
    repo: RepoDirOpt, attempt: AttemptOpt,
    head: Annotated[str, Opt("--head", help="The reviewed revision.")],
    prompt_file: Annotated[Path, Opt("--prompt-file", help="The attempt's prompt (its SHA-256 must be the "
                                                            "ledger's prompt_sha256).")],
    model_command: Annotated[str, Opt("--model-command", help="Shell command that reads the review request on stdin "
                                                              "and prints the model's answer (docs/ci.md); "
                                                              "$GATE_MODEL_ID names the model on record.")],
    key: ReceiptKeyOpt, out: ReceiptOutOpt, remote: ReviewRemoteOpt = None, push: ReviewPushOpt = False,
    ttl: TtlOpt = 86400, base: ReviewBaseOpt = None,
    model_timeout: Annotated[float, Opt("--model-timeout", help="Seconds the model's command may take.")] = 600.0,
    ledger_remote: LedgerRemoteOpt = None, verbose: VerboseOpt = False,
) -> int:
    """The runner calls the model itself and seals its answer: no output file to go stale."""
    from ..adapters.config import load_keyfile
    from ..trusted.runner import push_review, run_review

    _remotes(repo, remote, push, ledger_remote)
    now = int(time.time())
    if _review_landed(repo, attempt, head, remote, push, ledger_remote):
        return 0
    notes: list[str] = []
    signing = load_keyfile(key)
    path = run_review(repo, attempt, base, head, prompt_file, model_command, signing, out, remote, None,
                      ttl, now, model_timeout, notes=notes, ledger_remote=ledger_remote)
    for note in notes:
        err_line(note)
    err_line(f"wrote {path}")
    if push and remote is not None:
        return _pushed(push_review(repo, attempt, path, remote, now, ledger_remote=ledger_remote, key=signing),
                       attempt, path, remote, ledger_remote, verbose)
    return 0


def _pushed(result: ReviewPush, attempt: str, receipt: Path, remote: str, ledger_remote: str | None,
            verbose: bool) -> int:
    """The review push's summary line, after the server's lines (git's own with -v)."""
    from ..git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX
    from ..trusted.attempts import ALREADY

    if result.output == ALREADY:
        err_line(f"the review of attempt {attempt} is on {remote} already: {ALREADY}")
        return 0
    for line in push_lines(result.output, verbose):
        err_line(line)
    review, receipts = REVIEW_PREFIX + attempt, RECEIPTS_PREFIX + attempt
    if result.ok:
        err_line(f"review ref {review} accepted by {remote}, receipt {receipt.name} recorded on {receipts}"
                 + (f" on {ledger_remote}" if ledger_remote and ledger_remote != remote else ""))
        return 0
    if result.receipt_only:
        err_line(f"review ref {review} refused by {remote}; its receipt {receipt.name} is on {receipts} on "
                 f"{ledger_remote}: run the same command again to push the review ref alone")
    elif ledger_remote and ledger_remote != remote:
        err_line(f"receipt {receipt.name} refused by {ledger_remote} on {receipts}; nothing of the review landed "
                 "(the receipt goes first)")
    else:
        err_line(f"review ref {review} refused by {remote}; nothing of it landed (one atomic push)")
    return 1


@command(group, "push")
def review_push(
    repo: RepoDirOpt, attempt: AttemptOpt,
    receipt: Annotated[Path, Opt("--receipt", help="The receipt file to push.")],
    remote: Annotated[str, Opt("--remote", help="The server remote (with --ledger-remote: the forge, for the "
                                                "review ref).")],
    ledger_remote: LedgerRemoteOpt = None,
    key: Annotated[Path | None, Opt("--key", help="The runner's receipt key: the receipt must be its seal "
                                                  "(required with --ledger-remote).")] = None,
    verbose: VerboseOpt = False,
) -> int:
    """Push a receipt with its review ref (refs/heads/review/runner/ID) in one atomic push (with
    --ledger-remote: the receipt there first, then the review ref to --remote)."""
    from ..adapters.config import load_keyfile
    from ..trusted.runner import push_review

    signing = None if key is None else load_keyfile(key)
    return _pushed(push_review(repo, attempt, receipt, remote, int(time.time()), ledger_remote=ledger_remote,
                               key=signing), attempt, receipt, remote, ledger_remote, verbose)


@command(group, "request")
def review_request(
    repo: RepoDirOpt,
    receipt: Annotated[Path, Opt("--receipt", help="A receipt file of gate review run.")],
    prompt_file: Annotated[Path, Opt("--prompt-file", help="The attempt's prompt.")],
) -> int:
    """Print the request the model was shown for a receipt of gate review run, rebuilt from the receipt, the
    prompt and the clone's objects, and checked against its request_sha256 (docs/receipts.md)."""
    from ..adapters.files import read_capped
    from ..strictjson import MAX_DOCUMENT_BYTES
    from ..trusted.runner import request_of

    data = read_capped(receipt, "GATE-INPUT-ARGUMENT", "receipt", MAX_DOCUMENT_BYTES)
    prompt = read_capped(prompt_file, "GATE-INPUT-ARGUMENT", "prompt", 1 << 20)
    sys.stdout.buffer.write(request_of(repo, data, prompt))
    sys.stdout.flush()
    return 0
