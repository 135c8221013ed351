"""Every repository git can make: the server's hook and the trusted side in the four formats (files
or reftable refs, SHA-1 or SHA-256 objects), and with refs kept at a path of their own, on the
format tests' git (`GATE_MODERN_GIT`, see support/formats.py).

docs/ci-example.sh runs as written, end to end, then `gate attest export`, `gate approvals list` and
`gate ledger archive` against what it left; the hook decides many-branch pushes and symbolic refs
(a dangling one into the review namespace above all) alike in every format, and doctor's probe.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import cli
from support.formats import RepoFormat, needs_ref_paths
from support.gitutil import HUMAN, KEPT, ROOT, git
from support.rawpush import raw_push
from support.server import Server
from support.verdicts import codes_of

from gatecore.git.refs import REVIEW_PREFIX

AGENT_PUSH = {"REMOTE_USER": "agent-7"}
POLICY = """\
mode = "enforce"
[[freeze]]
paths = ["ci/**"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[trusted]
pushers = ["runner-*"]
"""


def _script_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment docs/ci-example.sh runs in: `gate` on PATH, no git variables but the format's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "REMOTE_USER")) or k in KEPT}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return {**env, **(extra or {})}


def _formats_of(repo: Path) -> tuple[str, str]:
    out = git(repo, "rev-parse", "--show-object-format").stdout.strip()
    refs = git(repo, "rev-parse", "--show-ref-format", check=False).stdout.strip()
    return (refs if refs in ("files", "reftable") else "files"), out  # (git before 2.45 echoes the option)


def test_the_ci_example_runs_as_written_and_its_results_export(repo_format: RepoFormat, tmp_path: Path) -> None:
    """docs/ci.md's worked example, unchanged, in a repository of this format; then the
    attestations and approvals of the server's repository, and the closed attempt archived."""
    work = tmp_path / "ci"
    out = subprocess.run(["bash", str(ROOT / "docs" / "ci-example.sh"), str(work)], env=_script_env(),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "stale receipt rejected" in out.stdout and "fresh receipt accepted" in out.stdout
    assert "GATE-BIND-MODEL" in out.stdout + out.stderr
    server, clone = work / "server.git", work / "runner-clone"
    assert _formats_of(server) == _formats_of(clone) == (repo_format.refs, repo_format.objects)
    review = git(server, "for-each-ref", "--format=%(objectname)", REVIEW_PREFIX).stdout.split()
    assert len(review) == 1 and len(review[0]) == repo_format.hexsz

    env = {"REMOTE_USER": "ci-runner"}  # the runner, as the script's commands are (in this process: support.cli)
    key = cli("keys", "generate", "--alg", "ed25519", "--id", "attest-1", "--purpose", "attestation",
              "--out", str(work / "attest.key"), env=env)
    assert key.returncode == 0, key.stderr
    exported = cli("attest", "export", "--repo", str(server), "--key", str(work / "attest.key"), "--keyring",
                   str(work / "keyring.toml"), "--repository-id", "demo/repo", "--out", str(work / "gate.jsonl"),
                   env=env)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    [line] = (work / "gate.jsonl").read_text().splitlines()
    statement = json.loads(base64.b64decode(json.loads(line)["payload"]))
    digest = statement["subject"][0]["digest"]  # 64 hex digits in a SHA-256 repository
    assert digest["gitCommit"] == review[0] and len(digest["gitTree"]) == repo_format.hexsz
    listed = cli("approvals", "list", "--repo", str(server), env=env)
    assert listed.returncode == 0 and "INVALID" not in listed.stdout, listed.stdout + listed.stderr

    archived = cli("ledger", "archive", "--repo", str(clone), "--remote", "origin", "--older-than", "0s", env=env)
    assert archived.returncode == 0, archived.stdout + archived.stderr
    assert git(server, "for-each-ref", "refs/gate/attempts/").stdout == ""
    assert git(server, "rev-parse", "--verify", "-q", "refs/gate/archive").returncode == 0


@pytest.fixture(scope="module")
def fmt_server(module_format: RepoFormat, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp(f"fmt-{module_format.refs}-{module_format.objects}")
    s = Server(root, POLICY)
    s.work.write("README", "hello\n")
    s.work.write("ci/deploy.yml", "deploy: true\n")
    s.work.commit("base", identity=HUMAN)
    assert s.push("main").returncode == 0
    assert _formats_of(s.bare) == (module_format.refs, module_format.objects)
    yield s


def test_a_push_creating_many_branches_in_every_format(fmt_server: Server, module_format: RepoFormat) -> None:
    """200 branches created and deleted in one push each (an agent's frozen write is refused in every
    format by the client tests' pushes: tests/client/test_commit_stage.py); doctor's probe push too."""
    s = fmt_server
    head = s.work.head("main")
    out = s.push(*(f"{head}:refs/heads/many/b{i:03d}" for i in range(200)))
    assert out.returncode == 0, out.stderr[-2000:]
    assert len([r for r in s.refs() if r.startswith("refs/heads/many/")]) == 200
    assert {r["old"] for r in s.audit()[-1]["refs"]} == {module_format.zero}  # type: ignore[index]
    out = s.push(*(f":refs/heads/many/b{i:03d}" for i in range(200)))
    assert out.returncode == 0, out.stderr[-2000:]
    doctor = cli("server", "doctor", str(s.bare))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


def test_a_deletion_stating_no_old_value_is_refused_in_every_format(fmt_server: Server,
                                                                    module_format: RepoFormat) -> None:
    """`<zero> <zero> <ref>` for a ref the server holds, which git deletes unchecked
    (tests/push/test_adv_noop_delete.py): refused in every ref backend and object format; for a ref
    that does not exist, the no-op it is."""
    s = fmt_server
    zero = module_format.zero
    assert s.push("main:refs/heads/kept").returncode == 0
    out = raw_push(s.work.path, s.bare, [(zero, zero, "refs/heads/kept")], {"REMOTE_USER": "agent-1"})
    assert not out.ok("refs/heads/kept") and s.ref("refs/heads/kept") is not None, out.status
    assert s.audit()[-1]["codes"] == ["GATE-REF-STALE"]
    assert raw_push(s.work.path, s.bare, [(zero, zero, "refs/heads/none")], {"REMOTE_USER": "agent-1"}).ok(
        "refs/heads/none")


def test_symbolic_refs_are_judged_in_every_format(fmt_server: Server) -> None:
    """A push through a symbolic ref is judged as the update of its target (as git applies it):
    a human's lands on main; a dangling one into the review namespace would create the review
    ref without a receipt: refused as that reserved ref, in every ref backend."""
    s = fmt_server
    head = git(s.work.path, "commit-tree", "main^{tree}", "-p", "main", "-m", "on top").stdout.strip()
    git(s.bare, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(s.bare, "symbolic-ref", "refs/heads/dangling", f"{REVIEW_PREFIX}a1")
    try:
        out = s.push(f"{head}:refs/heads/alias")
        assert out.returncode == 0 and s.ref("refs/heads/main") == head, out.stdout + out.stderr
        before = s.refs()
        out = s.push(f"{head}:refs/heads/dangling", pusher_env=AGENT_PUSH)
        assert out.returncode != 0 and "GATE-REF-RESERVED" in codes_of(out), out.stderr
        assert f"(to {REVIEW_PREFIX}a1)" in out.stderr, out.stderr
        assert s.ref(f"{REVIEW_PREFIX}a1") is None and s.refs() == before
        # many new branches beside it: still one batch of questions, still refused
        out = s.push(*(f"{head}:refs/heads/side/b{i}" for i in range(20)), f"{head}:refs/heads/dangling",
                     pusher_env=AGENT_PUSH, extra=("--atomic",))
        assert out.returncode != 0 and s.ref(f"{REVIEW_PREFIX}a1") is None
    finally:
        git(s.bare, "symbolic-ref", "--delete", "refs/heads/alias", check=False)
        git(s.bare, "symbolic-ref", "--delete", "refs/heads/dangling", check=False)


def test_a_dangling_symbolic_ref_is_refused_where_refs_have_a_path_of_their_own(
        repo_format: RepoFormat, tmp_path: Path) -> None:
    """`extensions.refStorage = files://DIR` (or `reftable://DIR`, by the format's backend): the
    refs live outside the git directory, which then looks like any other; the gate asks git,
    never the directory."""
    needs_ref_paths(repo_format)
    backend = repo_format.refs
    refs = tmp_path / "refs-elsewhere"
    refs.mkdir()
    s = Server(tmp_path, POLICY, init_env={"GIT_REFERENCE_BACKEND": f"{backend}://{refs}"})
    assert git(s.bare, "config", "extensions.refStorage").stdout.strip() == f"{backend}://{refs}"
    assert not (s.bare / "reftable").exists()  # nothing in the git directory says where refs are
    s.work.write("README", "hello\n")
    head = s.work.commit("base", identity=HUMAN)
    assert s.push("main").returncode == 0
    git(s.bare, "symbolic-ref", "refs/heads/dangling", f"{REVIEW_PREFIX}a1")
    out = s.push(f"{head}:refs/heads/dangling", pusher_env=AGENT_PUSH)
    assert out.returncode != 0 and "GATE-REF-RESERVED" in codes_of(out), out.stderr
    assert s.ref(f"{REVIEW_PREFIX}a1") is None
