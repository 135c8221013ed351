"""The `gate` command line: the one module that talks to typer (the outer layer).

Each command is a thin function that calls into the package and returns an exit code;
commands read the clock once and pass `now` down. `main(argv) -> int` is the single error
boundary (pre-commit's shape; tests call it in process): a `GateError` prints its code and
reason and returns the status its code's registry entry names (1 reject, 2 configuration,
3 internal); a usage error returns 2; anything unexpected returns 3 as
`GATE-CLI-INTERNAL`. Nothing ever maps an error to 0.

This is the outer layer: it may import everything, the `server` package included (the
server's commands: install, doctor, the approvals verifier). Nothing imports it.

The installed pre-receive hook does not come through here: it runs `server/launch.py
server.prereceive`, which keeps typer and pydantic off the hook's start-up path.
"""

from __future__ import annotations

import functools
import json
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from .errors import GateError

if TYPE_CHECKING:
    from .adapters.gitcmd import PushResult
    from .checks.binding import Decision
    from .records.ledger import AttemptState

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="Push-time gate for AI agents: frozen files and bound review receipts.")
receipt_app = typer.Typer(no_args_is_help=True, help="Write and verify sealed review receipts (files).")
keys_app = typer.Typer(no_args_is_help=True, help="Make and check seal keys and keyrings.")
policy_app = typer.Typer(no_args_is_help=True, help="Check policy files.")
hook_app = typer.Typer(no_args_is_help=True, help="Run the gate as a git hook.")
server_app = typer.Typer(no_args_is_help=True, help="Install, remove and check the server hook.")
attempt_app = typer.Typer(no_args_is_help=True, help="Write and read the attempt ledger (trusted side).")
review_app = typer.Typer(no_args_is_help=True, help="The trusted runner: record and push a review.")
ledger_app = typer.Typer(no_args_is_help=True, help="The ledger's lifecycle (trusted side).")
approvals_app = typer.Typer(no_args_is_help=True, help="Maintainer approvals of frozen-path writes.")
agents_app = typer.Typer(no_args_is_help=True, help="The built-in catalogue of AI agents (@known-agents).")
attest_app = typer.Typer(no_args_is_help=True, help="What the gate accepted, as signed in-toto attestations.")
app.add_typer(receipt_app, name="receipt")
app.add_typer(keys_app, name="keys")
app.add_typer(policy_app, name="policy")
app.add_typer(hook_app, name="hook")
app.add_typer(server_app, name="server")
app.add_typer(attempt_app, name="attempt")
app.add_typer(review_app, name="review")
app.add_typer(ledger_app, name="ledger")
app.add_typer(agents_app, name="agents")
app.add_typer(approvals_app, name="approvals")
app.add_typer(attest_app, name="attest")

Opt = typer.Option
F = TypeVar("F", bound=Callable[..., int])


