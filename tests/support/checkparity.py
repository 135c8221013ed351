"""The hook and `gate check` on the same change (issue 49; docs/forges.md, "What changes from the hook").

A pushed ref update and a pull request are two shapes of one change: a branch moving from `old` to
`new`, and `new` landing on that branch from its merge base with the branch's tip. `CheckedServer`
is the in-process tier's gated server (`support.engine.EngineServer`: the hook's own `judge`) that
also asks `gate check` about every update it decides, on a CI clone of the server as it stood before
the push, and fails the test when the two disagree on the exit code or on the set of (code, path,
rule) they report:

    gate check --repo CI --head NEW --target OLD-or-main --ref REF --pusher WHO --policy/--keyring (the server's)

The CI clone (`ci_clone`) holds the work repository's objects (through `objects/info/alternates`:
a forge holds every pushed commit, as no hook refused it) and the server's refs as a fetch leaves
them: its branches under `refs/remotes/origin/`, and `refs/gate/*`.

An update without a pull request's form is not compared; `unpaired` says why (`NO_PR_FORM`), and the
tests hold each family to the reasons they expect.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatecore.adapters import environment
from gatecore.findings import Violation
from gatecore.git.refs import RESERVED_PARENTS, REVIEW_PREFIX, RefUpdate, parse_pre_receive

from .cli import cli
from .engine import Decided, EngineLab, EngineServer
from .gitutil import WorkRepo, git
from .lab import LAB_POLICY

#: (code, path, rule) of every violation a judgement reports, or (code, None, None) for an error.
Found = frozenset[tuple[str, str | None, str | None]]

#: Why an update has no pull request's form, so the check is not asked about it.
NO_PR_FORM = {
    "delete": "a deletion: a pull request brings commits onto its target, it deletes no branch",
    "force": "a non-fast-forward: a pull request lands from its merge base with the target's tip, so it never "
             "rewinds the target (GATE-REF-FORCE, GATE-FROZEN-REF and a rewind's discarded frozen changes are the "
             "hook's alone; the forge's own branch protection refuses force pushes)",
    "not-a-branch": "not a branch: a pull request lands on refs/heads/*; tags, refs/gate/* and other namespaces "
                    "land unjudged on a forge (docs/forges.md)",
    "review": "a review ref: the check judges it as it stands, from its receipt chain and the closed ledger, not "
              "as an update (tests/forges/test_receipt_flow.py)",
    "reserved-parent": "refs/heads/review/runner itself: the hook refuses it as a reserved name; no pull request "
                       "targets it",
    "first": "a first push: no target branch to merge into yet",
    "symbolic": "a symbolic ref on the server: a forge's branches are not symbolic",
    "stale-old": "an old value the server does not hold: the hook refuses what git would refuse too; a pull "
                 "request's base is read from the clone",
    "not-a-commit": "a branch at an object that is not a commit: git hosting refuses it; a pull request's head is "
                    "a commit",
}


@dataclass(frozen=True)
class Judgement:
    exit_code: int
    found: Found

    def __str__(self) -> str:
        return f"exit {self.exit_code}: {sorted(self.found, key=repr)}"


def of_violations(exit_code: int, violations: Sequence[Violation], codes: Sequence[str]) -> Judgement:
    found = {(v.code, v.path, v.rule) for v in violations} if violations else {(c, None, None) for c in codes}
    return Judgement(exit_code, frozenset(found))


def of_gate_json(exit_code: int, text: str) -> Judgement:
    """The hook's judgement as its gate-json lines give it (a real push's `remote: ` lines)."""
    found = set()
    for raw in text.splitlines():
        line = raw.removeprefix("remote: ").strip()
        if line.startswith("gate-json: "):
            doc = json.loads(line[len("gate-json: "):])
            assert "truncated" not in doc, "a capped report: compare an uncapped one"
            found.add((doc["code"], doc.get("path"), doc.get("rule")))
    return Judgement(exit_code, frozenset(found))


def of_check(out: subprocess.CompletedProcess[str]) -> Judgement:
    """`gate check --format json`'s judgement: its violations, or the error it could not decide for."""
    doc = json.loads(out.stdout)
    assert doc["exit"] == out.returncode, out
    if doc["decision"] == "error":
        return Judgement(out.returncode, frozenset({(doc["code"], None, None)}))
    return Judgement(out.returncode, frozenset((v["code"], v.get("path"), v.get("rule")) for v in doc["violations"]))


def of_push(out: subprocess.CompletedProcess[str]) -> Judgement:
    """A real push's judgement: accepted (0), or the worst exit its gate-json lines name, and what they list."""
    lines = of_gate_json(0, out.stderr)
    if out.returncode == 0:
        return lines
    exits = [json.loads(ln.split("gate-json: ", 1)[1]).get("exit", 1) for ln in out.stderr.splitlines()
             if "gate-json: " in ln]
    return Judgement(max(exits, default=1), lines.found)


def combined(judgements: Sequence[Judgement]) -> Judgement:
    """Pull requests for each branch of one push, as the push's one verdict: the worst exit, every finding."""
    return Judgement(max(j.exit_code for j in judgements), frozenset().union(*(j.found for j in judgements)))


def ci_clone(path: Path, work: WorkRepo, object_format: str) -> Path:
    """A CI job's clone: the work repository's objects (a forge keeps whatever was pushed), no refs yet."""
    git(path.parent, "init", "-q", f"--object-format={object_format}", str(path))
    (path / ".git" / "objects" / "info" / "alternates").write_text(f"{work.path / '.git' / 'objects'}\n")
    return path


