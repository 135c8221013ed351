"""The change as the model reads it (`gatecore.git.changetext`): git applies it, it holds every line
whatever the alignment, binary content is declared, nothing a file holds can pass for the gate's
own lines, and a change too large is refused, never cut. The selftest's naive runner is held to
what real git prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.gitutil import WorkRepo, git, git_bytes

from gatecore import selftest
from gatecore.adapters.gitstream import GitStream
from gatecore.errors import GateError
from gatecore.git import changetext
from gatecore.git.changetext import FileChange, render
from gatecore.git.objects import Objects

ZERO, A, B = "0" * 40, "a" * 40, "b" * 40


def text_of(repo: WorkRepo, base: str, new: str) -> changetext.ChangeText:
    return changetext.change_text(Objects(GitStream(str(repo.path / ".git"))), base, new)


def test_git_applies_the_text_and_gets_the_reviewed_tree(work: WorkRepo, tmp_path: Path) -> None:
    """Adds, edits, deletes, a mode change, a file that became a symlink, lines without a final
    newline, nested directories: `git apply` of the text onto the base gives the reviewed tree."""
    work.write("a.txt", "".join(f"line {i}\n" for i in range(60)))
    work.write("gone.txt", "bye\n")
    work.write("run.sh", "echo hi\n")
    work.write("to-link", "was a file\n")
    base = work.commit("base")
    work.write("a.txt", "".join(f"line {i}\n" if i % 17 else f"edited {i}\n" for i in range(62)) + "tail")
    (work.path / "gone.txt").unlink()
    (work.path / "run.sh").chmod(0o755)
    (work.path / "to-link").unlink()
    work.symlink("to-link", "a.txt")
    work.write("deep/er/new.py", "import os\n")
    new = work.commit("change")
    shown = text_of(work, base, new)
    assert (shown.files, shown.binary) == (5, 0)
    copy = tmp_path / "copy"
    git(tmp_path, "clone", "-q", str(work.path), str(copy))
    git(copy, "checkout", "-q", base)
    git(copy, "apply", "--index", "-", input=shown.text.encode())
    assert git(copy, "write-tree").stdout.strip() == git(work.path, "rev-parse", f"{new}^{{tree}}").stdout.strip()


def apply(old: list[bytes], text: str) -> list[bytes]:
    """The new side, from the old one and the unified hunks (a second reading, not the renderer's)."""
    out: list[bytes] = []
    pos = 0
    lines = text.splitlines(keepends=True)
    k = 0
    while k < len(lines):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n", lines[k])
        assert m, lines[k]
        start = int(m[1]) - 1 if m[2] != "0" else int(m[1])
        out += old[pos:start]
        pos = start
        k += 1
        while k < len(lines) and not lines[k].startswith("@@"):
            line = lines[k]
            body = line[1:].encode()
            if k + 1 < len(lines) and lines[k + 1] == "\\ No newline at end of file\n":
                body = body[:-1]
                k += 1
            if line[0] == " ":
                assert old[pos] == body
                out.append(old[pos])
                pos += 1
            elif line[0] == "-":
                assert old[pos] == body
                pos += 1
            else:
                out.append(body)
            k += 1
    return out + old[pos:]


def lines_of(data: bytes) -> list[bytes]:
    return changetext._split(data)


_files = st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"}\n", b"\n", b"x"]), max_size=40).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(_files, _files, st.booleans())
def test_every_line_of_both_sides_is_in_the_hunks_aligned_or_not(old: bytes, new: bytes, aligned: bool,
                                                                 ) -> None:
    saved = changetext.ALIGN_BUDGET
    changetext.ALIGN_BUDGET = saved if aligned else 0
    try:
        text = "".join(changetext._unified(lines_of(old), lines_of(new)))
    finally:
        changetext.ALIGN_BUDGET = saved
    assert b"".join(apply(lines_of(old), text)) == new


def test_binary_content_is_declared_with_its_size_and_digest() -> None:
    shown = render([FileChange(b"logo.png", 0o100644, 0o100644, A, B, b"\x89PNG\0old", b"\x89PNG\0new!"),
                    FileChange(b"ok.txt", 0, 0o100644, ZERO, B, None, b"fine\n")], A, B)
    assert shown.binary == 1 and "1 of them hold binary content (NUL bytes), not shown as text" in shown.text
    assert re.search(r"!!! binary content \(it holds NUL bytes\), not shown as text: old 8 bytes, sha256 [0-9a-f]{64}; "
                     r"new 9 bytes, sha256 [0-9a-f]{64}\. You have not seen what this file holds\.", shown.text)
    assert "+fine\n" in shown.text


def test_nothing_a_file_holds_passes_for_the_gates_own_lines() -> None:
    """Content lines start with their prefix; characters that move or hide text are escapes; a path
    that is not plain printable UTF-8 is quoted."""
    evil = "ok\rdiff --git a/x b/x\n\u202eesrever\u2028x\x1b[2K\n".encode() + b"\xff\n"
    shown = render([FileChange(b"dir/n\nme\xfe\"q\".py", 0, 0o100644, ZERO, B, None, evil)], A, B).text
    assert '+++ "b/dir/n\\x0ame\\xfe\\"q\\".py"' in shown
    assert "+ok\\x0ddiff --git a/x b/x\n+\\u202eesrever\\u2028x\\x1b[2K\n+\\xff\n" in shown
    assert not any(line.startswith("diff --git a/x") for line in shown.splitlines())


def test_a_change_past_the_limit_is_refused_never_cut() -> None:
    files = [FileChange(f"f{i}".encode(), 0, 0o100644, ZERO, B, None, b"x\n" * 100) for i in range(5)]
    assert render(files, A, B, limit=10_000).files == 5
    with pytest.raises(GateError) as caught:
        render(files, A, B, limit=1000)
    assert caught.value.code == "GATE-REVIEW-CHANGE-TOO-LARGE" and "at file 3 of 5 (f2)" in caught.value.detail


@pytest.mark.parametrize("row", selftest.SHOWN_TABLE, ids=lambda r: r.observed)
def test_the_selftests_naive_runner_is_what_git_prints_and_the_gate_shows_the_line(work: WorkRepo,
                                                                                   row: selftest.ShownRow) -> None:
    work.write("README", "base\n")
    base = work.commit("base")
    where = "src/.gitattributes" if b"binary" in row.attributes else ".gitattributes"
    work.write(where, row.attributes)
    work.write("src/evil.py", f"import os\n{selftest.EVIL_LINE}\n")
    new = work.commit("change")
    printed = git_bytes(work.path, "diff", "--no-ext-diff", "--no-textconv", base, new).decode()
    assert "Binary files /dev/null and b/src/evil.py differ" in printed
    assert not selftest.naive_shows(row.attributes, b"src/evil.py")
    assert f"+{selftest.EVIL_LINE}\n" in text_of(work, base, new).text
