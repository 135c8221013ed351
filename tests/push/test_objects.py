"""The object-reading corpus: objects git, libgit2 and checkouts read differently, pushed for real.

Each case is built byte for byte (`git hash-object --literally`, raw trees and commits), pushed
into a gated server with and without `receive.fsckObjects`, and the gate's verdict is checked
against what git itself serves: `git ls-tree` / `git cat-file` on the server and a fresh clone's
checkout. Where the readings differ the push is refused with a code; the legitimate cases
(zero-padded modes, a human's own branch deletion, deleting a ref that does not exist) pass.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.fsckcorpus import (
    CASES,
    FSCK_IDS_239,
    FSCK_IDS_NEWER_OBJECTS,
    FSCK_IDS_NEWER_REFS,
    LEVELS,
    Built,
    Case,
    build_all,
)
from support.gitutil import HUMAN, git, git_bytes
from support.lab import AGENT_PUSH, LAB_POLICY, RUNNER, Lab
from support.rawpush import raw_push
from support.server import POLICY, Server, seeded
from support.verdicts import codes_of, declined, refused

from gatecore.errors import GateError
from gatecore.git.grammar import parse_commit, parse_tree, split_commit
from gatecore.git.objects import Objects

IDENT_AGENT = b"Agent Smith <bot-7@agents.example.com> 1790000000 +0000"
IDENT_HUMAN = b"Hana Human <hana@example.com> 1790000000 +0000"


# --- building objects byte for byte -------------------------------------------------------------

def entries_of(repo: Path, tree: str) -> list[tuple[bytes, bytes, str]]:
    """(raw mode, name, id) of a tree, exactly as stored (git cat-file, not ls-tree, which canonicalises)."""
    data = git_bytes(repo, "cat-file", "tree", tree)
    return [(mode, name, oid) for name, (mode, oid) in _raw_entries(data)]


def _raw_entries(data: bytes) -> list[tuple[bytes, tuple[bytes, str]]]:
    out, pos = [], 0
    while pos < len(data):
        sp = data.index(b" ", pos)
        nul = data.index(b"\0", sp)
        out.append((data[sp + 1:nul], (data[pos:sp], data[nul + 1:nul + 21].hex())))
        pos = nul + 21
    return out


def raw_tree(repo: Path, entries: list[tuple[bytes, bytes, str]]) -> str:
    data = b"".join(mode + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return git_bytes(repo, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=data).decode().strip()


def raw_commit(repo: Path, tree: str, parents: list[str], header: bytes = b"",
               author: bytes = IDENT_AGENT, committer: bytes | None = IDENT_AGENT, message: bytes = b"raw\n") -> str:
    lines = [b"tree " + tree.encode()] + [b"parent " + p.encode() for p in parents]
    lines.append(b"author " + author)
    if committer is not None:
        lines.append(b"committer " + committer)
    data = b"\n".join(lines) + b"\n" + header + b"\n" + message
    return git_bytes(repo, "hash-object", "-t", "commit", "-w", "--literally", "--stdin",
                     input=data).decode().strip()


def blob(repo: Path, data: bytes) -> str:
    return git_bytes(repo, "hash-object", "-w", "--stdin", input=data).decode().strip()


def with_entry(repo: Path, tree: str, path: str, mode: bytes | None, oid: str | None) -> str:
    """`tree` with `path` set to (mode, oid) - raw, unchecked - or removed (mode None)."""
    head, _, rest = path.partition("/")
    entries = [e for e in entries_of(repo, tree) if e[1] != head.encode()]
    if rest:
        sub = next((o for m, n, o in entries_of(repo, tree) if n == head.encode()), None)
        sub_tree = with_entry(repo, sub or raw_tree(repo, []), rest, mode, oid)
        entries.append((b"40000", head.encode(), sub_tree))
    elif mode is not None and oid is not None:
        entries.append((mode, head.encode(), oid))
    return raw_tree(repo, sorted(entries, key=lambda e: e[1] + (b"/" if e[0] in (b"40000", b"040000") else b"")))


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "fsckObjects"])
def olab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    lab = Lab(tmp_path_factory.mktemp("objects"))
    if request.param:
        git(lab.server.bare, "config", "receive.fsckObjects", "true")
    yield lab


def push_new(lab: Lab, commit: str, pusher: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return lab.server.push(f"{commit}:refs/heads/o/{lab.fresh('b')}", pusher_env=pusher)


def rejected_somehow(lab: Lab, before: dict[str, str], out: subprocess.CompletedProcess[str],
                     code: str) -> None:
    """Refused and nothing moved: by the gate with `code`, or (fsckObjects) by git before the hook ran."""
    assert out.returncode != 0, out.stderr
    if declined(out):
        assert code in codes_of(out), out.stderr
    else:
        assert git(lab.server.bare, "config", "--get", "receive.fsckObjects", check=False).stdout.strip() == "true"
    assert lab.snapshot() == before


def base_tree(lab: Lab) -> str:
    return git(lab.work.path, "rev-parse", f"{lab.base}^{{tree}}").stdout.strip()


def deploy_blob(lab: Lab) -> str:
    return git(lab.work.path, "rev-parse", f"{lab.base}:ci/deploy.yml").stdout.strip()


# --- modes that are not one of git's five ---------------------------------------------------------

@pytest.mark.parametrize("mode,git_reads", [
    (b"100664", "file 100644"),  # git: the same file; libgit2: a mode change
    (b"30644", "submodule"),  # no type bits git knows: git makes it a gitlink, libgit2 a file
    (b"120755", "symlink"),  # git: a symlink; libgit2: an executable file
    (b"140644", "submodule"),  # a socket's type bits
    (b"100600", "file 100644"),
])
def test_a_frozen_file_written_under_a_raw_mode_is_refused(olab: Lab, mode: bytes, git_reads: str) -> None:
    tree = with_entry(olab.work.path, base_tree(olab), "ci/deploy.yml", mode, deploy_blob(olab))
    head = raw_commit(olab.work.path, tree, [olab.base])
    listed = git(olab.work.path, "ls-tree", head, "ci/deploy.yml").stdout
    assert (git_reads.split()[-1] if " " in git_reads else {"submodule": "160000", "symlink": "120000"}[git_reads]) \
        in listed  # what git itself makes of it
    before = olab.snapshot()
    rejected_somehow(olab, before, push_new(olab, head), "GATE-GIT-MODE")


@pytest.mark.parametrize("setting", ["refuse-frozen", "refuse"])
def test_a_raw_mode_outside_frozen_paths_is_refused_only_under_refuse(tmp_path: Path, setting: str) -> None:
    lab = Lab(tmp_path / "rf", policy=LAB_POLICY + f'[objects]\nnoncanonical_modes = "{setting}"\n',
              key_ids=("orch-1", "runner-1"))
    src_blob = git(lab.work.path, "rev-parse", f"{lab.base}:src/app.py").stdout.strip()
    tree = with_entry(lab.work.path, base_tree(lab), "src/app.py", b"100664", src_blob)
    before = lab.snapshot()
    out = push_new(lab, raw_commit(lab.work.path, tree, [lab.base]))
    if setting == "refuse":
        assert refused(out, "GATE-GIT-MODE") and lab.snapshot() == before
    else:
        assert out.returncode == 0, out.stderr
    tree = with_entry(lab.work.path, base_tree(lab), "ci/deploy.yml", b"100664", deploy_blob(lab))
    before = lab.snapshot()
    out = push_new(lab, raw_commit(lab.work.path, tree, [lab.base]))
    assert refused(out, "GATE-GIT-MODE") and lab.snapshot() == before


def test_a_frozen_directory_under_a_raw_mode_is_refused(olab: Lab) -> None:
    ci = next(o for m, n, o in entries_of(olab.work.path, base_tree(olab)) if n == b"ci")
    entries = [e for e in entries_of(olab.work.path, base_tree(olab)) if e[1] != b"ci"] + [(b"40755", b"ci", ci)]
    head = raw_commit(olab.work.path, raw_tree(olab.work.path, sorted(entries, key=lambda e: e[1] + b"/")),
                      [olab.base])
    assert "040000 tree" in git(olab.work.path, "ls-tree", head, "ci").stdout  # git: the same directory
    before = olab.snapshot()
    rejected_somehow(olab, before, push_new(olab, head), "GATE-GIT-MODE")


def test_zero_padded_modes_are_what_git_reads_and_are_accepted(olab: Lab) -> None:
    """Old histories hold `040000` (flask has 21 such trees): the same mode, a different spelling."""
    ci = next(o for m, n, o in entries_of(olab.work.path, base_tree(olab)) if n == b"src")
    entries = [e for e in entries_of(olab.work.path, base_tree(olab)) if e[1] != b"src"] + [(b"040000", b"src", ci)]
    tree = raw_tree(olab.work.path, sorted(entries, key=lambda e: e[1] + (b"/" if e[0].endswith(b"40000") else b"")))
    head = raw_commit(olab.work.path, tree, [olab.base], author=IDENT_HUMAN, committer=IDENT_HUMAN)
    out = push_new(olab, head)
    if "zeroPaddedFilemode" in out.stderr:  # receive.fsckObjects: git's own fsck refuses the spelling
        return
    assert out.returncode == 0, out.stderr


def test_a_human_commit_with_a_raw_mode_is_not_read_and_is_left_to_fsck(olab: Lab) -> None:
    """Commits of unrestricted identities are not read (docs/security.md: git's fsck is what
    refuses bad modes in every pushed tree, with receive.fsck.badFilemode=error)."""
    tree = with_entry(olab.work.path, base_tree(olab), "src/app.py", b"100664",
                      git(olab.work.path, "rev-parse", f"{olab.base}:src/app.py").stdout.strip())
    head = raw_commit(olab.work.path, tree, [olab.base], author=IDENT_HUMAN, committer=IDENT_HUMAN)
    assert push_new(olab, head).returncode == 0


def test_what_the_gate_refused_is_what_a_checkout_would_have_shown(tmp_path: Path) -> None:
    """The ungated reading: a clone checks the raw-moded file out as a submodule (it vanishes)."""
    server = seeded(tmp_path)
    w = server.work
    tree = with_entry(w.path, git(w.path, "rev-parse", "HEAD^{tree}").stdout.strip(), "ci/deploy.yml", b"30644",
                      git(w.path, "rev-parse", "HEAD:ci/deploy.yml").stdout.strip())
    head = raw_commit(w.path, tree, [w.head()], author=IDENT_HUMAN, committer=IDENT_HUMAN)
    git(server.bare, "fetch", "-q", str(w.path), f"{head}:refs/heads/raw")  # behind the gate's back
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", "raw", server.url, str(clone), check=False)
    assert not (clone / "ci" / "deploy.yml").is_file()
    before = server.refs()
    agent = raw_commit(w.path, tree, [w.head()])
    out = server.push(f"{agent}:refs/heads/agent")
    assert refused(out, "GATE-GIT-MODE") and server.refs() == before


# --- replacement objects and grafts ---------------------------------------------------------------

def test_an_existing_replace_ref_does_not_hide_an_agent_commit(olab: Lab) -> None:
    """refs/replace/<agent commit> -> a harmless commit: git would walk the harmless one."""
    evil = olab.change(olab.fresh("evil"), {"ci/deploy.yml": "deploy: skip-review\n"})
    harmless = olab.change(olab.fresh("harmless"), {"src/harmless.py": "1\n"})
    git(olab.server.bare, "fetch", "-q", str(olab.work.path), f"{harmless}:refs/heads/o/harmless-{harmless[:8]}")
    git(olab.server.bare, "update-ref", f"refs/replace/{evil}", harmless)
    try:
        before = olab.snapshot()
        out = push_new(olab, evil, AGENT_PUSH)
        assert refused(out, "GATE-FROZEN-PATH") and olab.snapshot() == before
    finally:
        git(olab.server.bare, "update-ref", "-d", f"refs/replace/{evil}")


def test_grafts_on_the_server_do_not_re_parent_an_agent_commit(olab: Lab) -> None:
    """info/grafts names a parent that already has the agent's content: git would see no change."""
    content = "deploy: grafted\n"
    human = olab.change(olab.fresh("graft-h"), {"ci/deploy.yml": content}, identity=HUMAN)
    assert push_new(olab, human).returncode == 0
    agent = olab.change(olab.fresh("graft-a"), {"ci/deploy.yml": content})
    grafts = olab.server.bare / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{agent} {human}\n")
    try:
        before = olab.snapshot()
        out = push_new(olab, agent)
        assert refused(out, "GATE-FROZEN-PATH") and olab.snapshot() == before
    finally:
        grafts.unlink()


