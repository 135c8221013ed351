"""OpenPGP-signed commits through real pushes: gpgv verifies them against the server's
OpenPGP keyring, with the same codes as SSH signatures, and the client's pre-push hook agrees.

Keys are made by the real `gpg` in a throwaway home; each verdict is also checked against
`git verify-commit` with that home."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import keygen
from support.cli import cli
from support.gitutil import HUMAN, git, git_env
from support.server import Server
from support.verdicts import refused

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None or shutil.which("gpgv") is None,
                                reason="gpg and gpgv are not installed")

POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**"]
signers = ["agent-*"]
[signatures]
require = ["refs/heads/main"]
"""

UIDS = {"human": "Hana <hana@example.com>", "agent": "Agent Nine <agent-9@bots.example>",
        "stranger": "Stranger <who@elsewhere.example>", "revoked": "Rene <rene@example.com>"}


@dataclass
class Keys:
    home: Path  # GNUPGHOME holding every secret key
    fpr: dict[str, str]
    listed: Path  # the public keys the server trusts (armored): human, agent, revoked (revoked later)
    revocation: Path

    def env(self) -> dict[str, str]:
        return {"GNUPGHOME": str(self.home)}


def _gpg(home: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["gpg", "--batch", "--homedir", str(home), *args], input=input,
                          capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def keys() -> Iterator[Keys]:
    # A short path: gpg-agent's socket lives in the home and socket paths are short.
    home = Path(tempfile.mkdtemp(prefix="gpg", dir="/tmp"))
    try:
        fpr = {}
        for name, uid in UIDS.items():
            _gpg(home, "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never")
            listing = _gpg(home, "--with-colons", "--list-keys", uid).decode()
            fpr[name] = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
        listed = home / "listed.asc"
        listed.write_bytes(_gpg(home, "--armor", "--export", fpr["human"], fpr["agent"], fpr["revoked"]))
        rev = (home / "openpgp-revocs.d" / f"{fpr['revoked']}.rev").read_text()
        revocation = home / "revoke.asc"
        revocation.write_text(rev.replace(":-----BEGIN PGP PUBLIC KEY BLOCK-----", "-----BEGIN PGP PUBLIC KEY BLOCK-----"))
        yield Keys(home, fpr, listed, revocation)
    finally:
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def server(tmp_path: Path, keys: Keys) -> Server:
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=POLICY, extra=("--openpgp-keys", str(keys.listed)))
    _signed(s, keys, "human", "README", "base\n")
    assert s.push("main").returncode == 0, s.audit()
    return s


def _signed(server: Server, keys: Keys, key: str | None, path: str, text: str,
            identity: tuple[str, str] = HUMAN) -> str:
    server.work.write(path, text)
    git(server.work.path, "add", "-A")
    sign = ["-c", "gpg.format=openpgp", "-c", f"user.signingkey={keys.fpr[key]}", "commit", "-S"] if key else ["commit"]
    git(server.work.path, *sign, "-q", "-m", f"write {path}", identity=identity, env=keys.env())
    return server.work.head()


def _git_verifies(server: Server, keys: Keys, oid: str, keyring: Path) -> bool:
    """`git verify-commit` in a home that holds only the server's keys (what the gate is checked against)."""
    home = Path(tempfile.mkdtemp(prefix="gpv", dir="/tmp"))
    try:
        _gpg(home, "--import", str(keyring))
        out = git(server.work.path, "verify-commit", oid, check=False, env={"GNUPGHOME": str(home)})
        return out.returncode == 0
    finally:
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_a_human_signed_commit_is_accepted_and_git_agrees(server: Server, keys: Keys) -> None:
    oid = _signed(server, keys, "human", "ci/deploy.yml", "x\n")
    assert _git_verifies(server, keys, oid, keys.listed)
    out = server.push("main")
    assert out.returncode == 0, out.stderr
    assert server.audit()[-1]["decision"] == "accept"