def _version(value: bool) -> None:
    if value:
        from . import __version__

        _out(f"push-gate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, Opt("--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")] = False) -> None:
    """Push-time gate for AI agents: frozen files and bound review receipts."""


def command(group: typer.Typer, name: str) -> Callable[[F], F]:
    """Register a command whose return value is its exit code."""

    def register(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: object, **kwargs: object) -> None:
            raise typer.Exit(fn(*args, **kwargs))

        group.command(name)(run)
        return fn

    return register


def _out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


# --- the seed's flow ------------------------------------------------------------------

AttemptOpt = Annotated[str, Opt("--attempt", help="Attempt id (from the orchestrator).")]
ModelOpt = Annotated[str, Opt("--model", help="Model id on record for this attempt.")]
GenOpt = Annotated[str, Opt("--workspace-gen", help="Workspace generation minted by bootstrap.")]
PromptOpt = Annotated[Path, Opt("--prompt-file", help="The prompt given to the model.")]
DiffFileOpt = Annotated[Path | None, Opt("--diff-file", help="Patch file: bind the SHA-256 of its bytes.")]
RepoOpt = Annotated[Path | None, Opt("--repo", help="Repository: bind the tree delta --from..--to.")]
FromOpt = Annotated[str | None, Opt("--from", help="Base revision of the change.")]
ToOpt = Annotated[str | None, Opt("--to", help="Reviewed revision.")]


@command(receipt_app, "write")
def receipt_write(
    out_dir: Annotated[Path, Opt("--out-dir", help="Receipts root; writes DIR/ID/receipt.json.")],
    attempt: AttemptOpt, model: ModelOpt, workspace_gen: GenOpt, prompt_file: PromptOpt,
    verdict: Annotated[str, Opt("--verdict", help="pass or fail.")],
    key: Annotated[Path, Opt("--key", help="Signing key file (gate keys generate).")],
    reason: Annotated[list[str] | None, Opt("--reason", help="A reason; repeat for more.")] = None,
    diff_file: DiffFileOpt = None, repo: RepoOpt = None, rev_from: FromOpt = None, rev_to: ToOpt = None,
    ttl: Annotated[int, Opt("--ttl", help="Seconds the receipt stays valid.", min=1,
                            max=30 * 24 * 3600)] = 86400,
) -> int:
    """Seal a review receipt bound to this attempt and write it (never overwrites)."""
    from .adapters.config import load_keyfile
    from .trusted.filereceipts import DiffSource, write_receipt

    path = write_receipt(out_dir, attempt, model, workspace_gen, prompt_file,
                         DiffSource(diff_file, repo, rev_from, rev_to), verdict, list(reason or []),
                         load_keyfile(key), ttl, int(time.time()))
    _out(str(path))
    return 0


def print_decision(decision: Decision, as_json: bool) -> None:
    if as_json:
        _out(json.dumps(decision.as_dict(), sort_keys=True))
        return
    if decision.accepted:
        _out("accept")
        return
    _out("reject")
    for f in decision.failures:
        _out(f"  {f.field}: {f.code}: {f.detail}")


@command(receipt_app, "verify")
def receipt_verify(
    receipt: Annotated[Path, Opt("--receipt", help="The receipt file to verify.")],
    attempt: AttemptOpt, model: ModelOpt, workspace_gen: GenOpt, prompt_file: PromptOpt,
    keyring: Annotated[Path, Opt("--keyring", help="Keyring file (TOML) with the runner's key.")],
    diff_file: DiffFileOpt = None, repo: RepoOpt = None, rev_from: FromOpt = None, rev_to: ToOpt = None,
    as_json: Annotated[bool, Opt("--json", help="Print the decision as JSON.")] = False,
) -> int:
    """Verify a receipt: exit 0 on accept, 1 on any reject (each failed field printed)."""
    from .adapters.config import load_keyring
    from .trusted.filereceipts import DiffSource, verify_receipt

    decision = verify_receipt(receipt, attempt, model, workspace_gen, prompt_file,
                              DiffSource(diff_file, repo, rev_from, rev_to), load_keyring(keyring, cached=False),
                              int(time.time()))
    print_decision(decision, as_json)
    return 0 if decision.accepted else 1


@command(app, "digest")
def digest_cmd(diff_file: DiffFileOpt = None, repo: RepoOpt = None, rev_from: FromOpt = None,
               rev_to: ToOpt = None) -> int:
    """Print the diff digest (and its algorithm) that a receipt would bind."""
    from .trusted.filereceipts import DiffSource, bind_diff

    b = bind_diff(DiffSource(diff_file, repo, rev_from, rev_to))
    _out(f"{b.diff_algorithm} {b.diff_sha256}")
    return 0


@command(app, "selftest")
def selftest_cmd() -> int:
    """Run the decision table and the offline attack list against the binder."""
    from .selftest import run

    text, ok = run()
    _out(text)
    return 0 if ok else 1


@command(app, "explain")
def explain_cmd(
    code: Annotated[str | None, typer.Argument(help="A code such as GATE-BIND-MODEL.")] = None,
    markdown: Annotated[bool, Opt("--markdown", help="Print the whole table (docs/codes.md).")] = False,
    list_all: Annotated[bool, Opt("--list", help="List every code.")] = False,
    as_json: Annotated[bool, Opt("--json", help="As JSON: the fields a gate-json line carries (docs/codes.md).")]
    = False,
) -> int:
    """Explain a rejection code: reason, hint, exit class, who must act, whether a retry helps."""
    from . import codes

    if markdown:
        _out(codes.markdown_table())
        return 0
    if list_all or code is None:
        if as_json:
            _out(json.dumps([codes.as_json(c) for c in codes.CODES], sort_keys=True))
            return 0
        for c in codes.CODES.values():
            _out(f"{c.code}  {c.reason}")
        return 0
    try:
        _out(json.dumps(codes.as_json(code), sort_keys=True) if as_json else codes.explain(code))
    except KeyError:
        _err(f"unknown code {code!r}; `gate explain --list` lists them")
        return 2
    return 0


# --- keys -----------------------------------------------------------------------------

@command(keys_app, "generate")
def keys_generate(
    alg: Annotated[str, Opt("--alg", help="ed25519 or hmac-sha256.")],
    key_id: Annotated[str, Opt("--id", help="Key id.")],
    purpose: Annotated[str, Opt("--purpose", help="receipt, attempt, approval or attestation.")],
    out: Annotated[Path, Opt("--out", help="Private key file to create (mode 0600).")],
) -> int:
    """Make a key; write the private half to --out; print the keyring entry (TOML)."""
    from .adapters.files import write_private
    from .configuration.configschema import generate_key

    made = generate_key(alg, key_id, purpose)
    write_private(out, made.keyfile_text)
    _out(made.keyring_entry)
    return 0


@command(keys_app, "check")
def keys_check(keyring: Annotated[Path, typer.Argument(help="Keyring file.")]) -> int:
    """Validate a keyring file; print each error with its location."""
    from .adapters.config import load_keyring

    ring = load_keyring(keyring, cached=False)
    for k in ring.values():
        state = "revoked" if k.revoked else "active"
        _out(f"{k.id}: {k.algorithm} {k.purpose} {state}")
    _out(f"ok: {len(ring)} keys")
    return 0


# --- policy, hook, server ----------------------------------------------------------------

@command(policy_app, "check")
def policy_check(
    policy: Annotated[Path, typer.Argument(help="Policy file (TOML).")],
    repo: Annotated[Path | None, Opt("--repo", help="Also warn about frozen path patterns that match no path on "
                                                    "this repository's default branch.")] = None,
) -> int:
    """Validate a policy file; print each problem with its line, location and fix (exit 2)."""
    from .adapters.config import check_policy

    found = check_policy(policy, repo)
    for p in found.problems:
        _err(f"GATE-CONFIG-POLICY: {p}")
    if found.problems:
        return 2
    _out(f"ok: {policy}")
    for line in [*found.lines, *found.warnings]:
        _out(line)
    return 0


@command(agents_app, "list")
def agents_list(
    as_json: Annotated[bool, Opt("--json", help="Print the catalogue as JSON.")] = False,
) -> int:
    """Print the catalogue: each agent with its sources, the patterns @known-agents stands for,
    and the paths @agent-config stands for."""
    from .adapters.config import load_catalogue

    cat = load_catalogue()
    if as_json:
        _out(json.dumps(cat.as_plain(), indent=2))
        return 0
    _out(f"agent catalogue {cat.version} ({len(cat.agents)} agents, {len(cat.config)} agent-config entries; "
         "docs/agents.md)")
    for a in cat.agents:
        _out(f"\n{a.name} [{a.id}] (checked {a.checked})")
        for key in ("emails", "names", "trailers", "pushers"):
            values = getattr(a, key)
            if values:
                _out(f"  {key}: " + ", ".join(values))
        for source in a.sources:
            _out(f"  source: {source}")
    _out("\n@agent-config: where agents read their instructions and tool permissions")
    for c in cat.config:
        _out(f"\n{c.tool} [{c.id}] (checked {c.checked})\n  paths: " + ", ".join(c.paths))
        for source in c.sources:
            _out(f"  source: {source}")
    return 0


@command(hook_app, "pre-receive")
def hook_pre_receive(
    gate_dir: Annotated[Path, Opt("--gate-dir", help="The installation directory (GIT_DIR/gate).")],
) -> int:
    """Run the pre-receive check on stdin (the installed hook runs server/launch.py server.prereceive)."""
    from server.prereceive import main as prereceive_main

    return prereceive_main(["--gate-dir", str(gate_dir)])


PlatformOpt = Annotated[str, Opt("--platform", help="auto, git, github, gitlab, gitea, gitolite or git-daemon "
                                                    "(docs/servers.md).")]


AllOpt = Annotated[Path | None, Opt("--all", help="Every repository under this directory (bare ones and work "
                                                   "trees' .git), one summary line each, then the counts.")]
DryRunOpt = Annotated[bool, Opt("--dry-run", help="Check everything and write nothing: say what each repository "
                                                  "would get.")]


def _repositories(git_dir: Path | None, all_root: Path | None, action: str,
                  run: Callable[[Path], tuple[list[str], str]], skip: Callable[[Path], str | None]) -> int:
    """GIT_DIR, or --all ROOT (server.install.over_all): print what `run` says, exit 1 if any failed."""
    from server.install import over_all

    if all_root is not None and git_dir is None:
        lines, ok = over_all(all_root, action, run, skip)
    elif git_dir is not None and all_root is None:
        lines, state = run(git_dir)
        ok = state != "FAIL"
    else:
        raise GateError("GATE-INPUT-ARGUMENT", "give a repository (GIT_DIR) or --all ROOT, not both")
    for line in lines:
        _out(line)
    return 0 if ok else 1


RepoArg = Annotated[Path | None, typer.Argument(help="The repository (bare or .git directory).")]


@command(server_app, "install")
def server_install(
    git_dir: RepoArg = None,
    policy: Annotated[Path | None, Opt("--policy", help="Policy file to install.")] = None,
    keyring: Annotated[Path | None, Opt("--keyring", help="Keyring file to install.")] = None,
    platform: PlatformOpt = "auto",
    repository_id: Annotated[str | None, Opt("--repository-id", help="Id receipts must name.")] = None,
    chain: Annotated[bool, Opt("--chain", help="Keep an existing hook, run it after the gate.")] = False,
    fsck: Annotated[bool, Opt("--fsck", help="Make git refuse malformed objects and bad modes in every "
                                             "pushed tree (receive.fsckObjects).")] = False,
    allowed_signers: Annotated[Path | None, Opt("--allowed-signers", help="SSH allowed-signers file (ssh-keygen "
                                                "format) for rules with signers and signatures.require.")] = None,
    openpgp_keys: Annotated[Path | None, Opt("--openpgp-keys", help="OpenPGP public keys (gpg --export "
                                             "[--armor]) that gpgv verifies OpenPGP-signed commits with.")] = None,
    audit_syslog: Annotated[str | None, Opt("--audit-syslog", help="Also send each audit line to this syslog "
                                                                   "socket (/dev/log: syslog or journald); off to "
                                                                   "stop.")] = None,
    config_hook: Annotated[str | None, Opt("--config-hook", help="Install the gate as git's config-defined hook "
                                                                 "hook.gate (git 2.54+) in the repository's or the "
                                                                 "system config: repository, system; off for the "
                                                                 "hook file.")] = None,
    all_root: AllOpt = None,
    replace_policy: Annotated[bool, Opt("--replace-policy", help="With --all: install the given policy and keyring "
                                                                 "even where a repository's own differ.")] = False,
    dry_run: DryRunOpt = False,
) -> int:
    """Install or update the pre-receive hook, policy, keyring and signature keys (idempotent)."""
    from server.install import InstallRequest, install_one, uninstalled

    if all_root is not None and repository_id is not None:
        raise GateError("GATE-INPUT-ARGUMENT", "--repository-id names one repository: not with --all")
    if replace_policy and all_root is None:
        raise GateError("GATE-INPUT-ARGUMENT", "--replace-policy is for --all: a repository named alone gets the "
                                               "policy and keyring given")
    request = InstallRequest(policy, keyring, platform, repository_id, chain, fsck, allowed_signers, openpgp_keys,
                             audit_syslog, config_hook, keep_own=all_root is not None and not replace_policy)
    return _repositories(git_dir, all_root, "install (dry run)" if dry_run else "install",
                         lambda repo: install_one(repo, request, dry_run), uninstalled)


@command(server_app, "upgrade")
def server_upgrade(git_dir: RepoArg = None, all_root: AllOpt = None, dry_run: DryRunOpt = False) -> int:
    """Re-install gated repositories with this version: policy and keyring validated again, hooks rewritten."""
    from server.install import not_gated, upgrade

    return _repositories(git_dir, all_root, "upgrade (dry run)" if dry_run else "upgrade",
                         lambda repo: (upgrade(repo, dry_run), "ok"), not_gated)


@command(server_app, "uninstall")
def server_uninstall(git_dir: Annotated[Path, typer.Argument(help="The repository.")]) -> int:
    """Remove the gate's hook (restoring a chained hook); keep policy, keyring and audit log."""
    from server.install import uninstall

    for line in uninstall(git_dir):
        _out(line)
    return 0


@command(server_app, "doctor")
def server_doctor(git_dir: RepoArg = None, all_root: AllOpt = None) -> int:
    """Check the installation end to end, including a real throwaway probe push."""
    from server.doctor import doctor, summary
    from server.install import not_gated

    def run(repo: Path) -> tuple[list[str], str]:
        lines, ok = (summary if all_root is not None else doctor)(repo)
        return lines, "ok" if ok else "FAIL"

    return _repositories(git_dir, all_root, "doctor", run, not_gated)


# --- the trusted side ---------------------------------------------------------------------

@command(app, "bootstrap")
def bootstrap_cmd(
    workspace: Annotated[Path, Opt("--workspace", help="The workspace the agent will use.")],
    attempt: Annotated[str | None, Opt("--attempt", help="Attempt id (default: a fresh one).")] = None,
    scoring_path: Annotated[str, Opt("--scoring-path", help="Agent-writable scoring path, relative.")]
    = ".gate/scoring",
) -> int:
    """Before the agent starts: mint a generation, wipe the scoring path, print the exports."""
    from .trusted.bootstrap import bootstrap

    _out(bootstrap(workspace, time.time(), attempt, scoring_path).exports())
    return 0


RepoDirOpt = Annotated[Path, Opt("--repo", help="The trusted side's clone.")]
KeyOpt = Annotated[Path, Opt("--key", help="Signing key file (purpose attempt).")]
RemoteOpt = Annotated[str | None, Opt("--push", help="Remote to sync the ledger with and push it to.")]


VerboseOpt = Annotated[bool, Opt("--verbose", "-v", help="Also print git's own output of the push.")]


def push_lines(output: str, verbose: bool) -> list[str]:
    """What a trusted command shows of its `git push --porcelain`: everything with -v; else the
    server's own lines (the gate's rejection: codes, hints, gate-json) and each ref it refused."""
    if verbose:
        return output.splitlines()
    shown = []
    for line in output.splitlines():
        if line.startswith("remote: "):
            if line[8:].strip():
                shown.append(line[8:].rstrip())
        elif line.startswith("!\t"):
            _, refspec, why = [*line.split("\t"), "", ""][:3]
            shown.append(f"refused: {refspec.rpartition(':')[2]} {why}".rstrip())
    return shown


def _ledger_result(state: AttemptState, result: PushResult | None, exports: str = "", kind: str = "",
                   remote: str | None = None, verbose: bool = False) -> int:
    from .git.refs import ATTEMPTS_PREFIX
    from .trusted.attempts import ALREADY

    if exports:
        _out(exports)
    if result is not None:
        ref = ATTEMPTS_PREFIX + state.attempt_id
        if result.output == ALREADY:
            _err(f"{ref} has this record already (record {state.seq}): {ALREADY}")
            return 0
        for line in push_lines(result.output, verbose):
            _err(line)
        if not result.ok:
            _err(f"ledger record {state.seq} ({kind}) of attempt {state.attempt_id} refused by {remote}; the local "
                 "ledger was put back")
            return 1
        _err(f"ledger record {state.seq} ({kind}) of attempt {state.attempt_id} accepted by {remote} on {ref}")
    return 0


@command(attempt_app, "open")
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
    verbose: VerboseOpt = False,
) -> int:
    """Record a new attempt: its generation, workspace, prompt digest, target branch and author."""
    from .adapters.config import load_keyfile
    from .checks.independence import Author
    from .trusted.attempts import append_record
    from .trusted.filereceipts import prompt_digest

    state, result = append_record(repo, attempt, load_keyfile(key), "opened", push, int(time.time()),
                                  repository=repository_id, workspace=workspace, workspace_generation=workspace_gen,
                                  prompt_sha256=prompt_digest(prompt_file), target=target,
                                  author=Author(author_model, author_vendor, initiator))
    return _ledger_result(state, result, kind="opened", remote=push, verbose=verbose)


