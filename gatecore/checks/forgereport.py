"""What a forge shows of a check's violations: GitHub's workflow commands and job summary, GitLab's
Code Quality report (docs/forges.md).

Pure: plain values in, strings and plain objects out; the command line prints them or writes the file.

* **GitHub annotations** are workflow commands, one line each, `::error title=CODE,file=PATH::MESSAGE`.
  The runner reads every stdout line of a step for them, so what a violation carries (a path, an
  identity, a reason: text a pushed commit chose) is escaped as `@actions/core` escapes it
  (`toolkit/packages/core/src/command.ts`): `%`, CR and LF in the message (`%25`, `%0D`, `%0A`), and
  also `:` and `,` in a property (`%3A`, `%2C`), which would otherwise end the property or start
  the message. GitHub shows at most 10 error annotations of a step, so the rest are counted in one
  last annotation that points at the job summary.
* **Guarded lines**: any other line a check prints (the human lines, gate-json) is text a pushed
  commit partly chose; `github_guarded` brackets them in `::stop-commands::TOKEN` ... `::TOKEN::`,
  GitHub's way to print lines that are never read as commands.
* **The job summary** is GitHub-flavoured Markdown, which renders links, images and inline HTML:
  every value a commit chose has each ASCII punctuation character written as a numeric character
  reference (`&#47;`), which CommonMark shows as the character and never reads as syntax.
* **GitLab Code Quality**: a list of Code Climate issues with the members GitLab reads
  (`description`, `check_name`, `fingerprint`, `severity`, `location.path`, `location.lines.begin`);
  a violation that names no path is placed at its ref (`refs/heads/main`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ..findings import Violation
from .report import _ascii, violation_line

#: GitHub shows at most this many error annotations of one step, and 50 of a job
#: (actions/toolkit, docs/problem-matchers.md, "Limitations").
GITHUB_ANNOTATIONS_PER_STEP = 10
#: What one step may add to the job summary ("each step is restricted to a maximum size of 1MiB":
#: docs.github.com, "Workflow commands", "Step isolation and limits"), with room for other lines.
GITHUB_SUMMARY_BUDGET = 900 * 1024
#: The Code Climate severities GitLab accepts; a violation blocks the merge.
GITLAB_SEVERITY = "blocker"
_SEVERITIES = frozenset({"info", "minor", "major", "critical", "blocker"})


def github_escape_data(text: str) -> str:
    """A workflow command's message, as `@actions/core` escapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_escape_property(text: str) -> str:
    """A workflow command's property value: the message's escapes, and `:` and `,`."""
    return github_escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(command: str, message: str, properties: Sequence[tuple[str, str]] = ()) -> str:
    """`::command k=v,k=v::message`, properties with empty values left out (as `@actions/core` does)."""
    props = ",".join(f"{key}={github_escape_property(value)}" for key, value in properties if value)
    return f"::{command}{' ' + props if props else ''}::{github_escape_data(message)}"


def github_annotations(violations: Sequence[Violation], *, limit: int = GITHUB_ANNOTATIONS_PER_STEP) -> list[str]:
    """One `::error` line per violation, titled by its code and placed at its path where it names
    one; past `limit`, the last annotation says how many more the job summary lists."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    shown = list(violations) if len(violations) <= limit else list(violations[:limit - 1])
    lines = [github_command("error", violation_line(v), [("title", v.code), ("file", v.path or "")])
             for v in shown]
    if len(shown) < len(violations):
        more = len(violations) - len(shown)
        lines.append(github_command("error", f"and {more} more violation{'s' if more != 1 else ''}: "
                                    "the job summary lists every one", [("title", "push-gate")]))
    return lines


def github_guarded(lines: Sequence[str], token: str) -> list[str]:
    """`lines` between `::stop-commands::TOKEN` and `::TOKEN::`: printed, never read as commands.
    `token` must be unpredictable to whoever wrote the lines' text (a fresh random hex string)."""
    if len(token) < 16 or not token.isalnum() or not token.isascii():
        raise ValueError("the stop-commands token must be 16 or more ASCII letters and digits")
    if any(token in line for line in lines):
        raise ValueError("the stop-commands token occurs in the lines it guards")
    return [f"::stop-commands::{token}", *lines, f"::{token}::"]


