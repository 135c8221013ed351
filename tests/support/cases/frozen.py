"""Frozen paths written indirectly, as test functions both tiers collect: merges, renames, modes,
symlinks, submodules, look-alike paths and identities, ref-name tricks, malformed, deep and huge
trees, evaluate mode. Every case runs in process (`tests/engine/test_frozen_permutations.py`, on
an `EngineLab`), one of each family through a real push (`tests/push/test_frozen_attacks.py`, on a
`Lab`); `new_server` is the tier's kind of server. A rejection must leave every ref as it was."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gatecore.git.refs import ATTEMPTS_PREFIX, REVIEW_PREFIX

from ..corpus import KINDS, stage
from ..gitutil import AGENT, HUMAN, WorkRepo, git
from ..lab import AGENT_PUSH, GITMODULES, LAB_POLICY, RUNNER, Lab
from ..server import POLICY
from ..verdicts import Outcome, assert_refused, codes_of, declined, refused

#: (root, policy) -> a server of the tier (`Server`, or `support.engine.EngineServer`), nothing pushed yet.
NewServer = Callable[[Path, str], Any]


def _push_new(lab: Lab, head: str, pusher: dict[str, str] | None = None) -> Outcome:
    """Push `head` to a branch of its own (new on every call)."""
    return lab.server.push(f"{head}:refs/heads/f/{head[:12]}-{lab.fresh('b')}", pusher_env=pusher)


def _frozen_refused(lab: Lab, head: str, pusher: dict[str, str] | None = None, path: str | None = None) -> None:
    before = lab.snapshot()
    out = _push_new(lab, head, pusher)
    assert_refused(lab, before, out, "GATE-FROZEN-PATH")
    if path is not None:
        assert f"path={path}" in out.stderr, out.stderr


def _human_branch(lab: Lab, name: str, files: dict[str, str], start: str | None = None) -> str:
    head = lab.change(name, files, identity=HUMAN, start=start)
    assert _push_new(lab, head).returncode == 0
    return head


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in ("not_frozen", "policy_file")])
def test_every_change_kind_by_an_agent_is_rejected(server: Any, kind: str) -> None:
    """Each kind of change `support.corpus` stages, on the seeded server's main."""
    stage(server.work, kind)
    server.work.git("commit", "-q", "--allow-empty", "-m", f"agent {kind}", identity=AGENT)
    before = server.refs()
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert server.refs() == before


def test_merge_with_an_evil_resolution_is_rejected(lab: Lab) -> None:
    human = _human_branch(lab, "merge-human", {"src/human.py": "1\n"})
    agent = lab.change("merge-agent", {"src/agent.py": "2\n"})

    def merge(w: WorkRepo) -> None:
        w.git("merge", "-q", "--no-commit", human, identity=AGENT)
        w.write("ci/deploy.yml", "smuggled in the merge\n")

    head = lab.change("merge-evil", {}, start=agent, edit=merge)
    _frozen_refused(lab, head, path="ci/deploy.yml")


@pytest.mark.parametrize("stale_kind", ["stale-branch", "ancestor"])
def test_merge_that_reverts_a_frozen_file_to_a_stale_parent_is_rejected(lab: Lab, stale_kind: str) -> None:
    # A human branch forked before the hardening (or the pre-hardening commit itself) ...
    stale = (_human_branch(lab, f"stale-{stale_kind}", {"src/stale.py": "old work\n"}) if stale_kind == "stale-branch"
             else lab.base)
    # ... then a human hardens the frozen file.
    hardened = _human_branch(lab, f"hardened-{stale_kind}", {"ci/deploy.yml": "deploy: true\nreview: required\n"})
    # The agent's merge of the two, "resolved" with the stale file.
    w = lab.work
    w.git("checkout", "-q", "-f", "--detach", hardened)
    w.git("checkout", stale, "--", "ci/deploy.yml")
    tree = w.git("write-tree").stdout.strip()
    head = w.git("commit-tree", tree, "-p", hardened, "-p", stale, "-m", "merge", identity=AGENT).stdout.strip()
    w.git("checkout", "-q", "-f", "--detach", lab.base)
    assert git(w.path, "show", f"{head}:ci/deploy.yml").stdout == "deploy: true\n"
    _frozen_refused(lab, head)


