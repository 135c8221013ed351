"""What the pusher sees: plain-ASCII lines, one per violation, plus one JSON line each.

    gate: push rejected: 2 violations (mode enforce)
    GATE-FROZEN-PATH ref=refs/heads/main commit=1a2b3c4d5e6f identity=bot@agents.example.com
        path=ci/deploy.yml rule=freeze[0]:governance reason=modify of a frozen path;
        restricted: author email bot@agents.example.com matched *@agents.example.com   (one line)
    ...
    gate: and 3 more
    hint: GATE-FROZEN-PATH: frozen paths are changed by humans only; ... (gate explain GATE-FROZEN-PATH)
    gate-json: {"actor":"maintainer","code":"GATE-FROZEN-PATH","exit":1,"hint":"...","next":"gate approve ...",...}

Each gate-json line is complete for a bot (docs/codes.md, for bots and agents): the code, the
exit class, the hint, who must act, whether a retry can help and, where the gate can fill it
in, the next command. A push the gate could not decide because of its own configuration
says that it is not the pusher's fault and what the admin runs. Under GitLab every line
starts with `GL-HOOK-ERR: ` so that its web UI shows it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .. import codes
from ..findings import Violation, unique_in_order

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


#: What `gate approve` needs that its printed command cannot name (the server knows neither who the
#: maintainer is nor their key): set once per clone (docs/approvals.md). The hint line and the
#: gate-json's `setup` say it beside the command.
APPROVE_SETUP = ("git config gate.approver NAME && git config gate.approvalSshKey ~/.ssh/KEY "
                 "(or: git config gate.approvalKey KEYFILE)")


def json_line(doc: Mapping[str, object], values: Mapping[str, str] | None = None,
              next_command: str | None = None) -> str:
    """`gate-json: {...}`: a rejection's own fields and its code's advice (codes.Code.advice); with
    a `gate approve` next command, what a maintainer sets once before it runs as printed (`setup`)."""
    code = str(doc.get("code", ""))
    entry = codes.CODES.get(code)
    out: dict[str, object] = dict(doc)
    if entry is not None:
        out.update(entry.advice(values))
    if next_command:
        out["next"] = next_command
        if next_command.startswith("gate approve "):
            out["setup"] = APPROVE_SETUP
    return "gate-json: " + json.dumps(out, ensure_ascii=True, sort_keys=True)


def _approve_command(ref: str, commands: Sequence[str]) -> str | None:
    """The `gate approve` command (reserved.approvalrefs.approve_command) for this ref's update, if
    any. `ref` as a violation shows it (`refs.display`); the command names the ref's own bytes."""
    if not commands:
        return None
    from ..git.refs import shell_word, undisplay

    needle = f" --ref {shell_word(undisplay(ref).decode('utf-8', 'surrogateescape'))} "
    return next((c for c in commands if needle in c + " "), None)


def render(violations: Sequence[Violation], *, mode: str, cap: int, gitlab: bool, what: str = "push",
           commands: Sequence[str] = (), git_dir: str | None = None) -> list[str]:
    """Lines for stderr. `mode` is 'enforce' or 'evaluate'; `what` is 'push' or 'commit';
    `commands`: the `gate approve` command for each ref update a maintainer could approve;
    `git_dir`: the server's repository, for commands the admin runs."""
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
    if commands:
        lines.append(f"hint: before a first gate approve, once per clone: {APPROVE_SETUP}; and fetch the "
                     "agent's commits into it")
    lines += [json_line(v.as_dict(), {"ref": v.ref, **({"git_dir": git_dir} if git_dir else {})},
                        _approve_command(v.ref, commands) if v.code.startswith("GATE-FROZEN-") else None)
              for v in shown]
    if n > cap:
        lines.append("gate-json: " + json.dumps({"truncated": n - cap}))
    if gitlab:
        lines = [GITLAB_PREFIX + ln for ln in lines]
    return lines


def error_lines(code: str, detail: str, *, gitlab: bool, what: str = "push", git_dir: str | None = None) -> list[str]:
    """A push (or commit) rejected because the gate could not decide (configuration, internal,
    deadline). `git_dir`: the server's repository, named in the admin's command (server side)."""
    c = codes.CODES.get(code)
    lines = [_ascii(f"gate: {what} rejected: {code}: {detail}")]
    if c and c.actor == "admin":
        who = f"the server admin must act (gate server doctor {git_dir})" if git_dir else \
            "whoever maintains the gate's configuration must act"
        fault = "the gate's configuration" if c.exit == codes.CONFIG else "the gate itself"
        lines.append(_ascii(f"gate: this is not a problem with your {'change' if what == 'commit' else what}: "
                            f"{fault} failed, so nothing was decided; {who}"))
    if c:
        lines.append(_ascii(f"hint: {code}: {c.hint} (gate explain {code})"))
    lines.append(json_line({"code": code, "detail": detail}, {"git_dir": git_dir} if git_dir else None))
    return [GITLAB_PREFIX + ln for ln in lines] if gitlab else lines