#: A code of the registry's form: shown in a summary as it is (nothing a commit chose).
_CODE = re.compile(r"GATE-[A-Z0-9]+(?:-[A-Z0-9]+)*")


def markdown_text(text: str) -> str:
    """`text` for a Markdown document, shown as written: non-printable characters as `\\xNN`
    (as the human lines show them), every ASCII punctuation character as a numeric character
    reference, so no value can open a link, an image, a table cell, code or HTML."""
    return "".join(f"&#{ord(ch)};" if ch.isascii() and not ch.isalnum() and ch != " " else ch
                   for ch in _ascii(text))


def github_summary(violations: Sequence[Violation], *, verdict: str, base: str, head: str, ref: str,
                   budget: int = GITHUB_SUMMARY_BUDGET) -> str:
    """The job summary (appended to `$GITHUB_STEP_SUMMARY`): the verdict, the range judged, and a
    table of the violations, as many as fit in `budget` bytes (a step's summary is capped: past the
    cap GitHub drops it whole), then how many more the step's log lists."""
    md = markdown_text
    lines = [
        "## push-gate check",
        "",
        f"**Verdict: {md(verdict)}**",
        "",
        "| | |",
        "|---|---|",
        f"| ref | {md(ref)} |",
        f"| base (not judged) | {md(base)} |",
        f"| head (judged) | {md(head)} |",
        "",
    ]
    if not violations:
        lines.append("No violations.")
        return "\n".join(lines) + "\n"
    n = len(violations)
    lines += [f"{n} violation{'s' if n != 1 else ''}:", "",
              "| code | ref | commit | identity | path | reason |",
              "|---|---|---|---|---|---|"]
    tail = ["", "Each code: `gate explain CODE` (docs/codes.md)."]
    size = sum(len(line) + 1 for line in [*lines, *tail]) + 200  # 200: the "and N more" line
    for shown, v in enumerate(violations):
        reason = v.detail + (f"; restricted: {v.evidence}" if v.evidence else "")
        cells = [v.ref, (v.commit or "")[:12], v.identity or "", v.path or "", reason]
        code = v.code if _CODE.fullmatch(v.code) else md(v.code)  # the gate's own codes are shown as they are
        row = "| " + " | ".join([code, *(md(cell) for cell in cells)]) + " |"
        size += len(row) + 1
        if size > budget:
            more = n - shown
            tail = ["", f"and {more} more violation{'s' if more != 1 else ''}: the step's log lists every one.", *tail]
            break
        lines.append(row)
    return "\n".join([*lines, *tail]) + "\n"


def _fingerprint(v: Violation) -> str:
    """Stable for the same violation across pipelines, distinct between violations (length-prefixed
    fields, so no two field lists hash alike)."""
    fields = [v.code, v.ref, v.commit or "", v.path or "", v.identity or "", v.rule or "", v.field or "",
              v.attempt_id or ""]
    data = b"".join(len(f.encode()).to_bytes(4, "big") + f.encode() for f in fields)
    return hashlib.sha256(b"push-gate-codequality-v1\0" + data).hexdigest()


def gitlab_codequality(violations: Sequence[Violation], *, severity: str = GITLAB_SEVERITY) -> list[dict[str, object]]:
    """The Code Quality report (`artifacts:reports:codequality`): one Code Climate issue per
    violation, in order; identical violations collapse to one fingerprint, as GitLab shows them."""
    if severity not in _SEVERITIES:
        raise ValueError(f"severity must be one of {sorted(_SEVERITIES)}")
    return [{
        "description": violation_line(v),
        "check_name": v.code,
        "fingerprint": _fingerprint(v),
        "severity": severity,
        "location": {"path": v.path if v.path else v.ref, "lines": {"begin": 1}},
    } for v in violations]