def test_an_agent_signed_commit_cannot_write_a_frozen_path(server: Server, keys: Keys) -> None:
    """Its email says human; its OpenPGP key's user id says agent-9: the signature restricts it."""
    before = server.refs()
    _signed(server, keys, "agent", "ci/deploy.yml", "x\n", identity=HUMAN)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert "identity=signer:agent-9@bots.example" in out.stderr
    assert server.refs() == before


def test_a_key_outside_the_servers_keyring_is_an_unknown_key(server: Server, keys: Keys) -> None:
    oid = _signed(server, keys, "stranger", "src/app.py", "x\n")
    assert not _git_verifies(server, keys, oid, keys.listed)
    assert refused(server.push("main"), "GATE-SIG-UNKNOWN-KEY")


def test_a_forged_commit_keeping_a_good_signature_is_bad(server: Server, keys: Keys) -> None:
    head = _signed(server, keys, "human", "src/app.py", "x\n")
    raw = git(server.work.path, "cat-file", "commit", head).stdout
    forged = raw.replace("write src/app.py", "write src/app.pz")
    oid = git(server.work.path, "hash-object", "-t", "commit", "-w", "--stdin", input=forged.encode()).stdout.strip()
    git(server.work.path, "update-ref", "refs/heads/main", oid)
    assert not _git_verifies(server, keys, oid, keys.listed)
    assert refused(server.push("main"), "GATE-SIG-BAD")


def test_a_revoked_key_is_refused_once_the_revocation_is_installed(server: Server, keys: Keys, tmp_path: Path) -> None:
    oid = _signed(server, keys, "revoked", "src/app.py", "x\n")
    assert server.push("HEAD:refs/heads/side").returncode == 0  # outside the scope
    revoked = tmp_path / "revoked.asc"
    home = Path(tempfile.mkdtemp(prefix="gpr", dir="/tmp"))
    try:
        _gpg(home, "--import", str(keys.listed))
        _gpg(home, "--import", str(keys.revocation))
        revoked.write_bytes(_gpg(home, "--armor", "--export"))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert not _git_verifies(server, keys, oid, revoked)
    out = cli("server", "install", str(server.bare), "--openpgp-keys", str(revoked))
    assert out.returncode == 0, out.stderr
    out = server.push("main")
    assert refused(out, "GATE-SIG-UNKNOWN-KEY") and "revoked" in out.stderr, out.stderr


def test_ssh_and_openpgp_keys_together(tmp_path: Path, keys: Keys) -> None:
    """An admin may install both; each signature is verified by its own kind of key."""
    ssh_key = tmp_path / "ssh_human"
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"hana@example.com {keygen.ssh_key(ssh_key)}\n")
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=POLICY,
               extra=("--openpgp-keys", str(keys.listed), "--allowed-signers", str(signers)))
    _signed(s, keys, "human", "README", "base\n")
    s.work.write("src/a.py", "x\n")
    git(s.work.path, "add", "-A")
    git(s.work.path, "-c", "gpg.format=ssh", "-c", f"user.signingkey={ssh_key}", "commit", "-S", "-q", "-m", "ssh")
    out = s.push("main")
    assert out.returncode == 0, out.stderr


def test_without_gpgv_an_openpgp_signature_is_unsupported(server: Server, keys: Keys) -> None:
    """A server where gpgv cannot be found (a PATH with git's programs only): the clear code,
    never an accept, and the push goes through once gpgv is back."""
    _signed(server, keys, "human", "src/app.py", "x\n")
    exec_path = git(server.work.path, "--exec-path").stdout.strip()
    assert not (Path(exec_path) / "gpgv").exists()
    env = {**git_env(HUMAN), "PATH": exec_path}
    out = subprocess.run([shutil.which("git") or "git", "push", "--porcelain", server.url, "main"],
                         cwd=server.work.path, env=env, capture_output=True, text=True)
    assert refused(out, "GATE-SIG-UNSUPPORTED") and "gpgv is not installed" in out.stderr, out.stderr
    assert server.push("main").returncode == 0