@pytest.mark.parametrize("pusher,code", [(AGENT_PUSH, "GATE-REF-REPLACE"), ({"REMOTE_USER": "hana"},
                                                                              "GATE-REF-REPLACE")])
def test_pushing_a_replace_ref_is_for_trusted_pushers_only(olab: Lab, pusher: dict[str, str], code: str) -> None:
    evil = blob(olab.work.path, b"deploy: replaced\n")
    before = olab.snapshot()
    out = olab.server.push(f"{evil}:refs/replace/{deploy_blob(olab)}", pusher_env=pusher)
    rejected_somehow(olab, before, out, code)
    assert git(olab.server.bare, "show", f"{olab.base}:ci/deploy.yml").stdout == "deploy: true\n"


def test_a_trusted_replace_ref_is_accepted_and_doctor_reports_it(tmp_path: Path) -> None:
    from support.gitutil import gate

    lab = Lab(tmp_path / "rep", key_ids=("orch-1", "runner-1"))
    evil = blob(lab.work.path, b"deploy: replaced\n")
    out = lab.server.push(f"{evil}:refs/replace/{deploy_blob(lab)}", pusher_env=RUNNER)
    assert out.returncode == 0, out.stderr
    assert git(lab.server.bare, "show", f"{lab.base}:ci/deploy.yml").stdout == "deploy: replaced\n"
    doctor = gate("server", "doctor", str(lab.server.bare))
    assert doctor.returncode != 0 and "refs/replace/" in doctor.stdout and "FAIL" in doctor.stdout


