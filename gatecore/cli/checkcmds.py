"""`gate check`: a proposed change judged as the pre-receive hook judges a push (a forge's required check)."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import GateError
from .clicommon import Opt, command, out_line

if TYPE_CHECKING:
    from server.forgecheck import Request

    from ..findings import Violation

top = typer.Typer()

FORMATS = ("text", "json", "github", "gitlab")


@command(top, "check")
def check_cmd(
    head: Annotated[str, Opt("--head", help="The commit that would land: the one the forge's event names (a pull "
                                            "request's head, a merge group's head_sha).")],
    ref: Annotated[str, Opt("--ref", help="Where it lands: the target branch (refs/heads/main), or a review ref "
                                          "(refs/heads/review/runner/ID), judged as it stands.")],
    base: Annotated[str | None, Opt("--base", help="The side already judged: commits it reaches are not (a merge "
                                                   "group's base_sha). The policy is then read from it: never a "
                                                   "branch point the change's author chose.")]
    = None,
    target: Annotated[str | None, Opt("--target", help="Instead of --base: the target branch's tip; the base is "
                                                       "its merge base with --head.")] = None,
    merge_group: Annotated[bool, Opt("--merge-group", help="The head is a merge queue's group, landing on --base "
                                                           "itself.")] = False,
    onto: Annotated[str | None, Opt("--onto", help="For a review ref: the branch the review lands on (default: the "
                                                   "one its ledger names).")] = None,
    repo: Annotated[Path, Opt("--repo", help="The forge's clone (with the base, the head and refs/gate/* "
                                             "fetched).")] = Path("."),
    pusher: Annotated[str, Opt("--pusher", help="The account the forge names for the event (github.actor, "
                                                "GITLAB_USER_LOGIN); '' unknown.")] = "",
    policy: Annotated[Path | None, Opt("--policy", help="Policy file (default: .gate/policy.toml as committed in "
                                                        "the target's tip, or in --base; never the head).")] = None,
    keyring: Annotated[Path | None, Opt("--keyring", help="Keyring file (default: .gate/keyring.toml as committed "
                                                          "where the policy is).")] = None,
    allowed_signers: Annotated[Path | None, Opt("--allowed-signers", help="SSH allowed-signers file, for rules "
                                                                          "that read signatures.")] = None,
    openpgp_keys: Annotated[Path | None, Opt("--openpgp-keys", help="OpenPGP public keys (gpg --export) that "
                                                                    "verify signed commits, the forge's own "
                                                                    "among them.")] = None,
    repository_id: Annotated[str, Opt("--repository-id", help="The id receipts and approvals name (org/project)."
                                      )] = "",
    output: Annotated[str, Opt("--format", help="text, json, github (annotations, and the job summary in "
                                                "$GITHUB_STEP_SUMMARY) or gitlab (a Code Quality report in "
                                                "--report).")] = "text",
    report: Annotated[Path | None, Opt("--report", help="--format gitlab: the report file to write.")] = None,
    summary: Annotated[Path | None, Opt("--summary", envvar="GITHUB_STEP_SUMMARY",
                                        help="--format github: the job summary file to append to.")] = None,
) -> int:
    """Judge a proposed change (a pull request, merge request or merge-queue group) as the pre-receive hook
    judges a push: exit 0 accepted, 1 rejected, 2 configuration, 3 internal (docs/forges.md)."""
    from server.forgecheck import Request, check

    if output not in FORMATS:
        raise GateError("GATE-INPUT-ARGUMENT", f"--format {output}: one of {', '.join(FORMATS)}")
    if output == "gitlab" and report is None:
        raise GateError("GATE-INPUT-ARGUMENT", "--format gitlab writes its report to --report FILE")
    req = Request(repo, ref, head, base, target, merge_group, onto, pusher, policy, keyring, allowed_signers,
                  openpgp_keys, repository_id)
    try:
        checked = check(req)
    except GateError as exc:  # nothing decided: said in the form's own place too, then the boundary's exit
        _undecided(exc, output, req, report, summary)
        raise
    judged = checked.judged
    decision = judged.verdict.decision
    shown = f"push-gate: judged {checked.head} on {ref}, from {checked.base} (policy {checked.origin}): {decision}"
    lines = judged.lines(cap=checked.policy.max_violations_shown, gitlab=False, what="change")
    if output == "json":
        out_line(json.dumps({"decision": decision, "exit": judged.verdict.exit_code, "ref": ref, "base": checked.base,
                             "head": checked.head, "policy": checked.origin,
                             "violations": [v.as_dict() for v in judged.violations]}, sort_keys=True))
    elif output == "github":
        from ..checks.forgereport import github_annotations, github_guarded, github_summary

        for line in github_annotations(judged.violations):
            out_line(line)
        for line in github_guarded([shown, *lines], secrets.token_hex(16)):
            out_line(line)
        if summary is not None:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(github_summary(judged.violations, verdict=decision, base=checked.base, head=checked.head,
                                        ref=ref))
    else:
        for line in [shown, *lines]:
            out_line(line)
        if output == "gitlab" and report is not None:
            _gitlab_report(report, judged.violations)
    sys.stdout.flush()
    return judged.verdict.exit_code


def _error_violation(exc: GateError, ref: str) -> Violation:
    from ..findings import Violation

    return Violation(exc.code, ref, exc.detail)


def _undecided(exc: GateError, output: str, req: Request, report: Path | None, summary: Path | None) -> None:
    """A check that could not decide (the clone lacks the head, no policy, ...) says so where each
    form's reader looks, as a rejection would: a JSON document on stdout, an annotation and the job
    summary on GitHub, the Code Quality report on GitLab (a report left from an earlier run would
    show a stale verdict). The exit is the error's code's."""
    if output == "json":
        out_line(json.dumps({"decision": "error", "exit": exc.exit_code, "code": exc.code, "detail": exc.detail,
                             "ref": req.ref}, sort_keys=True))
    elif output == "github":
        from ..checks.forgereport import github_command, github_summary

        out_line(github_command("error", f"{exc.code}: {exc.detail}", [("title", exc.code)]))
        if summary is not None:
            side = req.base or (f"the merge base with {req.target}" if req.target else "")
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(github_summary([_error_violation(exc, req.ref)], verdict="error", base=side, head=req.head,
                                        ref=req.ref))
    elif output == "gitlab" and report is not None:
        _gitlab_report(report, [_error_violation(exc, req.ref)])
    sys.stdout.flush()


def _gitlab_report(path: Path, violations: list[Violation]) -> None:
    """The Code Quality report, written whole (a retried job's replaced)."""
    from ..adapters.files import atomic_write
    from ..checks.forgereport import gitlab_codequality

    atomic_write(str(path), json.dumps(gitlab_codequality(violations), indent=2).encode("utf-8") + b"\n", 0o644)
