"""The forge output forms (gatecore/checks/forgereport.py): GitHub's workflow commands read back as the
runner reads them, the job summary rendered by a CommonMark parser, GitLab's Code Quality issues
checked against the members GitLab reads. The values are hostile on purpose: a pushed commit chooses
its paths and identities."""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from gatecore.checks import forgereport as fr
from gatecore.findings import Violation

FROZEN = Violation(code="GATE-FROZEN-PATH", ref="refs/heads/main", commit="3ae751581bce" + "0" * 28,
                   identity="agent-7@agents.example.com", path="ci/deploy.yml", rule="freeze[0]",
                   detail="modify of a frozen path", evidence="author email matched *@agents.example.com")
#: every character a workflow command, a table or Markdown could read as syntax
HOSTILE_PATH = "a,b:c%25d\r\n::warning::x|y`z*_[l](http://e.test)<img src=x>&amp;\\"
HOSTILE = Violation(code="GATE-FROZEN-PATH", ref="refs/heads/main", commit="b" * 40, identity="x@y",
                    path=HOSTILE_PATH, detail="add of a frozen path")
REVIEW = Violation(code="GATE-REVIEW-UNRECORDED", ref="refs/heads/review/runner/A1", attempt_id="A1",
                   detail="the review ref moved without a receipt")

