"""The receipt hook (`gate-review-receipt`) and the server agree on the trusted side's pushes,
without a transport: the hook (`python -m hooks.receipt_push`, its own process, on git's pre-push
input, in the runner's clone) and the engine (in process, on the same objects) give the same exit
status and codes: a failing verdict, review refs pushed by hand by an agent and by the runner, an
unknown pusher, a ledger not fetched, a committed HMAC keyring.

`tests/client/test_receipt_hook.py` runs the runner's own command through the pre-commit
framework and a real push: a good receipt, and the incident.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.engine import Decided, EngineLab
from support.gitutil import AGENT, HUMAN, git, git_env
from support.lab import BASIC_KEYS, RUNNER_USER, VERDICT
from support.precommit import CLIENT_POLICY, FETCH_LEDGER, Verdict

from gatecore.git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX

FAIL = json.dumps({"verdict": "fail", "reasons": ["breaks the build"]}).encode()  # a model that fails it
RUNNER_ENV = {"GATE_PUSHER": RUNNER_USER}


@dataclass
class Clone:
    """The runner's clone: the lab's work repository, its remote the lab's `EngineServer`."""

    lab: EngineLab

    @property
    def url(self) -> str:
        return f"file://{self.lab.server.bare}"

    def hook(self, lines: list[tuple[str, str, str, str]], env: dict[str, str], cwd: Path | None = None
             ) -> tuple[Verdict, str]:
        """The receipt hook on git's pre-push input: (its verdict, its output)."""
        stdin = "".join(" ".join(line) + "\n" for line in lines)
        out = subprocess.run([sys.executable, "-m", "hooks.receipt_push", "--repository-id", "demo/repo", "origin",
                              self.url], input=stdin, cwd=cwd or self.lab.work.path, capture_output=True, text=True,
                             env=git_env(HUMAN, **env))
        codes = {json.loads(ln[len("gate-json: "):]).get("code") for ln in out.stderr.splitlines()
                 if ln.startswith("gate-json: ")}
        return Verdict(out.returncode, frozenset(c for c in codes if c)), out.stderr

    def review_push(self, attempt: str, receipt: Path, env: dict[str, str]) -> tuple[Verdict, Decided, str]:
        """What `gate review push` sends (the reviewed commit to the review ref, a receipt commit on
        the local receipt ref), judged by the hook and by the engine."""
        lab = self.lab
        head = lab.receipt_doc(receipt)["new_commit"]
        ref = RECEIPTS_PREFIX + attempt
        commit = lab.receipt_commit(attempt, receipt.read_bytes())
        lab.work.git("update-ref", ref, commit)
        zero = lab.server.zero
        client, output = self.hook([(ref, commit, ref, lab.server.ref(ref) or zero),
                                    (head, head, REVIEW_PREFIX + attempt,
                                     lab.server.ref(REVIEW_PREFIX + attempt) or zero)], env)
        server = lab.server.push(f"+{head}:{REVIEW_PREFIX}{attempt}", f"{ref}:{ref}",
                                 pusher_env={"REMOTE_USER": env.get("GATE_PUSHER", "")})
        if not server.ok:
            lab.sync(ref)  # the command takes its receipt commit back
        return client, server, output


def verdict_of(out: Decided) -> Verdict:
    return Verdict(out.exit_code, frozenset(out.codes))


def runner_clone(root: Path, keyring: str | None = None) -> Clone:
    """A lab under the client policy whose main holds `.gate/policy.toml` and `.gate/keyring.toml`
    (the lab's public keys, or `keyring`), fetched into its clone as `git clone` leaves it."""
    lab = EngineLab(root, policy=CLIENT_POLICY, key_ids=BASIC_KEYS)
    w = lab.work
    w.git("checkout", "-q", "-f", "main")
    w.write(".gate/policy.toml", CLIENT_POLICY)
    w.write(".gate/keyring.toml", keyring or lab.keyring_text)  # public keys: what clients verify with
    w.commit("client policy", identity=HUMAN)
    assert lab.server.push("main").ok
    lab.base = w.head()
    w.git("remote", "add", "origin", f"file://{lab.server.bare}")
    w.git("update-ref", "refs/remotes/origin/main", lab.base)
    w.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    return Clone(lab)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Clone:
    return runner_clone(tmp_path_factory.mktemp("receipt-hook"))


def test_a_failing_verdict_is_refused_by_both(clone: Clone) -> None:
    lab = clone.lab
    attempt = lab.open(lab.fresh())
    receipt = lab.record(attempt, lab.change(f"fail-{attempt}"), output=FAIL)
    client, server, output = clone.review_push(attempt, receipt, RUNNER_ENV)
    assert client == verdict_of(server) == Verdict(1, frozenset({"GATE-VERDICT-FAIL"})), output


