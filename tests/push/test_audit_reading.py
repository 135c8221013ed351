"""The audit log read back by an admin (the failure it guards against: on one repository 6 of 7
refusals in the log were doctor's probe pushes, told apart from real ones only by reading their
refs, and the log could be read only as JSON): every decision line says whether it was doctor's
probe (`"probe"`), and `gate server audit GIT_DIR` prints the log in words, probes left out unless
asked, filtered by time, code, pusher and ref, or as the JSON lines it holds (`--json`).

Real pushes into a bare repository with the gate installed, a real `gate server doctor` (its probe
push), then the command as an admin runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import AGENT, HUMAN
from support.server import Server
from support.verdicts import refused

AGENT_PUSH = {"REMOTE_USER": "agent-7"}


@pytest.fixture
def server(tmp_path: Path) -> Server:
    """A human's push, doctor's probe, an agent's frozen write refused, a human's branch."""
    s = Server(tmp_path)
    s.work.write("README", "hello\n")
    s.work.write("ci/deploy.yml", "deploy: true\n")
    s.work.commit("base", identity=HUMAN)
    assert s.push("main", pusher_env={"REMOTE_USER": "hana"}).returncode == 0
    doctor = cli("server", "doctor", str(s.bare))
    assert doctor.returncode == 0, doctor.stdout
    s.work.write("ci/deploy.yml", "deploy: agent\n")
    s.work.commit("agent writes ci", identity=AGENT)
    assert refused(s.push("main", pusher_env=AGENT_PUSH), "GATE-FROZEN-PATH")
    assert s.push("HEAD~1:refs/heads/topic", pusher_env={"REMOTE_USER": "hana"}).returncode == 0
    s.settle()
    return s


def test_doctors_probe_is_marked_in_the_log(server: Server) -> None:
    decisions = server.audit()
    assert [d["probe"] for d in decisions] == [False, True, False, False]
    probe = decisions[1]
    assert probe["codes"] == ["GATE-DOCTOR-PROBE"] and str(probe["refs"][0]["ref"]).startswith(  # type: ignore[index]
        "refs/gate/doctor/probe-")


def test_the_log_in_words_without_the_probes(server: Server) -> None:
    out = cli("server", "audit", str(server.bare))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    heads = [ln for ln in lines if not ln.startswith(" ")]
    assert [h.split("  ", 1)[1].split(":")[0] for h in heads] == [
        "accepted", "landed", "REJECTED", "accepted", "landed"], out.stdout
    assert "hana (local) pushed refs/heads/main (created at " in heads[0]
    assert "REJECTED: agent-7 (local) pushed refs/heads/main " in heads[2] and heads[2].endswith(": GATE-FROZEN-PATH")
    why = lines[lines.index(heads[2]) + 1]
    assert why.startswith("    commit ") and "by bot-7@agents.example.com: pusher agent-7 matched agent-*" in why
    assert "GATE-DOCTOR-PROBE" not in out.stdout and "probe" not in out.stdout
    assert out.stderr.splitlines()[-1].endswith(
        "audit.log; 1 of gate server doctor's probe pushes not shown (--include-probes shows them)"), out.stderr
    out = cli("server", "audit", str(server.bare), "--include-probes")
    probe = [ln for ln in out.stdout.splitlines() if "GATE-DOCTOR-PROBE" in ln]
    assert len(probe) == 1 and probe[0].endswith("(gate server doctor's probe)") and "REJECTED" in probe[0]


def test_filters_and_json(server: Server) -> None:
    def shown(*args: str) -> list[str]:
        out = cli("server", "audit", str(server.bare), *args)
        assert out.returncode == 0, out.stderr
        return [ln for ln in out.stdout.splitlines() if not ln.startswith(" ")]

    assert len(shown("--code", "GATE-FROZEN-PATH")) == 1
    assert len(shown("--code", "GATE-FROZEN-*", "--code", "GATE-BIND-MODEL")) == 1
    assert shown("--pusher", "agent-*")[0].split("  ")[1].startswith("REJECTED")
    assert len(shown("--pusher", "hana")) == 4  # two decisions, two landed lines
    assert len(shown("--ref", "refs/heads/topic")) == 2
    assert len(shown("--since", "1d")) == 5 and shown("--since", "2999-01-01") == []
    out = cli("server", "audit", str(server.bare), "--code", "GATE-FROZEN-PATH", "--json")
    [line] = out.stdout.splitlines()
    assert json.loads(line) == server.audit()[2]
    bad = cli("server", "audit", str(server.bare), "--code", "GATE-FROZEN")
    assert bad.returncode == 1 and "--code GATE-FROZEN names no code" in bad.stderr
    bad = cli("server", "audit", str(server.bare), "--since", "last week")
    assert bad.returncode == 1 and "--since 'last week' is neither a duration" in bad.stderr


def test_lines_written_before_the_probe_field_are_told_by_their_refs(server: Server) -> None:
    log = server.gate_dir / "audit.log"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for record in records:
        record.pop("probe", None)
    log.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    out = cli("server", "audit", str(server.bare))
    assert "GATE-DOCTOR-PROBE" not in out.stdout and "1 of gate server doctor's probe pushes not shown" in out.stderr
    assert out.returncode == 1 and f"{log}:{len(records) + 1}: not a JSON object: skipped" in out.stderr