@pytest.mark.parametrize("kind", ["rename-out", "rename-in", "mode", "delete", "symlink-at-frozen-path",
                                  "frozen-dir-becomes-symlink", "symlink-inside-frozen-dir", "case-collision-symlink",
                                  "file-to-dir"])
def test_agent_writes_a_frozen_path_indirectly(lab: Lab, kind: str) -> None:
    def edit(w: WorkRepo) -> None:
        p = w.path
        if kind == "rename-out":
            w.git("mv", "ci/deploy.yml", "ci-old.yml")
        elif kind == "rename-in":
            w.git("mv", "src/app.py", "ci/app.py")
        elif kind == "mode":
            (p / "ci/deploy.yml").chmod(0o755)
        elif kind == "delete":
            (p / "ci/deploy.yml").unlink()
        elif kind == "symlink-at-frozen-path":
            w.symlink("ci/deploy.yml", "../src/app.py")
        elif kind == "frozen-dir-becomes-symlink":
            w.git("rm", "-q", "-r", "ci")
            w.write("src/fake-ci/deploy.yml", "deploy: false\n")
            w.symlink("ci", "src/fake-ci")
        elif kind == "symlink-inside-frozen-dir":
            w.symlink("ci/extra.yml", "../src/app.py")
        elif kind == "case-collision-symlink":  # on a case-insensitive checkout CI and ci are one directory
            w.symlink("CI", "src")
        elif kind == "file-to-dir":
            (p / "gate.toml").mkdir()
            w.write("gate.toml/x", "x\n")

    _frozen_refused(lab, lab.change(f"indirect-{kind}", {}, edit=edit))


def test_a_symlink_pointing_into_a_frozen_dir_writes_nothing_frozen(lab: Lab) -> None:
    """`src/ci-link -> ../ci` is not a frozen path, and git will not stage a write through it: the
    tree can only change ci/ by naming ci/ paths, which the gate sees. Accepted, ci/ unchanged."""
    def edit(w: WorkRepo) -> None:
        w.symlink("src/ci-link", "../ci")
        (w.path / "src/ci-link/deploy.yml").write_text("written through the link\n")  # lands in ci/ on disk
        out = w.git("add", "src/ci-link/deploy.yml", check=False)
        assert out.returncode != 0 and "symbolic link" in out.stderr
        w.git("checkout", "--", "ci/deploy.yml")

    head = lab.change("symlink-into-frozen", {}, edit=edit)
    assert _push_new(lab, head).returncode == 0
    base_blob = git(lab.work.path, "rev-parse", f"{lab.base}:ci/deploy.yml").stdout
    assert git(lab.work.path, "rev-parse", f"{head}:ci/deploy.yml").stdout == base_blob
    # ...and a later agent commit that re-points the link at the frozen file's content changes no frozen path
    # either; one that writes ci/ itself is refused as usual.
    _frozen_refused(lab, lab.change("through-ci", {"ci/deploy.yml": "x\n"}, start=head))


@pytest.mark.parametrize("kind", ["url", "symlink", "case-variant", "gitlink-in-frozen-dir", "repoint-submodule",
                                  "submodule-to-dir", "remove-submodule"])
