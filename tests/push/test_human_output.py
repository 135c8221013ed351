"""Output people read (the failure it guards against: `gate attempt show` printed epoch seconds, Python tuples and
`None`; `gate review record --push` ended with git's raw push output and no line of its own). The
state is shown in dates and words (values with --json); every trusted command that pushes ends
with a summary line (accepted or refused, what and where); git's own output only with -v, while
a refusal still shows the server's lines (the codes)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.cases.archive import reviewed_and_closed
from support.cli import cli
from support.lab import LAB_POLICY, RUNNER, Lab

from gatecore.records import archive


def test_attempt_show_in_dates_and_words(lab: Lab) -> None:
    attempt = lab.open(lab.fresh())
    result = lab.append(attempt, "failover", model_id="model-b")
    assert result is not None and result.ok
    shown = cli("attempt", "show", "--repo", str(lab.work.path), "--attempt", attempt)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert not re.search(r"\b1\d{9}\b", text), text  # no epoch seconds
    assert "None" not in text and "('" not in text and "closed: False" not in text, text
    assert f"attempt: {attempt} of repository demo/repo, open" in text, text
    assert "models on record: model-a, then model-b (failover)" in text, text
    assert re.search(rf"ledger: 3 record\(s\) on refs/gate/attempts/{attempt}, the last written "
                     r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text), text
    assert "seals: not verified (give --keyring" in text, text
    state = json.loads(cli("attempt", "show", "--repo", str(lab.work.path), "--attempt", attempt, "--json").stdout)
    assert state["models"] == ["model-a", "model-b"] and isinstance(state["updated"], int)


def test_attempt_show_reads_model_ids_with_the_servers_policy_when_it_has_one(lab: Lab, tmp_path: Path) -> None:
    """`gate attempt show` called `model-a` "placed by no naming scheme; vendor unknown" although the
    server's policy names it in [review.models]. Without a policy it says the server decides; with
    `--policy`, or the repository's committed `.gate/policy.toml`, it reads the id as that policy does."""
    attempt = lab.open(lab.fresh())
    show = ["attempt", "show", "--repo", str(lab.work.path), "--attempt", attempt]
    lines = cli(*show).stdout.splitlines()
    assert lines[1].startswith("reviewer: model-a, placed by no naming scheme: ") and lines[1].endswith(
        "vendor unknown (read without the server's policy: its [review.models] may name it; the server decides)")
    assert lines[3].startswith("model ids read by the packaged naming schemes and vendor table only; the server "
                               "reads them with its policy"), lines
    policy = tmp_path / "policy.toml"
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n[review.models]\n"model-a" = "model-a"\n')
    lines = cli(*show, "--policy", str(policy)).stdout.splitlines()
    assert lines[1] == "reviewer: model-a, read as model-a; vendor unknown", lines
    assert lines[3] == (f"model ids read with the policy {policy} ([review] independent = model), as a server "
                        "holding that policy reads them")
    # the client hooks' copy of the server's policy, committed: read without --policy
    lab.work.write(".gate/policy.toml", policy.read_text())
    lab.work.commit("the client hooks' policy")
    lines = cli(*show).stdout.splitlines()
    assert lines[1] == "reviewer: model-a, read as model-a; vendor unknown", lines
    assert lines[3].startswith(f"model ids read with the policy .gate/policy.toml at HEAD of {lab.work.path} "), lines


