"""Pushes git accepts, accepted: symbolic refs on the server and shallow histories, found by running
git's own push tests with the gate installed (`./dev compat`, docs/architecture.md).

* An update of a symbolic ref on the server is judged as the update of the ref it resolves to
  (receive-pack writes through it): accepted with its target in one push when the two agree
  (t5535 #2), refused when they do not, judged under the target's name and rules.
* A shallow boundary is read as git reads it: the receiving repository's `shallow` file (t5538
  #5, #6) and the shallow roots a `receive.shallowUpdate` push brings (t5538 #4). A boundary
  commit is compared with the empty tree, as a root commit is (docs/policy.md, shallow
  repositories): every path it holds counts as written by it.
* What the gate cannot read is refused with a code that says why, not as an internal error: a
  push from a shallow clone that git itself refuses (t5538 #3), and a stated old value or a parent
  that neither the push nor the repository holds (t5410 #4, #5), GATE-GIT-INCOMPLETE, exit 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, ROOT, git
from support.rawpush import raw_push
from support.server import POLICY, Server, seeded
from support.verdicts import codes_of, refused

#: Frozen ci/** for agents, on release branches only: the freeze scope follows the ref a push lands on.
RELEASES = POLICY.replace('pushers = ["agent-*"]\n', 'pushers = ["agent-*"]\nrefs = ["refs/heads/release/*"]\n')


def _symref(bare: Path, name: str, target: str) -> None:
    git(bare, "symbolic-ref", name, target)


# --- symbolic refs on the server -------------------------------------------------------

def test_a_symbolic_ref_and_its_target_pushed_together_land(tmp_path: Path) -> None:
    """t5535 #2: `git push DST "refs/remotes/*:refs/remotes/*"` where refs/remotes/origin/HEAD is
    symbolic on both sides updates it and its target, to one value: git skips the symbolic one."""
    server = seeded(tmp_path)
    work, base = server.work, server.work.head()
    git(server.bare, "update-ref", "refs/remotes/origin/main", base)
    _symref(server.bare, "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    work.write("README", "two\n")
    new = work.commit("two", identity=HUMAN)
    work.git("update-ref", "refs/remotes/origin/main", new)
    work.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    out = server.push("refs/remotes/*:refs/remotes/*")
    assert out.returncode == 0, out.stdout + out.stderr
    assert server.ref("refs/remotes/origin/main") == new
    assert git(server.bare, "symbolic-ref", "refs/remotes/origin/HEAD").stdout.strip() == "refs/remotes/origin/main"


def test_a_push_through_a_symbolic_ref_is_judged_as_its_target(tmp_path: Path) -> None:
    """refs/heads/latest names refs/heads/release/1 on the server: a push to it lands on the
    release branch, so the release branches' freeze rule judges it (and the rejection names the
    branch it would have moved)."""
    server = seeded(tmp_path, RELEASES)
    work, base = server.work, server.work.head()
    git(server.bare, "update-ref", "refs/heads/release/1", base)
    _symref(server.bare, "refs/heads/latest", "refs/heads/release/1")
    work.write("ci/deploy.yml", "deploy: false\n")
    frozen = work.commit("agent edits ci", identity=AGENT)
    before = server.refs()
    out = server.push(f"{frozen}:refs/heads/latest", identity=AGENT)
    assert refused(out, "GATE-FROZEN-PATH"), out.stdout + out.stderr
    assert "ref=refs/heads/release/1" in out.stderr
    assert server.refs() == before
    # a human's change through the symbolic ref lands on its target
    work.git("reset", "-q", "--hard", base)
    work.write("README", "human\n")
    human = work.commit("human", identity=HUMAN)
    out = server.push(f"{human}:refs/heads/latest")
    assert out.returncode == 0, out.stdout + out.stderr
    assert server.ref("refs/heads/release/1") == human


def test_a_symbolic_ref_and_its_target_pushed_apart_are_refused(tmp_path: Path) -> None:
    """t5516 #86: the two updated to different values; git refuses both (inconsistent aliased update)."""
    server = seeded(tmp_path)
    work, base = server.work, server.work.head()
    git(server.bare, "update-ref", "refs/heads/foo", base)
    _symref(server.bare, "refs/heads/bar", "refs/heads/foo")
    work.write("README", "one\n")
    one = work.commit("one")
    work.write("README", "two\n")
    two = work.commit("two")
    before = server.refs()
    out = server.push(f"{one}:refs/heads/foo", f"{two}:refs/heads/bar")
    assert refused(out, "GATE-REF-NAME"), out.stdout + out.stderr
    assert "inconsistent aliased update" in out.stderr
    assert server.refs() == before