def test_gitmodules_games_are_rejected(lab: Lab, kind: str) -> None:
    def edit(w: WorkRepo) -> None:
        if kind == "url":
            w.write(".gitmodules", GITMODULES.replace("example.com", "evil.example.net"))
        elif kind == "symlink":
            w.symlink(".gitmodules", "src/app.py")
        elif kind == "case-variant":  # one file with .gitmodules on case-insensitive checkouts
            w.write(".GitModules", GITMODULES.replace("example.com", "evil.example.net"))
        elif kind == "gitlink-in-frozen-dir":
            w.git("update-index", "--add", "--cacheinfo", f"160000,{'6' * 40},ci/tool")
        elif kind == "repoint-submodule":
            w.git("update-index", "--cacheinfo", f"160000,{'7' * 40},vendor/sub")
        elif kind == "submodule-to-dir":
            w.git("rm", "-q", "--cached", "vendor/sub")
            w.write("vendor/sub/setup.py", "import os\n")
        elif kind == "remove-submodule":
            w.git("rm", "-q", "--cached", "vendor/sub")

    def commit(w: WorkRepo) -> None:
        edit(w)
        if kind in ("gitlink-in-frozen-dir", "repoint-submodule", "remove-submodule"):
            w.git("commit", "-q", "-m", f"agent {kind}", identity=AGENT)

    if kind in ("gitlink-in-frozen-dir", "repoint-submodule", "remove-submodule"):
        # index-only changes: commit them without `git add -A` (which would drop the gitlinks)
        lab.work.git("checkout", "-q", "-f", "-B", f"gm-{kind}", lab.base)
        commit(lab.work)
        head = lab.work.head()
        lab.work.git("checkout", "-q", "--detach")
    else:
        head = lab.change(f"gm-{kind}", {}, edit=edit)
    _frozen_refused(lab, head)


@pytest.mark.parametrize("path", ["GATE.TOML", "Gate.Toml. .", "docs/cafe\u0301.md", "docs/CAFÉ.md",
                                  "ci./deploy.yml"])
def test_case_and_unicode_look_alike_paths_are_frozen(lab: Lab, path: str) -> None:
    _frozen_refused(lab, lab.change(f"alike-{hashlib.sha256(path.encode()).hexdigest()[:8]}", {path: "shadow\n"}))


@pytest.mark.parametrize("path", ["gate\u200c.toml", "c\u200di/deploy.yml"])
def test_hfs_ignorable_code_points_are_frozen(lab: Lab, path: str) -> None:
    _frozen_refused(lab, lab.change(f"hfs-{hashlib.sha256(path.encode()).hexdigest()[:8]}", {path: "shadow\n"}))


@pytest.mark.parametrize("identity,committer,pusher", [
    (HUMAN, AGENT, None),  # human-authored, agent-committed
    (("Agent", "bot-7@agents.exаmple.com"), None, AGENT_PUSH),  # Cyrillic 'а': the pusher still counts
    (HUMAN, None, {"REMOTE_USER": "AGENT-1"}),
    (HUMAN, None, {"REMOTE_USER": "  agent-1 "}),
], ids=["agent-committer", "look-alike-email-agent-pusher", "upper-case-pusher", "padded-pusher"])
def test_look_alike_identities_are_restricted(lab: Lab, identity: tuple[str, str],
                                              committer: tuple[str, str] | None, pusher: dict[str, str] | None) -> None:
    def edit(w: WorkRepo) -> None:
        w.write("ci/deploy.yml", "deploy: skip\n")
        w.git("add", "-A")
        env = {} if committer is None else {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        w.git("commit", "-q", "-m", "look-alike", identity=identity, env=env)

    lab.work.git("checkout", "-q", "-f", "-B", "look-alike", lab.base)
    edit(lab.work)
    head = lab.work.head()
    lab.work.git("checkout", "-q", "--detach")
    _frozen_refused(lab, head, pusher)


def test_commit_identity_alone_is_self_asserted(lab: Lab) -> None:
    """Documents the limit (docs/security.md): a look-alike author email pushed by an unrestricted
    account is not restricted; only the authenticated pusher is not self-asserted."""
    look_alike = ("Agent", "bot-7@agents.exаmple.com")
    head = lab.change("self-asserted", {"ci/deploy.yml": "x\n"}, identity=look_alike)
    assert _push_new(lab, head, {"REMOTE_USER": "hana"}).returncode == 0
    # The same change through the agent's own account is refused.
    _frozen_refused(lab, lab.change("self-asserted-2", {"ci/deploy.yml": "x\n"}, identity=look_alike), AGENT_PUSH)


# --- ref-name tricks ------------------------------------------------------------------------

@pytest.mark.parametrize("name,pusher,code", [
    (f"{REVIEW_PREFIX}nested/id", RUNNER, "GATE-REF-NAME"),
    (f"{REVIEW_PREFIX}caf\u00e9", RUNNER, "GATE-REF-NAME"),
    ("refs/gate/doctor/probe-x", RUNNER, "GATE-DOCTOR-PROBE"),
    ("refs/gate/attempts-x", RUNNER, "GATE-REF-RESERVED"),
    ("refs/gate/Attempts/x", AGENT_PUSH, "GATE-REF-RESERVED"),
])
def test_ref_name_tricks_in_the_reserved_namespaces(lab: Lab, name: str, pusher: dict[str, str], code: str) -> None:
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f"{lab.base}:{name}", pusher_env=pusher), code)


