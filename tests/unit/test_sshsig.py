"""SSH commit signatures: `sshsig.verify` says what `git verify-commit` (`%G?`) and `ssh-keygen -Y verify` say.

Real keys from `ssh-keygen`, real commits signed by `git commit -S` with `gpg.format=ssh`, and
git's own verdict on every case; signatures git cannot make (another namespace, another hash,
SHA-1 RSA) are built here with `cryptography` and checked against `ssh-keygen -Y verify` too.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from support.gitutil import WorkRepo, git_env
from support.keygen import needs_ssh_keygen, ssh_key

from gatecore.git.grammar import split_signature
from gatecore.signing import allowedsigners, sshsig
from gatecore.signing.signatures import signature_kind

pytestmark = needs_ssh_keygen

UTC_ENV = {"TZ": "UTC"}
#: git's %G? letter, as verify's status.
GIT_STATUS = {"G": "ok", "U": "unknown-key", "B": "bad"}


@dataclass(frozen=True)
class Key:
    path: Path  # the private key file
    public: str  # "type base64 comment"

    @property
    def type_and_blob(self) -> str:
        return " ".join(self.public.split()[:2])

    def private(self) -> ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey:
        key = serialization.load_ssh_private_key(self.path.read_bytes(), None)
        assert isinstance(key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey)
        return key


def run(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(list(args), input=input, capture_output=True, env=git_env(**UTC_ENV))


KINDS = {"ed25519": ["-t", "ed25519"], "ecdsa256": ["-t", "ecdsa", "-b", "256"],
         "ecdsa384": ["-t", "ecdsa", "-b", "384"], "ecdsa521": ["-t", "ecdsa", "-b", "521"],
         "rsa": ["-t", "rsa", "-b", "2048"]}


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Key]:
    base = tmp_path_factory.mktemp("keys")
    out = {}
    for name, args in [*KINDS.items(), ("other", ["-t", "ed25519"])]:
        out[name] = Key(base / name, ssh_key(base / name, f"{name}@test", args))
    return out


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> WorkRepo:
    return WorkRepo(tmp_path_factory.mktemp("repo") / "work")


def signed_commit(repo: WorkRepo, key: Key, message: str = "signed change", date: str | None = None) -> str:
    env = {**UTC_ENV, **({"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date} if date else {})}
    repo.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key.path}", "commit", "-q", "-S",
             "--allow-empty", "-m", message, env=env)
    return repo.head()


def raw_commit(repo: WorkRepo, rev: str) -> bytes:
    return run("git", "-C", str(repo.path), "cat-file", "commit", rev).stdout


def committer_time(payload: bytes) -> int:
    """What git passes as -Overify-time: the committer date."""
    line = next(x for x in payload.split(b"\n") if x.startswith(b"committer "))
    return int(line.split()[-2])


def with_signature(payload: bytes, armored: bytes) -> bytes:
    """A commit carrying `armored` where git puts it: the last header."""
    head, sep, message = payload.partition(b"\n\n")
    lines = armored.decode().rstrip("\n").split("\n")
    return head + b"\ngpgsig " + "\n ".join(lines).encode() + b"\n" + sep[1:] + message


def write_signers(tmp: Path, text: str) -> Path:
    path = tmp / "allowed_signers"
    path.write_text(text)
    return path


def git_verdict(repo: WorkRepo, signers: Path, rev: str) -> str:
    """git's own verdict (`%G?` mapped to verify's statuses), checked against `verify-commit`."""
    config = ["-c", f"gpg.ssh.allowedSignersFile={signers}"]
    letter = repo.git(*config, "log", "-1", "--format=%G?", rev, env=UTC_ENV).stdout.strip()
    good = repo.git(*config, "verify-commit", rev, check=False, env=UTC_ENV).returncode == 0
    assert good == (letter == "G"), (letter, good)
    return GIT_STATUS.get(letter, letter)


def ours(repo: WorkRepo, signers: Path, rev: str) -> sshsig.Verified:
    split = split_signature(raw_commit(repo, rev))
    assert split is not None
    payload, armored = split
    return sshsig.verify(payload, armored, allowedsigners.parse_allowed_signers(signers.read_text()), committer_time(payload))


def keygen_verify(signers: Path, principal: str, payload: bytes, armored: bytes, tmp: Path,
                  namespace: str = "git") -> bool:
    sig = tmp / "sig"
    sig.write_bytes(armored)
    return run("ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", principal, "-n", namespace, "-s", str(sig),
               input=payload).returncode == 0


def _string(b: bytes) -> bytes:
    return struct.pack(">I", len(b)) + b


def _mpint(n: int) -> bytes:
    return _string(n.to_bytes(n.bit_length() // 8 + 1, "big") if n else b"")


def make_sshsig(key: Key, message: bytes, namespace: str = "git", hash_alg: str = "sha512",
                rsa_alg: str = "rsa-sha2-512", version: int = 1) -> bytes:
    """An armored SSHSIG built by hand, the way PROTOCOL.sshsig describes it."""
    private = key.private()
    pub_blob = base64.b64decode(key.public.split()[1])
    digest = hashlib.new(hash_alg, message).digest()
    signed = b"SSHSIG" + _string(namespace.encode()) + _string(b"") + _string(hash_alg.encode()) + _string(digest)
    if isinstance(private, ed25519.Ed25519PrivateKey):
        inner = _string(b"ssh-ed25519") + _string(private.sign(signed))
    elif isinstance(private, ec.EllipticCurvePrivateKey):
        h = {256: hashes.SHA256(), 384: hashes.SHA384(), 521: hashes.SHA512()}[private.curve.key_size]
        r, s = decode_dss_signature(private.sign(signed, ec.ECDSA(h)))
        inner = _string(key.public.split()[0].encode()) + _string(_mpint(r) + _mpint(s))
    else:
        h2 = {"ssh-rsa": hashes.SHA1(), "rsa-sha2-256": hashes.SHA256(), "rsa-sha2-512": hashes.SHA512()}[rsa_alg]
        inner = _string(rsa_alg.encode()) + _string(private.sign(signed, padding.PKCS1v15(), h2))
    blob = (b"SSHSIG" + struct.pack(">I", version) + _string(pub_blob) + _string(namespace.encode()) + _string(b"")
            + _string(hash_alg.encode()) + _string(inner))
    b64 = base64.b64encode(blob).decode()
    body = "\n".join(b64[i:i + 70] for i in range(0, len(b64), 70))
    return f"-----BEGIN SSH SIGNATURE-----\n{body}\n-----END SSH SIGNATURE-----\n".encode()


# --- the split ------------------------------------------------------------------------------


def test_the_split_is_exact_ssh_keygen_accepts_payload_and_signature(repo: WorkRepo, keys: dict[str, Key],
                                                                     tmp_path: Path) -> None:
    rev = signed_commit(repo, keys["ed25519"], "line one\n\nbody\n gpgsig in the message is not a header\n")
    raw = raw_commit(repo, rev)
    split = split_signature(raw)
    assert split is not None
    payload, armored = split
    assert armored.startswith(b"-----BEGIN SSH SIGNATURE-----\n") and armored.endswith(b"-----END SSH SIGNATURE-----\n")
    assert b"gpgsig" not in payload.partition(b"\n\n")[0]
    assert with_signature(payload, armored) == raw  # header put back where git puts it: the object itself
    signers = write_signers(tmp_path, f"alice@example.com {keys['ed25519'].type_and_blob}\n")
    assert keygen_verify(signers, "alice@example.com", payload, armored, tmp_path)
    assert not keygen_verify(signers, "alice@example.com", payload + b"x", armored, tmp_path)


def test_an_unsigned_commit_has_no_signature(repo: WorkRepo) -> None:
    rev = repo.commit("plain")
    assert split_signature(raw_commit(repo, rev)) is None


HEAD = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n"
SIG = b"gpgsig -----BEGIN SSH SIGNATURE-----\n AAAA\n -----END SSH SIGNATURE-----\n"


def test_split_by_hand() -> None:
    """git's parse_buffer_signed_by_header: every `gpgsig` header is signature (two are
    concatenated), every other header starting with `gpgsig` is left out of the payload."""
    armor = b"-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"
    assert split_signature(HEAD + SIG + b"\nmsg\n") == (HEAD + b"\nmsg\n", armor)
    assert split_signature(HEAD + SIG + SIG + b"\nmsg\n") == (HEAD + b"\nmsg\n", armor + armor)
    sha256 = SIG.replace(b"gpgsig ", b"gpgsig-sha256 ")
    assert split_signature(HEAD + sha256 + b"\nmsg\n") is None
    assert split_signature(HEAD + SIG + sha256 + b"\nmsg\n") == (HEAD + b"\nmsg\n", armor)
    assert split_signature(HEAD + sha256 + SIG + b"\nmsg\n") == (HEAD + b"\nmsg\n", armor)
    assert split_signature(HEAD + b"gpgsigx y\n z\n" + SIG + b"\nmsg\n") == (HEAD + b"\nmsg\n", armor)
    assert split_signature(HEAD + b"\n" + SIG) is None  # in the message: not a header
    # a SHA-256 repository reads the other header
    assert split_signature(HEAD + SIG + sha256 + b"\nmsg\n", "sha256") == (HEAD + b"\nmsg\n", armor)
    assert split_signature(HEAD + SIG + b"\nmsg\n", "sha256") is None


def test_git_sees_no_signature_in_a_sha256_header_either(repo: WorkRepo, keys: dict[str, Key], tmp_path: Path) -> None:
    raw = raw_commit(repo, signed_commit(repo, keys["ed25519"]))
    moved = raw.replace(b"\ngpgsig ", b"\ngpgsig-sha256 ", 1)
    rev = repo.hash_object(moved, "commit")
    assert split_signature(moved) is None
    signers = write_signers(tmp_path, f"alice {keys['ed25519'].type_and_blob}\n")
    assert repo.git("-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G?", rev).stdout.strip() == "N"


def _header(name: bytes, armored: bytes) -> bytes:
    """A signature header as git writes one: the armor's lines, continuations indented by a space."""
    return name + b" " + b"\n ".join(armored.rstrip(b"\n").split(b"\n")) + b"\n"


