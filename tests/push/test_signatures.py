"""Verified commit signatures through real pushes: an agent's key restricts like an agent's
email, and a signature-requiring scope refuses unsigned, unknown-key and bad signatures."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import HUMAN, git
from support.keygen import needs_ssh_keygen, ssh_key
from support.server import Server
from support.verdicts import refused

pytestmark = needs_ssh_keygen

POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**"]
signers = ["agent-*"]
[signatures]
require = ["refs/heads/main"]
"""


def _key(root: Path, name: str) -> tuple[Path, str]:
    return root / name, ssh_key(root / name, name)


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "keys"
    root.mkdir()
    found = {}
    lines = []
    for name, principal in (("human", "hana@example.com"), ("agent", "agent-7"), ("stranger", None)):
        path, pub = _key(root, name)
        found[name] = path
        if principal:
            lines.append(f'{principal} namespaces="git" {pub}\n')
    found["file"] = root / "allowed_signers"
    found["file"].write_text("".join(lines))
    return found


@pytest.fixture
def server(tmp_path: Path, keys: dict[str, Path]) -> Server:
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=POLICY, extra=("--allowed-signers", str(keys["file"])))
    _signed(s, keys["human"], "README", "base\n")
    assert s.push("main").returncode == 0, s.audit()
    return s


def _signed(server: Server, key: Path | None, path: str, text: str, identity: tuple[str, str] = HUMAN) -> str:
    server.work.write(path, text)
    git(server.work.path, "add", "-A")
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-S"] if key else ["commit"]
    git(server.work.path, *sign, "-q", "-m", f"write {path}", identity=identity)
    return server.work.head()


def test_a_commit_signed_by_an_agent_key_cannot_write_a_frozen_path(server: Server, keys: dict[str, Path]) -> None:
    """Its email says human; its signature says agent-7: the signature restricts it."""
    before = server.refs()
    _signed(server, keys["agent"], "ci/deploy.yml", "x\n", identity=HUMAN)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert "identity=signer:agent-7" in out.stderr
    assert server.refs() == before


def test_a_commit_signed_by_a_human_key_is_accepted(server: Server, keys: dict[str, Path]) -> None:
    _signed(server, keys["human"], "ci/deploy.yml", "x\n")
    out = server.push("main")
    assert out.returncode == 0, out.stderr


def test_an_unsigned_commit_in_a_signature_requiring_scope_is_rejected(server: Server) -> None:
    _signed(server, None, "src/app.py", "x\n")
    assert refused(server.push("main"), "GATE-SIG-MISSING")
    assert server.push("HEAD:refs/heads/topic").returncode == 0  # outside the scope


def test_a_key_the_server_does_not_list_is_rejected(server: Server, keys: dict[str, Path]) -> None:
    _signed(server, keys["stranger"], "src/app.py", "x\n")
    assert refused(server.push("main"), "GATE-SIG-UNKNOWN-KEY")


def test_a_signature_that_does_not_verify_is_rejected(server: Server, keys: dict[str, Path]) -> None:
    """The signed commit with one byte of its message changed (a forged object, same signature)."""
    head = _signed(server, keys["human"], "src/app.py", "x\n")
    raw = git(server.work.path, "cat-file", "commit", head).stdout
    forged = raw.replace("write src/app.py", "write src/app.pz")
    oid = git(server.work.path, "hash-object", "-t", "commit", "-w", "--stdin", input=forged.encode()).stdout.strip()
    git(server.work.path, "update-ref", "refs/heads/main", oid)
    assert refused(server.push("main"), "GATE-SIG-BAD")


def test_a_policy_reading_signatures_without_allowed_signers_is_a_configuration_error(tmp_path: Path,
                                                                                     keys: dict[str, Path]) -> None:
    """Install refuses it (every push would be refused) and touches nothing; a signers file that
    goes missing later refuses every push, exit 2."""
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (tmp_path / "policy.toml").write_text(POLICY)
    out = cli("server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"))
    assert out.returncode == 2 and "GATE-CONFIG-SIGNERS" in out.stdout + out.stderr, out.stdout + out.stderr
    assert not (bare / "gate").exists() and not (bare / "hooks" / "pre-receive").exists()
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=POLICY, extra=("--allowed-signers", str(keys["file"])))
    (s.gate_dir / "allowed_signers").unlink()
    s.work.write("README", "x\n")
    s.work.commit("base")
    out = s.push("main")
    assert refused(out, "GATE-CONFIG-SIGNERS"), out.stderr
    assert s.audit()[-1]["exit"] == 2