# --- shallow histories ------------------------------------------------------------------

def _history(root: Path, boundary_author: tuple[str, str] = HUMAN) -> tuple[Path, str, str]:
    """A source repository: A (a human adds ci/deploy.yml), B (`boundary_author` changes README only)."""
    src = root / "src"
    git(root, "init", "-q", "-b", "main", str(src))
    (src / "ci").mkdir()
    (src / "ci" / "deploy.yml").write_text("deploy: true\n")
    (src / "README").write_text("one\n")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "A", identity=HUMAN)
    (src / "README").write_text("two\n")
    git(src, "commit", "-q", "-am", "B", identity=boundary_author)
    return src, git(src, "rev-parse", "HEAD~1").stdout.strip(), git(src, "rev-parse", "HEAD").stdout.strip()


def _shallow_server(root: Path, src: Path, policy: str) -> Server:
    """A gated server that is a shallow clone of `src` (depth 1: its main is the boundary)."""
    root.mkdir()
    git(root, "clone", "-q", "--bare", "--depth=1", f"file://{src}", str(root / "server.git"))
    server = Server(root, policy)  # (git init of an existing repository keeps it as it is)
    assert (server.bare / "shallow").is_file()
    server.work.git("fetch", "-q", str(src), "main:refs/remotes/src/main")
    server.work.git("reset", "-q", "--hard", "refs/remotes/src/main")
    return server