@command(attempt_app, "select-model")
def attempt_select_model(repo: RepoDirOpt, attempt: AttemptOpt, key: KeyOpt, model: ModelOpt,
                         push: RemoteOpt = None, verbose: VerboseOpt = False) -> int:
    """Record the model selected for the attempt (once; later changes are failovers)."""
    from .adapters.config import load_keyfile
    from .trusted.attempts import append_record

    state, result = append_record(repo, attempt, load_keyfile(key), "model-selected", push, int(time.time()),
                                  model_id=model)
    return _ledger_result(state, result, f"export MODEL_ID={model}", "model-selected", push, verbose)


@command(attempt_app, "failover")
def attempt_failover(repo: RepoDirOpt, attempt: AttemptOpt, key: KeyOpt, model: ModelOpt,
                     reason: Annotated[str | None, Opt("--reason", help="Why the model changed.")] = None,
                     push: RemoteOpt = None, verbose: VerboseOpt = False) -> int:
    """Record a failover to another model: receipts of the previous model become stale."""
    from .adapters.config import load_keyfile
    from .trusted.attempts import append_record

    state, result = append_record(repo, attempt, load_keyfile(key), "failover", push, int(time.time()),
                                  model_id=model, note=reason)
    return _ledger_result(state, result, f"export MODEL_ID={model}", "failover", push, verbose)


