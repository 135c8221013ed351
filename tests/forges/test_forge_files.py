"""The forge files (forges/) against the forges' own schemas and linters, offline:

* check-jsonschema's vendored schemas (SchemaStore's): GitHub workflow and action, GitLab CI,
  Bitbucket Pipelines;
* zizmor (static analysis of GitHub Actions: template injection, unpinned actions, credentials,
  dangerous triggers), offline;
* ShellCheck over every script the files run (what actionlint runs over `run:` blocks; no build of
  rhysd's actionlint installs here: docs/forges.md, "How the files are checked");
* the house rules: third-party actions and images pinned by digest, the version named beside it;
  push-gate itself pinned to a full commit id, its dependencies by hash (forges/requirements.txt);
  no expression inside a script; no pull_request_target.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.gitutil import ROOT

FORGES = ROOT / "forges"
ACTION = FORGES / "github" / "action.yml"
WORKFLOW = FORGES / "github" / "push-gate-check.yml"
GITLAB = FORGES / "gitlab" / "push-gate.gitlab-ci.yml"
BITBUCKET = FORGES / "bitbucket" / "bitbucket-pipelines.yml"
REQUIREMENTS = FORGES / "requirements.txt"
LOCKGEN = FORGES / "lock.py"  # ./dev forge-lock, which writes it
BIN = Path(sys.executable).parent
#: the pin the GitLab and Bitbucket scripts demand of PUSH_GATE_SOURCE
SOURCE_PIN = r"@[0-9a-f]{40}$|@[0-9a-f]{64}$|#sha256=[0-9a-f]{64}$"


def load(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_every_forge_file_is_tested_here() -> None:
    assert sorted(p.relative_to(FORGES).as_posix() for p in FORGES.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts) == sorted(
        p.relative_to(FORGES).as_posix() for p in (ACTION, WORKFLOW, GITLAB, BITBUCKET, REQUIREMENTS, LOCKGEN))


@pytest.mark.parametrize(("path", "schema"), [
    (ACTION, "vendor.github-actions"),
    (WORKFLOW, "vendor.github-workflows"),
    (GITLAB, "vendor.gitlab-ci"),
    (BITBUCKET, "vendor.bitbucket-pipelines"),
])
def test_the_file_is_valid_under_its_forges_schema(path: Path, schema: str) -> None:
    out = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok -- validation done" in out.stdout


@pytest.mark.parametrize(("path", "schema"), [(GITLAB, "vendor.github-workflows"), (ACTION, "vendor.gitlab-ci")])
def test_the_schemas_do_refuse_a_wrong_file(path: Path, schema: str) -> None:
    """The check above means something: another forge's schema refuses the file."""
    out = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stdout


@pytest.mark.parametrize("path", [ACTION, WORKFLOW])
def test_zizmor_finds_nothing(path: Path) -> None:
    out = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", str(path)], capture_output=True,
                         text=True, env={**os.environ, "NO_COLOR": "1"})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "No findings to report" in out.stdout + out.stderr


def scripts() -> list[tuple[str, str, str]]:
    """(where, shell, script) of every script the files run."""
    found = [(f"{ACTION.name}: {s['id']}", "bash", s["run"]) for s in load(ACTION)["runs"]["steps"] if "run" in s]
    for name, job in load(GITLAB).items():
        if isinstance(job, dict):
            found += [(f"{GITLAB.name}: {name}", "sh", "\n".join(job[key])) for key in ("script",) if key in job]
    step = load(BITBUCKET)["definitions"]["steps"][0]["step"]
    found += [(f"{BITBUCKET.name}: {key}", "sh", "\n".join(step[key])) for key in ("script", "after-script")]
    return found