def test_a_malformed_allowed_signers_file_is_refused_at_install(tmp_path: Path) -> None:
    """Install validates before it touches anything: the code, and no file left behind."""
    s = Server(tmp_path, policy=POLICY.replace("[signatures]\nrequire = [\"refs/heads/main\"]\n", "")
               .replace('signers = ["agent-*"]', 'authors = ["*@agents.example.com"]'))
    bad = tmp_path / "bad_signers"
    bad.write_text("agent-7 ssh-ed25519 not-base64!\n")
    out = cli("server", "install", str(s.bare), "--allowed-signers", str(bad))
    assert out.returncode == 2 and "GATE-CONFIG-SIGNERS" in out.stdout + out.stderr
    assert not (s.gate_dir / "allowed_signers").exists()


def test_cert_authority_lines_are_refused_at_install(tmp_path: Path, keys: dict[str, Path]) -> None:
    """git honours a cert-authority line; the gate does not verify certificates. An install that
    quietly skipped the line would let every certificate-signed agent commit past `signers`."""
    s = Server(tmp_path, policy=POLICY, extra=("--allowed-signers", str(keys["file"])))
    _, ca_pub = _key(tmp_path, "ca")
    signers = tmp_path / "with_ca"
    signers.write_text(keys["file"].read_text() + f"agent-* cert-authority {ca_pub}\n")
    out = cli("server", "install", str(s.bare), "--allowed-signers", str(signers))
    assert out.returncode == 2 and "GATE-CONFIG-SIGNERS" in out.stderr and "cert-authority" in out.stderr, out


def test_a_certificate_signature_is_unsupported_not_bad(server: Server, keys: dict[str, Path],
                                                        tmp_path: Path) -> None:
    """A commit signed with an SSH certificate, in a signature-requiring scope: the gate says it
    cannot verify it (and how to fix it), instead of calling git's good signature bad."""
    ca, _ = _key(tmp_path, "ca2")
    subprocess.run(["ssh-keygen", "-q", "-s", str(ca), "-I", "bot", "-n", "agent-7", str(keys["agent"]) + ".pub"],
                   check=True)
    cert = Path(str(keys["agent"]) + "-cert.pub")
    _signed(server, cert, "src/app.py", "x\n")
    out = server.push("main")
    assert refused(out, "GATE-SIG-UNSUPPORTED") and "certificate" in out.stderr, out.stderr


def test_times_without_z_are_the_servers_local_time(tmp_path: Path, keys: dict[str, Path]) -> None:
    """`valid-before="20260101"` is midnight in the verifying machine's zone, as ssh-keygen (and so
    git) reads it: in Tokyo, a commit made at 23:00 UTC on 31 December is already past it."""
    import os

    human_pub = Path(str(keys["human"]) + ".pub").read_text().strip()
    signers = tmp_path / "dated"
    signers.write_text(f'hana@example.com valid-before="20260101" {human_pub}\n')
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=POLICY, extra=("--allowed-signers", str(signers)))
    when = {"GIT_COMMITTER_DATE": "2025-12-31T23:00:00Z", "GIT_AUTHOR_DATE": "2025-12-31T23:00:00Z"}
    s.work.write("README", "base\n")
    git(s.work.path, "add", "-A")
    git(s.work.path, "-c", "gpg.format=ssh", "-c", f"user.signingkey={keys['human']}", "commit", "-S", "-q",
        "-m", "dated", env=when)
    git_says = git(s.work.path, "-c", f"gpg.ssh.allowedSignersFile={signers}", "verify-commit", "HEAD",
                   check=False, env={"TZ": "Asia/Tokyo"})
    assert git_says.returncode != 0, git_says.stderr  # git, in Tokyo: not valid any more
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"  # the server's zone: the hook inherits it through git push
    try:
        assert refused(s.push("main"), "GATE-SIG-UNKNOWN-KEY")
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
    assert s.push("main").returncode == 0  # in UTC it was still valid: 23:00 on the 31st