@command(attempt_app, "close")
def attempt_close(repo: RepoDirOpt, attempt: AttemptOpt, key: KeyOpt,
                  reason: Annotated[str | None, Opt("--reason", help="Why the attempt ended.")] = None,
                  push: RemoteOpt = None, verbose: VerboseOpt = False) -> int:
    """Close the attempt: no receipt is accepted for it afterwards."""
    from .adapters.config import load_keyfile
    from .trusted.attempts import append_record

    state, result = append_record(repo, attempt, load_keyfile(key), "closed", push, int(time.time()), note=reason)
    return _ledger_result(state, result, kind="closed", remote=push, verbose=verbose)


@command(attempt_app, "show")
def attempt_show(
    repo: RepoDirOpt, attempt: AttemptOpt,
    keyring: Annotated[Path | None, Opt("--keyring", help="Verify every seal with this keyring.")] = None,
    as_json: Annotated[bool, Opt("--json", help="Print the state as JSON.")] = False,
) -> int:
    """Print what the ledger has on record for an attempt."""
    from .adapters.config import load_keyring
    from .adapters.gitrepo import GitRepo
    from .git.objects import Objects
    from .git.refs import ATTEMPTS_PREFIX
    from .records.ledger import read_state
    from .trusted.attempts import check_attempt_id, people
    from .valueclass import asdict

    check_attempt_id(attempt)
    r = GitRepo.at(repo)
    tip = r.ref_target(ATTEMPTS_PREFIX + attempt)
    if tip is None:
        raise GateError("GATE-LEDGER-MISSING", f"no {ATTEMPTS_PREFIX}{attempt} in {repo}")
    ring = None if keyring is None else load_keyring(keyring, cached=False)
    state = read_state(Objects(r), tip, ring, int(time.time()), attempt)
    if as_json:
        _out(json.dumps(asdict(state), sort_keys=True))
    else:
        for line in [*people(state), *_attempt_words(state, ring is not None)]:
            _out(line)
    return 0