def test_the_stale_receipt_and_the_fresh_one(clone: Clone) -> None:
    lab = clone.lab
    attempt = lab.open(lab.fresh())
    head = lab.change(f"stale-{attempt}")
    stale = lab.record(attempt, head)
    assert lab.append(attempt, "failover", model_id="model-b").ok  # type: ignore[union-attr]
    client, server, output = clone.review_push(attempt, stale, RUNNER_ENV)
    assert client == verdict_of(server) == Verdict(1, frozenset({"GATE-BIND-MODEL", "GATE-BIND-LEDGER"})), output
    client, server, output = clone.review_push(attempt, lab.record(attempt, head, output=VERDICT), RUNNER_ENV)
    assert client == verdict_of(server) == Verdict(0, frozenset()), output


@pytest.mark.parametrize("who", ["agent", "runner"])
def test_a_review_ref_pushed_by_hand_is_refused_by_both(clone: Clone, who: str) -> None:
    """An agent may not push review refs; the runner may not push one without its receipt."""
    lab = clone.lab
    attempt = lab.open(lab.fresh())
    head = lab.change(f"by-hand-{who}-{attempt}")
    env = {"GATE_PUSHER": "agent-7"} if who == "agent" else RUNNER_ENV
    expected = {"GATE-REVIEW-PUSHER"} if who == "agent" else {"GATE-RECEIPT-MISSING"}
    client, _ = clone.hook([(head, head, REVIEW_PREFIX + attempt, lab.server.zero)], env)
    server = lab.server.push(f"+{head}:{REVIEW_PREFIX}{attempt}", pusher_env={"REMOTE_USER": env["GATE_PUSHER"]})
    assert client == verdict_of(server) == Verdict(1, frozenset(expected)), server.output


def test_an_unknown_pusher_is_treated_as_untrusted(clone: Clone) -> None:
    lab = clone.lab
    attempt = lab.open(lab.fresh())
    head = lab.change(f"unknown-{attempt}")
    client, output = clone.hook([(head, head, REVIEW_PREFIX + attempt, lab.server.zero)], {})
    assert client == Verdict(1, frozenset({"GATE-REVIEW-PUSHER"})), output
    assert "pusher (unknown: set GATE_PUSHER)" in output


def test_a_ledger_not_fetched_says_how_to_fetch_it(clone: Clone, tmp_path: Path) -> None:
    lab = clone.lab
    attempt = lab.open(lab.fresh())
    fresh = tmp_path / "clone"
    git(tmp_path, "clone", "-q", clone.url, str(fresh))  # branches only: no refs/gate/*
    git(fresh, "checkout", "-q", "-b", "work")
    (fresh / "src" / "app.py").write_text("print(3)\n")
    git(fresh, "commit", "-q", "-a", "-m", "x", identity=AGENT)
    head = git(fresh, "rev-parse", "HEAD").stdout.strip()
    line = [("HEAD", head, REVIEW_PREFIX + attempt, lab.server.zero)]
    client, output = clone.hook(line, RUNNER_ENV, cwd=fresh)
    assert client == Verdict(1, frozenset({"GATE-LEDGER-MISSING"})), output
    assert FETCH_LEDGER in output
    git(fresh, "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*")
    client, output = clone.hook(line, RUNNER_ENV, cwd=fresh)
    assert client == Verdict(1, frozenset({"GATE-RECEIPT-MISSING"})), output


def test_a_committed_hmac_keyring_is_refused(tmp_path: Path) -> None:
    """Clients verify with public keys only: an HMAC secret in the remote's .gate/keyring.toml is a
    configuration error, whatever the push."""
    clone = runner_clone(tmp_path, keyring='[[key]]\nid = "h"\nalgorithm = "hmac-sha256"\npurpose = "receipt"\n'
                                           'secret = "' + "A" * 43 + '="\n')
    lab = clone.lab
    attempt = lab.open(lab.fresh())
    head = lab.change(f"hmac-{attempt}")
    receipt = lab.record(attempt, head)
    commit = lab.receipt_commit(attempt, receipt.read_bytes())
    ref = RECEIPTS_PREFIX + attempt
    client, output = clone.hook([(ref, commit, ref, lab.server.zero),
                                 (head, head, REVIEW_PREFIX + attempt, lab.server.zero)], RUNNER_ENV)
    assert client == Verdict(2, frozenset({"GATE-CONFIG-KEYRING"})), output
    assert "public keys only" in output
