"""`gate server install|upgrade|uninstall|doctor`: the pre-receive hook on a server's repositories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ..errors import GateError
from .clicommon import Opt, command, err_line, out_line

group = typer.Typer(no_args_is_help=True, help="Install, remove and check the server hook.")


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
        out_line(line)
    return 0 if ok else 1


RepoArg = Annotated[Path | None, typer.Argument(help="The repository (bare or .git directory).")]


@command(group, "install")
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


@command(group, "upgrade")
def server_upgrade(git_dir: RepoArg = None, all_root: AllOpt = None, dry_run: DryRunOpt = False) -> int:
    """Re-install gated repositories with this version: policy and keyring validated again, hooks rewritten."""
    from server.install import not_gated, upgrade

    return _repositories(git_dir, all_root, "upgrade (dry run)" if dry_run else "upgrade",
                         lambda repo: (upgrade(repo, dry_run), "ok"), not_gated)


@command(group, "uninstall")
def server_uninstall(git_dir: Annotated[Path, typer.Argument(help="The repository.")]) -> int:
    """Remove the gate's hook (restoring a chained hook); keep policy, keyring and audit log."""
    from server.install import uninstall

    for line in uninstall(git_dir):
        out_line(line)
    return 0


@command(group, "doctor")
def server_doctor(git_dir: RepoArg = None, all_root: AllOpt = None) -> int:
    """Check the installation end to end, including a real throwaway probe push."""
    from server.doctor import doctor, summary
    from server.install import not_gated

    def run(repo: Path) -> tuple[list[str], str]:
        lines, ok = (summary if all_root is not None else doctor)(repo)
        return lines, "ok" if ok else "FAIL"

    return _repositories(git_dir, all_root, "doctor", run, not_gated)


@command(group, "audit")
def server_audit(
    git_dir: Annotated[Path, typer.Argument(help="The repository (its GIT_DIR/gate/audit.log).")],
    since: Annotated[str | None, Opt("--since", help="Only lines from this long ago (2h, 7d) or since this UTC "
                                                     "date or time (2026-12-01, 2026-12-01T10:00:00Z).")] = None,
    codes: Annotated[list[str] | None, Opt("--code", help="Only decisions with this code (a glob: GATE-APPROVAL-*); "
                                                         "repeat for more.")] = None,
    pusher: Annotated[list[str] | None, Opt("--pusher", help="Only pushes by this pusher (a glob: agent-*); "
                                                             "repeat for more.")] = None,
    ref: Annotated[list[str] | None, Opt("--ref", help="Only pushes of this ref (a glob: refs/heads/*); repeat for "
                                                       "more.")] = None,
    as_json: Annotated[bool, Opt("--json", help="Print the matching lines as the log holds them (JSON).")] = False,
    include_probes: Annotated[bool, Opt("--include-probes", help="Also show gate server doctor's probe pushes.")]
    = False,
) -> int:
    """Read the audit log in words: each push decided, and what landed, filtered by time, code, pusher and ref."""
    import time
    from fnmatch import fnmatchcase

    from server import audit, installation
    from server.install import GATE_DIR_NAME, git_dir_of

    from ..codes import CODES

    wanted = tuple(codes or ())
    unknown = [c for c in wanted if not any(fnmatchcase(known, c) for known in CODES)]
    if unknown:
        raise GateError("GATE-INPUT-ARGUMENT", f"--code {unknown[0]} names no code (gate explain --list lists them)")
    now = int(time.time())
    query = audit.Query(None if since is None else audit.since_value(since, now), wanted, tuple(pusher or ()),
                        tuple(ref or ()), include_probes)
    log = git_dir_of(git_dir) / GATE_DIR_NAME / installation.AUDIT_FILE
    found = audit.report(log, query, as_json)
    for line in found.lines:
        out_line(line)
    for note in found.notes:
        err_line(note)
    return 1 if found.unreadable else 0  # a line that is no JSON object: the log was written by something else
