"""Load: many concurrent pushes into one repository through `git daemon` on 127.0.0.1.

Mixed accepts and rejects over several refs and all three kinds of pusher (one daemon per
account, each passing its REMOTE_USER to the hook): humans' branches and tags, agents'
frozen-path writes and harmless changes, agents at the ledger, the runner opening attempts,
pushing fresh and stale reviews, and three failovers of one attempt racing from the same
ledger tip. Checked afterwards: every decision, exactly one audit line per push, every
ledger chain verifies, no generation is used twice, git fsck is clean.

The default run is 37 pushes, 32 in flight at once; GATE_LONG_TESTS=1 adds a run four times as large
(148 pushes; both keep 32 in flight: with many more, on two cores, hooks pass the gate's fixed 4-second
start-up deadline and reject - see docs/security.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, git, git_env
from support.lab import LAB_POLICY, VERDICT, Lab, now
from support.net import git_daemon
from support.verdicts import codes_of

from gatecore import envelope, ledger
from gatecore.adapters.config import load_keyring
from gatecore.adapters.gitrepo import GitRepo
from gatecore.objects import Objects
from gatecore.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
from gatecore.trusted import attempts, review

#: A generous deadline: this test is about decisions under contention, not about the
#: 4-second default (see docs/security.md for what contention does to that).
POLICY = LAB_POLICY + "[limits]\ndeadline_seconds = 60\n"
WALL_LIMIT_SECONDS = 240  # a push that takes longer is stuck: the test ends rather than hang
#: What the gate may answer a racing push whose rival landed first.
LOST_RACE = {"GATE-REF-STALE", "GATE-LEDGER-GENERATION-REUSED"}
USERS = {"human": "hana", "agent": "agent-1", "runner": "runner-1"}


@contextlib.contextmanager
def daemons(root: Path) -> Iterator[dict[str, str]]:
    """One `git daemon --enable=receive-pack` per account; the hook reads REMOTE_USER from it."""
    with contextlib.ExitStack() as stack:
        yield {kind: stack.enter_context(git_daemon(root, {"REMOTE_USER": user}, "--max-connections=0"))
               + "/server.git" for kind, user in USERS.items()}


@dataclass
class Push:
    name: str
    daemon: str  # human | agent | runner
    refspecs: list[str]
    accept: bool
    codes: set[str] = field(default_factory=set)
    atomic: bool = False
    race: str | None = None  # the pushes of one race group: exactly one lands
    proc: subprocess.Popen[str] | None = None
    out: subprocess.CompletedProcess[str] | None = None

    def targets(self) -> dict[str, str]:
        return {dst: src for src, dst in (r.lstrip("+").split(":") for r in self.refspecs)}


def _resolve(lab: Lab, rev: str) -> str:
    return git(lab.work.path, "rev-parse", rev).stdout.strip()


def plan(lab: Lab, scale: int) -> list[Push]:
    """Prepare every push (objects, ledger records, receipts) before any of them starts."""
    w, pushes = lab.work, []
    # Attempts for the runner's reviews: opened and model-selected on the server beforehand.
    fresh = [lab.open() for _ in range(4 * scale)]
    stale = [lab.open() for _ in range(4 * scale)]
    racing = [lab.open() for _ in range(scale)]
    repo = GitRepo.at(w.path)
    stale_receipts = {}
    for attempt in stale:  # model-a scores, then the attempt fails over (pushed before the load)
        head = lab.change(f"load-stale-{attempt}")
        stale_receipts[attempt] = (head, lab.record(attempt, head))
        lab.append(attempt, "failover", remote=False, model_id="model-b")
    out = lab.server.push(*(f"{ATTEMPTS_PREFIX}{a}:{ATTEMPTS_PREFIX}{a}" for a in stale),
                          pusher_env={"REMOTE_USER": "runner-1"}, extra=("--atomic",))
    assert out.returncode == 0, out.stderr
    for i in range(8 * scale):
        head = lab.change(f"load-h{i}", {f"src/h{i}.py": "human\n", "ci/deploy.yml": f"human {i}\n"}, identity=HUMAN)
        pushes.append(Push(f"human-{i}", "human", [f"{head}:refs/heads/load/h{i}", f"{head}:refs/tags/load-v{i}"],
                           True))
    for i in range(6 * scale):
        head = lab.change(f"load-af{i}", {"ci/deploy.yml": f"agent {i}\n"}, identity=AGENT)
        pushes.append(Push(f"agent-frozen-{i}", "agent", [f"{head}:refs/heads/load/af{i}"], False,
                           {"GATE-FROZEN-PATH"}))
    for i in range(6 * scale):
        head = lab.change(f"load-ao{i}", {f"src/a{i}.py": "agent\n"}, identity=AGENT)
        pushes.append(Push(f"agent-ok-{i}", "agent", [f"{head}:refs/heads/load/ao{i}"], True))
    for i, attempt in enumerate(fresh):
        head = lab.change(f"load-review-{attempt}")
        path = lab.receipts / f"load-{attempt}.json"
        review.record_review(w.path, attempt, lab.base, head, VERDICT, lab.keys["runner-1"], path, None, None, 3600,
                             now())
        commit = lab.receipt_commit(attempt, path.read_bytes())
        pushes.append(Push(f"review-{i}", "runner", [f"{head}:{REVIEW_PREFIX}{attempt}",
                                                     f"{commit}:{RECEIPTS_PREFIX}{attempt}"], True, atomic=True))
    for i, attempt in enumerate(stale):
        head, path = stale_receipts[attempt]
        commit = lab.receipt_commit(attempt, path.read_bytes())
        pushes.append(Push(f"stale-review-{i}", "runner", [f"{head}:{REVIEW_PREFIX}{attempt}",
                                                           f"{commit}:{RECEIPTS_PREFIX}{attempt}"], False,
                           {"GATE-BIND-MODEL"}, atomic=True))
    for i in range(4 * scale):
        attempt = lab.fresh("load-open")
        lab.append(attempt, "opened", remote=False, **lab.open_fields(attempt))
        pushes.append(Push(f"open-{i}", "runner", lab.open_refspecs(attempt), True, atomic=True))
    for group in range(scale):  # 32 opens claiming one generation: git's ref transaction lands one
        shared = f"g-shared-{group}-{lab.fresh()}"
        for _ in range(32):
            attempt = lab.fresh(f"load-twin{group}")
            lab.append(attempt, "opened", remote=False, **lab.open_fields(attempt, shared))
            pushes.append(Push(f"twin-{attempt}", "runner", lab.open_refspecs(attempt), True, atomic=True,
                               race=generation_ref(shared)))
    for i in range(2 * scale):
        head = lab.change(f"load-al{i}", {"record.json": "{}\n"}, identity=AGENT)
        pushes.append(Push(f"agent-ledger-{i}", "agent", [f"{head}:{ATTEMPTS_PREFIX}agent-{i}"], False,
                           {"GATE-LEDGER-PUSHER"}))
    for attempt in racing:  # three failovers from the same tip: the gate may accept all, git lands one
        state = attempts.attempt_state(repo, attempt, now())
        tip = _resolve(lab, ATTEMPTS_PREFIX + attempt)
        for j, model in enumerate(("model-b", "model-c", "model-d")):
            data = ledger.make_record(lab.keys["orch-1"], state, attempt_id=attempt, kind="failover",
                                      repository="demo/repo", model_id=model, now=now())
            commit = attempts.record_commit(repo, ledger.RECORD_FILE, data, tip, "failover\n", now())
            pushes.append(Push(f"race-{attempt}-{j}", "runner", [f"{commit}:{ATTEMPTS_PREFIX}{attempt}"], True,
                               race=ATTEMPTS_PREFIX + attempt))
    # The racing failovers first, so that each race group starts together in any window.
    return sorted(pushes, key=lambda p: p.race is None)


def finish(p: Push) -> None:
    assert p.proc is not None
    stdout, stderr = p.proc.communicate(timeout=WALL_LIMIT_SECONDS)
    p.out = subprocess.CompletedProcess(p.proc.args, p.proc.returncode, stdout, stderr)


def run_load(tmp_path: Path, scale: int, in_flight: int | None = None) -> None:
    lab = Lab(tmp_path / "load", policy=POLICY)
    pushes = plan(lab, scale)
    assert len(pushes) >= 32 * scale
    audit_before = len(lab.server.audit())
    refs_before = lab.snapshot()
    with daemons(lab.root) as urls:
        started = time.monotonic()
        window = in_flight or len(pushes)
        for i, p in enumerate(pushes):
            if i >= window:  # keep at most `window` pushes in flight
                finish(pushes[i - window])
            args = ["git", "push", "--porcelain", *(["--atomic"] if p.atomic else []), urls[p.daemon], *p.refspecs]
            p.proc = subprocess.Popen(args, cwd=lab.work.path, env=git_env(HUMAN), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
        for p in pushes:
            if p.out is None:
                finish(p)
        elapsed = time.monotonic() - started
    refs = lab.snapshot()

    # Every decision right.
    for p in pushes:
        assert p.out is not None
        if p.race is not None:
            continue
        if p.accept:
            assert p.out.returncode == 0, (p.name, p.out.stdout + p.out.stderr)
            for dst, src in p.targets().items():
                assert refs[dst] == _resolve(lab, src), (p.name, dst)
        else:
            assert p.out.returncode != 0 and "pre-receive hook declined" in p.out.stdout, (p.name, p.out.stdout)
            assert p.codes <= codes_of(p.out), (p.name, codes_of(p.out))
            for dst in p.targets():
                assert refs.get(dst) == refs_before.get(dst), (p.name, dst)
    for race in {p.race for p in pushes if p.race}:
        group = [p for p in pushes if p.race == race]
        landed = [p for p in group if p.out is not None and p.out.returncode == 0]
        assert len(landed) == 1, [(p.name, p.out.stdout if p.out else None) for p in group]
        if race.startswith(ATTEMPTS_PREFIX):
            assert refs[race] == _resolve(lab, landed[0].refspecs[0].split(":")[0])
        else:  # the generation claim points at the winner's first record
            assert refs[race] == _resolve(lab, landed[0].refspecs[1].split(":")[0])
        for p in group:  # the losers lost to git's compare-and-swap, or (once the winner landed) to the gate
            assert p is landed[0] or (p.out is not None and codes_of(p.out) <= LOST_RACE), p.out

    # Exactly one audit line per push, each naming its push's refs.
    audit = lab.server.audit()[audit_before:]
    assert len(audit) == len(pushes)
    seen: dict[tuple[tuple[str, str], ...], int] = {}
    for line in audit:
        key = tuple(sorted((r["ref"], r["new"]) for r in line["refs"]))  # type: ignore[index, union-attr]
        seen[key] = seen.get(key, 0) + 1
    for p in pushes:
        key = tuple(sorted((dst, _resolve(lab, src)) for dst, src in p.targets().items()))
        assert seen.get(key) == 1, (p.name, key)
        line = next(a for a in audit if tuple(sorted((r["ref"], r["new"]) for r in a["refs"])) == key)  # type: ignore[index, union-attr]
        if p.race is None:
            assert (line["decision"] == "accept") == p.accept, (p.name, line)

    # The ledger consistent: every chain verifies, one model per racing attempt, no generation twice.
    bare = GitRepo.at(lab.server.bare)
    keyring = load_keyring(lab.server.gate_dir / "keyring.toml")
    generations: dict[str, str] = {}
    for name, tip in refs.items():
        if name.startswith(ATTEMPTS_PREFIX):
            attempt = name[len(ATTEMPTS_PREFIX):]
            state = ledger.read_state(Objects(bare), tip, keyring, now(), attempt)
            assert state.workspace_generation not in generations, (attempt, generations)
            generations[state.workspace_generation] = attempt
            assert refs[generation_ref(state.workspace_generation)] == state.root
            if name in {p.race for p in pushes}:
                assert state.seq == 2 and state.model_id in ("model-b", "model-c", "model-d")
    # Every accepted review carries its receipt, bound to the ledger's model record.
    for p in pushes:
        if p.name.startswith("review-"):
            attempt = p.refspecs[0].split(REVIEW_PREFIX)[1]
            data = git(lab.server.bare, "show", f"{RECEIPTS_PREFIX}{attempt}:receipt.json").stdout.encode()
            doc = json.loads(envelope.parse(data).payload)
            state = ledger.read_state(Objects(bare), refs[ATTEMPTS_PREFIX + attempt], keyring, now(), attempt)
            assert doc["ledger_record"] == state.model_record and doc["new_commit"] == refs[REVIEW_PREFIX + attempt]
    fsck = git(lab.server.bare, "fsck", "--no-dangling", check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    print(f"\n{len(pushes)} pushes ({window} in flight) in {elapsed:.1f}s; "
          f"{sum(1 for a in audit if a['decision'] == 'accept')} accepted, "
          f"{sum(1 for a in audit if a['decision'] == 'reject')} rejected; "
          f"hook time max {max(float(a['elapsed_ms']) for a in audit):.0f} ms")  # type: ignore[arg-type]


def test_concurrent_pushes_through_git_daemon(tmp_path: Path) -> None:
    run_load(tmp_path, 1, in_flight=32)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("GATE_LONG_TESTS") != "1", reason="long load run: set GATE_LONG_TESTS=1")
def test_concurrent_pushes_through_git_daemon_long(tmp_path: Path) -> None:
    run_load(tmp_path, 4, in_flight=32)