@pytest.mark.parametrize(("where", "shell", "script"), scripts(), ids=[w for w, _, _ in scripts()])
def test_shellcheck_finds_nothing(where: str, shell: str, script: str, tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_text(script)
    out = subprocess.run([str(BIN / "shellcheck"), "--shell", shell, "--severity", "style", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, f"{where}:\n{out.stdout}{out.stderr}"


def test_no_expression_is_pasted_into_a_script() -> None:
    """Values reach scripts through env: an expression in `run:` is pasted into the shell's text,
    where a branch name or a path the pull request chose becomes code."""
    for where, _, script in scripts():
        assert "${{" not in script, where


def uses_lines() -> list[str]:
    return [line.strip() for path in (ACTION, WORKFLOW) for line in path.read_text().splitlines()
            if re.match(r"\s*-?\s*uses:", line)]


def test_third_party_actions_are_pinned_by_commit_with_the_version_named() -> None:
    lines = uses_lines()
    assert len(lines) == 3
    for line in lines:
        m = re.fullmatch(r"-? ?uses: (?P<name>[\w.-]+/[\w./-]+)@(?P<ref>\S+)(?: +# (?P<comment>.*))?", line)
        assert m, line
        assert re.fullmatch(r"[0-9a-f]{40}", m.group("ref")), f"not pinned to a commit: {line}"
        if m.group("name").startswith("actions/"):
            assert re.fullmatch(r"v\d+\.\d+\.\d+", m.group("comment") or ""), f"no version named: {line}"
        else:
            assert m.group("name") == "OWNER/push-gate/forges/github", line  # the placeholder the docs explain
    assert "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1" in "\n".join(lines)
    assert "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0" in "\n".join(lines)


def test_setup_python_is_told_the_version() -> None:
    """Without python-version, actions/setup-python reads .python-version from the checkout: the
    pull request would choose the interpreter."""
    [setup] = [s for s in load(ACTION)["runs"]["steps"] if str(s.get("uses", "")).startswith("actions/setup-python")]
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"
    assert load(ACTION)["inputs"]["python-version"]["default"]


def test_every_step_runs_outside_the_checkout() -> None:
    for step in load(ACTION)["runs"]["steps"]:
        if "run" in step:
            assert step["working-directory"] == "${{ runner.temp }}", step["id"]
            assert "python3 -m" not in step["run"] and "python -m" not in step["run"], step["id"]


def test_images_are_pinned_by_digest() -> None:
    images = [load(GITLAB)["variables"]["PUSH_GATE_IMAGE"], load(BITBUCKET)["image"]]
    for image in images:
        assert re.fullmatch(r"python:3\.12-bookworm@sha256:[0-9a-f]{64}", image), image
    assert load(GITLAB)[".push-gate"]["image"] == "$PUSH_GATE_IMAGE"


def test_the_gate_itself_is_pinned_and_a_loose_pin_is_refused(tmp_path: Path) -> None:
    default = load(GITLAB)["variables"]["PUSH_GATE_SOURCE"]
    assert re.search(SOURCE_PIN, default), default
    bitbucket_script = load(BITBUCKET)["definitions"]["steps"][0]["step"]["script"]
    assert re.search(SOURCE_PIN, bitbucket_script[0].split(":-", 1)[1].rstrip('}"')), bitbucket_script[0]
    gitlab_script = "\n".join(load(GITLAB)[".push-gate"]["script"])
    for script in (gitlab_script, "\n".join(bitbucket_script)):
        assert SOURCE_PIN in script
        for loose in ("push-gate @ git+https://example.test/push-gate.git@main", "push-gate==0.1.0",
                      "push-gate @ git+https://example.test/push-gate.git@v0.1.0"):
            out = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                                 env={"PATH": os.environ["PATH"], "PUSH_GATE_SOURCE": loose})
            assert out.returncode == 2, out.stdout + out.stderr
            assert "must pin a commit" in out.stderr and not list(tmp_path.iterdir())


def _locked() -> dict[str, tuple[str, list[str]]]:
    """forges/requirements.txt: name -> (version, hashes), each entry read as pip reads it."""
    entries: dict[str, tuple[str, list[str]]] = {}
    text = REQUIREMENTS.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pin, *options = line.split()
        name, _, version = pin.partition("==")
        assert version and name not in entries, line
        assert options and all(o.startswith("--hash=sha256:") and len(o) == len("--hash=sha256:") + 64
                                 for o in options), line
        entries[name] = (version, [o.split(":", 1)[1] for o in options])
    return entries


def test_the_dependencies_the_checks_install_are_pinned_by_hash() -> None:
    """forges/requirements.txt (./dev forge-lock) holds, each by one release and its files' hashes,
    every dependency pyproject.toml names and the build backend, at releases its ranges allow;
    the action, the GitLab job and the Bitbucket step install from it alone (--require-hashes, wheels
    only), then push-gate with no dependency and no isolated build (which would fetch hatchling
    unpinned), and check that nothing is missing."""
    from packaging.requirements import Requirement

    sys.path.insert(0, str(FORGES))
    try:
        from lock import roots  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(FORGES))
    locked = _locked()
    for root in roots():
        req = Requirement(root)
        name = req.name.lower().replace("_", "-")
        assert name in locked, f"{root}: not in forges/requirements.txt (./dev forge-lock)"
        assert req.specifier.contains(locked[name][0]), (root, locked[name][0])
    assert {"cffi", "pydantic-core", "typing-extensions"} <= set(locked)  # (the closure, not the roots alone)
    installs = {ACTION: load(ACTION)["runs"]["steps"], GITLAB: load(GITLAB)[".push-gate"]["script"],
                BITBUCKET: load(BITBUCKET)["definitions"]["steps"][0]["step"]["script"]}
    for path, steps in installs.items():
        text = re.sub(r"\\\n\s*", " ", "\n".join(s if isinstance(s, str) else s.get("run", "") for s in steps))
        pips = [part.split("\n")[0].split("&&")[0] for part in text.split("-m pip install")[1:]]
        assert len(pips) == 2, (path, pips)  # the dependencies, then push-gate: nothing else installs
        assert all(f in pips[0] for f in ("--require-hashes", "--only-binary :all:", "--no-deps", "-r ")), pips[0]
        assert all(f in pips[1] for f in ("--no-deps", "--no-build-isolation")), pips[1]
        assert "-m pip check" in text, path
    assert '-r "$src/forges/requirements.txt"' in ACTION.read_text()


def test_the_gitlab_and_bitbucket_scripts_refuse_to_run_without_the_pinned_dependencies(tmp_path: Path) -> None:
    pinned = "push-gate @ git+https://example.test/push-gate.git@" + "a" * 40
    scripts = ["\n".join(load(GITLAB)[".push-gate"]["script"]),
               "\n".join(load(BITBUCKET)["definitions"]["steps"][0]["step"]["script"][2:])]  # (not its default)
    for script in scripts:
        out = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                             env={"PATH": os.environ["PATH"], "PUSH_GATE_SOURCE": pinned, "PUSH_GATE_REQUIREMENTS": ""})
        assert out.returncode == 2, out.stdout + out.stderr
        assert "PUSH_GATE_REQUIREMENTS must name forges/requirements.txt" in out.stderr and not list(tmp_path.iterdir())
    defaults = [load(GITLAB)["variables"]["PUSH_GATE_REQUIREMENTS"],
                load(BITBUCKET)["definitions"]["steps"][0]["step"]["script"][1]]
    for default in defaults:
        assert re.search(r"/[0-9a-f]{40}/forges/requirements\.txt", default), default
    # an admin who set PUSH_GATE_SOURCE and left the template's placeholder for the requirements
    gitlab = {k: v for k, v in load(GITLAB)["variables"].items() if isinstance(v, str)}
    runs = [(scripts[0], {**gitlab, "PUSH_GATE_SOURCE": pinned}),
            ("\n".join(load(BITBUCKET)["definitions"]["steps"][0]["step"]["script"]), {"PUSH_GATE_SOURCE": pinned})]
    for script, env in runs:
        out = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                             env={"PATH": os.environ["PATH"], **env})
        assert out.returncode == 2, out.stdout + out.stderr
        assert "name this template's placeholder commit" in out.stderr and not list(tmp_path.iterdir())