# --- commit headers git and libgit2 read differently ------------------------------------------------

@pytest.mark.parametrize("name,author,committer,header", [
    ("two-authors", IDENT_HUMAN + b"\nauthor " + IDENT_AGENT, IDENT_HUMAN, b""),
    ("space-in-email", b"Agent <bot-7@agents.example.com > 1790000000 +0000", IDENT_HUMAN, b""),
    ("two-emails", b"Hana <hana@example.com> <bot-7@agents.example.com> 1790000000 +0000", IDENT_HUMAN, b""),
    ("utf16-encoding", IDENT_AGENT, IDENT_AGENT, b"encoding UTF-16\n"),
    ("unknown-encoding", IDENT_AGENT, IDENT_AGENT, b"encoding x-gate-nonesuch\n"),
    ("two-committers", IDENT_HUMAN, IDENT_HUMAN + b"\ncommitter " + IDENT_AGENT, b""),
    ("no-committer", IDENT_AGENT, None, b""),
])
def test_commit_headers_read_two_ways_are_refused_as_malformed(olab: Lab, name: str, author: bytes,
                                                                committer: bytes | None, header: bytes) -> None:
    tree = with_entry(olab.work.path, base_tree(olab), "src/app.py", b"100644", blob(olab.work.path, name.encode()))
    head = raw_commit(olab.work.path, tree, [olab.base], header, author=author, committer=committer)
    before = olab.snapshot()
    rejected_somehow(olab, before, push_new(olab, head), "GATE-GIT-MALFORMED")