#: Where the signature headers sit in a commit: (the case, the headers between committer and message).
_GOOD, _STRANGER = b"<good>", b"<stranger>"
HEADER_CORPUS = [
    ("one gpgsig", [b"gpgsig " + _GOOD]),
    ("gpgsig, then the interop's gpgsig-sha256", [b"gpgsig " + _GOOD, b"gpgsig-sha256 " + _STRANGER]),
    ("gpgsig-sha256, then gpgsig", [b"gpgsig-sha256 " + _STRANGER, b"gpgsig " + _GOOD]),
    ("gpgsig and a garbage gpgsig-sha256",
     [b"gpgsig " + _GOOD, b"gpgsig-sha256 -----BEGIN PGP SIGNATURE-----\n garbage\n -----END PGP SIGNATURE-----\n"]),
    ("gpgsig-sha256 alone", [b"gpgsig-sha256 " + _GOOD]),
    ("two gpgsig, the good one first", [b"gpgsig " + _GOOD, b"gpgsig " + _STRANGER]),
    ("two gpgsig, a stranger's first", [b"gpgsig " + _STRANGER, b"gpgsig " + _GOOD]),
    ("the same gpgsig twice", [b"gpgsig " + _GOOD, b"gpgsig " + _GOOD]),
    ("two gpgsig split by another header", [b"gpgsig " + _GOOD, b"x-other value\n", b"gpgsig " + _STRANGER]),
    ("a header named gpgsig-something beside", [b"gpgsig " + _GOOD, b"gpgsigx y\n z\n"]),
    ("an unsigned header after the signature", [b"gpgsig " + _GOOD, b"x-other value\n"]),
    ("a stranger's gpgsig", [b"gpgsig " + _STRANGER]),
    ("no signature header", []),
]