def _attempt_words(state: AttemptState, verified: bool) -> list[str]:
    """`gate attempt show` after its first lines (author, reviewer, initiator): the state in dates
    and words; `--json` has the same as values."""
    from .git.refs import ATTEMPTS_PREFIX

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


#: The options `gate review record` and `gate review run` share.
ReceiptKeyOpt = Annotated[Path, Opt("--key", help="Signing key file (purpose receipt).")]
ReceiptOutOpt = Annotated[Path, Opt("--out", help="Receipt file to write (never overwritten).")]
ReviewRemoteOpt = Annotated[str | None, Opt("--remote", help="Sync the ledger and the review ref's value from here.")]
ReviewPushOpt = Annotated[bool, Opt("--push", help="Push the review ref and receipt to --remote at once.")]
TtlOpt = Annotated[int, Opt("--ttl", help="Seconds the receipt stays valid.")]
ReviewBaseOpt = Annotated[str | None, Opt("--base", help="Base revision of the reviewed change (default: the merge "
                                                         "base with the attempt's target branch on --remote).")]


def _review_landed(repo: Path, attempt: str, head: str, remote: str | None, push: bool) -> bool:
    """`--push` without `--remote` is refused; with it, a retry whose review landed already has
    nothing to do (said on stderr)."""
    from .trusted.attempts import ALREADY
    from .trusted.runner import review_landed

    if push and remote is None:
        raise GateError("GATE-INPUT-ARGUMENT", "--push needs --remote")
    if push and remote is not None and review_landed(repo, attempt, head, remote):
        _err(f"the review of {head} is on {remote} already, with its receipt: {ALREADY}")
        return True
    return False


