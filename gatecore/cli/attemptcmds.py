"""`gate bootstrap` and `gate attempt ...`: the orchestrator's records of an attempt (trusted side)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import GateError
from .clicommon import (
    AttemptOpt,
    GenOpt,
    LedgerRemoteOpt,
    ModelOpt,
    Opt,
    PromptOpt,
    RepoDirOpt,
    VerboseOpt,
    command,
    err_line,
    out_line,
    push_lines,
)

if TYPE_CHECKING:
    from ..adapters.gitcmd import PushResult
    from ..records.ledger import AttemptState

group = typer.Typer(no_args_is_help=True, help="Write and read the attempt ledger (trusted side).")
top = typer.Typer()


@command(top, "bootstrap")
def bootstrap_cmd(
    workspace: Annotated[Path, Opt("--workspace", help="The workspace the agent will use.")],
    attempt: Annotated[str | None, Opt("--attempt", help="Attempt id (default: a fresh one).")] = None,
    scoring_path: Annotated[str, Opt("--scoring-path", help="Agent-writable scoring path, relative.")]
    = ".gate/scoring",
) -> int:
    """Before the agent starts: mint a generation, wipe the scoring path, print the exports."""
    from ..trusted.bootstrap import bootstrap

    out_line(bootstrap(workspace, time.time(), attempt, scoring_path).exports())
    return 0


KeyOpt = Annotated[Path, Opt("--key", help="Signing key file (purpose attempt).")]


RemoteOpt = Annotated[str | None, Opt("--push", help="Remote to sync the ledger with and push it to (with "
                                                   "--ledger-remote: the forge, asked for its HEAD branch only).")]


def _ledger_result(state: AttemptState, result: PushResult | None, exports: str = "", kind: str = "",
                   remote: str | None = None, verbose: bool = False) -> int:
    from ..git.refs import ATTEMPTS_PREFIX
    from ..trusted.attempts import ALREADY

    if exports:
        out_line(exports)
    if result is not None:
        ref = ATTEMPTS_PREFIX + state.attempt_id
        if result.output == ALREADY:
            err_line(f"{ref} has this record already (record {state.seq}): {ALREADY}")
            return 0
        for line in push_lines(result.output, verbose):
            err_line(line)
        if not result.ok:
            err_line(f"ledger record {state.seq} ({kind}) of attempt {state.attempt_id} refused by {remote}; the local "
                 "ledger was put back")
            return 1
        err_line(f"ledger record {state.seq} ({kind}) of attempt {state.attempt_id} accepted by {remote} on {ref}")
    return 0


@command(group, "open")
def attempt_open(
    repo: RepoDirOpt, attempt: AttemptOpt, key: KeyOpt,
    workspace: Annotated[str, Opt("--workspace", help="Workspace name on record.")],
    workspace_gen: GenOpt, prompt_file: PromptOpt,
    repository_id: Annotated[str, Opt("--repository-id", help="The server's repository id.")],
    push: RemoteOpt = None,
    target: Annotated[str | None, Opt("--target", help="The branch reviews go onto (default: the "
                                                       "server's HEAD branch).")] = None,
    author_model: Annotated[str | None, Opt("--author-model", help="The model of the agent that writes the "
                                                                   "change (for review.independent).")] = None,
    author_vendor: Annotated[str | None, Opt("--author-vendor", help="Its vendor (anthropic, openai, ...; "
                                                                     "default: the vendor table's).")] = None,
    initiator: Annotated[str | None, Opt("--initiator", help="Who started the attempt (an account or "
                                                             "email).")] = None,
    ledger_remote: LedgerRemoteOpt = None, verbose: VerboseOpt = False,
) -> int:
    """Record a new attempt: its generation, workspace, prompt digest, target branch and author."""
    from ..adapters.config import load_keyfile
    from ..checks.independence import Author
    from ..trusted.attempts import append_record
    from ..trusted.filereceipts import prompt_digest

    state, result = append_record(repo, attempt, load_keyfile(key), "opened", push, int(time.time()),
                                  repository=repository_id, workspace=workspace, workspace_generation=workspace_gen,
                                  prompt_sha256=prompt_digest(prompt_file), target=target,
                                  author=Author(author_model, author_vendor, initiator), ledger_remote=ledger_remote)
    return _ledger_result(state, result, kind="opened", remote=ledger_remote or push, verbose=verbose)


@command(group, "select-model")
def attempt_select_model(repo: RepoDirOpt, attempt: AttemptOpt, key: KeyOpt, model: ModelOpt,
                         push: RemoteOpt = None, ledger_remote: LedgerRemoteOpt = None,
                         verbose: VerboseOpt = False) -> int:
    """Record the model selected for the attempt (once; later changes are failovers)."""
    from ..adapters.config import load_keyfile
    from ..trusted.attempts import append_record

    state, result = append_record(repo, attempt, load_keyfile(key), "model-selected", push, int(time.time()),
                                  model_id=model, ledger_remote=ledger_remote)
    return _ledger_result(state, result, f"export MODEL_ID={model}", "model-selected", ledger_remote or push,
                          verbose)


@command(group, "failover")
def attempt_failover(repo: RepoDirOpt, attempt: AttemptOpt, key: KeyOpt, model: ModelOpt,
                     reason: Annotated[str | None, Opt("--reason", help="Why the model changed.")] = None,
                     push: RemoteOpt = None, ledger_remote: LedgerRemoteOpt = None,
                     verbose: VerboseOpt = False) -> int:
    """Record a failover to another model: receipts of the previous model become stale."""
    from ..adapters.config import load_keyfile
    from ..trusted.attempts import append_record

    state, result = append_record(repo, attempt, load_keyfile(key), "failover", push, int(time.time()),
                                  model_id=model, note=reason, ledger_remote=ledger_remote)
    return _ledger_result(state, result, f"export MODEL_ID={model}", "failover", ledger_remote or push, verbose)


@command(group, "close")
def attempt_close(repo: RepoDirOpt, attempt: AttemptOpt, key: KeyOpt,
                  reason: Annotated[str | None, Opt("--reason", help="Why the attempt ended.")] = None,
                  push: RemoteOpt = None, ledger_remote: LedgerRemoteOpt = None,
                  verbose: VerboseOpt = False) -> int:
    """Close the attempt: no receipt is accepted for it afterwards."""
    from ..adapters.config import load_keyfile
    from ..trusted.attempts import append_record

    state, result = append_record(repo, attempt, load_keyfile(key), "closed", push, int(time.time()), note=reason,
                                  ledger_remote=ledger_remote)
    return _ledger_result(state, result, kind="closed", remote=ledger_remote or push, verbose=verbose)


@command(group, "show")
def attempt_show(
    repo: RepoDirOpt, attempt: AttemptOpt,
    keyring: Annotated[Path | None, Opt("--keyring", help="Verify every seal with this keyring.")] = None,
    policy: Annotated[Path | None, Opt("--policy", help="Read model ids with this policy, as a server holding it "
                                                        "does (default: the repository's committed "
                                                        ".gate/policy.toml, if any).")] = None,
    as_json: Annotated[bool, Opt("--json", help="Print the state as JSON.")] = False,
) -> int:
    """Print what the ledger has on record for an attempt."""
    from ..adapters.config import load_keyring
    from ..adapters.gitrepo import GitRepo
    from ..git.objects import Objects
    from ..git.refs import ATTEMPTS_PREFIX
    from ..records.ledger import read_state
    from ..trusted.attempts import check_attempt_id, people, reading_policy
    from ..valueclass import asdict

    check_attempt_id(attempt)
    r = GitRepo.at(repo)
    tip = r.ref_target(ATTEMPTS_PREFIX + attempt)
    if tip is None:
        raise GateError("GATE-LEDGER-MISSING", f"no {ATTEMPTS_PREFIX}{attempt} in {repo}")
    ring = None if keyring is None else load_keyring(keyring, cached=False)
    state = read_state(Objects(r), tip, ring, int(time.time()), attempt)
    if as_json:
        out_line(json.dumps(asdict(state), sort_keys=True))
    else:
        for line in [*people(state, *reading_policy(repo, policy)), *_attempt_words(state, ring is not None)]:
            out_line(line)
    return 0


def _attempt_words(state: AttemptState, verified: bool) -> list[str]:
    """`gate attempt show` after its first lines (author, reviewer, initiator): the state in dates
    and words; `--json` has the same as values."""
    from ..git.refs import ATTEMPTS_PREFIX

    def when(t: int) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))

    history = ", then ".join(state.models[:1] + tuple(f"{m} (failover)" for m in state.models[1:]))
    return [
        f"attempt: {state.attempt_id} of repository {state.repository}, "
        + ("closed: no receipt is accepted for it any more" if state.closed else "open"),
        f"workspace: {state.workspace}, generation {state.workspace_generation}",
        f"prompt: sha256 {state.prompt_sha256}",
        "reviews go onto: " + (state.target or "the branch the server's HEAD names"),
        "models on record: " + (history or "none selected yet"),
        f"ledger: {state.seq + 1} record(s) on {ATTEMPTS_PREFIX}{state.attempt_id}, the last written "
        f"{when(state.updated)}; opened by commit {state.root[:12]}; last record sha256 {state.head[:16]}",
        "seals: " + ("every record verified with the keyring given" if verified else
                     "not verified (give --keyring to verify every record's seal)"),
    ]