def test_case_variant_of_the_review_namespace_is_an_ordinary_branch_still_frozen(lab: Lab) -> None:
    head = lab.change("case-review", {"ci/deploy.yml": "x\n"})
    before = lab.snapshot()
    out = lab.server.push(f"{head}:refs/heads/Review/Runner/x", pusher_env=AGENT_PUSH)
    assert_refused(lab, before, out, "GATE-FROZEN-PATH")


@pytest.mark.parametrize("name", ["refs/heads/review/runner"])
def test_agent_cannot_squat_the_parent_of_the_review_namespace(tmp_path: Path, new_server: NewServer,
                                                              name: str) -> None:
    server = new_server(tmp_path, POLICY)
    server.work.write("README", "x\n")
    server.work.commit("base")
    assert server.push("main").returncode == 0
    before = server.refs()
    out = server.push(f"main:{name}", pusher_env=AGENT_PUSH)
    assert out.returncode != 0 and codes_of(out) & {"GATE-REF-RESERVED", "GATE-REVIEW-PUSHER"}, out.stderr
    assert server.refs() == before


def test_a_symbolic_ref_into_the_review_namespace_does_not_bypass_the_gate(lab: Lab) -> None:
    attempt = lab.open()
    git(lab.server.bare, "symbolic-ref", "refs/heads/alias", f"{REVIEW_PREFIX}{attempt}")
    try:
        head = lab.change(f"via-alias-{attempt}")
        out = lab.server.push(f"{head}:refs/heads/alias", pusher_env=AGENT_PUSH)
        assert out.returncode != 0
        assert lab.server.ref(REVIEW_PREFIX + attempt) is None
    finally:
        git(lab.server.bare, "symbolic-ref", "--delete", "refs/heads/alias", check=False)
        git(lab.server.bare, "update-ref", "-d", REVIEW_PREFIX + attempt, check=False)


# --- malformed, huge and deep trees ---------------------------------------------------------

def _raw_tree(lab: Lab, entries: list[tuple[str, bytes, str]]) -> str:
    """Write a tree object byte for byte (no sorting, no checks), as a hostile client can."""
    data = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return subprocess.run(["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"], cwd=lab.work.path,
                          input=data, capture_output=True, check=True).stdout.decode().strip()


def _base_entries(lab: Lab) -> list[tuple[str, bytes, str]]:
    out = []
    for line in git(lab.work.path, "ls-tree", "-z", lab.base).stdout.split("\0"):
        if line:
            meta, name = line.split("\t", 1)
            mode, _kind, oid = meta.split()
            out.append((mode.lstrip("0"), name.encode(), oid))
    return out


def test_a_tree_with_duplicate_entries_is_rejected(lab: Lab) -> None:
    evil = git(lab.work.path, "hash-object", "-w", "--stdin", input=b"deploy: EVIL\n").stdout.strip()
    evil_ci = git(lab.work.path, "mktree", input=f"100644 blob {evil}\tdeploy.yml\n".encode()).stdout.strip()
    entries = []
    for mode, name, oid in _base_entries(lab):
        entries += [(mode, name, evil_ci), (mode, name, oid)] if name == b"ci" else [(mode, name, oid)]
    head = git(lab.work.path, "commit-tree", _raw_tree(lab, entries), "-p", lab.base, "-m", "dup",
               identity=AGENT).stdout.strip()
    assert git(lab.work.path, "show", f"{head}:ci/deploy.yml").stdout == "deploy: EVIL\n"
    before = lab.snapshot()
    out = _push_new(lab, head)
    assert out.returncode != 0 and codes_of(out) & {"GATE-GIT-MALFORMED"}
    assert lab.snapshot() == before


