"""Frozen paths written indirectly, through real pushes: one attack of each family (an evil merge,
a look-alike path, a look-alike pusher, a ref-name trick, a malformed tree), a symbolic ref on the
server, evaluate mode. Every attack of every family (merges, renames, modes, symlinks, submodules,
look-alike paths and identities, ref-name tricks, deep and huge trees) runs in process in
`tests/engine/test_frozen_permutations.py` (SHA-256 repositories: test_sha256.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.gitutil import AGENT, HUMAN, WorkRepo, git
from support.lab import AGENT_PUSH, LAB_POLICY, RUNNER, Lab
from support.server import Server
from support.verdicts import assert_refused, codes_of, refused

from gatecore.refs import ATTEMPTS_PREFIX, REVIEW_PREFIX

# --- frozen paths written by an agent -------------------------------------------------------

def _push_new(lab: Lab, head: str, pusher: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
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


def test_merge_with_an_evil_resolution_is_rejected(lab: Lab) -> None:
    human = _human_branch(lab, "merge-human", {"src/human.py": "1\n"})
    agent = lab.change("merge-agent", {"src/agent.py": "2\n"})

    def merge(w: WorkRepo) -> None:
        w.git("merge", "-q", "--no-commit", human, identity=AGENT)
        w.write("ci/deploy.yml", "smuggled in the merge\n")

    head = lab.change("merge-evil", {}, start=agent, edit=merge)
    _frozen_refused(lab, head, path="ci/deploy.yml")


def test_a_case_and_trailing_dot_look_alike_path_is_frozen(lab: Lab) -> None:
    _frozen_refused(lab, lab.change("alike-rep", {"Gate.Toml. .": "shadow\n"}))


def test_an_upper_case_agent_pusher_is_restricted(lab: Lab) -> None:
    """The pusher's account as the web server authenticated it, in another case."""
    _frozen_refused(lab, lab.change("upper-pusher", {"ci/deploy.yml": "deploy: skip\n"}, identity=HUMAN),
                    {"REMOTE_USER": "AGENT-1"})


# --- ref-name tricks ------------------------------------------------------------------------

def test_a_nested_review_ref_name_is_refused(lab: Lab) -> None:
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f"{lab.base}:{REVIEW_PREFIX}nested/id", pusher_env=RUNNER),
                   "GATE-REF-NAME")


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


# --- malformed trees -----------------------------------------------------------------------

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


# --- evaluate mode --------------------------------------------------------------------------

def test_evaluate_mode_does_not_open_the_reserved_namespaces(tmp_path: Path) -> None:
    """Rolling out a frozen-file policy in evaluate mode must not make review refs or the ledger
    writable (found by this suite; fixed by EVALUABLE in server/prereceive.py)."""
    server = Server(tmp_path, policy=LAB_POLICY.replace('mode = "enforce"', 'mode = "evaluate"'))
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