def test_install_refuses_what_is_not_a_public_keyring(tmp_path: Path, keys: Keys) -> None:
    s = Server(tmp_path, policy=POLICY, extra=("--openpgp-keys", str(keys.listed)))
    (s.gate_dir / "openpgp_keys.gpg").unlink()  # what a bad keyring must not bring back
    for bad in (b"not a key\n", b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!!\n-----END PGP PUBLIC KEY BLOCK-----\n",
                _gpg(keys.home, "--armor", "--export-secret-keys", keys.fpr["human"])):
        path = tmp_path / "bad.asc"
        path.write_bytes(bad)
        out = cli("server", "install", str(s.bare), "--openpgp-keys", str(path))
        assert out.returncode == 2 and "GATE-CONFIG-SIGNERS" in out.stdout + out.stderr, out.stderr
        assert not (s.gate_dir / "openpgp_keys.gpg").exists()


def test_the_pre_push_hook_reads_gate_openpgpKeys_and_agrees_with_the_server(server: Server, keys: Keys) -> None:
    w = server.work
    w.write(".gate/policy.toml", POLICY)
    git(w.path, "add", "-A")
    git(w.path, "-c", "gpg.format=openpgp", "-c", f"user.signingkey={keys.fpr['human']}", "commit", "-S", "-q",
        "-m", "policy", env=keys.env())
    assert server.push("main").returncode == 0
    remote = w.head()
    _signed(server, keys, "agent", "ci/deploy.yml", "x\n")
    line = f"refs/heads/main {w.head()} refs/heads/main {remote}\n"

    def client() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hooks.frozen_push", "origin", server.url], input=line,
                              cwd=w.path, env={**git_env(HUMAN), "PATH": os.environ["PATH"]},
                              capture_output=True, text=True)

    out = client()
    assert out.returncode == 2 and "GATE-CONFIG-SIGNERS" in out.stderr, out.stderr
    git(w.path, "config", "gate.openpgpKeys", str(keys.listed))
    out = client()
    assert out.returncode == 2 and "armored" in out.stderr, out.stderr
    binary = w.path / ".git" / "openpgp_keys.gpg"
    binary.write_bytes(_gpg(keys.home, "--export", keys.fpr["human"], keys.fpr["agent"], keys.fpr["revoked"]))
    git(w.path, "config", "gate.openpgpKeys", str(binary))
    out = client()
    assert out.returncode == 1 and "GATE-FROZEN-PATH" in out.stderr, out.stderr
    assert refused(server.push("main"), "GATE-FROZEN-PATH")


def test_doctor_reports_the_signature_keys(server: Server) -> None:
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 0, out.stdout
    assert "OpenPGP keyring" in out.stdout and "gpgv" in out.stdout
    (server.gate_dir / "openpgp_keys.gpg").unlink()
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode != 0 and "GATE-CONFIG-SIGNERS" in out.stdout, out.stdout


def _with_headers(raw: bytes, *headers: bytes) -> bytes:
    """The commit `raw` with its signature header replaced by `headers` (each a complete header)."""
    from gatecore.git.grammar import split_signature

    payload, _ = split_signature(raw) or (raw, b"")
    head, _, message = payload.partition(b"\n\n")
    return head + b"\n" + b"".join(headers) + b"\n" + message


def _sig_header(name: bytes, raw: bytes) -> bytes:
    from gatecore.git.grammar import split_signature

    _, armored = split_signature(raw) or (b"", b"")
    return name + b" " + b"\n ".join(armored.rstrip(b"\n").split(b"\n")) + b"\n"