def test_the_workflow_runs_on_pull_requests_and_merge_groups_only() -> None:
    workflow = load(WORKFLOW)
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert set(triggers) == {"pull_request", "merge_group"}
    assert workflow["permissions"] == {"contents": "read"}
    [checkout] = [s for s in workflow["jobs"]["push-gate"]["steps"] if s["uses"].startswith("actions/checkout@")]
    assert checkout["with"]["fetch-depth"] == 0
    for path in (ACTION, WORKFLOW):
        text = path.read_text()
        assert not re.search(r"^\s*pull_request_target\s*:", text, re.M), path


def test_the_gitlab_job_is_the_merge_requests_and_reports_code_quality() -> None:
    gl = load(GITLAB)
    job = gl["push-gate"]
    assert job["extends"] == ".push-gate" and job["stage"] == ".pipeline-policy-pre"
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert gl[".push-gate"]["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert gl[".push-gate"]["variables"]["GIT_DEPTH"] == "0"
    # a fresh clone each job, never one earlier jobs (an agent's pipeline) could leave config or hooks in
    assert gl[".push-gate"]["variables"]["GIT_STRATEGY"] == "clone"
    script = "\n".join(gl[".push-gate"]["script"])
    for name in ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "CI_COMMIT_SHA", "--format gitlab --report"):
        assert name in script
    # the other side is the target branch's tip, fetched: never the diff base (the author chose it) nor
    # the pipeline's recorded target (a retry keeps it); the policy is read from that side
    assert '"$CI_MERGE_REQUEST_DIFF_BASE_SHA"' not in script and '"$CI_MERGE_REQUEST_TARGET_BRANCH_SHA"' not in script
    assert 'side="--base"' not in script


def test_the_bitbucket_step_runs_on_pull_requests_with_the_whole_history() -> None:
    bb = load(BITBUCKET)
    assert bb["clone"] == {"depth": "full"}
    assert list(bb["pipelines"]) == ["pull-requests"]
    script = "\n".join(bb["definitions"]["steps"][0]["step"]["script"])
    for name in ("BITBUCKET_COMMIT", "BITBUCKET_PR_DESTINATION_BRANCH"):
        assert name in script
    assert "${BITBUCKET_PR_DESTINATION_COMMIT" not in script  # the branch's tip judges, not the run's record
    assert "localhost:29418" in "\n".join(bb["definitions"]["steps"][0]["step"]["after-script"])
