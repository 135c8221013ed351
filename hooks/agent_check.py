"""`gate agents check`: a coding agent's pre-tool hook. Would the server refuse the commit this tool
call's writes would become?

The agent runs this before each tool call, with the call as JSON on stdin (docs/agent-hooks.md).
The call is read by its agent's adapter (`gatecore.toolcalls`: which tool, which paths, which
shell command), the paths made relative to the work tree, and the engine judges them as a
commit-to-be (`pipeline.judge` on `Writes`): the policy committed in HEAD (the client hooks' copy
and validated cache, `hooks/clientconfig.py`), the identity git would record (`git var`, as the
commit hook reads it), the marks the agent's commits carry (its catalogue entry), `GATE_PUSHER`.

Before the engine, what no policy needs to weigh: a shell command that switches a gate hook off
(`--no-verify`, `core.hooksPath`, `pre-commit uninstall`), and a write to any agent's hook
configuration or into the git directory's hooks and config, are refused
(`GATE-AGENT-HOOKS-OFF`). A write outside the work tree is not the gate's; a call that writes
nothing is allowed at once, without starting git.

The answer is the agent's (its adapter's `deny`): a refusal as the agent documents one, exit
status 2 wherever the agent honours it. One error boundary, `main`: anything that is not a proven
allow is a refusal in the agent's own words, with a `GATE-AGENT-*` code (an unreadable payload, a
write without a path, a policy that does not parse, an error of the gate's own), and so is a check
that runs past `DEADLINE_SECONDS` (a watchdog answers for it: Copilot takes a hook's time-out for
an allow).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence

from gatecore.errors import GateError
from gatecore.toolcalls.toolcall import Adapter, Answer, PathWrite, ToolCall, adapter, detect, read_payload

#: How long the check may take before it refuses the call (well inside every agent's hook time-out).
DEADLINE_SECONDS = 20.0
#: Writes into the git directory that switch the client hooks off (relative to the git directory).
GIT_DIR_HOOK_FILES = ("hooks", "config", "config.worktree", "info/attributes")
_GLOB = frozenset("*?[")


def refusal(code: str, detail: str, hint: str | None = None) -> str:
    """The reason the model reads: the code, what is refused, and what to do instead."""
    if hint is None:
        from gatecore import codes

        hint = codes.CODES[code].hint if code in codes.CODES else ""
    return f"{code}: {detail}" + (f"\nWhat to do: {hint}" if hint else "") + \
        "\n(push-gate's agent check: the server refuses the same at push; docs/agent-hooks.md)"


def _relative(top: str, path: str) -> str | None:
    """`path` (absolute, normalised) relative to the work tree `top`, or None outside it."""
    if path == top:
        return ""
    if path.startswith(top.rstrip("/") + "/"):
        return path[len(top.rstrip("/")) + 1:]
    return None


def _expand(base: str, path: str) -> list[str]:
    """`path` as the tool names it, absolute: `~` and globs expanded as the shell would (a glob that
    matches nothing stays as written, as in the shell)."""
    full = os.path.normpath(os.path.join(base, os.path.expanduser(path)))
    if _GLOB & set(path):
        import glob

        return sorted(glob.glob(full)) or [full]
    return [full]


class Targets:
    """The call's writes as paths of the work tree (a write through a symlink counted at both ends:
    the path named and the file it reaches), and the writes that switch a hook off."""

    def __init__(self, top: str, git_dir: str, hook_files: Sequence[str]) -> None:
        self.top = os.path.realpath(top)
        self.git_dir = os.path.realpath(git_dir)
        self.hook_files = hook_files  # absolute: every agent's hook configuration, here and in the home
        self.writes: list[tuple[str, str, bool]] = []  # (relative path, kind, tree)
        self.off: list[str] = []

    def add(self, base: str, w: PathWrite) -> None:
        for full in _expand(base, w.path):
            for candidate in sorted({full, os.path.realpath(full)}):
                self._one(candidate, w)

    def _one(self, full: str, w: PathWrite) -> None:
        inside_git = _relative(self.git_dir, full)
        if inside_git is not None:
            if inside_git == "" or any(inside_git == f or inside_git.startswith(f + "/") for f in GIT_DIR_HOOK_FILES):
                self.off.append(f"a write to {full} (the git directory's hooks and configuration)")
            return
        if any(full == f.rstrip("/") or (f.endswith("/") and _relative(f.rstrip("/"), full))
               or (w.tree and _relative(full, f.rstrip("/"))) for f in self.hook_files):
            self.off.append(f"a write to {full} (an agent's hook configuration)")
        rel = _relative(self.top, full)
        if rel:
            self.writes.append((rel, w.kind, w.tree))
        elif rel == "" and w.tree:
            self.writes.append(("", w.kind, True))


def hook_files(top: str) -> list[str]:
    """Every agent's hook configuration files: in the work tree `top`, and in the user's home."""
    from gatecore.toolcalls.toolcall import AGENTS

    home = os.path.realpath(os.path.expanduser("~"))
    out = []
    for name in AGENTS:
        module = adapter(name)
        out += [os.path.join(top, f) for f in module.PROJECT_FILES] + [os.path.join(home, f) for f in module.USER_FILES]
    return out


def judge_call(module: Adapter, call: ToolCall, policy_path: str | None) -> Answer:
    """The call's writes judged (the module's docstring); `ALLOW` or the agent's refusal."""
    writes = list(call.writes)
    notes: list[str] = []
    if call.command is not None:
        from gatecore.toolcalls.shellwrites import read_command

        reading = read_command(call.command)
        if reading.off:
            return module.deny(call, refusal("GATE-AGENT-HOOKS-OFF", "; ".join(reading.off)))
        writes += reading.writes
        notes += reading.unread
        if reading.patches:
            writes += _patch_writes(call.cwd or os.getcwd(), reading.patches)
    if not writes:
        return module.allow(call)
    base = os.path.realpath(call.cwd or os.getcwd())
    from . import common

    os.chdir(base)
    try:
        repo = common.open_repo()
    except GateError as exc:
        if exc.code == "GATE-GIT-UNREADABLE" and "not a git repository" in exc.detail:
            return module.allow(call)  # no work tree here: the writes are not the gate's
        raise
    if repo.workdir is None:
        return module.allow(call)
    targets = Targets(repo.workdir, repo.path, hook_files(os.path.realpath(repo.workdir)))
    for w in writes:
        targets.add(base, w)
    if targets.off:
        return module.deny(call, refusal("GATE-AGENT-HOOKS-OFF", "; ".join(dict.fromkeys(targets.off))))
    if not targets.writes:
        return module.allow(call)
    return _judged(module, call, repo, targets.writes, policy_path)