@pytest.mark.parametrize(("case", "headers"), HEADER_CORPUS, ids=[c for c, _ in HEADER_CORPUS])
def test_signature_headers_are_read_as_git_verify_commit_reads_them(repo: WorkRepo, keys: dict[str, Key],
                                                                   tmp_path: Path, case: str,
                                                                   headers: list[bytes]) -> None:
    """The gate's verdict on a commit (`SignatureChecker`, as the hook runs it) is git's, on the
    same object: `git log %G?` and `git verify-commit` with the same allowed signers."""
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.git.objects import Objects
    from gatecore.signing.signatures import SignatureChecker, TrustedKeys

    payload, good = split_signature(raw_commit(repo, signed_commit(repo, keys["ed25519"], case))) or (b"", b"")
    (tmp_path / "payload").write_bytes(payload)
    proc = run("ssh-keygen", "-Y", "sign", "-n", "git", "-f", str(keys["other"].path), str(tmp_path / "payload"))
    assert proc.returncode == 0, proc.stderr
    stranger = (tmp_path / "payload.sig").read_bytes()
    head, _, message = payload.partition(b"\n\n")
    filled = [_header(h[:h.index(b" ")], good if h.endswith(_GOOD) else stranger)
              if h.endswith((_GOOD, _STRANGER)) else h for h in headers]
    rev = repo.hash_object(head + b"\n" + b"".join(filled) + b"\n" + message, "commit")
    signers = write_signers(tmp_path, f"alice@example.com {keys['ed25519'].type_and_blob}\n")
    checker = SignatureChecker(Objects(GitRepo.at(repo.path)),
                               TrustedKeys(ssh=allowedsigners.parse_allowed_signers(signers.read_text())))
    ours_status = {"unsigned": "N"}.get(checker.state(rev).status, checker.state(rev).status)
    assert ours_status == git_verdict(repo, signers, rev), case