def test_the_object_format_interop_commit_is_verified_as_git_verifies_it(server: Server, keys: Keys) -> None:
    """A commit carrying both `gpgsig` and `gpgsig-sha256` (what git's object-format interop
    writes): git verifies `gpgsig` over the commit without either; so does the gate (it was a
    GATE-SIG-MISSING false reject, and an agent's signed commit escaped `signers`)."""
    head = _signed(server, keys, "human", "src/app.py", "x\n")
    raw = git(server.work.path, "cat-file", "commit", head).stdout.encode()
    interop = _with_headers(raw, _sig_header(b"gpgsig", raw), _sig_header(b"gpgsig-sha256", raw))
    oid = server.work.hash_object(interop, "commit")
    git(server.work.path, "update-ref", "refs/heads/main", oid)
    assert _git_verifies(server, keys, oid, keys.listed)
    out = server.push("main")
    assert out.returncode == 0, out.stderr
    agent = _signed(server, keys, "agent", "ci/deploy.yml", "x\n", identity=HUMAN)
    raw = git(server.work.path, "cat-file", "commit", agent).stdout.encode()
    oid = server.work.hash_object(_with_headers(raw, _sig_header(b"gpgsig-sha256", raw), _sig_header(b"gpgsig", raw)),
                                  "commit")
    git(server.work.path, "update-ref", "refs/heads/main", oid)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH") and "identity=signer:agent-9@bots.example" in out.stderr, out.stderr


def test_openpgp_signature_headers_agree_with_git_verify_commit(server: Server, keys: Keys) -> None:
    """Every arrangement of signature headers, verified in-process as the hook does and by
    `git verify-commit` with the same keys: the same verdict (two `gpgsig` headers are one
    signature of two packets to both, which neither accepts)."""
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.adapters.gpg import OpenPGPVerifier, dearmor_keyring
    from gatecore.git.objects import Objects
    from gatecore.signing.signatures import SignatureChecker, TrustedKeys

    human = git(server.work.path, "cat-file", "commit", _signed(server, keys, "human", "a", "1\n")).stdout.encode()
    stranger = git(server.work.path, "cat-file", "commit",
                   _signed(server, keys, "stranger", "b", "2\n")).stdout.encode()
    good, other = _sig_header(b"gpgsig", human), _sig_header(b"gpgsig", stranger)
    good256 = _sig_header(b"gpgsig-sha256", human)
    cases = {
        "one gpgsig": [good],
        "gpgsig and gpgsig-sha256": [good, _sig_header(b"gpgsig-sha256", stranger)],
        "gpgsig-sha256 alone": [good256],
        "two gpgsig": [good, good],
        "two gpgsig, a stranger's second": [good, other],
        "a header after the signature": [good, b"x-other value\n"],
    }
    keyring = server.work.path / "keys.gpg"
    keyring.write_bytes(dearmor_keyring(keys.listed.read_bytes(), "keys"))
    checker = SignatureChecker(Objects(GitRepo.at(server.work.path)), TrustedKeys(openpgp=OpenPGPVerifier(keyring)))
    for case, headers in cases.items():
        oid = server.work.hash_object(_with_headers(human, *headers), "commit")
        state = checker.state(oid)
        assert (state.status == "ok") == _git_verifies(server, keys, oid, keys.listed), (case, state)


def test_gate_check_counts_a_forges_signature_as_git_verify_commit_does(server: Server, keys: Keys,
                                                                          tmp_path: Path) -> None:
    """On a forge, `gate check --openpgp-keys` reads the keys the admin configured (here the forge's own,
    as GitHub signs the commits its web interface makes): a commit it signed passes `[signatures]
    require`, an unsigned one fails with the hook's code, each as `git verify-commit` says."""
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    base = server.work.head()
    signed = _signed(server, keys, "human", "notes.txt", "by the forge's web interface\n")
    unsigned = _signed(server, keys, None, "more.txt", "unsigned\n")

    def check(head: str) -> subprocess.CompletedProcess[str]:
        return cli("check", "--repo", str(server.work.path), "--base", base, "--head", head, "--ref", "refs/heads/main",
                   "--policy", str(policy), "--openpgp-keys", str(keys.listed))

    assert _git_verifies(server, keys, signed, keys.listed) and not _git_verifies(server, keys, unsigned, keys.listed)
    ok = check(signed)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = check(unsigned)
    assert bad.returncode == 1 and "GATE-SIG-" in bad.stdout and unsigned[:12] in bad.stdout, bad.stdout
