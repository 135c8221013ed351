"""The hook manifest (`.pre-commit-hooks.yaml`): console scripts of the package, valid for
pre-commit, documented in docs/client.md."""

from __future__ import annotations

import subprocess

from support.gitutil import ROOT
from support.precommit import (
    FETCH_LEDGER,
    HOOK_IDS,
    PRE_COMMIT,
)


def manifest() -> list[dict[str, object]]:
    import yaml  # pre-commit's own dependency

    doc = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(doc, list)
    return doc


def test_manifest_hooks_are_python_console_scripts_of_the_package() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    hooks = {h["id"]: h for h in manifest()}
    assert tuple(hooks) == HOOK_IDS
    stages = {"gate-frozen-files": ["pre-commit"], "gate-frozen-files-msg": ["commit-msg"],
              "gate-frozen-files-push": ["pre-push"], "gate-review-receipt": ["pre-push"]}
    for hook_id, hook in hooks.items():
        assert hook["language"] == "python"
        assert hook["entry"] in scripts and scripts[hook["entry"]].startswith("hooks.")
        assert hook["stages"] == stages[hook_id]
        # the commit-msg stage's one file is the message; the others read the index and commits themselves
        assert hook["pass_filenames"] is (hook_id == "gate-frozen-files-msg") and hook["always_run"] is True


def test_manifest_is_valid_for_pre_commit() -> None:
    out = subprocess.run([*PRE_COMMIT, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_hook_id_is_documented_in_docs_client_md() -> None:
    text = (ROOT / "docs" / "client.md").read_text()
    for hook in manifest():
        assert f"id: {hook['id']}" in text, f"{hook['id']} missing from the YAML in docs/client.md"
        assert f"| `{hook['id']}` |" in text, f"{hook['id']} missing from the table in docs/client.md"
        assert f"`{hook['entry']}`" in text


def test_docs_say_the_client_is_advice_and_show_the_fetch_command() -> None:
    text = (ROOT / "docs" / "client.md").read_text()
    assert "The client check is advice; the server is the enforcement point." in text
    assert FETCH_LEDGER in text and ".gate/policy.toml" in text and "GATE_PUSHER" in text