def test_signature_kind() -> None:
    assert signature_kind(b"-----BEGIN SSH SIGNATURE-----\n") == "ssh"
    assert signature_kind(b"-----BEGIN PGP SIGNATURE-----\n") == "openpgp"
    assert signature_kind(b"-----BEGIN PGP MESSAGE-----\n") == "openpgp"
    assert signature_kind(b"-----BEGIN SIGNED MESSAGE-----\n") == "x509"
    assert signature_kind(b" -----BEGIN SSH SIGNATURE-----\n") == "unknown"
    assert signature_kind(b"") == "unknown"
    assert sshsig.verify(b"x", b"-----BEGIN PGP SIGNATURE-----\n", allowedsigners.AllowedSigners(()), 0).status == "bad"


# --- verdicts, against git's ----------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_good_signature_of_each_key_type(repo: WorkRepo, keys: dict[str, Key], kind: str, tmp_path: Path) -> None:
    key = keys[kind]
    rev = signed_commit(repo, key, f"signed with {kind}")
    signers = write_signers(tmp_path, f"# team\n\nalice@example.com {key.type_and_blob} the comment\n")
    result = ours(repo, signers, rev)
    assert (result.status, result.principals) == ("ok", ("alice@example.com",))
    assert git_verdict(repo, signers, rev) == "ok"
    listed = run("ssh-keygen", "-lf", str(key.path.with_suffix(".pub"))).stdout.decode().split()
    assert result.fingerprint == listed[1]


def test_a_key_not_in_the_file_is_unknown(repo: WorkRepo, keys: dict[str, Key], tmp_path: Path) -> None:
    rev = signed_commit(repo, keys["other"])
    signers = write_signers(tmp_path, f"alice@example.com {keys['ed25519'].type_and_blob}\n")
    result = ours(repo, signers, rev)
    assert result.status == "unknown-key" and result.principals == ()
    assert git_verdict(repo, signers, rev) == "unknown-key"


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa256", "rsa"])
def test_a_tampered_payload_is_bad(repo: WorkRepo, keys: dict[str, Key], kind: str, tmp_path: Path) -> None:
    raw = raw_commit(repo, signed_commit(repo, keys[kind], "pay me 100"))
    tampered = raw.replace(b"pay me 100", b"pay me 900")
    rev = repo.hash_object(tampered, "commit")
    for line in (f"alice@example.com {keys[kind].type_and_blob}\n", f"alice {keys['other'].type_and_blob}\n"):
        signers = write_signers(tmp_path, line)
        assert ours(repo, signers, rev).status == "bad"
        assert git_verdict(repo, signers, rev) == "bad"


