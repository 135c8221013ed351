"""OpenPGP commit signatures, verified by `gpgv` against the server's OpenPGP keyring.

The gate verifies SSH signatures itself (`gatecore.signing.sshsig`); OpenPGP it leaves to GnuPG's
`gpgv`, the verify-only tool made for this: no trust database, no agent, no home directory
(it runs with one that cannot exist), and only the keys in the
keyring the admin installed (`gate server install --openpgp-keys FILE`). One `gpgv` per
signed commit, as `git verify-commit` runs one `gpg` per commit. Expiry and revocation are `gpgv`'s
judgement at the time of the push (SSH keys' validity is judged at the commit's date).

`gpgv`'s machine-readable status lines decide, never its exit status alone:

* exactly one signature, `GOODSIG` and `VALIDSIG`: ok; the principals are the email of the
  key's primary user ID (as `gpgv` reports it) and `openpgp:<primary key fingerprint>`;
* `BADSIG`, `EXPSIG`, anything unrecognised or several signatures: bad;
* `NO_PUBKEY` (the key is not in the keyring), `EXPKEYSIG`, `REVKEYSIG`: unknown key;
* no `gpgv` on the machine: unsupported (`GATE-SIG-UNSUPPORTED`, with the reason).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from typing import TYPE_CHECKING

from ..errors import GateError

if TYPE_CHECKING:
    from .files import StrPath

_EMAIL = re.compile(r"<([^<>]*)>\s*$")
_ARMOR_BEGIN = b"-----BEGIN PGP PUBLIC KEY BLOCK-----"
_ARMOR_END = b"-----END PGP PUBLIC KEY BLOCK-----"
#: gpgv's home: a directory that cannot exist, so no account's keys, options or trust database count
NO_HOME = os.devnull + "/gate-gpgv-home"
#: larger is no real signature (an RSA-16384 one armors to about 3 KB), and it must fit in a pipe
MAX_SIGNATURE_BYTES = 32768
GPGV_TIMEOUT = 30.0  # seconds per signature: a hung gpgv is GATE-HOOK-DEADLINE, not a hung push


def dearmor_keyring(data: bytes, origin: str) -> bytes:
    """A keyring in the binary form `gpgv --keyring` reads, from `gpg --export [--armor]` output.

    Raises ValueError with a one-line reason when it is neither."""
    text = data.strip()
    if text.startswith(_ARMOR_BEGIN):
        out = bytearray()
        for block in text.split(_ARMOR_BEGIN)[1:]:
            body, sep, _ = block.partition(_ARMOR_END)
            if not sep:
                raise ValueError(f"{origin}: an armored key block without its END line")
            head, blank, rest = body.replace(b"\r\n", b"\n").lstrip(b"\n").partition(b"\n\n")
            lines = (rest if blank else head).split(b"\n")
            b64 = b"".join(line.strip() for line in lines if line.strip() and not line.startswith(b"="))
            try:
                out += base64.b64decode(b64, validate=True)
            except ValueError:
                raise ValueError(f"{origin}: an armored key block is not valid base64") from None
        data = bytes(out)
    if not data or not _is_public_key_packet(data[0]):
        raise ValueError(f"{origin}: not an OpenPGP public keyring (export one with gpg --export --armor KEYID)")
    return data


def _is_public_key_packet(ctb: int) -> bool:
    if not ctb & 0x80:
        return False
    tag = ctb & 0x3F if ctb & 0x40 else (ctb >> 2) & 0x0F
    return tag == 6


class OpenPGPVerifier:
    """Verifies detached OpenPGP signatures with `gpgv` and one keyring (None: no keys installed)."""

    def __init__(self, keyring: StrPath | None, program: str | None = None) -> None:
        self.keyring = keyring
        self.program = program if program is not None else shutil.which("gpgv")

    def verify(self, payload: bytes, armored: bytes) -> tuple[str, tuple[str, ...], str]:
        """(status, principals, reason); status is ok | bad | unknown-key | unsupported."""
        if self.program is None:
            return "unsupported", (), "an OpenPGP signature, and gpgv is not installed to verify it"
        if self.keyring is None:
            return "unknown-key", (), "an OpenPGP signature, and no OpenPGP keys are installed"
        if len(armored) > MAX_SIGNATURE_BYTES:
            return "bad", (), f"an OpenPGP signature of more than {MAX_SIGNATURE_BYTES} bytes"
        # The signature goes through a pipe it fits in (no temporary file); the payload on stdin.
        read_end, write_end = os.pipe()
        try:
            os.write(write_end, armored)
            os.close(write_end)
            write_end = -1
            proc = subprocess.run(
                [self.program, "--enable-special-filenames", "--homedir", NO_HOME,
                 "--keyring", os.path.abspath(self.keyring), "--status-fd", "1", "--", f"-&{read_end}", "-"],
                input=payload, capture_output=True, check=False, timeout=GPGV_TIMEOUT, pass_fds=(read_end,),
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"})
        except subprocess.TimeoutExpired:
            raise GateError("GATE-HOOK-DEADLINE", "gpgv ran out of time verifying a signature") from None
        except OSError as exc:
            return "unsupported", (), f"cannot run gpgv: {exc.strerror}"
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
        return judge_status(proc.stdout.decode("utf-8", "replace"))


def judge_status(status: str) -> tuple[str, tuple[str, ...], str]:
    """What `gpgv --status-fd` output says about one detached signature (pure)."""
    words = [line[len("[GNUPG:] "):].split(" ") for line in status.splitlines() if line.startswith("[GNUPG:] ")]
    seen = {w[0] for w in words}
    if sum(1 for w in words if w[0] == "NEWSIG") > 1:
        return "bad", (), "more than one OpenPGP signature"
    if "BADSIG" in seen:
        return "bad", (), "the OpenPGP signature does not verify"
    if "REVKEYSIG" in seen:
        return "unknown-key", (), "signed by a revoked OpenPGP key"
    if "EXPKEYSIG" in seen:
        return "unknown-key", (), "signed by an expired OpenPGP key"
    if "EXPSIG" in seen:
        return "bad", (), "the OpenPGP signature has expired"
    if "NO_PUBKEY" in seen:
        key = next((w[1] for w in words if w[0] == "NO_PUBKEY" and len(w) > 1), "?")
        return "unknown-key", (), f"signed by OpenPGP key {key}, which is not in the installed keyring"
    good = [w for w in words if w[0] == "GOODSIG"]
    valid = [w for w in words if w[0] == "VALIDSIG"]
    if len(good) != 1 or len(valid) != 1 or len(valid[0]) < 11 or "ERRSIG" in seen:
        return "bad", (), "gpgv did not report one good signature"
    uid = " ".join(good[0][2:])
    m = _EMAIL.search(uid)
    principals = (m.group(1) if m else uid, "openpgp:" + valid[0][10])
    return "ok", principals, f"good OpenPGP signature by {uid}"