def fetch_into(ci: Path, refs: dict[str, str]) -> None:
    """The clone's refs := what a fetch of the server's `refs` leaves: branches as origin's, refs/gate/*."""
    wanted = {}
    for name, oid in refs.items():
        if name.startswith("refs/heads/"):
            wanted[f"refs/remotes/origin/{name[len('refs/heads/'):]}"] = oid
        elif name.startswith("refs/gate/"):
            wanted[name] = oid
    have = git(ci, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/", "refs/gate/").stdout.split()
    lines = [f"delete {name}" for name in have if name not in wanted]
    lines += [f"update {name} {oid}" for name, oid in wanted.items()]
    git(ci, "update-ref", "--stdin", input=("\n".join(["start", *lines, "commit"]) + "\n").encode())


def no_pr_form(u: RefUpdate, before: dict[str, str], bare: Path) -> str | None:
    """Which `NO_PR_FORM` reason keeps `u` from being a pull request (None: it is one)."""
    if u.is_delete:
        return "delete"
    if u.ref in RESERVED_PARENTS:
        return "reserved-parent"
    if u.ref.startswith(REVIEW_PREFIX):
        return "review"
    if not u.ref.startswith("refs/heads/"):
        return "not-a-branch"
    if git(bare, "symbolic-ref", "-q", u.ref, check=False).returncode == 0:
        return "symbolic"
    if git(bare, "cat-file", "-t", u.new, check=False).stdout.strip() != "commit":
        return "not-a-commit"
    if not u.is_create:
        if before.get(u.ref) != u.old:
            return "stale-old"
        if git(bare, "merge-base", "--is-ancestor", u.old, u.new, check=False).returncode != 0:
            return "force"
    elif "refs/heads/main" not in before:
        return "first"
    return None


def check_update(ci: Path, u: RefUpdate, before: dict[str, str], pusher: str, policy: Path, keyring: Path | None,
                 repository_id: str) -> subprocess.CompletedProcess[str]:
    """`gate check` of `u` as the pull request of `u.new` onto `u.ref` (a new branch: onto main)."""
    target = before.get(u.ref) or before["refs/heads/main"]
    args = ["check", "--repo", str(ci), "--format", "json", "--head", u.new, "--target", target, "--ref", u.ref,
            "--pusher", pusher, "--policy", str(policy), "--repository-id", repository_id]
    if keyring is not None:
        args += ["--keyring", str(keyring)]
    return cli(*args)


#: Every `CheckedServer` made in this process, for a test's accounting of what it compared.
SERVERS: list[CheckedServer] = []


class CheckedServer(EngineServer):
    """An `EngineServer` whose every decided push is also judged by `gate check` (module docstring)."""

    def __init__(self, root: Path, policy: str = LAB_POLICY, keyring: str | None = None, **kw: Any) -> None:
        self.config_dir = root / "check-config"
        self.config_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(root, policy, keyring, **kw)
        self.ci = ci_clone(root / "ci", self.work, kw.get("object_format", "sha1"))
        self.compared: list[Judgement] = []  # each push compared: the judgement both gave
        self.unpaired: list[str] = []  # the NO_PR_FORM key of each update not compared
        SERVERS.append(self)

    def set_policy(self, text: str) -> None:
        super().set_policy(text)
        self.policy_text = text
        (self.config_dir / "policy.toml").write_text(text)

    def set_keyring(self, text: str | None) -> None:
        super().set_keyring(text)
        path = self.config_dir / "keyring.toml"
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(text)

    def raw(self, updates: Sequence[tuple[str, str, str]], pusher_env: dict[str, str] | None = None) -> Decided:
        listed = git(self.bare, "for-each-ref", "--format=%(refname) %(objectname)").stdout  # (a dangling symref: none)
        before = dict(line.split(" ") for line in listed.splitlines())
        decided = super().raw(updates, pusher_env)
        if self.faults is None:
            self.compare(updates, pusher_env or {}, before, decided)
        return decided

    def compare(self, updates: Sequence[tuple[str, str, str]], pusher_env: dict[str, str], before: dict[str, str],
                decided: Decided) -> None:
        data = "".join(f"{old} {new} {ref}\n" for old, new, ref in updates).encode("utf-8", "surrogateescape")
        live = [u for u in parse_pre_receive(data) if not u.is_noop]
        reasons = [why for u in live if (why := no_pr_form(u, before, self.bare)) is not None]
        if reasons or not live:
            self.unpaired += reasons
            return
        # the account as the platform names it (the hook reads REMOTE_USER; a forge, github.actor)
        pusher = pusher_env.get("REMOTE_USER") or environment.read_hook_env(
            "auto", {"GIT_DIR": str(self.bare)}).pusher
        fetch_into(self.ci, before)
        keyring = self.config_dir / "keyring.toml"
        checks = [check_update(self.ci, u, before, pusher, self.config_dir / "policy.toml",
                               keyring if keyring.exists() else None, self.repository_id) for u in live]
        hook = of_violations(decided.exit_code, decided.violations, decided.codes)
        check = combined([of_check(out) for out in checks])
        assert hook == check, (f"the hook and gate check disagree on {[u.ref for u in live]} (pusher {pusher!r}):\n"
                               f"  hook:  {hook}\n  check: {check}\n" + "\n".join(o.stdout + o.stderr for o in checks))
        self.compared.append(hook)


class CheckedLab(EngineLab):
    """`EngineLab` over a `CheckedServer`."""

    server: CheckedServer  # type: ignore[assignment]

    def make_server(self, root: Path, policy: str, extra: tuple[str, ...]) -> CheckedServer:  # type: ignore[override]
        assert not extra, "an engine server installs nothing: pass its options to CheckedServer"
        return CheckedServer(root, policy, self.keyring_text)