def test_a_signature_for_another_namespace_is_bad(repo: WorkRepo, keys: dict[str, Key], tmp_path: Path) -> None:
    key = keys["ed25519"]
    payload, _ = split_signature(raw_commit(repo, signed_commit(repo, key))) or (b"", b"")
    (tmp_path / "payload").write_bytes(payload)
    proc = run("ssh-keygen", "-Y", "sign", "-n", "file", "-f", str(key.path), str(tmp_path / "payload"))
    assert proc.returncode == 0, proc.stderr
    armored = (tmp_path / "payload.sig").read_bytes()
    rev = repo.hash_object(with_signature(payload, armored), "commit")
    signers = write_signers(tmp_path, f"alice {key.type_and_blob}\n")
    assert ours(repo, signers, rev).status == "bad"
    assert git_verdict(repo, signers, rev) == "bad"
    assert not keygen_verify(signers, "alice", payload, armored, tmp_path)
    allowed = allowedsigners.parse_allowed_signers(signers.read_text())
    assert sshsig.verify(payload, armored, allowed, 0, namespace="file").ok
    assert keygen_verify(signers, "alice", payload, armored, tmp_path, namespace="file")


# (allowed-signers text with {key} for the signing key, committer date, expected verdict and principals)
TABLE = [
    ('alice valid-before="20200101Z" {key}', None, "unknown-key", ()),
    ('alice valid-before="20200101Z" {key}', "2019-06-01T00:00:00Z", "ok", ("alice",)),
    ('alice valid-after="20190101",valid-before="20200101" {key}', "2019-06-01T00:00:00Z", "ok", ("alice",)),
    ('alice valid-after="20190601000001Z" {key}', "2019-06-01T00:00:00Z", "unknown-key", ()),
    ('alice valid-before="20190601000000Z" {key}', "2019-06-01T00:00:00Z", "ok", ("alice",)),
    ('alice VALID-AFTER="203001010000UTC" {key}', None, "unknown-key", ()),
    ("*@example.com {key}", None, "ok", ("*@example.com",)),
    ("alice,bob,?ve {key} two and a pattern", None, "ok", ("alice", "bob", "?ve")),
    ("!mallory,*@example.com {key}", None, "ok", ("*@example.com",)),
    ('"alice" {key}', None, "ok", ("alice",)),
    ('alice namespaces="file" {key}', None, "bad", ()),
    ('alice namespaces="file,git" {key}', None, "ok", ("alice",)),
    ('alice namespaces="g*" {key}', None, "ok", ("alice",)),
    ('alice namespaces="!git,*" {key}', None, "bad", ()),
    ('alice namespaces="" {key}', None, "bad", ()),
    # find-principals takes the first line holding the key; only its principals are tried
    ('carol namespaces="file" {key}\ndave {key}', None, "bad", ()),
    ('carol valid-before="20200101Z" {key}\ndave {key}', None, "ok", ("dave",)),
    ('dave {key}\ncarol namespaces="file" {key}', None, "ok", ("dave",)),
    ('a* namespaces="file" {key}\nabc {key}', None, "bad", ()),
    ('*@example.com namespaces="file" {key}\n* {key}', None, "ok", ("*@example.com",)),
    ("bob {other}\nalice {key}", None, "ok", ("alice",)),
    ("*@example.com cert-authority {key}", None, "unknown-key", ()),
]


@pytest.mark.parametrize(("text", "date", "expected", "principals"), TABLE)
def test_allowed_signers_options_and_patterns_as_git(repo: WorkRepo, keys: dict[str, Key], tmp_path: Path,
                                                     text: str, date: str | None, expected: str,
                                                     principals: tuple[str, ...]) -> None:
    rev = signed_commit(repo, keys["ed25519"], "table", date)
    signers = write_signers(tmp_path, text.format(key=keys["ed25519"].type_and_blob,
                                                  other=keys["other"].type_and_blob) + "\n")
    result = ours(repo, signers, rev)
    assert (result.status, result.principals) == (expected, principals), result.reason
    assert git_verdict(repo, signers, rev) == expected