def test_trusted_pushes_end_with_a_summary_and_show_gits_output_only_with_v(lab: Lab, tmp_path: Path) -> None:
    model = tmp_path / "model.json"
    model.write_text('{"verdict": "pass", "reasons": ["fine"]}')
    key = str(lab.root / "keys" / "runner-1.key")

    def review(attempt: str, *extra: str) -> tuple[int, list[str]]:
        head = lab.change(f"out-{attempt}")
        out = cli("review", "record", "--repo", str(lab.work.path), "--attempt", attempt, "--head", head,
                  "--model-output", str(model), "--key", key, "--out", str(tmp_path / f"{attempt}.json"),
                  "--remote", lab.remote(), "--push", *extra, env=RUNNER)
        return out.returncode, out.stderr.splitlines()

    attempt = lab.open()
    code, lines = review(attempt)
    assert code == 0, lines
    assert lines[-1] == (f"review ref refs/heads/review/runner/{attempt} accepted by {lab.remote()}, receipt "
                         f"{attempt}.json recorded on refs/gate/receipts/{attempt}"), lines
    assert not any(line.startswith(("To ", "Done", "*\t", "+\t")) for line in lines), lines

    attempt = lab.open()
    code, lines = review(attempt, "-v")
    assert code == 0 and "Done" in lines and any(line.startswith("To ") for line in lines), lines
    assert lines[-1].startswith(f"review ref refs/heads/review/runner/{attempt} accepted by "), lines

    # refused: the receipt of a model the attempt failed over from; the server's lines, then the summary
    attempt = lab.open()
    head = lab.change(f"stale-{attempt}")
    receipt = tmp_path / f"stale-{attempt}.json"
    assert cli("review", "record", "--repo", str(lab.work.path), "--attempt", attempt, "--head", head,
               "--model-output", str(model), "--key", key, "--out", str(receipt), "--remote", lab.remote(),
               env=RUNNER).returncode == 0
    result = lab.append(attempt, "failover", model_id="model-b")
    assert result is not None and result.ok
    out = cli("review", "push", "--repo", str(lab.work.path), "--attempt", attempt, "--receipt", str(receipt),
              "--remote", lab.remote(), env=RUNNER)
    lines = out.stderr.splitlines()
    assert out.returncode == 1, lines
    assert any(line.startswith("GATE-BIND-MODEL ") for line in lines), lines  # the gate's words, without "remote: "
    assert f"refused: refs/heads/review/runner/{attempt} [remote rejected] (pre-receive hook declined)" in lines
    assert lines[-1] == (f"review ref refs/heads/review/runner/{attempt} refused by {lab.remote()}; nothing of it "
                         "landed (one atomic push)"), lines
    assert not any(line.startswith(("To ", "Done", "remote: ")) for line in lines), lines

    # the ledger's commands
    attempt = lab.fresh()
    out = cli("attempt", "open", "--repo", str(lab.work.path), "--attempt", attempt, "--key",
              str(lab.root / "keys" / "orch-1.key"), "--workspace", "ws", "--workspace-gen", f"g-{attempt}",
              "--prompt-file", str(model), "--repository-id", "demo/repo", "--push", lab.remote(), env=RUNNER)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[-1] == (f"ledger record 0 (opened) of attempt {attempt} accepted by "
                                           f"{lab.remote()} on refs/gate/attempts/{attempt}"), out.stderr


def test_a_refused_ledger_archive_says_what_was_refused_in_a_line_of_its_own(tmp_path: Path) -> None:
    """`gate ledger archive` ended a refused push with git's raw porcelain output (`To ...`,
    `Done`); now the server's lines, the refused ref and one summary line (git's own with -v)."""
    lab = Lab(tmp_path / "locked", key_ids=("orch-1", "runner-1"))
    attempt, _head, _receipt = reviewed_and_closed(lab)
    lock = lab.server.bare / archive.ARCHIVE_REF
    lock = lock.with_name(lock.name + ".lock")  # a stale lock, as a crashed git leaves it
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    args = ("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than", "0")
    out = cli(*args, env=RUNNER)
    lines = out.stderr.splitlines()
    assert out.returncode == 1, lines
    assert lines[-1] == (f"the archive of 1 attempt(s) on {archive.ARCHIVE_REF} refused by {lab.remote()}; what it "
                         "was to remove stays, and a re-run goes on from here"), lines
    assert f"refused: {archive.ARCHIVE_REF} [remote rejected] (failed to update ref)" in lines, lines
    assert not any(line.startswith(("To ", "Done", "remote: ", "!\t")) for line in lines), lines
    verbose = cli(*args, "-v", env=RUNNER)
    assert verbose.returncode == 1 and "Done" in verbose.stderr.splitlines(), verbose.stderr
    assert lab.ledger_tip(attempt) is not None
