"""The four repository formats git makes (files or reftable refs, SHA-1 or SHA-256 objects) and the
git that makes them, for the format-sensitive tests (marked `formats`).

Those tests run on the git named by `GATE_MODERN_GIT` (a bin directory: `./dev modern-git`
prints one, git 2.55 built from Debian's source package) when it is set, else on the machine's
git; in each format that git can make, the others skipped with the reason (reftable needs git
2.45). The format reaches every repository a test makes, through the CLI and docs/ci-example.sh
as written, by git's own defaults: `GIT_DEFAULT_HASH` and `GIT_DEFAULT_REF_FORMAT` (a clone takes
its object format from the repository it clones).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

#: (ref storage, object format), the four formats git makes.
FORMATS = (("files", "sha1"), ("files", "sha256"), ("reftable", "sha1"), ("reftable", "sha256"))
IDS = tuple(f"{refs}-{objects}" for refs, objects in FORMATS)
#: The oldest git that makes each.
NEEDS = {"reftable": (2, 45), "sha256": (2, 29)}
#: Refs kept at a path of their own (`extensions.refStorage = files://DIR`): git 2.54.
REF_PATHS = (2, 54)
HOW = "GATE_MODERN_GIT=$(./dev modern-git) runs it (git 2.55, built once)"


def version_of(git: str) -> tuple[int, ...]:
    out = subprocess.run([git, "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    assert found, out
    return tuple(int(x) for x in found.groups())


@dataclass(frozen=True)
class Git:
    """The git the format tests run: its bin directory (None: the machine's, from PATH) and version."""

    bin: str | None
    version: tuple[int, ...]

    @property
    def shown(self) -> str:
        return ".".join(map(str, self.version)) + ("" if self.bin is None else f" ({self.bin})")


def chosen_git() -> Git:
    """`GATE_MODERN_GIT`'s git if set (a misconfigured one fails the test: CI sets it), else PATH's."""
    modern = os.environ.get("GATE_MODERN_GIT")
    if not modern:
        return Git(None, version_of("git"))
    git = Path(modern) / "git"
    if not os.access(git, os.X_OK):
        pytest.fail(f"GATE_MODERN_GIT={modern}: no git there (./dev modern-git prints the directory)")
    return Git(str(Path(modern).resolve()), version_of(str(git)))


@dataclass(frozen=True)
class RepoFormat:
    refs: str  # "files" | "reftable"
    objects: str  # "sha1" | "sha256"
    git: Git

    @property
    def hexsz(self) -> int:
        return 64 if self.objects == "sha256" else 40

    @property
    def zero(self) -> str:
        return "0" * self.hexsz

    def env(self) -> dict[str, str]:
        """What makes every repository of a test this format, on this git."""
        env = {"GIT_DEFAULT_HASH": self.objects, "GIT_DEFAULT_REF_FORMAT": self.refs}
        if self.git.bin is not None:
            env["PATH"] = f"{self.git.bin}{os.pathsep}{os.environ.get('PATH', '')}"
        return env

    def apply(self, mp: pytest.MonkeyPatch) -> None:
        for k, v in self.env().items():
            mp.setenv(k, v)


def repo_format(refs: str, objects: str) -> RepoFormat:
    """The format on the chosen git, or a skip saying why that git cannot make it."""
    git = chosen_git()
    for part in (refs, objects):
        need = NEEDS.get(part)
        if need is not None and git.version < need:
            pytest.skip(f"{part} needs git >= {'.'.join(map(str, need))} (this is {git.shown}): {HOW}")
    return RepoFormat(refs, objects, git)


def needs_ref_paths(fmt: RepoFormat) -> None:
    if fmt.git.version < REF_PATHS:
        pytest.skip(f"refs at a path of their own need git >= 2.54 (this is {fmt.git.shown}): {HOW}")
