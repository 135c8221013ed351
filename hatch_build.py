"""The version of a build, and the file that carries it (docs/upgrading.md, "Versions").

`VERSION` holds the last release, one line (`0.1.0`); changing that line is making a release
(CHANGELOG.md says what it brings). A build's version is computed here, from git, at build
time only:

* the commit that last changed `VERSION`, with a clean work tree: the release, `X.Y.Z`;
* any other commit: `X.Y.(Z+1).devN+g<commit>`, where N counts the commits since `VERSION`
  last changed (`git rev-list --count`) and <commit> is the first 12 hex digits of the
  commit built; tracked files changed and not committed add `.dirty`. It sorts after the
  release it follows and before the next one (PEP 440), and two commits never share one.
* a shallow clone in which the commit that changed `VERSION` cannot be told (its parents are
  cut off): `X.Y.(Z+1).dev0+g<commit>`, never the release (a release is only claimed when
  the history shows it);
* no git history at all (an unpacked sdist): the version the sdist's build recorded in
  `gatecore/_build.py`; with neither, `X.Y.Z+unknown`.

No tag is read: tags need not travel with a clone, and the version must not depend on them.
The build writes the result to `gatecore/_build.py` (not in git; every wheel and sdist holds
it), which `gatecore/__init__.py` imports: no git process runs when the gate starts.

Used three ways: as hatchling's version source (`[tool.hatch.version]`, `project_version()`),
as its build hook (writes the file into every sdist and wheel, editable ones included), and by
`./dev` as a script (`python hatch_build.py`: rewrite the file for the editable environment,
print the version), so `.venv/bin/gate --version` follows the commits as they are made.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
RECORD = Path("gatecore") / "_build.py"
RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False,
                             timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def release(root: Path = ROOT) -> str:
    text = (root / "VERSION").read_text("ascii").strip()
    if RELEASE.fullmatch(text) is None:
        raise ValueError(f"VERSION must hold one release number X.Y.Z, not {text!r}")
    return text


def next_dev(rel: str, count: int, commit: str, dirty: bool) -> str:
    """`X.Y.(Z+1).devN+g<commit>[.dirty]`: a build between release `rel` and the next."""
    m = RELEASE.fullmatch(rel)
    assert m is not None
    major, minor, patch = (int(x) for x in m.groups())
    return f"{major}.{minor}.{patch + 1}.dev{count}+g{commit[:12]}" + (".dirty" if dirty else "")


def from_git(root: Path = ROOT) -> tuple[str, str] | None:
    """(version, commit) from the history, or None where `root` is not the top of a git work tree."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != root.resolve():
        return None
    head = _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    changed = _git(root, "log", "-1", "--format=%H", "--", "VERSION")
    if not head or not changed:
        return None
    rel = release(root)
    count: int | None = None
    if _git(root, "rev-parse", "--is-shallow-repository") == "true":
        shallow = _git(root, "rev-parse", "--git-path", "shallow")
        path = Path(shallow) if shallow else None
        if path is not None and not path.is_absolute():
            path = root / path
        cut = set(path.read_text().split()) if path is not None and path.is_file() else set()
        if changed in cut:  # git saw VERSION appear at a cut-off commit: where it changed is unknown
            count = None
        else:
            counted = _git(root, "rev-list", "--count", f"{changed}..{head}")
            count = int(counted) if counted else None
        if count is None:
            return next_dev(rel, 0, head, _dirty(root)), head
    else:
        counted = _git(root, "rev-list", "--count", f"{changed}..{head}")
        if counted is None:
            return None
        count = int(counted)
    dirty = _dirty(root)
    if count == 0 and not dirty:
        return rel, head
    return next_dev(rel, count, head, dirty), head


def _dirty(root: Path) -> bool:
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return bool(status)


def recorded(root: Path = ROOT) -> tuple[str, str] | None:
    """(version, commit) from `gatecore/_build.py`, as an earlier build wrote it."""
    try:
        text = (root / RECORD).read_text("utf-8")
    except OSError:
        return None
    version = re.search(r'^VERSION = "([^"]+)"$', text, re.M)
    commit = re.search(r'^COMMIT = "([0-9a-f]*)"$', text, re.M)
    return (version.group(1), commit.group(1) if commit else "") if version else None


def build_info(root: Path = ROOT) -> tuple[str, str]:
    """(version, commit): from git, else as recorded by the build that made this tree, else unknown."""
    return from_git(root) or recorded(root) or (release(root) + "+unknown", "")


def project_version() -> str:
    """hatchling's version source (`[tool.hatch.version] source = "code"`)."""
    return build_info(ROOT)[0]


def write_record(root: Path, version: str, commit: str) -> Path:
    path = root / RECORD
    text = (f'"""Written by the build (hatch_build.py); not in git. docs/upgrading.md, "Versions"."""\n\n'
            f'VERSION = "{version}"\nCOMMIT = "{commit}"\n')
    try:
        if path.read_text("utf-8") == text:
            return path
    except OSError:
        pass
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, "utf-8")
    tmp.replace(path)
    return path


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script by ./dev, where hatchling need not be installed
    pass
else:
    class VersionRecordHook(BuildHookInterface):  # type: ignore[misc]
        """Write gatecore/_build.py into every artifact (sdist, wheel, editable wheel)."""

        def initialize(self, version: str, build_data: dict[str, Any]) -> None:
            root = Path(self.root)
            write_record(root, self.metadata.version, build_info(root)[1])


def main(argv: list[str]) -> int:
    """`python hatch_build.py [--check] [--commit SHA]`: write gatecore/_build.py for this tree and
    print the version. `--commit`: the commit a tree without git history was taken from, as its taker
    knows it (a GitHub action's copy of the repository at a pinned commit, forges/github/action.yml):
    recorded as `X.Y.(Z+1).dev0+g<commit>`, what a shallow clone that cannot count gets; ignored where
    git shows the history."""
    version, commit = build_info(ROOT)
    if "--commit" in argv:
        given = argv[argv.index("--commit") + 1] if argv.index("--commit") + 1 < len(argv) else ""
        if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", given) is None:
            print(f"hatch_build.py: --commit takes a full commit id, not {given!r}", file=sys.stderr)
            return 2
        if from_git(ROOT) is None:
            version, commit = next_dev(release(ROOT), 0, given, False), given
    if "--check" not in argv:
        write_record(ROOT, version, commit)
    print(version)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