@command(review_app, "record")
def review_record(
    repo: RepoDirOpt, attempt: AttemptOpt,
    head: Annotated[str, Opt("--head", help="The reviewed revision.")],
    model_output: Annotated[Path, Opt("--model-output", help="The model's output: JSON with verdict and reasons "
                                                              "(other members ignored), or one fenced JSON block.")],
    key: ReceiptKeyOpt, out: ReceiptOutOpt, remote: ReviewRemoteOpt = None, push: ReviewPushOpt = False,
    ttl: TtlOpt = 86400, base: ReviewBaseOpt = None,
    verbose: VerboseOpt = False,
) -> int:
    """The runner: seal a model's output file for the change from its server-side base to --head (the weaker
    path: gate review run calls the model itself)."""
    from .adapters.config import load_keyfile
    from .adapters.files import read_capped
    from .records.modeloutput import read
    from .strictjson import MAX_DOCUMENT_BYTES
    from .trusted.runner import push_review, record_review

    if push and remote is None:
        raise GateError("GATE-INPUT-ARGUMENT", "--push needs --remote")
    output = read_capped(model_output, "GATE-INPUT-ARGUMENT", "model output", MAX_DOCUMENT_BYTES)
    for note in read(output, str(model_output)).notes(str(model_output)):
        _err(note)
    now = int(time.time())
    if _review_landed(repo, attempt, head, remote, push):
        return 0
    path = record_review(repo, attempt, base, head, output, load_keyfile(key), out, remote, None, ttl, now,
                         origin=str(model_output))
    _err(f"wrote {path}")
    if push and remote is not None:
        return _pushed(push_review(repo, attempt, path, remote, now), attempt, path, remote, verbose)
    return 0


@command(review_app, "run")
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
    verbose: VerboseOpt = False,
) -> int:
    """The runner calls the model itself and seals its answer: no output file to go stale."""
    from .adapters.config import load_keyfile
    from .trusted.runner import push_review, run_review

    now = int(time.time())
    if _review_landed(repo, attempt, head, remote, push):
        return 0
    notes: list[str] = []
    path = run_review(repo, attempt, base, head, prompt_file, model_command, load_keyfile(key), out, remote, None,
                      ttl, now, model_timeout, notes=notes)
    for note in notes:
        _err(note)
    _err(f"wrote {path}")
    if push and remote is not None:
        return _pushed(push_review(repo, attempt, path, remote, now), attempt, path, remote, verbose)
    return 0


def _pushed(result: PushResult, attempt: str, receipt: Path, remote: str, verbose: bool) -> int:
    """The review push's summary line, after the server's lines (git's own with -v)."""
    from .git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX
    from .trusted.attempts import ALREADY

    if result.output == ALREADY:
        _err(f"the review of attempt {attempt} is on {remote} already: {ALREADY}")
        return 0
    for line in push_lines(result.output, verbose):
        _err(line)
    if result.ok:
        _err(f"review ref {REVIEW_PREFIX}{attempt} accepted by {remote}, receipt {receipt.name} recorded on "
             f"{RECEIPTS_PREFIX}{attempt}")
        return 0
    _err(f"review ref {REVIEW_PREFIX}{attempt} refused by {remote}; nothing of it landed (one atomic push)")
    return 1


@command(review_app, "push")
def review_push(
    repo: RepoDirOpt, attempt: AttemptOpt,
    receipt: Annotated[Path, Opt("--receipt", help="The receipt file to push.")],
    remote: Annotated[str, Opt("--remote", help="The server remote.")],
    verbose: VerboseOpt = False,
) -> int:
    """Push a receipt with its review ref (refs/heads/review/runner/ID) in one atomic push."""
    from .trusted.runner import push_review

    return _pushed(push_review(repo, attempt, receipt, remote, int(time.time())), attempt, receipt, remote, verbose)


def _seconds(text: str, flag: str = "--older-than") -> int:
    """'30d', '12h', '90m', '3600s' or '0'."""
    from .configuration.durations import parse

    return parse(text, flag)