def _patch_writes(base: str, patches: Sequence[str]) -> list[PathWrite]:
    """What the patch files a shell command applies would write (unreadable ones: nothing known)."""
    from gatecore.adapters.files import read_capped
    from gatecore.toolcalls.shellwrites import patch_paths

    out: list[PathWrite] = []
    for p in patches:
        try:
            text = read_capped(os.path.join(base, os.path.expanduser(p)), "GATE-AGENT-PAYLOAD", "patch", 16 << 20)
        except GateError:
            continue  # the patch itself decides nothing here: the server reads the commit
        out += patch_paths(text.decode("utf-8", "surrogateescape"))
    return out


def _judged(module: Adapter, call: ToolCall, repo: object, writes: Sequence[tuple[str, str, bool]],
            policy_path: str | None) -> Answer:
    from gatecore.adapters import environment
    from gatecore.checks.frozen import ProposedWrite, writer_for
    from gatecore.git.objects import Objects
    from gatecore.git.refs import ServerRefs
    from gatecore.pipeline import PushInput, Writes, judge

    from . import clientconfig
    from .common import ClientRepo, current_branch
    from .frozen_commit import commit_identities

    assert isinstance(repo, ClientRepo)
    try:
        policy, _origin = clientconfig.load_policy(repo, ["HEAD"], policy_path)
    except GateError as exc:
        raise GateError("GATE-AGENT-CONFIG", f"{exc.code}: {exc.detail}") from None
    (author, _), (committer, _) = commit_identities()
    pusher = environment.client_env().get("GATE_PUSHER", "").strip() or None
    agents = [a for a in policy.agents if a.id in module.CATALOGUE]
    writer = writer_for((author.name, author.email), (committer.name, committer.email), pusher, agents)
    inp = PushInput(objects=Objects(repo), policy=policy, pusher=pusher or "", now=0, repository_id="",
                    server=ServerRefs(lambda _name: None))
    judged = judge(inp, Writes(current_branch(), [ProposedWrite(p, k, t) for p, k, t in writes], writer))
    if judged.verdict.exit_code == 0:
        return module.allow(call)
    lines = []
    for v in judged.violations:
        why = (v.evidence or "").split("; ")[0]  # the strongest reason (the rest are other marks of the same agent)
        lines.append(f"{v.code}: {v.path}: {v.detail} under rule {v.rule}, which restricts this agent's commits "
                     f"({why})")
    from gatecore import codes

    hint = codes.CODES["GATE-FROZEN-PATH"].hint
    reason = "\n".join(lines) + f"\nWhat to do: do not write {'it' if len(lines) == 1 else 'them'} from this " \
        f"session. {hint}" + "\n(push-gate's agent check: the server refuses the same commit at push; " \
        "docs/agent-hooks.md)"
    return module.deny(call, reason)


