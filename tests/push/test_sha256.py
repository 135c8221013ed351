"""SHA-256 repositories on the server: real pushes between SHA-256 repositories.

The pre-receive hook reads through git's own processes, so it reads either object format:
64-hex ids on stdin and in commits, 32-byte ids in trees, the all-zero id of 64 zeros,
`gpgsig-sha256` signatures. Frozen files, ref rules, identities (emails, names, trailers,
signers) and `[signatures] require` are checked as in a sha1 repository. The trusted side (the
ledger, receipts, approvals) and the client hooks read and write through git's plumbing too, so
the reserved namespaces are judged as in a sha1 repository (tests/push/test_formats.py runs the
trusted side end to end in SHA-256 repositories; docs/security.md has the table).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import cli
from support.fsckcorpus import CASES, build_all
from support.gitutil import AGENT, HUMAN, git, git_env
from support.keygen import needs_ssh_keygen, ssh_key
from support.marks import LONG
from support.rawpush import raw_push
from support.server import Server, seeded
from support.verdicts import codes_of, refused

from gatecore.git.refs import ATTEMPTS_PREFIX, REVIEW_PREFIX

pytestmark = needs_ssh_keygen

ZERO64 = "0" * 64
AGENT_PUSH = {"REMOTE_USER": "agent-1"}
HUMAN_PUSH = {"REMOTE_USER": "hana"}
POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**"]
authors = ["*@agents.example.com"]
names = ["* (aider)"]
pushers = ["agent-*"]
[[freeze]]
name = "releases"
paths = ["release/**"]
signers = ["agent-*"]
[refs]
delete = "deny-restricted"
[signatures]
require = ["refs/heads/signed/*"]
[trusted]
pushers = ["runner-*"]
"""


class Sha256:
    def __init__(self, server: Server, keys: dict[str, Path]) -> None:
        self.server, self.keys = server, keys
        self.work = server.work

    def commit(self, files: dict[str, str], identity: tuple[str, str] = HUMAN, key: str | None = None,
               message: str = "change", start: str = "main") -> str:
        """A commit on `start` (not moving any local branch)."""
        w = self.work
        w.git("checkout", "-q", "--detach", start)
        for path, text in files.items():
            w.write(path, text)
        w.git("add", "-A")
        sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={self.keys[key]}", "commit", "-S"] if key \
            else ["commit"]
        w.git(*sign, "-q", "--allow-empty", "-m", message, identity=identity)
        return w.head()

    def push(self, *refspecs: str, pusher: dict[str, str] = HUMAN_PUSH) -> subprocess.CompletedProcess[str]:
        return self.server.push(*refspecs, pusher_env=pusher)


@pytest.fixture(scope="module")
def s256(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sha256]:
    root = tmp_path_factory.mktemp("sha256")
    keys, lines = {}, []
    for name, principal in (("human", "hana@example.com"), ("agent", "agent-7")):
        keys[name] = root / name
        lines.append(f'{principal} namespaces="git" {ssh_key(root / name, name)}\n')
    (root / "allowed_signers").write_text("".join(lines))
    (root / "srv").mkdir()
    server = Server(root / "srv", POLICY, extra=("--allowed-signers", str(root / "allowed_signers")),
                    object_format="sha256")
    s = Sha256(server, keys)
    s.work.write("README", "hello\n")
    s.work.write("ci/deploy.yml", "deploy: true\n")
    s.work.write("src/app.py", "print('hi')\n")
    s.work.commit("base", identity=HUMAN)
    assert s.push("main").returncode == 0
    yield s


def test_install_doctor_and_a_first_push_read_64_digit_ids(s256: Sha256) -> None:
    assert git(s256.server.bare, "rev-parse", "--show-object-format").stdout.strip() == "sha256"
    first = s256.server.audit()[0]
    assert first["decision"] == "accept" and first["refs"] == [
        {"ref": "refs/heads/main", "old": ZERO64, "new": s256.work.head("main")}]
    assert len(s256.work.head("main")) == 64
    doctor = cli("server", "doctor", str(s256.server.bare))
    assert doctor.returncode == 0 and "refused the probe" in doctor.stdout, doctor.stdout + doctor.stderr


