"""What a bot reads from a rejection, through real pushes: every gate-json line
is complete on its own (code, exit class, hint, who must act, retry, the next command filled in),
a configuration error tells the pusher it is not their fault and the admin what to run, and
`gate explain CODE --json` says the same as the line."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from support.cli import cli
from support.gitutil import AGENT
from support.server import POLICY, Server
from support.verdicts import refused

from gatecore import codes


def gate_json(out: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(ln.split("gate-json: ", 1)[1]) for ln in out.stderr.splitlines() if "gate-json: " in ln]


def test_a_frozen_write_names_the_maintainer_and_the_approve_command(tmp_path: Path) -> None:
    server = Server(tmp_path, policy=POLICY + '[approvals]\napprovers = ["alice"]\n')
    server.work.write("ci/deploy.yml", "agent\n")
    head = server.work.commit("agent", identity=AGENT)
    out = server.push("main", pusher_env={"REMOTE_USER": "agent-7"})
    assert refused(out, "GATE-FROZEN-PATH")
    [line] = gate_json(out)
    command = line.pop("next")
    assert isinstance(command, str) and shlex.split(command)[:2] == ["gate", "approve"]
    assert f"--new {head}" in command and "--path ci/deploy.yml" in command and command in out.stderr
    assert str(line.pop("setup")).startswith("git config gate.approver NAME && ")  # what the command needs, once
    assert line == {"code": "GATE-FROZEN-PATH", "ref": "refs/heads/main", "commit": head, "identity": line["identity"],
                    "path": "ci/deploy.yml", "rule": "freeze[0]:governance", "detail": line["detail"],
                    "exit": 1, "exit_class": "reject", "hint": codes.CODES["GATE-FROZEN-PATH"].hint,
                    "actor": "maintainer", "retry": False, "evidence": line["evidence"]}
    assert "pusher agent-7 matched agent-*" in str(line["evidence"])
    explained = json.loads(cli("explain", "GATE-FROZEN-PATH", "--json").stdout)
    assert {k: explained[k] for k in ("exit", "exit_class", "hint", "actor", "retry")} == {
        k: line[k] for k in ("exit", "exit_class", "hint", "actor", "retry")}


def test_a_broken_policy_is_not_the_pushers_fault_and_names_the_admins_command(tmp_path: Path) -> None:
    server = Server(tmp_path)
    (server.gate_dir / "policy.toml").write_text('mode = "enforce"\n[freeze]\npaths = ["ci/**"]\n')  # edited by hand
    server.work.write("README", "hello\n")
    server.work.commit("human")
    out = server.push("main")
    assert refused(out, "GATE-CONFIG-POLICY")
    assert "this is not a problem with your push: the gate's configuration failed" in out.stderr
    assert f"the server admin must act (gate server doctor {server.bare})" in out.stderr
    assert "write [[freeze]]" in out.stderr  # the admin's fix is in the detail
    [line] = gate_json(out)
    assert (line["actor"], line["exit"], line["exit_class"], line["retry"]) == ("admin", 2, "configuration", False)
    assert line["next"] == f"gate server doctor {server.bare}"


def test_no_keyring_says_how_to_install_one(tmp_path: Path) -> None:
    server = Server(tmp_path)  # installed without a keyring
    server.work.write("README", "hello\n")
    base = server.work.commit("human")
    assert server.push("main").returncode == 0
    server.work.git("update-ref", "refs/gate/attempts/a1", base)
    out = server.push("refs/gate/attempts/a1", pusher_env={"REMOTE_USER": "runner-1"})
    assert refused(out, "GATE-CONFIG-KEYRING")
    assert "no keyring is installed for this repository" in out.stderr
    assert "gate server install GIT_DIR --keyring FILE" in out.stderr and "not a problem with your push" in out.stderr
    assert gate_json(out)[0]["actor"] == "admin"


def test_explain_json_lists_every_code_with_its_advice() -> None:
    out = cli("explain", "--list", "--json")
    assert out.returncode == 0
    listed = json.loads(out.stdout)
    assert [d["code"] for d in listed] == list(codes.CODES)
    assert all(d["actor"] in codes.ACTORS and isinstance(d["retry"], bool) for d in listed)
    assert {d["code"] for d in listed if d["retry"]} == {"GATE-HOOK-DEADLINE", "GATE-AUDIT-WRITE"}
    stale = json.loads(cli("explain", "gate-ref-stale", "--json").stdout)
    assert stale["next"] == "git fetch origin {ref}" and stale["actor"] == "pusher"