def test_an_encoding_git_honours_is_honoured(olab: Lab) -> None:
    """Latin-1: git re-encodes the ident to 'böt-7@agents.example.com'; so does the gate."""
    author = "Agent <böt-7@agents.example.com> 1790000000 +0000".encode("latin-1")
    tree = with_entry(olab.work.path, base_tree(olab), "ci/deploy.yml", b"100644", blob(olab.work.path, b"x\n"))
    head = raw_commit(olab.work.path, tree, [olab.base], b"encoding ISO-8859-1\n", author=author, committer=author)
    assert "böt-7@agents.example.com" in git(olab.work.path, "log", "-1", "--format=%ae", head).stdout
    before = olab.snapshot()
    out = push_new(olab, head)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert olab.snapshot() == before


def test_a_deep_tag_chain_is_malformed_not_unreadable(olab: Lab) -> None:
    target, kind = olab.base, "commit"
    for i in range(40):
        data = f"object {target}\ntype {kind}\ntag t{i}\ntagger Hana <hana@example.com> 1 +0000\n\nt\n".encode()
        target = git_bytes(olab.work.path, "hash-object", "-t", "tag", "-w", "--stdin", input=data).decode().strip()
        kind = "tag"
    before = olab.snapshot()
    rejected_somehow(olab, before, olab.server.push(f"{target}:refs/tags/deep-{olab.fresh()}"), "GATE-GIT-MALFORMED")


def test_a_deep_tag_chain_beside_a_branch_update_is_malformed_too(tmp_path: Path) -> None:
    """The same chain pushed with a fast-forward of main: the push's quick walk (`pushcheck.QuickWalk`),
    which git walks through any chain of tags, is the scope's walk then, and the tips are still read by
    the gate's grammar (`Objects.walk` peels each): the chain is refused as it is alone."""
    server = Server(tmp_path)
    server.work.write("README", "hello\n")
    base = server.work.commit("base")
    assert server.push("main").returncode == 0
    target, kind = base, "commit"
    for i in range(40):
        data = f"object {target}\ntype {kind}\ntag t{i}\ntagger Hana <hana@example.com> 1 +0000\n\nt\n".encode()
        target = git_bytes(server.work.path, "hash-object", "-t", "tag", "-w", "--stdin", input=data).decode().strip()
        kind = "tag"
    server.work.write("README", "hello again\n")
    server.work.commit("a human's change")
    before = server.refs()
    out = server.push("main", f"{target}:refs/tags/deep")
    assert refused(out, "GATE-GIT-MALFORMED"), out.stderr
    assert server.refs() == before