def _deep_tree(lab: Lab, depth: int) -> str:
    import pygit2

    repo = pygit2.Repository(str(lab.work.path))
    b = repo.TreeBuilder()
    b.insert("deploy.yml", repo.create_blob(b"deep\n"), pygit2.GIT_FILEMODE_BLOB)
    tree = b.write()
    for _ in range(depth):
        b = repo.TreeBuilder()
        b.insert("d", tree, pygit2.GIT_FILEMODE_TREE)
        tree = b.write()
    return str(tree)


def _commit_with_ci_subtree(lab: Lab, name: str, subtree: str) -> str:
    entries = []
    for mode, ent, oid in _base_entries(lab):
        if ent == b"ci":
            ci = git(lab.work.path, "ls-tree", oid).stdout + f"040000 tree {subtree}\t{name}\n"
            entries.append((mode, ent, git(lab.work.path, "mktree", input=ci.encode()).stdout.strip()))
        else:
            entries.append((mode, ent, oid))
    return git(lab.work.path, "commit-tree", _raw_tree(lab, sorted(entries, key=lambda e: e[1] + b"/")),
               "-p", lab.base, "-m", name, identity=AGENT).stdout.strip()


@pytest.fixture(scope="module")
def deep_commit(lab: Lab) -> str:
    """An agent commit writing ci/deep/d/d/.../deploy.yml, 1200 directories deep."""
    return _commit_with_ci_subtree(lab, "deep", _deep_tree(lab, 1200))


def test_a_deeply_nested_frozen_write_is_rejected(lab: Lab, deep_commit: str) -> None:
    """1200 levels below ci/: rejected (fail closed), whatever the code."""
    head = deep_commit
    before = lab.snapshot()
    out = _push_new(lab, head)
    assert declined(out) and codes_of(out)
    assert lab.snapshot() == before


def test_a_deeply_nested_frozen_write_is_rejected_as_frozen(lab: Lab, deep_commit: str) -> None:
    _frozen_refused(lab, deep_commit)


def test_a_huge_frozen_tree_is_rejected(lab: Lab) -> None:
    import pygit2

    repo = pygit2.Repository(str(lab.work.path))
    b = repo.TreeBuilder()
    blob = repo.create_blob(b"x\n")
    for i in range(20000):
        b.insert(f"f{i:05d}.yml", blob, pygit2.GIT_FILEMODE_BLOB)
    head = _commit_with_ci_subtree(lab, "many", str(b.write()))
    _frozen_refused(lab, head)
    assert lab.server.audit()[-1]["codes"] == ["GATE-FROZEN-PATH"]


# --- evaluate mode --------------------------------------------------------------------------

def test_evaluate_mode_does_not_open_the_reserved_namespaces(tmp_path: Path, new_server: NewServer) -> None:
    """Rolling out a frozen-file policy in evaluate mode must not make review refs or the ledger
    writable (found by this suite; fixed by EVALUABLE in server/prereceive.py)."""
    server = new_server(tmp_path, LAB_POLICY.replace('mode = "enforce"', 'mode = "evaluate"'))
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("agent", identity=AGENT)
    out = server.push("main", pusher_env=AGENT_PUSH)
    assert out.returncode == 0 and "would be rejected" in out.stderr  # what evaluate mode is for
    for ref, code in ((f"{REVIEW_PREFIX}agent-made", "GATE-REVIEW-PUSHER"),
                      (f"{ATTEMPTS_PREFIX}agent-made", "GATE-LEDGER-PUSHER")):
        before = server.refs()
        out = server.push(f"main:{ref}", pusher_env=AGENT_PUSH)
        assert refused(out, code), out.stderr
        assert server.refs() == before


# --- ref rules, identities and reports on a seeded server (`server`: the tier's) ------------------

AGENT2 = ("Other Bot", "helper@AGENTS.example.com")


def test_non_frozen_change_by_agent_is_accepted(server: Any) -> None:
    server.work.write("src/app.py", "print('agent')\n")
    server.work.commit("agent edits code", identity=AGENT)
    assert server.push("main").returncode == 0


