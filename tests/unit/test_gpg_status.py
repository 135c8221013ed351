"""What gpgv's status lines mean to the gate (pure), and the keyring forms install accepts."""

from __future__ import annotations

import base64

import pytest

from gatecore.adapters.gpg import dearmor_keyring, judge_status

FPR = "2D65725CEE1575F61EEDC18C68A607A348CE5E69"
GOOD = (f"[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 68A607A348CE5E69 Alice <alice@example.com>\n"
        f"[GNUPG:] VALIDSIG {FPR} 2026-12-03 1796322639 0 4 0 1 10 00 {FPR}\n")


def test_one_good_signature_gives_the_uid_email_and_the_fingerprint() -> None:
    assert judge_status(GOOD)[:2] == ("ok", ("alice@example.com", f"openpgp:{FPR}"))


@pytest.mark.parametrize(("status", "expected"), [
    ("[GNUPG:] NEWSIG\n[GNUPG:] BADSIG 68A6 Alice <a@x>\n", "bad"),
    ("[GNUPG:] NEWSIG\n[GNUPG:] EXPSIG 68A6 Alice <a@x>\n", "bad"),
    ("[GNUPG:] NEWSIG\n[GNUPG:] EXPKEYSIG 68A6 Alice <a@x>\n", "unknown-key"),
    ("[GNUPG:] NEWSIG\n[GNUPG:] REVKEYSIG 68A6 Alice <a@x>\n", "unknown-key"),
    ("[GNUPG:] NEWSIG\n[GNUPG:] ERRSIG 68A6 1 10 00 1 9 -\n[GNUPG:] NO_PUBKEY 68A6\n", "unknown-key"),
    ("[GNUPG:] NEWSIG\n[GNUPG:] ERRSIG 68A6 1 10 00 1 4 -\n", "bad"),  # unknown algorithm, no key missing
    (GOOD + GOOD, "bad"),  # two signatures in one gpgsig header
    (GOOD.replace("VALIDSIG", "XVALIDSIG"), "bad"),  # a good signature gpgv did not also call valid
    ("", "bad"),
    ("gpgv: Good signature from \"Alice\"\n", "bad"),  # human text is never read
])
def test_anything_but_one_good_and_valid_signature_is_refused(status: str, expected: str) -> None:
    assert judge_status(status)[0] == expected


def test_armored_and_binary_keyrings_read_the_same() -> None:
    binary = bytes([0x99, 0x00, 0x02, 0x04, 0x00]) + b"rest"
    body = base64.b64encode(binary).decode()
    armored = f"-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: x\n\n{body}\n=AAAA\n-----END PGP PUBLIC KEY BLOCK-----\n"
    assert dearmor_keyring(armored.encode(), "k") == binary == dearmor_keyring(binary, "k")
    assert dearmor_keyring(bytes([0xC6, 0x01, 0x04]), "k")  # new-format packet header


@pytest.mark.parametrize("data", [
    b"", b"hello", bytes([0x95, 0x01]),  # a secret key packet (tag 5)
    b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAAAA\n",  # no END line
    b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!\n-----END PGP PUBLIC KEY BLOCK-----\n",
])
def test_what_is_not_a_public_keyring_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        dearmor_keyring(data, "k")