def test_cert_authority_lines_are_skipped_not_used(keys: dict[str, Key]) -> None:
    parsed = allowedsigners.parse_allowed_signers(f"a cert-authority {keys['ed25519'].type_and_blob}\n"
                                          f"b {keys['other'].type_and_blob}\n")
    assert parsed.skipped == ((1, "cert-authority: certificates are not supported"),)
    assert [s.line for s in parsed.signers] == [2]


def test_local_times_use_the_offset_given(keys: dict[str, Key]) -> None:
    text = f'a valid-before="20200101" {keys["ed25519"].type_and_blob}\n'
    assert allowedsigners.parse_allowed_signers(text).signers[0].valid_before == 1577836800
    assert allowedsigners.parse_allowed_signers(text, utc_offset=3600).signers[0].valid_before == 1577836800 - 3600


# --- signatures built by hand, against ssh-keygen -------------------------------------------


@pytest.mark.parametrize(("kind", "options", "good"), [
    ("ed25519", {}, True),
    ("ed25519", {"hash_alg": "sha256"}, True),
    ("ecdsa384", {"hash_alg": "sha256"}, True),
    ("ecdsa521", {}, True),
    ("rsa", {"rsa_alg": "rsa-sha2-256"}, True),
    ("rsa", {"rsa_alg": "ssh-rsa"}, False),  # SHA-1 RSA is refused
    ("ed25519", {"hash_alg": "sha384"}, False),  # only sha256 and sha512
    ("ed25519", {"hash_alg": "sha1"}, False),
])
def test_hand_built_signatures_agree_with_ssh_keygen(keys: dict[str, Key], tmp_path: Path, kind: str,
                                                     options: dict[str, str], good: bool) -> None:
    message = b"tree 123\n\nany bytes \x00\xff\n"
    armored = make_sshsig(keys[kind], message, **options)
    signers = write_signers(tmp_path, f"alice {keys[kind].type_and_blob}\n")
    assert keygen_verify(signers, "alice", message, armored, tmp_path) is good
    result = sshsig.verify(message, armored, allowedsigners.parse_allowed_signers(signers.read_text()), 0)
    assert result.ok is good, result.reason