@command(ledger_app, "archive")
def ledger_archive(
    repo: RepoDirOpt,
    remote: Annotated[str, Opt("--remote", help="The server remote.")],
    older_than: Annotated[str, Opt("--older-than", help="Archive attempts closed at least this long ago "
                                                        "(30d, 12h, 0).")],
    batch: Annotated[int, Opt("--batch", help="Attempts per push (1 to 5000).")] = 200,
    dry_run: Annotated[bool, Opt("--dry-run", help="Say what would be archived; push nothing.")] = False,
    verbose: VerboseOpt = False,
) -> int:
    """Fold closed attempts into refs/gate/archive, then remove their refs (two pushes per batch; safe to re-run)."""
    from .trusted.ledgerarchive import archive_closed

    done = archive_closed(repo, remote, _seconds(older_than), int(time.time()), batch=batch, dry_run=dry_run)
    if dry_run:
        _out(f"would archive {len(done.attempts)} attempt(s); pushed nothing (--dry-run)")
    else:
        _out(f"archived {len(done.attempts)} attempt(s) in {done.pushes} push(es)")
    for text in done.skipped:
        _err(f"skipped {text}")
    for what, output in done.refused:
        for line in push_lines(output, verbose) or output.splitlines()[-1:]:
            _err(line)
        _err(f"{what} refused by {remote}; what it was to remove stays, and a re-run goes on from here")
    return 0 if done.ok else 1


@command(app, "approve")
def approve_cmd(
    ref: Annotated[str, Opt("--ref", help="The ref the agent's push updates (full name).")],
    old: Annotated[str, Opt("--old", help="The ref's value on the server (the update's old id).")],
    new: Annotated[str, Opt("--new", help="The commit the agent pushes (the update's new id).")],
    path: Annotated[list[str], Opt("--path", help="A frozen path to approve; repeat for more.")],
    repository_id: Annotated[str, Opt("--repository-id", help="The repository's id on the server.")],
    approver: Annotated[str | None, Opt("--approver", help="Your name as [approvals] approvers (and your key) name "
                                                           "you (default: git config gate.approver).")] = None,
    key: Annotated[Path | None, Opt("--key", help="Key file of purpose approval, gate keys generate (default: git "
                                                  "config gate.approvalKey).")] = None,
    ssh_key: Annotated[Path | None, Opt("--ssh-key", help="SSH private key listed in the server's allowed "
                                                          "signers for you (default: git config "
                                                          "gate.approvalSshKey).")] = None,
    expires: Annotated[str, Opt("--expires", help="How long the approval may wait for its push (24h, 3d).")] = "24h",
    reason: Annotated[str, Opt("--reason", help="Why (recorded in the approval).")] = "",
    repo: Annotated[Path, Opt("--repo", help="The repository holding the commits.")] = Path("."),
    remote: Annotated[str | None, Opt("--remote", help="Push the approval there (default origin; "
                                                       "--no-push to keep it local).")] = "origin",
    no_push: Annotated[bool, Opt("--no-push", help="Write the approval locally only.")] = False,
    yes: Annotated[bool, Opt("--yes", help="Approve without asking (after showing the changes).")] = False,
    verbose: VerboseOpt = False,
) -> int:
    """Approve an agent's write of frozen paths in exactly one ref update (the rejection prints this command)."""
    from .trusted import approve

    prepared = approve.prepare(repo, repository_id, ref, old, new, path, approver, key, ssh_key, expires, reason)
    _out(prepared.changes)
    req = prepared.request
    if not yes and not typer.confirm(f"Approve these writes of {', '.join(req.paths)} on {ref} as {req.approver}?"):
        _err("not approved")
        return 1
    lines, ok, pushed = approve.complete(repo, prepared, None if no_push else remote, int(time.time()))
    for line in [*lines[:1], *push_lines(pushed, verbose), *lines[1:]]:
        _out(line)
    return 0 if ok else 1


@command(approvals_app, "list")
def approvals_list(
    repo: Annotated[Path, Opt("--repo", help="The repository (a clone: git fetch origin '+refs/gate/*:refs/gate/*').")]
    = Path("."),
) -> int:
    """Every approval the repository holds: id, approver, ref update, paths, expiry, and whether it was used."""
    from server.verify import approval_verifier

    from .trusted.approve import listing_lines

    for line in listing_lines(repo, approval_verifier(repo), int(time.time())):
        _out(line)
    return 0


# --- attestations -----------------------------------------------------------------------