COMMAND = re.compile(r"^::(?P<cmd>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<msg>.*)$")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the runner reads it: properties split on `,` and `=`, then unescaped."""
    m = COMMAND.match(line)
    assert m, line
    props = {}
    for part in (m.group("props") or "").split(","):
        if part:
            key, _, value = part.partition("=")
            props[key] = unquote(value)
    return m.group("cmd"), props, unquote(m.group("msg"))


def test_an_annotation_names_the_code_and_the_path() -> None:
    [line] = fr.github_annotations([FROZEN])
    cmd, props, msg = parse_command(line)
    assert (cmd, props["title"], props["file"]) == ("error", "GATE-FROZEN-PATH", "ci/deploy.yml")
    assert msg.startswith("GATE-FROZEN-PATH ref=refs/heads/main commit=3ae751581bce")
    assert "restricted: author email matched" in msg


def test_a_hostile_path_stays_one_property_and_one_line() -> None:
    [line] = fr.github_annotations([HOSTILE])
    assert "\n" not in line and "\r" not in line
    cmd, props, _ = parse_command(line)
    assert cmd == "error" and set(props) == {"title", "file"}
    assert props["file"] == HOSTILE_PATH, "the runner reads the path back exactly"
    assert "%2C" in line and "%3A" in line and "%25" in line and "%0D%0A" in line


@pytest.mark.parametrize(("raw", "data", "prop"), [
    ("100%", "100%25", "100%25"),
    ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
    ("k:v,w", "k:v,w", "k%3Av%2Cw"),
    ("%0A", "%250A", "%250A"),  # an escape already in the text is not read as one
])
def test_escapes_are_those_of_actions_core(raw: str, data: str, prop: str) -> None:
    assert fr.github_escape_data(raw) == data
    assert fr.github_escape_property(raw) == prop
    assert unquote(fr.github_escape_property(raw)) == raw


def test_a_violation_without_a_path_has_no_file_property() -> None:
    [line] = fr.github_annotations([REVIEW])
    _, props, msg = parse_command(line)
    assert props == {"title": "GATE-REVIEW-UNRECORDED"} and "attempt=A1" in msg


def test_past_the_step_limit_the_last_annotation_counts_the_rest() -> None:
    many = [Violation(code="GATE-FROZEN-PATH", ref="refs/heads/main", path=f"ci/{i}.yml", detail="add")
            for i in range(25)]
    lines = fr.github_annotations(many)
    assert len(lines) == fr.GITHUB_ANNOTATIONS_PER_STEP
    assert [parse_command(ln)[1]["file"] for ln in lines[:-1]] == [f"ci/{i}.yml" for i in range(9)]
    assert "and 16 more violations" in parse_command(lines[-1])[2]
    assert len(fr.github_annotations(many[:10])) == 10
    assert fr.github_annotations([]) == []


def test_guarded_lines_are_bracketed_by_stop_commands() -> None:
    token = "9f2c4b1a7e6d5c3b2a19"
    out = fr.github_guarded(["::error::forged by a path", "GATE-FROZEN-PATH ..."], token)
    assert out == [f"::stop-commands::{token}", "::error::forged by a path", "GATE-FROZEN-PATH ...", f"::{token}::"]
    with pytest.raises(ValueError, match="occurs"):
        fr.github_guarded([f"::{token}::"], token)
    for weak in ("short", "not-alnum-token-xyz", "é" * 20):
        with pytest.raises(ValueError, match="token"):
            fr.github_guarded([], weak)


def _render(md: str) -> list[str]:
    """The kinds of inline tokens CommonMark (with GFM tables) makes of a document."""
    parser = MarkdownIt("commonmark").enable("table")
    kinds = []
    for tok in parser.parse(md):
        kinds.append(tok.type)
        kinds += [child.type for child in tok.children or []]
    return kinds


def test_the_summary_is_a_table_of_every_violation() -> None:
    md = fr.github_summary([FROZEN, REVIEW], verdict="reject", base="a" * 40, head="b" * 40, ref="refs/heads/main")
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert "<strong>Verdict: reject</strong>" in html
    assert html.count("<tr>") == (1 + 3) + (1 + 2)  # the range table (header, 3 rows), the violations (header, 2)
    assert "ci/deploy.yml" in html and "3ae751581bce" in html and "refs/heads/review/runner/A1" in html
    assert "No violations" in fr.github_summary([], verdict="pass", base="a", head="b", ref="refs/heads/main")


def test_hostile_values_render_as_text_never_as_markup() -> None:
    md = fr.github_summary([HOSTILE], verdict="reject", base="a", head="b", ref="refs/heads/main")
    kinds = _render(md)
    start = kinds.index("table_open", kinds.index("table_close"))  # the violations' table
    table = kinds[start:kinds.index("table_close", start)]
    assert not {"link_open", "image", "html_inline", "html_block", "code_inline", "em_open", "strong_open"} & set(
        table), table
    html = MarkdownIt("commonmark").enable("table").render(md)
    # one row of six cells, the path shown as written (control characters as the human lines show them)
    row = html.split("<tbody>")[-1].split("</tbody>")[0]
    assert row.count("<td>") == 6
    assert "a,b:c%25d\\x0d\\x0a::warning::x|y`z*_[l](http://e.test)&lt;img src=x&gt;&amp;amp;\\" in row


def test_codequality_issues_have_the_members_gitlab_reads() -> None:
    issues = fr.gitlab_codequality([FROZEN, REVIEW, HOSTILE])
    json.dumps(issues)  # plain JSON values
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] == "blocker"
        location = issue["location"]
        assert isinstance(location, dict) and location["lines"] == {"begin": 1}
        assert isinstance(issue["fingerprint"], str) and re.fullmatch(r"[0-9a-f]{64}", issue["fingerprint"])
    assert [i["check_name"] for i in issues] == ["GATE-FROZEN-PATH", "GATE-REVIEW-UNRECORDED", "GATE-FROZEN-PATH"]
    assert [i["location"]["path"] for i in issues] == ["ci/deploy.yml", "refs/heads/review/runner/A1",  # type: ignore[index]
                                                        HOSTILE_PATH]
    assert "\n" not in str(issues[2]["description"])


def test_fingerprints_are_stable_and_distinct() -> None:
    again = fr.gitlab_codequality([FROZEN])[0]["fingerprint"]
    assert again == fr.gitlab_codequality([FROZEN])[0]["fingerprint"]
    moved = Violation(code=FROZEN.code, ref=FROZEN.ref, commit=FROZEN.commit, identity=FROZEN.identity,
                      path="ci/deploy.ym", rule="lfreeze[0]", detail=FROZEN.detail)
    assert fr.gitlab_codequality([moved])[0]["fingerprint"] != again  # no field boundary shifts into a collision
    with pytest.raises(ValueError, match="severity"):
        fr.gitlab_codequality([FROZEN], severity="fatal")


def test_the_summary_stays_within_a_steps_cap() -> None:
    """GitHub drops a step's summary past 1 MiB: rows stop at the budget, and the rest are counted."""
    long = [Violation(code="GATE-FROZEN-PATH", ref="refs/heads/main", path=f"ci/{i}/" + "x/" * 200,
                      detail="modify of a frozen path; " * 20) for i in range(3000)]
    md = fr.github_summary(long, verdict="reject", base="a", head="b", ref="refs/heads/main")
    assert len(md.encode()) <= fr.GITHUB_SUMMARY_BUDGET
    row_start = "\n| GATE-FROZEN-PATH |"  # the registry's codes are shown as they are
    rows = md.count(row_start)
    assert 0 < rows < 3000 and f"and {3000 - rows} more violations" in md
    small = fr.github_summary(long[:2], verdict="reject", base="a", head="b", ref="refs/heads/main", budget=2000)
    assert small.count(row_start) == 0 and "and 2 more violations" in small