def test_agent_committer_with_human_author_is_rejected(server: Any) -> None:
    server.work.write("ci/deploy.yml", "evil\n")
    server.work.commit("human authored, agent committed", identity=HUMAN, committer=AGENT)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH")
    assert "identity=bot-7@agents.example.com" in out.stderr


def test_identity_globs_are_case_insensitive(server: Any) -> None:
    server.work.write("ci/deploy.yml", "evil\n")
    server.work.commit("upper-case domain", identity=AGENT2)
    assert refused(server.push("main"), "GATE-FROZEN-PATH")


def test_merge_taking_a_frozen_change_from_a_parent_is_accepted(server: Any) -> None:
    w = server.work
    base = w.head()
    w.write("ci/deploy.yml", "human change\n")
    w.commit("human ci change", identity=HUMAN)
    assert server.push("main").returncode == 0
    w.git("checkout", "-q", "-b", "feature", base)
    w.write("src/app.py", "agent work\n")
    w.commit("agent work", identity=AGENT)
    w.git("merge", "-q", "--no-edit", "main", identity=AGENT)
    assert server.push("feature").returncode == 0


SCOPED = """\
[[freeze]]
paths = ["ci/**"]
authors = ["*@agents.example.com"]
refs = ["refs/heads/main"]
"""


def test_fast_forward_of_a_protected_branch_to_commits_that_landed_elsewhere(tmp_path: Path, new_server: NewServer) -> None:
    server = new_server(tmp_path, SCOPED)
    w = server.work
    w.write("README", "x\n")
    w.commit("base", identity=HUMAN)
    assert server.push("main").returncode == 0
    w.git("checkout", "-q", "-b", "scratch")
    w.write("ci/deploy.yml", "agent\n")
    w.commit("agent on an unprotected branch", identity=AGENT)
    assert server.push("scratch").returncode == 0  # not in the rule's scope
    out = server.push("scratch:main")  # zero new objects, but new to main
    assert refused(out, "GATE-FROZEN-PATH")
    assert server.ref("refs/heads/main") != server.ref("refs/heads/scratch")


def test_annotated_tag_on_a_new_agent_commit_is_checked(server: Any) -> None:
    w = server.work
    w.git("checkout", "-q", "--detach")
    w.write("ci/deploy.yml", "tagged\n")
    w.commit("agent", identity=AGENT)
    w.git("tag", "-a", "v9", "-m", "tag", identity=AGENT)
    out = server.push("refs/tags/v9")
    assert refused(out, "GATE-FROZEN-PATH")
    assert server.ref("refs/tags/v9") is None


def test_restricted_pusher_cannot_delete_refs_but_humans_can(server: Any) -> None:
    assert server.push("main:refs/heads/tmp").returncode == 0
    out = server.push(":refs/heads/tmp", pusher_env={"REMOTE_USER": "agent-1"})
    assert refused(out, "GATE-REF-DELETE")
    assert server.ref("refs/heads/tmp") is not None
    assert server.push(":refs/heads/tmp", pusher_env={"REMOTE_USER": "hana"}).returncode == 0
    assert server.ref("refs/heads/tmp") is None


def test_rewinding_away_a_human_frozen_change_is_rejected(server: Any) -> None:
    w = server.work
    base = w.head()
    w.write("ci/deploy.yml", "human hardening\n")
    w.commit("human", identity=HUMAN)
    assert server.push("main").returncode == 0
    w.git("reset", "-q", "--hard", base)
    w.write("src/app.py", "agent\n")
    w.commit("agent work on the old base", identity=AGENT)
    out = server.push("+main", pusher_env={"REMOTE_USER": "agent-1"})
    assert refused(out, "GATE-FROZEN-REF")
    w.git("reset", "-q", "--hard", base)  # a pure rewind, no new commit at all
    assert refused(server.push("+main", pusher_env={"REMOTE_USER": "agent-1"}), "GATE-FROZEN-REF")