def test_frozen_files_in_a_sha256_repository(s256: Sha256) -> None:
    before = s256.server.refs()
    agent = s256.commit({"ci/deploy.yml": "deploy: skip\n"}, identity=AGENT)
    out = s256.push(f"{agent}:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH") and agent in out.stderr and s256.server.refs() == before
    # the same write pushed by the agent's account under a human's email
    human_email = s256.commit({"ci/deploy.yml": "deploy: skip\n"})
    out = s256.push(f"{human_email}:refs/heads/main", pusher=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH") and "pusher:agent-1" in out.stderr and s256.server.refs() == before
    # a frozen directory deleted through a merge of the agent's branch
    deleted = s256.commit({}, identity=AGENT, message="drop ci")
    s256.work.git("rm", "-q", "-r", "ci")
    s256.work.git("commit", "-q", "--amend", "-m", "drop ci", identity=AGENT)
    deleted = s256.work.head()
    s256.work.git("checkout", "-q", "--detach", "main")
    s256.work.git("merge", "-q", "--no-ff", "-m", "merge", deleted)
    out = s256.push("HEAD:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH") and s256.server.refs() == before
    harmless = s256.commit({"src/feature.py": "x = 1\n"}, identity=AGENT)
    assert s256.push(f"{harmless}:refs/heads/agent-topic", pusher=AGENT_PUSH).returncode == 0
    assert s256.server.ref("refs/heads/agent-topic") == harmless


def test_names_and_trailers_restrict_in_a_sha256_repository(s256: Sha256) -> None:
    before = s256.server.refs()
    named = s256.commit({"ci/deploy.yml": "named\n"}, identity=("Hana (aider)", "hana@example.com"))
    out = s256.push(f"{named}:refs/heads/named")
    assert refused(out, "GATE-FROZEN-PATH") and "name:Hana (aider)" in out.stderr
    coauthored = s256.commit({"ci/deploy.yml": "co\n"},
                             message="fix\n\nCo-authored-by: Agent <bot-7@agents.example.com>\n")
    out = s256.push(f"{coauthored}:refs/heads/co")
    assert refused(out, "GATE-FROZEN-PATH") and "co-author:bot-7@agents.example.com" in out.stderr
    assert s256.server.refs() == before


def test_ref_rules_and_the_zero_id_of_64_digits(s256: Sha256) -> None:
    topic = s256.commit({"src/topic.py": "1\n"})
    assert s256.push(f"{topic}:refs/heads/topic").returncode == 0
    before = s256.server.refs()
    out = s256.push(":refs/heads/topic", pusher=AGENT_PUSH)
    assert refused(out, "GATE-REF-DELETE") and s256.server.refs() == before
    out = s256.push(":refs/heads/topic")
    assert out.returncode == 0 and s256.server.ref("refs/heads/topic") is None
    assert s256.server.audit()[-1]["refs"] == [{"ref": "refs/heads/topic", "old": topic, "new": ZERO64}]
    before = s256.server.refs()
    agent = s256.commit({"ci/deploy.yml": "tagged\n"}, identity=AGENT)
    s256.work.git("tag", "-a", "-m", "v1", "v1-agent", agent)
    out = s256.push("refs/tags/v1-agent")
    assert refused(out, "GATE-FROZEN-PATH") and s256.server.refs() == before
    out = s256.push(f"{topic}:refs/replace/{s256.work.head('main')}", pusher=AGENT_PUSH)
    assert refused(out, "GATE-REF-REPLACE") and s256.server.refs() == before
    # deleting a ref that does not exist: two zero ids of the repository's width, a no-op
    hook = s256.server.bare / "hooks" / "pre-receive"
    done = subprocess.run([str(hook)], input=f"{ZERO64} {ZERO64} refs/heads/nope\n", cwd=s256.server.bare,
                          env={**git_env(), "GIT_DIR": str(s256.server.bare), "REMOTE_USER": "hana"},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_signatures_in_a_sha256_repository_are_gpgsig_sha256(s256: Sha256) -> None:
    """`[signatures] require` judges every commit new to the refs in its scope: a signed history
    of its own (an orphan root) is accepted, an unsigned commit on top refused."""
    tree = s256.work.git("rev-parse", "main^{tree}").stdout.strip()
    signed = s256.work.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={s256.keys['human']}", "commit-tree",
                           "-S", tree, "-m", "signed root").stdout.strip()
    raw = s256.work.git("cat-file", "commit", signed).stdout
    assert "\ngpgsig-sha256 -----BEGIN SSH SIGNATURE-----" in raw and "\ngpgsig " not in raw
    git_says = s256.work.git("-c", f"gpg.ssh.allowedSignersFile={s256.keys['human'].parent / 'allowed_signers'}",
                             "verify-commit", signed, check=False)
    assert git_says.returncode == 0, git_says.stderr
    out = s256.push(f"{signed}:refs/heads/signed/ok")
    assert out.returncode == 0, out.stderr
    before = s256.server.refs()
    unsigned = s256.commit({"src/unsigned.py": "1\n"}, start=signed)
    out = s256.push(f"{unsigned}:refs/heads/signed/ok")
    assert refused(out, "GATE-SIG-MISSING") and s256.server.refs() == before
    by_agent_key = s256.commit({"release/notes.md": "x\n"}, key="agent")
    out = s256.push(f"{by_agent_key}:refs/heads/release-notes")
    assert refused(out, "GATE-FROZEN-PATH") and "identity=signer:agent-7" in out.stderr
    assert s256.server.refs() == before


def test_the_trusted_sides_namespaces_are_judged_as_in_a_sha1_repository(s256: Sha256) -> None:
    """The ledger, review refs and approvals are checked here as anywhere (this server has no keyring
    and no approvers: refused with those codes), never refused for the object format: the trusted
    side writes them through git's plumbing, which reads SHA-256 (tests/push/test_formats.py)."""
    before = s256.server.refs()
    for ref in (ATTEMPTS_PREFIX + "a1", REVIEW_PREFIX + "a1", "refs/gate/approvals/" + "0" * 64):
        out = s256.push(f"main:{ref}", pusher={"REMOTE_USER": "runner-1"})
        codes = codes_of(out)
        assert out.returncode != 0 and codes and "GATE-GIT-OBJECT-FORMAT" not in codes, out.stderr
    assert s256.server.refs() == before


def test_the_trusted_side_reads_a_sha256_repository(s256: Sha256) -> None:
    from gatecore.adapters.gitrepo import GitRepo

    for path in (s256.work.path, s256.server.bare):
        repo = GitRepo.at(path)
        assert (repo.object_format, repo.zero_id) == ("sha256", ZERO64)
        assert len(repo.resolve("main")) == 64
        repo.close()
    out = cli("digest", "--repo", str(s256.work.path), "--from", "main", "--to", "main")
    assert out.returncode == 0 and len(out.stdout.split()[-1]) == 64, out.stdout + out.stderr


def test_ids_of_the_other_format_are_refused(s256: Sha256, tmp_path: Path) -> None:
    """The ids git hands the hook must have the repository's width: 40 digits into a sha256
    repository (or 64 into a sha1 one) is refused, never read."""
    sha1 = seeded(tmp_path)
    for bare, oid in ((s256.server.bare, "1" * 40), (sha1.bare, "1" * 64)):
        zero = "0" * len(oid)
        done = subprocess.run([str(bare / "hooks" / "pre-receive")], input=f"{zero} {oid} refs/heads/odd\n", cwd=bare,
                              env={**git_env(), "GIT_DIR": str(bare), "REMOTE_USER": "hana"}, capture_output=True,
                              text=True)
        assert done.returncode != 0 and "GATE-GIT-OBJECT-FORMAT" in done.stderr, done.stderr
        last = [json.loads(x) for x in (bare / "gate" / "audit.log").read_text().splitlines()][-1]
        assert last["codes"] == ["GATE-GIT-OBJECT-FORMAT"]


@pytest.mark.parametrize("which", ["decided", pytest.param("refused", marks=LONG)])
def test_the_fsck_corpus_reads_alike_in_a_sha256_repository(s256: Sha256, which: str) -> None:
    """tests/support/fsckcorpus.py built with 64-hex ids: what the gate decides in a sha1 repository
    it decides here (one push: each agent commit's frozen write judged), what it refuses it refuses."""
    built = build_all(s256.work.path, s256.work.head("main"))
    cases = [c for c in CASES if c.label in built and c.default == "accept"]
    before = s256.server.refs()
    if which == "decided":
        decided = [c for c in cases if c.gate == "decide"]
        out = raw_push(s256.work.path, s256.server.bare, [(ZERO64, built[c.label].tip, built[c.label].ref)
                                                          for c in decided], HUMAN_PUSH,
                       objects=[o for c in decided for o in built[c.label].objects])
        found = [json.loads(line[len("gate-json: "):]) for line in out.stderr.splitlines()
                 if line.startswith("gate-json: ")]
        assert {d["code"] for d in found} == {"GATE-FROZEN-PATH"}, out.stderr
        assert {d["commit"] for d in found} == {built[c.label].commit for c in decided}
    else:
        for c in (c for c in cases if c.gate != "decide"):
            b = built[c.label]
            out = raw_push(s256.work.path, s256.server.bare, [(ZERO64, b.tip, b.ref)], HUMAN_PUSH, objects=b.objects)
            assert f'"code": "{c.gate}"' in out.stderr and not out.ok(b.ref), (c.label, out.stderr)
    assert s256.server.refs() == before
