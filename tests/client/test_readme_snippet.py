"""The README's pre-commit snippet works as written (issue 26 item 3): copied into a
repository with only the `repo:` URL changed (the one edit it asks for), through the real
pre-commit framework, it stops an agent's frozen write; `pre-commit autoupdate --freeze`
then pins it to a commit id, and it still works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.gitutil import AGENT, HUMAN, ROOT, WorkRepo, git, git_env
from support.snapshot import project_repository

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
POLICY = '[[freeze]]\npaths = ["ci/**", ".gate/**", ".pre-commit-config.yaml"]\nauthors = ["*@agents.example.com"]\n'


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("Add to a repository's `.pre-commit-config.yaml`")
    return re.search(r"```yaml\n(.*?)```", text[start:], re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_snippet_works_as_written_then_pinned(tmp_path: Path) -> None:
    project = tmp_path / "push-gate"  # this project, as a repository on a forge would hold it
    head = project_repository(project)
    snippet = readme_snippet()
    url = re.search(r"repo: (\S+)", snippet).group(1)  # type: ignore[union-attr]
    config = snippet.replace(url, str(project))
    assert config.count(str(project)) == 1
    w = WorkRepo(tmp_path / "work")
    w.write(".gate/policy.toml", POLICY)
    w.write(".pre-commit-config.yaml", config)
    w.write("ci/deploy.yml", "deploy\n")
    w.commit("base", identity=HUMAN)
    env = git_env(HUMAN, PRE_COMMIT_HOME=str(tmp_path / "pc-home"), PRE_COMMIT_COLOR="never")
    out = subprocess.run([*PRE_COMMIT, "install"], cwd=w.path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr

    def agent_commit() -> subprocess.CompletedProcess[str]:
        w.write("ci/deploy.yml", "deploy: agent\n")
        git(w.path, "add", "-A")
        return git(w.path, "commit", "-q", "-m", "agent", identity=AGENT, check=False,
                   env={k: v for k, v in env.items() if k.startswith("PRE_COMMIT")})

    out = agent_commit()
    assert out.returncode == 1 and "GATE-FROZEN-PATH" in out.stdout + out.stderr, out.stdout + out.stderr
    out = subprocess.run([*PRE_COMMIT, "autoupdate", "--freeze"], cwd=w.path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"rev: {head}" in (w.path / ".pre-commit-config.yaml").read_text()
    git(w.path, "add", ".pre-commit-config.yaml")
    out = agent_commit()
    assert out.returncode == 1 and "GATE-FROZEN-PATH" in out.stdout + out.stderr, out.stdout + out.stderr