def test_a_tag_lying_about_its_target_type_is_malformed(olab: Lab) -> None:
    """git's own client cannot even pack one (so it is read here, where it was written)."""
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.errors import GateError

    data = f"object {base_tree(olab)}\ntype commit\ntag liar\ntagger Hana <hana@example.com> 1 +0000\n\nt\n"
    tag = olab.work.hash_object(data.encode(), "tag")
    with pytest.raises(GateError) as err:
        Objects(GitRepo.at(olab.work.path)).peel_to_commit(tag)
    assert err.value.code == "GATE-GIT-MALFORMED"


# --- what must pass ----------------------------------------------------------------------------------

def test_a_human_deletes_their_topic_branch_under_a_rule_that_names_nobody(tmp_path: Path) -> None:
    policy = 'mode = "enforce"\n[[freeze]]\npaths = ["release/**"]\n'  # frozen for everyone
    server = seeded(tmp_path, policy)
    server.work.write("src/topic.py", "x\n")
    server.work.commit("topic", identity=HUMAN)
    assert server.push("HEAD:refs/heads/topic").returncode == 0
    out = server.push(":refs/heads/topic", pusher_env={"REMOTE_USER": "hana"})
    assert out.returncode == 0, out.stderr
    assert server.ref("refs/heads/topic") is None