def parser() -> argparse.ArgumentParser:
    from gatecore.toolcalls.toolcall import AGENTS

    p = argparse.ArgumentParser(prog="gate agents check", description=(
        "A coding agent's pre-tool hook: read one tool call as JSON on stdin, refuse it in the agent's "
        "own format when the commit it would become writes a frozen path (docs/agent-hooks.md)."))
    p.add_argument("--agent", choices=AGENTS, default=None,
                   help="the agent whose payload this is (default: recognised from the payload's shape)")
    p.add_argument("--policy", default=None,
                   help=".gate/policy.toml as committed in HEAD, unless this file is given")
    return p


def _watchdog(module: list[Adapter], call: list[ToolCall]) -> threading.Timer:
    """Refuse the call if the check has not answered by the deadline (the process then ends)."""

    def expire() -> None:
        answer = (module[0].deny(call[0] if call else None, refusal(
            "GATE-AGENT-INTERNAL", f"the check did not finish within {DEADLINE_SECONDS:.0f} s"))
            if module else Answer("", f"GATE-AGENT-INTERNAL: the check did not finish within "
                                      f"{DEADLINE_SECONDS:.0f} s\n", 2))
        _emit(answer)
        os._exit(answer.exit_code)

    timer = threading.Timer(DEADLINE_SECONDS, expire)
    timer.daemon = True
    timer.start()
    return timer


def _emit(answer: Answer) -> None:
    if answer.stdout:
        sys.stdout.write(answer.stdout)
        sys.stdout.flush()
    if answer.stderr:
        sys.stderr.write(answer.stderr)
        sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """The one error boundary: every path that is not a proven allow answers with a refusal."""
    args = parser().parse_args(argv)
    module: list[Adapter] = []
    call: list[ToolCall] = []
    timer = _watchdog(module, call)
    try:
        if args.agent is not None:
            module.append(adapter(args.agent))
        payload = read_payload(sys.stdin.buffer.read())
        if not module:
            module.append(adapter(detect(payload)))
        call.append(module[0].read(payload))
        answer = judge_call(module[0], call[0], args.policy)
    except GateError as exc:
        code = exc.code if exc.code.startswith("GATE-AGENT-") else "GATE-AGENT-CONFIG"
        detail = exc.detail if code == exc.code else f"{exc.code}: {exc.detail}"
        answer = _refuse(module, call, refusal(code, detail))
    except Exception as exc:  # the boundary: an error of the gate's own refuses, never allows
        answer = _refuse(module, call, refusal("GATE-AGENT-INTERNAL", f"{type(exc).__name__}: {exc}"))
    timer.cancel()
    _emit(answer)
    return answer.exit_code


def _refuse(module: list[Adapter], call: list[ToolCall], reason: str) -> Answer:
    if module:
        return module[0].deny(call[0] if call else None, reason)
    from gatecore.toolcalls.claude import deny  # the agent is not known: the form most agents read

    return deny(None, reason)


if __name__ == "__main__":
    raise SystemExit(main())
