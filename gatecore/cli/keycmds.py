"""`gate keys generate|check`: seal keys and keyrings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .clicommon import Opt, command, out_line

group = typer.Typer(no_args_is_help=True, help="Make and check seal keys and keyrings.")


@command(group, "generate")
def keys_generate(
    alg: Annotated[str, Opt("--alg", help="ed25519 or hmac-sha256.")],
    key_id: Annotated[str, Opt("--id", help="Key id.")],
    purpose: Annotated[str, Opt("--purpose", help="receipt, attempt, approval or attestation.")],
    out: Annotated[Path, Opt("--out", help="Private key file to create (mode 0600).")],
) -> int:
    """Make a key; write the private half to --out; print the keyring entry (TOML)."""
    from ..adapters.files import write_private
    from ..configuration.configschema import generate_key

    made = generate_key(alg, key_id, purpose)
    write_private(out, made.keyfile_text)
    out_line(made.keyring_entry)
    return 0


@command(group, "check")
def keys_check(keyring: Annotated[Path, typer.Argument(help="Keyring file.")]) -> int:
    """Validate a keyring file; print each error with its location."""
    from ..adapters.config import load_keyring

    ring = load_keyring(keyring, cached=False)
    for k in ring.values():
        state = "revoked" if k.revoked else "active"
        out_line(f"{k.id}: {k.algorithm} {k.purpose} {state}")
    out_line(f"ok: {len(ring)} keys")
    return 0