def test_a_push_into_a_shallow_repository_walks_to_its_boundary(tmp_path: Path) -> None:
    """t5538 #5, #6: git's walk stops at the boundary the server's `shallow` file lists, and so
    does the gate's (it read git's empty parent list as a forged history)."""
    src, _a, b = _history(tmp_path)
    server = _shallow_server(tmp_path / "srv", src, RELEASES)
    server.work.write("README", "three\n")
    new = server.work.commit("C", identity=HUMAN)
    # a release branch: nothing is checked there yet, so the walk goes down to the boundary B
    out = server.push(f"{new}:refs/heads/release/1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert server.ref("refs/heads/release/1") == new
    assert server.audit()[-1]["commits_checked"] == 2  # C and B; A is not in the repository
    assert b in (server.bare / "shallow").read_text()


def test_a_boundary_commit_is_compared_with_the_empty_tree(tmp_path: Path) -> None:
    """The frozen-file rule at a boundary, stated conservatively: B names A as its parent, which
    the shallow server does not hold, so B is compared with nothing, as a root commit is: every path
    in it counts as written by it. An agent's B that only touched README is refused for ci/deploy.yml
    on a shallow server, and accepted on a full one, where B is compared with A."""
    src, _a, b = _history(tmp_path, boundary_author=AGENT)
    shallow = _shallow_server(tmp_path / "shallow", src, RELEASES)
    shallow.work.write("README", "three\n")
    new = shallow.work.commit("C", identity=HUMAN)
    before = shallow.refs()
    out = shallow.push(f"{new}:refs/heads/release/1")
    assert refused(out, "GATE-FROZEN-PATH"), out.stdout + out.stderr
    assert f"commit={b[:12]}" in out.stderr and "path=ci/deploy.yml" in out.stderr
    assert shallow.refs() == before

    (tmp_path / "full").mkdir()
    full = Server(tmp_path / "full", RELEASES)
    full.work.git("pull", "-q", str(src), "main")
    assert full.push("main").returncode == 0
    full.work.write("README", "three\n")
    new = full.work.commit("C", identity=HUMAN)
    out = full.push(f"{new}:refs/heads/release/1")
    assert out.returncode == 0, out.stdout + out.stderr


def _seeded(root: Path) -> Server:
    root.mkdir()
    server: Server = seeded(root)
    return server


def _shallow_client(root: Path, src: Path) -> Path:
    client = root / "client"
    git(root, "clone", "-q", "--depth=1", f"file://{src}", str(client))
    return client


def test_a_push_from_a_shallow_clone_with_shallow_updates_on(tmp_path: Path) -> None:
    """t5538 #4: with receive.shallowUpdate, git takes the clone's boundary as a new shallow root of
    the server; receive-pack tells the hooks (GIT_SHALLOW_FILE), and the gate reads it."""
    src, _a, b = _history(tmp_path)
    server = _seeded(tmp_path / "srv")
    git(server.bare, "config", "receive.shallowUpdate", "true")
    client = _shallow_client(tmp_path, src)
    out = git(client, "push", server.url, "main:refs/heads/imported", check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert server.ref("refs/heads/imported") == b
    assert b in (server.bare / "shallow").read_text()


def test_a_push_from_a_shallow_clone_git_refuses_is_refused_for_what_it_is(tmp_path: Path) -> None:
    """t5538 #3: without receive.shallowUpdate git refuses the push ("shallow update not allowed")
    after the pre-receive hook has run; the gate cannot read the history below the boundary and says
    so (GATE-GIT-INCOMPLETE, exit 1), not GATE-GIT-UNREADABLE, the internal class that sends the
    admin to doctor."""
    src, a, b = _history(tmp_path)
    server = _seeded(tmp_path / "srv")
    client = _shallow_client(tmp_path, src)
    before = server.refs()
    out = git(client, "push", server.url, "main:refs/heads/imported", check=False)
    assert out.returncode != 0
    assert codes_of(out) == {"GATE-GIT-INCOMPLETE"}, out.stderr
    assert f"commit {b} names the parent {a}" in out.stderr
    assert server.audit()[-1]["exit"] == 1
    assert server.refs() == before


def test_a_missing_parent_or_old_value_is_named_as_such(tmp_path: Path) -> None:
    """t5410 #4, #5: a pack without the new commit's parent (git's connectivity check refuses it,
    or lets it in when told to skip the check), and a stated old value no repository holds: the
    gate refuses both for what they are, not "quarantine not visible?"."""
    server = seeded(tmp_path)
    work, base = server.work, server.work.head()
    work.write("README", "parent\n")
    parent = work.commit("parent")
    work.write("README", "child\n")
    child = work.commit("child")
    tree = work.head(f"{child}^{{tree}}")
    blob = work.head(f"{child}:README")
    out = raw_push(work.path, server.bare, [("0" * len(base), child, "refs/heads/incomplete")], {},
                   objects=[child, tree, blob])
    assert "GATE-GIT-INCOMPLETE" in out.stderr and f"names the parent {parent}" in out.stderr, out.stderr
    assert "quarantine" not in out.stderr
    assert server.ref("refs/heads/incomplete") is None

    nowhere = "1" * len(base)
    out = raw_push(work.path, server.bare, [(nowhere, child, "refs/heads/main")], {})
    assert "GATE-GIT-INCOMPLETE" in out.stderr and f"its old value {nowhere}" in out.stderr, out.stderr
    assert "quarantine" not in out.stderr
    assert server.ref("refs/heads/main") == base
    assert [d["exit"] for d in server.audit()[-2:]] == [1, 1]



def test_an_old_value_the_ref_holds_but_the_repository_lost_is_the_machines_fault(tmp_path: Path) -> None:
    """The other side of the last test: the server's main names a commit its object store lost (a
    damaged repository, not a push that states a wrong old value): GATE-GIT-UNREADABLE, exit 3, the
    internal class that sends the admin to doctor."""
    server = seeded(tmp_path)
    work, base = server.work, server.work.head()
    loose = server.bare / "objects" / base[:2] / base[2:]
    assert loose.is_file()  # a small push is unpacked into loose objects
    loose.unlink()
    work.write("README", "next\n")
    work.commit("next")
    out = server.push("main")
    assert codes_of(out) == {"GATE-GIT-UNREADABLE"}, out.stderr
    assert server.audit()[-1]["exit"] == 3


# --- the tier these came from ------------------------------------------------------------------

def _modern_git() -> Path | None:
    """`./dev modern-git`'s build, if it is there (its source tree holds git's test suite)."""
    cache = Path(os.environ.get("GATE_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                 / "push-gate")
    root = cache / "git-2.55.0"
    return root / "inst" / "bin" if (root / ".built").is_file() else None


#: Looked for once, as the module is collected (tests may move HOME later).
MODERN_GIT = _modern_git()


@pytest.mark.skipif(MODERN_GIT is None, reason="./dev modern-git has not built git 2.55 here")
def test_compat_runs_one_of_gits_scripts_with_and_without_the_gate(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`./dev compat --only t5535 --modes sha1`: t5535 pushes a symbolic ref with its target (the
    first difference above); it passes with the gate as without, and the gate decided its push."""
    sys.path.insert(0, str(ROOT))
    from compat.run import main

    rc = main(["--git-bin", str(MODERN_GIT), "--only", "t5535", "--modes", "sha1", "--work", str(tmp_path), "-j", "2"])
    out = capsys.readouterr().out
    logs = "".join(f"\n--- the end of {log}:\n" + "\n".join(log.read_text("utf-8", "replace").splitlines()[-40:])
                   for log in sorted(tmp_path.glob("sha1/*/t5535*/out/test-results/*.out")))
    assert rc == 0, out + logs
    assert "| sha1 | 1 of 1 | 3 | 0 | 0 | 1 | 0 |" in out, out + logs