def test_agent_rebase_onto_newer_frozen_content_is_accepted(server: Any) -> None:
    w = server.work
    base = w.head()
    w.git("checkout", "-q", "-b", "feature")
    w.write("src/app.py", "agent\n")
    w.commit("agent", identity=AGENT)
    assert server.push("feature", pusher_env={"REMOTE_USER": "agent-1"}).returncode == 0
    w.git("checkout", "-q", "main")
    w.write("ci/deploy.yml", "human\n")
    w.commit("human", identity=HUMAN)
    assert server.push("main").returncode == 0
    w.git("checkout", "-q", "feature")
    w.git("rebase", "-q", "main", identity=AGENT)
    assert w.head() != base
    out = server.push("+feature", pusher_env={"REMOTE_USER": "agent-1"})
    assert out.returncode == 0, out.stderr


def test_every_violation_is_listed_then_capped(tmp_path: Path, new_server: NewServer) -> None:
    policy = '[[freeze]]\npaths = ["ci/**"]\nauthors = ["*@agents.example.com"]\n[limits]\nmax_violations_shown = 3\n'
    server = new_server(tmp_path, policy)
    for i in range(5):
        server.work.write(f"ci/f{i}.yml", "x\n")
    server.work.commit("agent", identity=AGENT)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH")
    lines = [ln for ln in out.stderr.splitlines() if ln.removeprefix("remote: ").startswith("GATE-FROZEN-PATH")]
    assert len(lines) == 3
    assert "and 2 more" in out.stderr
    js = [json.loads(ln.split("gate-json: ", 1)[1]) for ln in out.stderr.splitlines() if "gate-json: " in ln]
    assert [j.get("truncated") for j in js if "truncated" in j] == [2]


def test_all_refs_of_a_push_are_checked(server: Any) -> None:
    w = server.work
    w.git("checkout", "-q", "-b", "a")
    w.write("src/a.py", "fine\n")
    w.commit("agent fine", identity=AGENT)
    w.git("checkout", "-q", "-b", "b", "main")
    w.write("ci/b.yml", "bad\n")
    w.commit("agent bad", identity=AGENT)
    before = server.refs()
    out = server.push("a", "b")
    assert refused(out, "GATE-FROZEN-PATH")
    assert "ref=refs/heads/b" in out.stderr
    assert server.refs() == before  # a non-zero exit rejects every ref of the push


def test_evaluate_mode_reports_and_accepts(tmp_path: Path, new_server: NewServer) -> None:
    policy = 'mode = "evaluate"\n[[freeze]]\npaths = ["ci/**"]\nauthors = ["*@agents.example.com"]\n'
    server = new_server(tmp_path, policy)
    server.work.write("ci/x.yml", "x\n")
    server.work.commit("agent", identity=AGENT)
    out = server.push("main")
    assert out.returncode == 0
    assert "would be rejected" in out.stderr and "GATE-FROZEN-PATH" in out.stderr
    assert server.audit()[-1]["decision"] == "evaluate-reject"
    # The reserved namespaces stay enforced in evaluate mode.
    out = server.push("main:refs/heads/review/runner/att-1", pusher_env={"REMOTE_USER": "agent-1"})
    assert out.returncode != 0 and server.ref("refs/heads/review/runner/att-1") is None


def test_non_utf8_frozen_path_is_escaped_in_output(server: Any) -> None:
    name = b"ci/caf\xe9.yml".decode("utf-8", "surrogateescape")
    (server.work.path / name).write_text("x")
    server.work.commit("agent latin-1", identity=AGENT)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH")
    assert "path=ci/caf\\xe9.yml" in out.stderr


def test_agent_push_to_reserved_namespaces_is_rejected(server: Any) -> None:
    out = server.push("main:refs/heads/review/runner/attempt-1", pusher_env={"REMOTE_USER": "agent-1"})
    assert out.returncode != 0 and "GATE-" in out.stderr
    assert server.ref("refs/heads/review/runner/attempt-1") is None
    out = server.push("main:refs/gate/attempts/attempt-1", pusher_env={"REMOTE_USER": "agent-1"})
    assert out.returncode != 0
    assert server.ref("refs/gate/attempts/attempt-1") is None



#: Every case and the fixture they share, for the runners that collect them all (`from
#: support.cases.frozen import *`): a case added here runs in each of them.
__all__ = [*sorted(name for name in globals() if name.startswith("test_")), "deep_commit"]  # noqa: PLE0604
