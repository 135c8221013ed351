"""The object format the hook reads ids in is the one git reads (`gitcmd.object_format` asks
`git rev-parse --show-object-format`: no reading of the config by hand), whatever the config's
spelling; a format git does not know opens no repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitutil import git

from gatecore.adapters.gitcmd import object_format
from gatecore.errors import GateError
from gatecore.git.gitmodel import FORMATS, SHA1, SHA256, format_of

BASE = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"


@pytest.mark.parametrize("extra", [
    "",
    "[extensions]\n\tobjectFormat = sha256\n",
    "[Extensions]\nobjectformat=sha256\n",
    '[extensions]\n\tobjectformat = "sha256"\n',
    "[extensions]\n\tobjectformat = sha256 ; the format\n",
    "[extensions] objectformat = sha256\n",
    "[extensions]\n\tobjectformat = sha1\n",
    "[extensions]\n\tobjectformat = sha1\n\tobjectformat = sha256\n",
    "[extensions]\n\tobjectformat = sha256\n[extensions]\n\tobjectformat = sha1\n",
    "# [extensions]\n# objectformat = sha256\n",
    "[core]\n\tobjectformat = sha256\n",
])
def test_the_format_read_from_the_config_is_the_one_git_reads(tmp_path: Path, extra: str) -> None:
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (bare / "config").write_text(BASE + extra)
    shown = git(bare, "rev-parse", "--show-object-format", check=False)
    assert shown.returncode == 0, shown.stderr
    assert object_format(str(bare)) == shown.stdout.strip()


def test_a_format_git_does_not_know_opens_no_repository(tmp_path: Path) -> None:
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (bare / "config").write_text(BASE + "[extensions]\n\tobjectformat = sha512\n")
    assert git(bare, "rev-parse", "--show-object-format", check=False).returncode != 0
    with pytest.raises(GateError) as err:
        object_format(str(bare))
    assert err.value.code == "GATE-GIT-REPOSITORY" and "sha512" not in FORMATS


def test_ids_and_zero_ids_by_format() -> None:
    assert (SHA1.hexsz, SHA1.rawsz, SHA256.hexsz, SHA256.rawsz) == (40, 20, 64, 32)
    assert SHA256.zero_id == "0" * 64 and format_of("a" * 64) is SHA256 and format_of("a" * 40) is SHA1
    with pytest.raises(ValueError):
        format_of("a" * 41)