@command(attest_app, "export")
def attest_export(
    repo: Annotated[Path, Opt("--repo", help="The server's repository, or a clone that fetched "
                                             "'+refs/gate/*:refs/gate/*'.")],
    key: Annotated[Path, Opt("--key", help="Key file of purpose attestation (gate keys generate --alg ed25519 "
                                           "--purpose attestation).")],
    ref: Annotated[str | None, Opt("--ref", help="Only updates of refs matching this ref pattern "
                                                 "(refs/heads/review/runner/*, refs/heads/main).")] = None,
    since: Annotated[str | None, Opt("--since", help="Only records made at or after this date or time "
                                                     "(2026-01-31, 2026-01-31T12:00:00Z).")] = None,
    out: Annotated[Path | None, Opt("--out", help="Write the bundle here (never overwritten; default: "
                                                  "stdout).")] = None,
    keyring: Annotated[Path | None, Opt("--keyring", help="The server's keyring (default: the installed "
                                                          "one).")] = None,
    policy: Annotated[Path | None, Opt("--policy", help="The server's policy, for approvals (default: the "
                                                        "installed one).")] = None,
    allowed_signers: Annotated[Path | None, Opt("--allowed-signers", help="The server's allowed-signers file, for "
                                                                          "SSH-signed approvals.")] = None,
    repository_id: Annotated[str | None, Opt("--repository-id", help="The server's repository id (default: the "
                                                                     "installed one).")] = None,
    resource_uri: Annotated[str | None, Opt("--resource-uri", help="The statements' resourceUri, e.g. "
                                                                   "git+https://git.example.com/org/project "
                                                                   "(default: push-gate:<repository id>).")] = None,
) -> int:
    """Export each accepted review-ref update and used approval, verified again, as DSSE-sealed in-toto
    statements (JSON Lines: an .intoto.jsonl bundle)."""
    from server.verify import attest_sources

    from .adapters.config import load_keyfile
    from .adapters.files import write_new
    from .configuration.policy import RefGlob
    from .records.attestation import parse_since
    from .trusted.attest import export

    try:
        pattern = None if ref is None else RefGlob.compile(ref)
    except ValueError as exc:
        raise GateError("GATE-INPUT-ARGUMENT", f"--ref: {exc}") from None
    if out is not None and (out.exists() or out.is_symlink()):
        raise GateError("GATE-INPUT-ARGUMENT", f"{out} exists; the export never overwrites a file")
    sources = attest_sources(repo, keyring, policy, allowed_signers, repository_id)
    done = export(repo, sources, load_keyfile(key), int(time.time()), pattern,
                  None if since is None else parse_since(since), resource_uri)
    bundle = b"".join(done.lines)
    if out is None:
        sys.stdout.buffer.write(bundle)
        sys.stdout.flush()
    else:
        write_new(out, bundle)
    for r in done.refused:
        _err(f"refused {r.what}:")
        for f in r.failures:
            _err(f"  {f.field}: {f.code}: {f.detail}")
    _err(f"exported {len(done.lines)} statement(s): {done.reviews} review(s), {done.approvals} approval(s)"
         + (f"; GATE-ATTEST-REFUSED: {len(done.refused)} record(s) not exported" if done.refused else ""))
    return 1 if done.refused else 0


@command(attest_app, "public-key")
def attest_public_key(
    key: Annotated[Path, Opt("--key", help="Key file of purpose attestation.")],
    as_json: Annotated[bool, Opt("--json", help="Print {keyid, algorithm, public_key_pem} as JSON.")] = False,
) -> int:
    """Print the attestation key's public half as PEM (SubjectPublicKeyInfo), for the statements' verifiers, and
    its key id (on stderr; with --json, both on stdout)."""
    from .adapters.config import load_keyfile
    from .records.attestation import public_pem

    signing = load_keyfile(key)
    pem = public_pem(signing)
    if as_json:
        _out(json.dumps({"keyid": signing.id, "algorithm": signing.algorithm, "public_key_pem": pem}, sort_keys=True))
        return 0
    _out(pem)
    _err(f"key id: {signing.id} (the keyid of every statement this key seals)")
    return 0


@command(app, "demo")
def demo_cmd(
    keep: Annotated[Path | None, Opt("--keep", help="Work in this directory and keep it.")] = None,
) -> int:
    """Show the product: the incident replayed against a real bare repository."""
    from server.demo import run_demo

    return run_demo(keep)


def _own_packages() -> None:
    """`server` and `hooks` are push-gate's own, whatever else the environment ships under those
    names (server/launch.py binds them, as it does for the installed hook)."""
    import os
    import runpy

    launch = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "server", "launch.py")
    runpy.run_path(launch, run_name="gate_launch")["bind"]()


def main(argv: Sequence[str] | None = None) -> int:
    """`gate ARGS`: the single error boundary (the console script, and the tests, in process).

    A `GateError` prints its code and reason and returns the exit class its code names; a
    usage error returns 2; anything unexpected prints its traceback and returns 3, reported
    as `GATE-CLI-INTERNAL`. Nothing maps an error to 0."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        _own_packages()
    except ImportError as exc:  # another distribution's server or hooks package came first
        _err(f"GATE-CONFIG-INSTALL: {exc}")
        return 2
    try:
        result = app(args=args, prog_name="gate", standalone_mode=False)
    except GateError as exc:
        _err(f"{exc.code}: {exc.detail}")
        return exc.exit_code
    except typer.Abort:
        _err("aborted")
        return 1
    except typer.TyperException as exc:  # usage errors: typer's message and its status (2)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _err(exc.format_message())
        return exc.exit_code or 2
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception as exc:  # the boundary: never 0
        traceback.print_exc()
        _err(f"GATE-CLI-INTERNAL: {type(exc).__name__}: {exc}")
        return 3
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
