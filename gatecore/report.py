"""What the pusher sees: plain-ASCII lines, one per violation, plus one JSON line each.

    gate: push rejected: 2 violations (mode enforce)
    GATE-FROZEN-PATH ref=refs/heads/main commit=1a2b3c4d5e6f identity=bot@agents.example.com
        path=ci/deploy.yml rule=freeze[0]:governance reason=modify of a frozen path;
        restricted: author email bot@agents.example.com matched *@agents.example.com   (one line)
    ...
    gate: and 3 more
    hint: GATE-FROZEN-PATH: frozen paths are changed by humans only; ... (gate explain GATE-FROZEN-PATH)
    gate-json: {"code":"GATE-FROZEN-PATH","ref":"refs/heads/main",...}

Under GitLab every line starts with `GL-HOOK-ERR: ` so that its web UI shows it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from . import codes
from .findings import Violation, unique_in_order

GITLAB_PREFIX = "GL-HOOK-ERR: "


def _ascii(text: str) -> str:
    return "".join(ch if 0x20 <= ord(ch) < 0x7F else f"\\x{ord(ch):02x}" if ord(ch) < 0x100
                   else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}" for ch in text)


def violation_line(v: Violation) -> str:
    parts = [v.code, f"ref={v.ref}"]
    if v.commit:
        parts.append(f"commit={v.commit[:12]}")
    if v.attempt_id:
        parts.append(f"attempt={v.attempt_id}")
    if v.identity:
        parts.append(f"identity={v.identity}")
    if v.field:
        parts.append(f"field={v.field}")
    if v.path is not None:
        parts.append(f"path={v.path}")
    if v.rule:
        parts.append(f"rule={v.rule}")
    parts.append(f"reason={v.detail}" + (f"; restricted: {v.evidence}" if v.evidence else ""))
    return _ascii(" ".join(parts))


def render(violations: Sequence[Violation], *, mode: str, cap: int, gitlab: bool, what: str = "push",
           commands: Sequence[str] = ()) -> list[str]:
    """Lines for stderr. `mode` is 'enforce' or 'evaluate'; `what` is 'push' or 'commit';
    `commands`: the `gate approve` command for each ref update a maintainer could approve."""
    if not violations:
        return []
    n = len(violations)
    verb = "rejected" if mode == "enforce" else "would be rejected (evaluate mode: accepted)"
    lines = [f"gate: {what} {verb}: {n} violation{'s' if n != 1 else ''}"]
    shown = list(violations[:cap])
    lines += [violation_line(v) for v in shown]
    if n > cap:
        lines.append(f"gate: and {n - cap} more")
    for code in unique_in_order(v.code for v in violations):
        c = codes.CODES.get(code)
        hint = c.hint if c else "see the server admin"
        lines.append(_ascii(f"hint: {code}: {hint} (gate explain {code})"))
    lines += [_ascii(f"hint: a maintainer can approve this write (docs/approvals.md): {c}") for c in commands]
    lines += ["gate-json: " + json.dumps(v.as_dict(), ensure_ascii=True, sort_keys=True) for v in shown]
    if n > cap:
        lines.append("gate-json: " + json.dumps({"truncated": n - cap}))
    if gitlab:
        lines = [GITLAB_PREFIX + ln for ln in lines]
    return lines


def error_lines(code: str, detail: str, *, gitlab: bool, what: str = "push") -> list[str]:
    """A push (or commit) rejected because the gate could not decide (configuration, internal, deadline)."""
    c = codes.CODES.get(code)
    lines = [_ascii(f"gate: {what} rejected: {code}: {detail}")]
    if c:
        lines.append(_ascii(f"hint: {code}: {c.hint} (gate explain {code})"))
    lines.append("gate-json: " + json.dumps({"code": code, "detail": detail}, ensure_ascii=True, sort_keys=True))
    return [GITLAB_PREFIX + ln for ln in lines] if gitlab else lines