def test_ssh_keygen_signatures_with_sha256(keys: dict[str, Key], tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_bytes(b"hello\n")
    for kind in KINDS:
        proc = run("ssh-keygen", "-Y", "sign", "-n", "git", "-O", "hashalg=sha256", "-f", str(keys[kind].path),
                   str(data))
        assert proc.returncode == 0, proc.stderr
        armored = (tmp_path / "data.sig").read_bytes()
        (tmp_path / "data.sig").unlink()
        allowed = allowedsigners.parse_allowed_signers(f"x {keys[kind].type_and_blob}")
        assert sshsig.verify(b"hello\n", armored, allowed, 0).principals == ("x",)
        assert sshsig.verify(b"hello\r\n", armored, allowed, 0).status == "bad"


def _armor(blob: bytes) -> bytes:
    return b"-----BEGIN SSH SIGNATURE-----\n" + base64.b64encode(blob) + b"\n-----END SSH SIGNATURE-----\n"


def test_malformed_signatures_are_bad_never_an_exception(keys: dict[str, Key], tmp_path: Path) -> None:
    message = b"payload"
    good = make_sshsig(keys["ed25519"], message)
    allowed = allowedsigners.parse_allowed_signers(f"alice {keys['ed25519'].type_and_blob}\n")
    assert sshsig.verify(message, good, allowed, 0).ok
    assert sshsig.verify(message, good.replace(b"\n", b"\r\n"), allowed, 0).ok  # as ssh-keygen: CRLF is fine
    lines = good.split(b"\n")
    blob = base64.b64decode(b"".join(lines[1:-2]))
    cases = [
        good.replace(b"-----END SSH SIGNATURE-----", b""),
        good.replace(b"SIGNATURE-----\n", b"SIGNATURE-----", 1),
        good[:-40] + good[-39:],  # a base64 character gone
        b"\n".join([lines[0], b"*" + lines[1], *lines[2:]]),
        _armor(b""),
        _armor(b"SSHSIG"),
        _armor(b"NOTSIG" + blob[6:]),
        _armor(blob[:6] + struct.pack(">I", 2) + blob[10:]),  # version 2
        _armor(blob + b"\0"),  # trailing data
        _armor(blob[:-1]),  # truncated
        _armor(blob[:10] + struct.pack(">I", 0xFFFFFFFF) + blob[14:]),  # a length beyond the blob
        _armor(blob[:10] + struct.pack(">I", 1 << 20) + blob[14:]),
        make_sshsig(keys["ed25519"], message, version=0),
        _armor(blob[:-64] + bytes(64)),  # a zeroed ed25519 signature
        b"-----BEGIN SSH SIGNATURE-----\n" + b"A" * (sshsig.MAX_ARMOR + 1),
    ]
    signers = write_signers(tmp_path, f"alice {keys['ed25519'].type_and_blob}\n")
    for i, armored in enumerate(cases):
        result = sshsig.verify(message, armored, allowed, 0)
        assert result.status == "bad", (i, result)
        if i != 12:  # ssh-keygen reads a version 0 blob; this module wants version 1
            assert not keygen_verify(signers, "alice", message, armored, tmp_path), i


# --- malformed allowed-signers files --------------------------------------------------------


@pytest.mark.parametrize(("line", "keygen_rejects"), [
    ("alice", True),
    ("alice {type}", True),
    ("alice {type} AAAA", True),
    ("alice {type} {blob}x", True),
    ("alice ssh-rsa {blob}", True),  # the blob is an ed25519 key
    ("alice unknown=1 {key}", True),
    ("alice namespaces=git {key}", True),
    ('alice namespaces="git {key}', True),
    ('alice namespaces="git",namespaces="file" {key}', True),
    ('alice valid-before="2020" {key}', True),
    ('alice valid-before="19700101Z" {key}', True),
    ('alice valid-after="20210101Z",valid-before="20200101Z" {key}', True),
    ("alice namespaces=\"git\", {key}", True),
    ("alice, {key}", False),
    (",alice {key}", False),
    ('"alice {key}', True),
    ('alice valid-before="20230231" {key}', False),  # no such day: stricter than strptime
])
def test_a_malformed_line_is_refused_with_its_number(keys: dict[str, Key], tmp_path: Path, line: str,
                                                     keygen_rejects: bool) -> None:
    key = keys["ed25519"]
    ktype, blob = key.type_and_blob.split()
    bad = line.format(type=ktype, blob=blob, key=key.type_and_blob)
    text = f"# signers\n\n{bad}\nbob {key.type_and_blob}\n"
    with pytest.raises(ValueError, match=r"^allowed signers line 3: ") as exc:
        allowedsigners.parse_allowed_signers(text)
    assert "\n" not in str(exc.value)
    if keygen_rejects:  # ssh-keygen -Y verify reads a line fully only when its principals match
        message = b"m"
        signers = write_signers(tmp_path, f"# signers\n\n{bad}\n")
        assert not keygen_verify(signers, "alice", message, make_sshsig(key, message), tmp_path)


def test_well_formed_files(keys: dict[str, Key]) -> None:
    text = (f"  # indented comment\r\n\r\n\talice@example.com,bob  {keys['ed25519'].type_and_blob}  comment here\r\n"
            f'carol namespaces="git",valid-after="20200101" {keys["rsa"].type_and_blob}\n'
            f"dave {keys['ecdsa256'].type_and_blob}")
    parsed = allowedsigners.parse_allowed_signers(text)
    assert [(s.line, s.principals, s.key.algorithm) for s in parsed.signers] == [
        (3, "alice@example.com,bob", "ssh-ed25519"), (4, "carol", "ssh-rsa"), (5, "dave", "ecdsa-sha2-nistp256")]
    assert parsed.signers[1].namespaces == "git" and parsed.signers[1].valid_after == 1577836800
    assert allowedsigners.parse_allowed_signers("") == allowedsigners.AllowedSigners(())
    skipped = allowedsigners.parse_allowed_signers("x sk-ssh-ed25519@openssh.com AAAA\n"
                                           "y ssh-ed25519-cert-v01@openssh.com AAAA\n")
    assert [n for n, _ in skipped.skipped] == [1, 2] and skipped.signers == ()
