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

The ledger's lifecycle under load: six `gate ledger archive` runs at once over 24 closed
attempts, while an attacker re-opens each attempt by its own id and generation the moment
its ledger ref is gone: nothing is lost, nothing re-opens, the archive stays one
line of commits that only add entries, and a further run changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, git, git_env
from support.lab import LAB_POLICY, VERDICT, Lab, now
from support.net import git_daemon
from support.verdicts import codes_of

from gatecore.adapters.config import load_keyring
from gatecore.adapters.gitrepo import GitRepo
from gatecore.git.objects import Objects
from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
from gatecore.records import ledger
from gatecore.signing import envelope
from gatecore.trusted import attempts
from gatecore.trusted.runner import record_review

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
        record_review(w.path, attempt, lab.base, head, VERDICT, lab.keys["runner-1"], path, None, None, 3600,
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

    # Exactly one audit line per push that reached the server's hook, each naming its push's refs.
    # A race loser may not reach it: where the winner landed before the loser's connection read
    # the server's refs, git's client refuses the update itself ("[rejected] (fetch first)" or
    # "(non-fast-forward)"), sends nothing, and no hook runs: how many do is the machine's timing.
    reached = [p for p in pushes if p.out is not None and (p.out.returncode == 0 or "[remote rejected]" in p.out.stdout)]
    assert all(p in reached or p.race is not None for p in pushes)
    audit = lab.server.audit()[audit_before:]
    assert len(audit) == len(reached), (len(audit), len(reached), len(pushes))
    seen: dict[tuple[tuple[str, str], ...], int] = {}
    for line in audit:
        key = tuple(sorted((r["ref"], r["new"]) for r in line["refs"]))  # type: ignore[index, union-attr]
        seen[key] = seen.get(key, 0) + 1
    for p in pushes:
        key = tuple(sorted((dst, _resolve(lab, src)) for dst, src in p.targets().items()))
        if p not in reached:
            assert key not in seen and "[rejected]" in p.out.stdout, (p.name, p.out.stdout)  # type: ignore[union-attr]
            continue
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


# --- the ledger's lifecycle under load: archivers racing, and attempts re-opened by their own ids -----

ARCHIVERS = 6  # concurrent `gate ledger archive` runs, each from its own clone, as scheduled jobs overlap
ARCHIVE_ATTEMPTS = 24


def _closed_attempts(lab: Lab, n: int) -> dict[str, tuple[str, list[str]]]:
    """n attempts opened, reviewed (every third twice) and closed, in a few batched pushes:
    attempt -> (generation, sealed-payload digests of its receipts)."""
    import base64
    import hashlib

    runner = {"REMOTE_USER": "runner-1"}
    made = [lab.open() for _ in range(n)]
    digests: dict[str, list[str]] = {a: [] for a in made}
    heads: dict[str, str] = {}
    for round_ in range(2):
        refspecs = []
        for i, attempt in enumerate(made):
            if round_ == 1 and i % 3:
                continue
            head = lab.change(f"arch-load-{round_}-{attempt}", start=heads.get(attempt))
            path = lab.receipts / f"arch-load-{round_}-{attempt}.json"
            record_review(lab.work.path, attempt, lab.base, head, VERDICT, lab.keys["runner-1"], path, None,
                                 heads.get(attempt), 3600, now())
            data = path.read_bytes()
            commit = lab.receipt_commit(attempt, data)
            refspecs += [f"{head}:{REVIEW_PREFIX}{attempt}", f"{commit}:{RECEIPTS_PREFIX}{attempt}"]
            digests[attempt].append(hashlib.sha256(base64.b64decode(json.loads(data)["payload"])).hexdigest())
            heads[attempt] = head
        out = lab.server.push(*refspecs, pusher_env=runner, extra=("--atomic",))
        assert out.returncode == 0, out.stderr
    for attempt in made:
        lab.append(attempt, "closed", remote=False)
    out = lab.server.push(*(f"{ATTEMPTS_PREFIX}{a}:{ATTEMPTS_PREFIX}{a}" for a in made), pusher_env=runner,
                          extra=("--atomic",))
    assert out.returncode == 0, out.stderr
    states = {a: attempts.attempt_state(GitRepo.at(lab.work.path), a, now()) for a in made}
    return {a: (s.workspace_generation, digests[a]) for a, s in states.items() if s is not None}


def _reopen_commits(lab: Lab, made: dict[str, tuple[str, list[str]]]) -> dict[str, list[str]]:
    """For each attempt, the refspecs that would open it again with its own id and generation."""
    repo = GitRepo.at(lab.work.path)
    out = {}
    for attempt, (generation, _) in made.items():
        data = ledger.make_record(lab.keys["orch-1"], None, attempt_id=attempt, kind="opened", repository="demo/repo",
                                  now=now(), workspace="ws-again", workspace_generation=generation,
                                  prompt_sha256="0" * 64)
        commit = attempts.record_commit(repo, ledger.RECORD_FILE, data, None, "reopen\n", now())
        out[attempt] = [f"+{commit}:{ATTEMPTS_PREFIX}{attempt}", f"+{commit}:{generation_ref(generation)}"]
    return out


def test_concurrent_archive_runs_through_git_daemon_lose_nothing(tmp_path: Path) -> None:
    """Six `gate ledger archive` runs at once through `git daemon` (batches of 3, so their archive
    pushes and deletions interleave and collide), while an attacker with the orchestrator's key
    pushes, without --atomic, an "opened" record with each attempt's own id and generation the
    moment its ledger ref is gone. Afterwards: every attempt is archived with its generation and
    every receipt, none of its refs is left, no attempt was opened twice, the archive is one line
    of commits that only added entries, and a further run changes nothing."""
    from gatecore.records import archive as archive_mod

    lab = Lab(tmp_path / "archive-load", policy=POLICY, key_ids=("orch-1", "runner-1"))
    made = _closed_attempts(lab, ARCHIVE_ATTEMPTS)
    assert len(made) == ARCHIVE_ATTEMPTS
    reopen = _reopen_commits(lab, made)
    clones = []
    for i in range(ARCHIVERS):
        clone = tmp_path / f"archiver-{i}"
        git(tmp_path, "init", "-q", str(clone))
        clones.append(clone)
    audit_before = len(lab.server.audit())
    reopened: dict[str, subprocess.CompletedProcess[str]] = {}
    with git_daemon(lab.root, {"REMOTE_USER": "runner-1"}, "--max-connections=0") as base:
        url = f"{base}/server.git"
        started = time.monotonic()
        runs = [subprocess.Popen([sys.executable, "-m", "gatecore.cli", "ledger", "archive", "--repo", str(clone),
                                  "--remote", url, "--older-than", "0", "--batch", "3"], env=git_env(HUMAN),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for clone in clones]

        def attack() -> None:
            listed = git(lab.work.path, "ls-remote", url, f"{ATTEMPTS_PREFIX}*").stdout.split()[1::2]
            for attempt in sorted(set(made) - {n[len(ATTEMPTS_PREFIX):] for n in listed} - set(reopened)):
                reopened[attempt] = git(lab.work.path, "push", "--porcelain", url, *reopen[attempt], check=False)

        while True:
            over = all(r.poll() is not None for r in runs)
            attack()
            if over:
                break
            time.sleep(0.05)
        outputs = [r.communicate(timeout=WALL_LIMIT_SECONDS) for r in runs]
        elapsed = time.monotonic() - started
        final = subprocess.run([sys.executable, "-m", "gatecore.cli", "ledger", "archive", "--repo", str(clones[0]),
                                "--remote", url, "--older-than", "0"], env=git_env(HUMAN), capture_output=True,
                               text=True, timeout=WALL_LIMIT_SECONDS)
        attack()  # what the final run archived (if anything) is attacked too
        again = subprocess.run([sys.executable, "-m", "gatecore.cli", "ledger", "archive", "--repo",
                                str(clones[1]), "--remote", url, "--older-than", "0"], env=git_env(HUMAN),
                               capture_output=True, text=True, timeout=WALL_LIMIT_SECONDS)
    for r, (stdout, stderr) in zip(runs, outputs, strict=True):
        assert r.returncode in (0, 1) and "GATE-HOOK-INTERNAL" not in stderr and "Traceback" not in stderr, stderr
        assert "archived" in stdout, stdout + stderr
    assert final.returncode == 0, final.stdout + final.stderr
    assert again.returncode == 0 and "archived 0 attempt(s) in 0 push(es)" in again.stdout, again.stdout + again.stderr

    # Nothing lost: every attempt in the archive, with its generation and every receipt; none of its refs left.
    refs = lab.snapshot()
    tip = refs[archive_mod.ARCHIVE_REF]
    git(lab.work.path, "fetch", "-q", lab.remote(), f"+{archive_mod.ARCHIVE_REF}:{archive_mod.ARCHIVE_REF}")
    held = archive_mod.Archive(Objects(GitRepo.at(lab.work.path)), tip)
    for attempt, (generation, receipts) in made.items():
        assert held.attempt(attempt) and held.generation(generation), attempt
        assert all(held.receipt(d) for d in receipts), attempt
        assert not {ATTEMPTS_PREFIX + attempt, RECEIPTS_PREFIX + attempt, REVIEW_PREFIX + attempt,
                    generation_ref(generation)} & set(refs), attempt
    # The attack never landed: each reopening push was refused by the gate, every ref of it.
    assert set(reopened) == set(made)
    for attempt, out in reopened.items():
        assert out.returncode != 0, (attempt, out.stdout)
    assert not any(n.startswith((ATTEMPTS_PREFIX, "refs/gate/generations/")) for n in refs), refs
    # The archive is one line of commits, each adding entries only.
    history = git(lab.server.bare, "rev-list", "--parents", tip).stdout.splitlines()
    assert all(len(line.split()) <= 2 for line in history)
    for line in history:
        commit, *parent = line.split()
        if parent:
            changes = git(lab.server.bare, "diff-tree", "-r", "--no-renames", "--name-status", parent[0],
                          commit).stdout.splitlines()
            assert changes and all(c.startswith("A\t") for c in changes), changes
    entries = git(lab.server.bare, "ls-tree", "-r", "--name-only", tip).stdout.split()
    assert len(entries) == 2 * len(made) + sum(len(r) for _, r in made.values())
    fsck = git(lab.server.bare, "fsck", "--no-dangling", check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    audit = lab.server.audit()[audit_before:]
    pushes = [int(m) for stdout, _ in outputs for m in re.findall(r"in (\d+) push", stdout)]
    print(f"\n{ARCHIVERS} archive runs at once, {ARCHIVE_ATTEMPTS} attempts ({sum(len(r) for _, r in made.values())} "
          f"receipts): {elapsed:.1f}s; {sum(pushes)} pushes by the runs, {len(audit)} hook decisions "
          f"({sum(1 for a in audit if a['decision'] == 'accept')} accepted, "
          f"{sum(1 for a in audit if a['decision'] == 'reject')} rejected, of them {len(reopened)} reopenings); "
          f"runs exiting 1 (reported what they left for the next run): {sum(1 for r in runs if r.returncode)}; "
          f"{len(history)} archive commits; hook time max {max(float(a['elapsed_ms']) for a in audit):.0f} ms")  # type: ignore[arg-type]