def test_deleting_a_ref_that_does_not_exist_is_a_no_op(tmp_path: Path) -> None:
    """git sends '<zero> <zero> <ref>' for it (raw protocol clients do): not malformed input."""
    server = seeded(tmp_path)
    zero = "0" * 40
    out = subprocess.run([str(server.bare / "hooks" / "pre-receive")], input=f"{zero} {zero} refs/heads/nope\n",
                         cwd=server.bare, env={"GIT_DIR": str(server.bare), "PATH": "/usr/bin:/bin",
                                               "REMOTE_USER": "hana"}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert server.audit()[-1]["decision"] == "accept"


def test_malformed_objects_are_reported_as_malformed_to_the_client_hooks_too(olab: Lab) -> None:
    """The client push hook reads with the same parser (parity, checked directly)."""
    head = raw_commit(olab.work.path, base_tree(olab), [olab.base], committer=None)
    header, message = split_commit(git_bytes(olab.work.path, "cat-file", "commit", head))
    with pytest.raises(Exception) as err:
        parse_commit(head, header, message).identities()
    assert getattr(err.value, "code", None) == "GATE-GIT-MALFORMED"


def test_the_parser_reads_every_tree_and_commit_of_a_real_history_as_git_does(tmp_path: Path) -> None:
    """pallets/flask's whole history: every commit's tree, parents and idents, every tree's entries,
    equal to git's own reading (`git log --format`, `git ls-tree`)."""
    bundle = Path("/work/shared/data/pallets-flask.bundle")
    if not bundle.exists():
        pytest.skip("the shared flask bundle is not on this machine")
    repo = tmp_path / "flask.git"
    git(tmp_path, "clone", "-q", "--bare", str(bundle), str(repo))
    from gatecore.adapters.gitrepo import GitRepo

    objects = Objects(GitRepo.at(repo))
    log = git_bytes(repo, "-c", "i18n.logOutputEncoding=", "log", "--all", "--format=%H%x00%T%x00%P%x00%ae%x00%ce")
    checked = 0
    for line in log.decode("utf-8", "surrogateescape").splitlines():
        oid, tree, parents, author, committer = line.split("\0")
        c = objects.commit(oid)
        assert (c.tree_id, list(c.parent_ids), c.author_email, c.committer_email) == \
            (tree, parents.split(), author, committer), oid
        checked += 1
    assert checked > 5000
    for oid in git(repo, "rev-list", "--all", "--max-count=50").stdout.split():
        tree = objects.commit(oid).tree_id
        listed = {e.split("\t")[1].encode("utf-8", "surrogateescape"): e.split()[2]
                  for e in git(repo, "ls-tree", tree).stdout.splitlines()}
        assert {n: e[1] for n, e in parse_tree(tree, git_bytes(repo, "cat-file", "tree", tree)).items()} == listed


def test_install_fsck_makes_git_refuse_bad_modes_in_every_pushed_tree(tmp_path: Path) -> None:
    """A human's commit is not read by the gate; with --fsck git refuses its bad mode itself."""
    server = seeded(tmp_path)
    server.install("--fsck")
    assert git(server.bare, "config", "receive.fsck.badFilemode").stdout.strip() == "error"
    w = server.work
    tree = with_entry(w.path, git(w.path, "rev-parse", "HEAD^{tree}").stdout.strip(), "src/app.py", b"100600",
                      git(w.path, "rev-parse", "HEAD:src/app.py").stdout.strip())
    head = raw_commit(w.path, tree, [w.head()], author=IDENT_HUMAN, committer=IDENT_HUMAN)
    before = server.refs()
    out = server.push(f"{head}:refs/heads/human-raw")
    assert out.returncode != 0 and "badFilemode" in out.stderr and server.refs() == before


# --- one object per `git fsck` message id (tests/support/fsckcorpus.py, docs/security.md's table) ----

HUMAN_PUSH = {"REMOTE_USER": "hana"}
ZERO40 = "0" * 40


@dataclass
class FsckCorpus:
    work: Path
    built: dict[str, Built]
    gated: dict[str, Server]  # "plain", "fsckObjects": the gate in front of git's receive-pack
    ungated: dict[str, Path]  # the same, with no hook: git's own verdict


@pytest.fixture(scope="module")
def fsck_corpus(tmp_path_factory: pytest.TempPathFactory) -> FsckCorpus:
    root = tmp_path_factory.mktemp("fsck")
    for name in ("plain", "strict"):
        (root / name).mkdir()
    plain = seeded(root / "plain")
    work, base = plain.work.path, plain.work.head()
    strict = Server(root / "strict")
    git(strict.bare, "config", "receive.fsckObjects", "true")
    git(work, "push", "-q", strict.url, "main")
    ungated = {}
    for name in ("plain", "fsckObjects"):
        bare = root / f"ungated-{name}.git"
        git(root, "init", "-q", "--bare", str(bare))
        if name == "fsckObjects":
            git(bare, "config", "receive.fsckObjects", "true")
        git(work, "push", "-q", str(bare), "main")
        ungated[name] = bare
    return FsckCorpus(work, build_all(work, base), {"plain": plain, "fsckObjects": strict}, ungated)


def _built_cases(corpus: FsckCorpus) -> list[Case]:
    return [c for c in CASES if c.label in corpus.built]


def _gate_json(text: str) -> list[dict[str, str]]:
    return [json.loads(line.removeprefix("remote: ")[len("gate-json: "):]) for line in text.splitlines()
            if line.removeprefix("remote: ").startswith("gate-json: ")]


def test_the_corpus_has_a_case_for_every_fsck_message_id() -> None:
    listed = {w.removeprefix("fsck.") for w in git(Path.cwd(), "help", "--config").stdout.split()
              if w.startswith("fsck.")} - {"skipList"}
    known = set(FSCK_IDS_239) | set(FSCK_IDS_NEWER_OBJECTS) | set(FSCK_IDS_NEWER_REFS)
    assert listed <= known, f"a git release with new fsck ids: add them to the table: {sorted(listed - known)}"
    if git(Path.cwd(), "version").stdout.startswith("git version 2.39."):
        assert listed == set(FSCK_IDS_239)
    assert {c.msg_id for c in CASES} == set(FSCK_IDS_239)
    assert set(LEVELS) == set(FSCK_IDS_239) | set(FSCK_IDS_NEWER_OBJECTS)


def test_git_receive_pack_takes_each_object_as_the_table_says(fsck_corpus: FsckCorpus) -> None:
    """No hook, no receive.fsckObjects: one push of every case, each ref's own outcome."""
    cases = _built_cases(fsck_corpus)
    built = fsck_corpus.built
    out = raw_push(fsck_corpus.work, fsck_corpus.ungated["plain"],
                   [(ZERO40, built[c.label].tip, built[c.label].ref) for c in cases], {},
                   objects=[o for c in cases for o in built[c.label].objects])
    got = {c.label: "accept" if out.ok(built[c.label].ref) else "refuse" for c in cases}
    assert got == {c.label: c.default for c in cases}, out.stderr


def test_git_receive_pack_with_fsck_objects_names_each_object_as_the_table_says(fsck_corpus: FsckCorpus) -> None:
    """No hook, receive.fsckObjects: one push per case (git refuses a pack with any bad object)."""
    for c in _built_cases(fsck_corpus):
        b = fsck_corpus.built[c.label]
        out = raw_push(fsck_corpus.work, fsck_corpus.ungated["fsckObjects"], [(ZERO40, b.tip, b.ref)], {},
                       objects=b.objects)
        assert ("accept" if out.ok(b.ref) else "refuse") == c.fsck, (c.label, out.stderr)
        if c.level != "IGNORE":
            assert (c.says or f": {c.msg_id}: ") in out.stderr, (c.label, out.stderr)


@pytest.mark.parametrize("config", ["plain", "fsckObjects"])
def test_the_gate_decides_or_refuses_each_object_as_the_table_says(fsck_corpus: FsckCorpus, config: str) -> None:
    """What git's receive-pack takes reaches the gate: each object the table says the gate decides
    (one push of them all: each agent commit's frozen write is judged, GATE-FROZEN-PATH), each it
    refuses (one push each, with its code); what git refuses never reaches the hook. Nothing moves."""
    corpus, server = fsck_corpus, fsck_corpus.gated[config]
    takes = {c.label: c.default if config == "plain" else c.fsck for c in _built_cases(corpus)}
    decided = [c for c in _built_cases(corpus) if takes[c.label] == "accept" and c.gate == "decide"]
    before = server.refs()
    for c in _built_cases(corpus):
        if c in decided:
            continue
        b = corpus.built[c.label]
        out = raw_push(corpus.work, server.bare, [(ZERO40, b.tip, b.ref)], HUMAN_PUSH, objects=b.objects)
        assert not out.ok(b.ref), (c.label, out.status)
        if takes[c.label] == "refuse":
            assert "hook declined" not in out.stdout, (c.label, out.stderr)  # git refused first
        else:
            assert {d["code"] for d in _gate_json(out.stderr)} == {c.gate}, (c.label, out.stderr)
    assert 0 < len(decided) < 50  # every violation shown (limits.max_violations_shown)
    out = raw_push(corpus.work, server.bare,
                   [(ZERO40, corpus.built[c.label].tip, corpus.built[c.label].ref) for c in decided], HUMAN_PUSH,
                   objects=[o for c in decided for o in corpus.built[c.label].objects])
    found = _gate_json(out.stderr)
    assert {d["code"] for d in found} == {"GATE-FROZEN-PATH"}, out.stderr
    assert {d["commit"] for d in found} == {corpus.built[c.label].commit for c in decided}
    assert server.refs() == before


def test_the_gate_reads_each_ident_as_git_does_and_refuses_only_where_libgit2_reads_another(
        fsck_corpus: FsckCorpus) -> None:
    """Decided: name and email equal git's `%an`/`%ae`/`%cn`/`%ce`, and libgit2's (pygit2); the
    commit's oddities name what fsck says. Refused: git and libgit2 read a different author, or
    libgit2 cannot read the commit at all."""
    import pygit2

    from gatecore.adapters.gitstream import GitStream

    objects = Objects(GitStream(str(fsck_corpus.work / ".git")))
    libgit2 = pygit2.Repository(str(fsck_corpus.work))
    cases = [c for c in _built_cases(fsck_corpus) if c.default == "accept"
             and fsck_corpus.built[c.label].ref.startswith("refs/heads/")]
    assert COMMIT_IDS - {c.msg_id for c in cases} == set()
    ids = [fsck_corpus.built[c.label].commit for c in cases]
    shown = git_bytes(fsck_corpus.work, "-c", "i18n.logOutputEncoding=", "show", "-s", "--no-walk=unsorted",
                      "--format=%an%x00%ae%x00%cn%x00%ce%x01", *ids).decode("utf-8", "surrogateescape")
    for c, oid, line in zip(cases, ids, shown.split("\x01\n"), strict=False):
        git_reads = tuple(line.split("\0"))
        try:
            lg = libgit2[oid]
            lg_reads: tuple[str, ...] | None = (lg.author.name, lg.author.email, lg.committer.name, lg.committer.email)
        except (pygit2.GitError, ValueError, UnicodeDecodeError):
            lg_reads = None
        if c.gate == "decide":
            a, m = objects.commit(oid).identities()
            assert (a.name, a.email, m.name, m.email) == git_reads, c.label
            # libgit2 reads the same, or (unterminated header, a date past 2^63) nothing at all
            assert lg_reads == git_reads or (lg_reads is None and c.msg_id in LIBGIT2_UNREADABLE), c.label
            if c.build is not None and c.msg_id in IDENT_IDS:
                assert objects.commit(oid).oddities == (f"author: {c.msg_id}",), c.label
        elif c.msg_id in COMMIT_IDS - {"nulInHeader"}:
            with pytest.raises(GateError) as err:
                objects.commit(oid).identities()
            assert err.value.code == "GATE-GIT-MALFORMED"
            assert lg_reads is None or lg_reads[:2] != git_reads[:2], (c.label, git_reads, lg_reads)


LIBGIT2_UNREADABLE = {"unterminatedHeader", "badDateOverflow"}
COMMIT_IDS = {"badEmail", "missingEmail", "missingAuthor", "multipleAuthors", "missingCommitter", "nulInHeader"}
IDENT_IDS = {"badDate", "badDateOverflow", "badName", "badTimezone", "missingNameBeforeEmail",
             "missingSpaceBeforeDate", "missingSpaceBeforeEmail", "zeroPaddedDate"}


def test_a_name_git_and_libgit2_read_differently_is_refused_only_where_a_rule_reads_names(tmp_path: Path) -> None:
    """`author  Claude <...>`: git's %an keeps the leading space, libgit2 and forges trim it. Under a
    policy with a `names` rule it is refused; under one that reads no names it is decided."""
    import pygit2

    policy = POLICY.replace('authors = ["*@agents.example.com"]',
                            'authors = ["*@agents.example.com"]\nnames = ["Claude*"]')
    server = seeded(tmp_path, policy)
    w = server.work
    tree = with_entry(w.path, git(w.path, "rev-parse", "HEAD^{tree}").stdout.strip(), "ci/deploy.yml", b"100644",
                      blob(w.path, b"deploy: named\n"))
    named = raw_commit(w.path, tree, [w.head()], author=b" Claude <claude@example.com> 1790000000 +0000",
                       committer=IDENT_HUMAN)
    by_email = raw_commit(w.path, tree, [w.head()], author=b" Claude <bot-7@agents.example.com> 1790000000 +0000",
                          committer=IDENT_HUMAN)
    assert git(w.path, "log", "-1", "--format=%an", named).stdout == " Claude\n"
    assert pygit2.Repository(str(w.path))[named].author.name == "Claude"
    before = server.refs()
    out = server.push(f"{named}:refs/heads/named", pusher_env=HUMAN_PUSH)
    assert refused(out, "GATE-GIT-MALFORMED") and "whitespace" in out.stderr and server.refs() == before
    server.policy_file.write_text(POLICY)  # no rule reads names: the same name decides nothing
    server.install("--policy", str(server.policy_file))
    out = server.push(f"{by_email}:refs/heads/by-email", pusher_env=HUMAN_PUSH)
    assert refused(out, "GATE-FROZEN-PATH") and codes_of(out) == {"GATE-FROZEN-PATH"}, out.stderr
    assert server.refs() == before


def test_a_tag_git_cannot_read_is_malformed_for_the_gate_too() -> None:
    """git's parse_tag_buffer needs the `tag` line (fsck: missingTagEntry); without it git cannot peel."""
    from gatecore.git.grammar import parse_tag

    target = "a" * 40
    assert parse_tag("b" * 40, f"object {target}\ntype commit\ntag v1\n\nm\n".encode()) == (target, "commit")
    assert parse_tag("b" * 40, f"object {target}\ntype commit\ntag v1\n".encode()) == (target, "commit")
    for data in (f"object {target}\ntype commit\ntagger H <h> 1 +0000\n\nm\n", f"object {target}\ntype commit\n"):
        with pytest.raises(GateError) as err:
            parse_tag("b" * 40, data.encode())
        assert err.value.code == "GATE-GIT-MALFORMED"


def test_the_table_in_docs_security_md_is_the_corpus() -> None:
    """docs/security.md has one row per message id, each column as the corpus found it."""
    from support.gitutil import ROOT

    text = (ROOT / "docs" / "security.md").read_text()
    section = text[text.index("### Every `git fsck` message id"):]
    section = section[:section.index("\n## ")]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 6:
            for name in cells[0].split(", "):
                rows[name.strip("`")] = cells[1:5]
    verb = {"accept": "accepts", "refuse": "refuses"}
    for c in CASES:
        gate = {"decide": "decides", "git": "never sees it"}.get(c.gate, f"`{c.gate}`")
        assert rows.get(c.msg_id) == [c.level, verb[c.default], verb[c.fsck], gate], c.label
    assert set(rows) == set(FSCK_IDS_239) | set(FSCK_IDS_NEWER_OBJECTS) | set(FSCK_IDS_NEWER_REFS)
    assert all(rows[name][0] == level for name, level in FSCK_IDS_NEWER_REFS.items())
