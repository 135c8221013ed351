"""The version a build gets (hatch_build.py; docs/upgrading.md, "Versions"), in real repositories:
the release at the commit that set VERSION, `X.Y.(Z+1).devN+g<commit>` after it, `.dirty` for
uncommitted changes, never the release from a shallow clone that cannot show it, the recorded
version in a tree without git (an unpacked sdist), and no tag read anywhere."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.docblocks import block
from support.gitutil import ROOT, git

from gatecore.configuration.versions import order


def tree(path: Path, release: str = "1.4.2") -> Path:
    path.mkdir()
    shutil.copy2(ROOT / "hatch_build.py", path / "hatch_build.py")
    (path / "gatecore").mkdir()
    (path / "gatecore" / "__init__.py").write_text("")
    (path / "VERSION").write_text(release + "\n")
    (path / ".gitignore").write_text("gatecore/_build.py\n")
    return path


def version(path: Path, *flags: str) -> str:
    out = subprocess.run([sys.executable, "hatch_build.py", *flags], cwd=path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def commit(path: Path, name: str, text: str = "x\n") -> str:
    (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", name)
    return git(path, "rev-parse", "HEAD").stdout.strip()


def test_release_then_dev_builds_then_the_next_release(tmp_path: Path) -> None:
    t = tree(tmp_path / "p")
    git(t, "init", "-q", "-b", "main")
    commit(t, "a")
    assert version(t) == "1.4.2"
    assert 'VERSION = "1.4.2"' in (t / "gatecore" / "_build.py").read_text()
    git(t, "tag", "v9.9.9")  # tags are not read
    head = commit(t, "b")
    commit(t, "c")
    head = git(t, "rev-parse", "HEAD").stdout.strip()
    dev = version(t)
    assert dev == f"1.4.3.dev2+g{head[:12]}"
    (t / "b").write_text("changed, not committed\n")
    assert version(t) == f"1.4.3.dev2+g{head[:12]}.dirty"
    git(t, "checkout", "-q", "b")
    (t / "VERSION").write_text("1.5.0\n")
    commit(t, "release")
    assert version(t) == "1.5.0"
    assert order("1.4.2", dev) == -1 and order(dev, "1.4.3") == -1 and order(dev, "1.5.0") == -1
    assert order(dev, dev) == 0 and order(dev, "1.4.3.dev2+g0123456789ab") is None
    assert order("0.1.0", "(unknown)") is None


def test_a_shallow_clone_never_claims_the_release(tmp_path: Path) -> None:
    t = tree(tmp_path / "p")
    git(t, "init", "-q", "-b", "main")
    commit(t, "a")
    commit(t, "b")
    (t / "VERSION").write_text("2.0.0\n")
    release = commit(t, "release")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{t}", str(clone))
    assert version(t) == "2.0.0"
    assert version(clone) == f"2.0.1.dev0+g{release[:12]}"  # the history that shows the release is cut off
    after = commit(t, "d")
    deeper = tmp_path / "deeper"
    git(tmp_path, "clone", "-q", "--depth", "3", f"file://{t}", str(deeper))
    assert version(deeper) == f"2.0.1.dev1+g{after[:12]}"  # the release and its parent are there: counted


def test_without_git_the_recorded_version_else_unknown(tmp_path: Path) -> None:
    t = tree(tmp_path / "p")
    git(t, "init", "-q", "-b", "main")
    commit(t, "a")
    head = commit(t, "b")
    built = version(t)
    assert built == f"1.4.3.dev1+g{head[:12]}"
    sdist = tmp_path / "sdist"  # what an sdist holds: the files and the recorded version, no .git
    shutil.copytree(t, sdist, ignore=shutil.ignore_patterns(".git"))
    assert version(sdist) == built
    assert f'COMMIT = "{head}"' in (sdist / "gatecore" / "_build.py").read_text()
    (sdist / "gatecore" / "_build.py").unlink()
    assert version(sdist) == "1.4.2+unknown"


def test_a_tree_without_git_taken_at_a_known_commit(tmp_path: Path) -> None:
    """A GitHub action's copy of the repository (forges/github/action.yml): no history, but the
    commit it was pinned to; the build records it, counting nothing it cannot see."""
    t = tree(tmp_path / "p")
    sha = "0123456789abcdef" * 2 + "01234567"
    assert version(t, "--commit", sha) == f"1.4.3.dev0+g{sha[:12]}"
    assert f'COMMIT = "{sha}"' in (t / "gatecore" / "_build.py").read_text()
    assert version(t) == f"1.4.3.dev0+g{sha[:12]}"  # the build reads it back (hatchling's version source)
    bad = subprocess.run([sys.executable, "hatch_build.py", "--commit", "v1.4.2"], cwd=t, capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "full commit id" in bad.stderr
    g = tree(tmp_path / "g")
    git(g, "init", "-q", "-b", "main")
    head = commit(g, "a")
    assert version(g, "--commit", sha) == "1.4.2" != head  # git shows the history: --commit is not needed


def test_the_changelog_holds_the_release_and_rollback_names_one_of_its_versions() -> None:
    release = (ROOT / "VERSION").read_text().strip()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## (\d+\.\d+\.\d+)$", changelog, re.M)
    assert released and released[0] == release, "the newest release heading of CHANGELOG.md is VERSION's"
    assert all("Upgrade notes" in part for part in re.split(r"^## ", changelog, flags=re.M)[1:]), \
        "every version has upgrade notes"
    rollback = block("rollback").body
    named = re.findall(r"push_gate-(\d+\.\d+\.\d+)-py3-none-any\.whl", rollback)
    assert named and set(named) <= set(released), (named, released)


def test_doctor_says_which_of_hook_and_environment_is_older() -> None:
    from server.doctor import version_age

    where = Path("/srv/git/p.git")
    fix = "run gate server upgrade /srv/git/p.git"
    assert version_age("0.1.0", "0.1.0", where) == (True, "hook written by push-gate 0.1.0 (this version)")
    assert version_age("0.1.0", "0.1.1.dev4+g0123456789ab", where) == (
        False, f"hook written by push-gate 0.1.0, older than this environment's 0.1.1.dev4+g0123456789ab: {fix}")
    assert version_age("0.1.1.dev4+g0123456789ab", "0.1.0", where)[1].startswith(
        "hook written by push-gate 0.1.1.dev4+g0123456789ab, newer than this environment's 0.1.0 (rolled back")
    assert "built from another commit (neither is older)" in version_age(
        "0.1.1.dev4+g0123456789ab", "0.1.1.dev4+gba9876543210", where)[1]
    assert "(not to be ordered)" in version_age("0+unknown", "0.1.0", where)[1]
    assert version_age(None, "0.1.0", where) == (
        False, f"hook written by an unknown push-gate version, this environment holds 0.1.0: {fix}")
