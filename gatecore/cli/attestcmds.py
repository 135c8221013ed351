"""`gate attest export|public-key`: what the gate accepted, as signed in-toto attestations."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from ..errors import GateError
from .clicommon import Opt, command, err_line, out_line

group = typer.Typer(no_args_is_help=True, help="What the gate accepted, as signed in-toto attestations.")


@command(group, "export")
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

    from ..adapters.config import load_keyfile
    from ..adapters.files import write_new
    from ..configuration.policy import RefGlob
    from ..records.attestation import parse_since
    from ..trusted.attest import export

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
        err_line(f"refused {r.what}:")
        for f in r.failures:
            err_line(f"  {f.field}: {f.code}: {f.detail}")
    err_line(f"exported {len(done.lines)} statement(s): {done.reviews} review(s), {done.approvals} approval(s)"
         + (f"; GATE-ATTEST-REFUSED: {len(done.refused)} record(s) not exported" if done.refused else ""))
    return 1 if done.refused else 0


@command(group, "public-key")
def attest_public_key(
    key: Annotated[Path, Opt("--key", help="Key file of purpose attestation.")],
    as_json: Annotated[bool, Opt("--json", help="Print {keyid, algorithm, public_key_pem} as JSON.")] = False,
) -> int:
    """Print the attestation key's public half as PEM (SubjectPublicKeyInfo), for the statements' verifiers, and
    its key id (on stderr; with --json, both on stdout)."""
    from ..adapters.config import load_keyfile
    from ..records.attestation import public_pem

    signing = load_keyfile(key)
    pem = public_pem(signing)
    if as_json:
        out_line(json.dumps({"keyid": signing.id, "algorithm": signing.algorithm, "public_key_pem": pem},
                            sort_keys=True))
        return 0
    out_line(pem)
    err_line(f"key id: {signing.id} (the keyid of every statement this key seals)")
    return 0
