"""The README's pre-commit snippet works as written: copied into a
repository with only the `repo:` URL changed (the one edit it asks for), through the real
pre-commit framework, it stops an agent's frozen write, and pre-commit says nothing about its
revision (with `rev: HEAD` it warned on every commit and push that the revision is mutable);
`pre-commit autoupdate --freeze` then pins it to a commit id, and it still works.

The snippet pins the release tag, `v` and `VERSION` (docs/upgrading.md, making a release); the
project is the run's hook repository, tagged so here as the forge holds it, and the store the run's
pre-commit store (fixtures in conftest.py): pre-commit builds the environment of the snippet's tag
here, once per run (no other test names that revision); the pinned commit id is the revision the
rest of the client tier runs, whose environment the run builds once, here or there."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.docblocks import run_block
from support.gitutil import AGENT, HUMAN, ROOT, WorkRepo, git, git_env
from support.precommit import HookRepo

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
POLICY = '[[freeze]]\npaths = ["ci/**", ".gate/**", ".pre-commit-config.yaml"]\nauthors = ["*@agents.example.com"]\n'


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("Add to a repository's `.pre-commit-config.yaml`")
    return re.search(r"```yaml\n(.*?)```", text[start:], re.S).group(1)  # type: ignore[union-attr]


def release_tag() -> str:
    return "v" + (ROOT / "VERSION").read_text().strip()


def _installed(tmp_path: Path, config: str, pc_home: Path) -> tuple[WorkRepo, dict[str, str]]:
    """A work repository committing the policy, `config` as its `.pre-commit-config.yaml` and a frozen
    `ci/deploy.yml`, its hooks installed by pre-commit; and the environment it ran pre-commit with."""
    w = WorkRepo(tmp_path / "work")
    w.write(".gate/policy.toml", POLICY)
    w.write(".pre-commit-config.yaml", config)
    w.write("ci/deploy.yml", "deploy\n")
    w.commit("base", identity=HUMAN)
    env = git_env(HUMAN, PRE_COMMIT_HOME=str(pc_home), PRE_COMMIT_COLOR="never")
    out = subprocess.run([*PRE_COMMIT, "install"], cwd=w.path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return w, env


def test_the_snippet_pins_the_release_and_docs_client_shows_the_same() -> None:
    snippet = readme_snippet()
    assert re.search(r"^    rev: (\S+)", snippet, re.M).group(1) == release_tag(), snippet  # type: ignore[union-attr]
    assert f"```yaml\n{snippet}```" in (ROOT / "docs" / "client.md").read_text()


def test_the_readme_snippet_works_as_written_then_pinned(tmp_path: Path, hook_repo: HookRepo,
                                                          pc_home: Path) -> None:
    project, head = hook_repo.path, hook_repo.rev  # this project, as a repository on a forge would hold it
    git(project, "tag", "-f", release_tag(), head)  # the release's tag, as the forge holds it
    snippet = readme_snippet()
    url = re.search(r"repo: (\S+)", snippet).group(1)  # type: ignore[union-attr]
    config = snippet.replace(url, str(project))
    assert config.count(str(project)) == 1
    w, env = _installed(tmp_path, config, pc_home)

    def agent_commit() -> subprocess.CompletedProcess[str]:
        w.write("ci/deploy.yml", "deploy: agent\n")
        git(w.path, "add", "-A")
        return git(w.path, "commit", "-q", "-m", "agent", identity=AGENT, check=False,
                   env={k: v for k, v in env.items() if k.startswith("PRE_COMMIT")})

    out = agent_commit()
    assert out.returncode == 1 and "GATE-FROZEN-PATH" in out.stdout + out.stderr, out.stdout + out.stderr
    assert "mutable reference" not in out.stdout + out.stderr, out.stdout + out.stderr
    out = subprocess.run([*PRE_COMMIT, "autoupdate", "--freeze"], cwd=w.path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"rev: {head}" in (w.path / ".pre-commit-config.yaml").read_text()
    git(w.path, "add", ".pre-commit-config.yaml")
    out = agent_commit()
    assert out.returncode == 1 and "GATE-FROZEN-PATH" in out.stdout + out.stderr, out.stdout + out.stderr


def test_a_developers_first_commit_without_the_policy_names_the_file_then_the_readme_steps_work(
        tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> None:
    """After pasting the snippet, the first commit (no .gate/policy.toml committed yet) was once
    refused with "is in neither no commit nor the work tree", actor admin and a hint to run
    gate server install. Now one sentence names the file to commit, for the developer, and the
    README's client steps, run as written, make the first commit."""
    project = hook_repo.path
    snippet = readme_snippet()
    url = re.search(r"repo: (\S+)", snippet).group(1)  # type: ignore[union-attr]
    w = WorkRepo(tmp_path / "work")
    w.write(".pre-commit-config.yaml", snippet.replace(url, str(project)))
    w.write("src/app.py", "print('hi')\n")
    env = git_env(HUMAN, PRE_COMMIT_HOME=str(pc_home), PRE_COMMIT_COLOR="never")
    out = subprocess.run([*PRE_COMMIT, "install"], cwd=w.path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    git(w.path, "add", "-A")
    pc = {k: v for k, v in env.items() if k.startswith("PRE_COMMIT")}
    out = git(w.path, "commit", "-q", "-m", "first", check=False, env=pc)
    said = out.stdout + out.stderr
    assert out.returncode == 1, said
    assert ("gate: commit rejected: GATE-CLIENT-NO-POLICY: commit .gate/policy.toml (docs/client.md): the client "
            "hooks read the policy from it, and it is not in the work tree, and nothing is committed yet") in said, said
    assert '"actor": "developer"' in said and "gate server" not in said and "neither" not in said, said
    assert "hint: GATE-CLIENT-NO-POLICY: commit .gate/policy.toml" in said, said

    (tmp_path / "policy.toml").write_text(POLICY)
    run_block("readme-client-setup", {"/path/to/policy.toml": str(tmp_path / "policy.toml")}, w.path,
              env={**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"})
    assert git(w.path, "show", "HEAD:.gate/policy.toml").stdout == POLICY
    w.write("src/app.py", "print('hello')\n")
    git(w.path, "add", "-A")
    out = git(w.path, "commit", "-q", "-m", "the app", check=False, env=pc)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_readme_snippets_commit_hooks_see_the_tree_git_commits(tmp_path: Path, hook_repo: HookRepo,
                                                                    pc_home: Path) -> None:
    """git builds the commit's tree from the index right after the pre-commit stage, before the editor
    and prepare-commit-msg run; the commit-msg stage reads the index as it is after them. An agent's
    editor that unstages its frozen change once the tree is built (`GIT_EDITOR`, `core.editor`, no
    switch-off the agent check looks for) leaves the commit-msg stage an index without it, and git
    commits the tree with it: the snippet's hooks must still stop that commit (the pre-commit stage
    sees the tree git commits)."""
    snippet = readme_snippet()
    url = re.search(r"repo: (\S+)", snippet).group(1)  # type: ignore[union-attr]
    rev = re.search(r"^    rev: (\S+)", snippet, re.M).group(1)  # type: ignore[union-attr]
    config = snippet.replace(url, str(hook_repo.path)).replace(f"rev: {rev}", f"rev: {hook_repo.rev}")
    w, env = _installed(tmp_path, config, pc_home)
    before = w.head()
    w.write("ci/deploy.yml", "deploy: agent\n")
    git(w.path, "add", "-A")
    pc = {k: v for k, v in env.items() if k.startswith("PRE_COMMIT")}
    editor = "git reset -q -- ci/deploy.yml; printf 'agent change\\n' >"
    out = git(w.path, "commit", "-q", identity=AGENT, check=False, env={**pc, "GIT_EDITOR": editor})
    committed = git(w.path, "diff", "--name-only", before, "HEAD").stdout.split()
    assert out.returncode == 1 and w.head() == before, (committed, out.stdout + out.stderr)
    assert "GATE-FROZEN-PATH" in out.stdout + out.stderr, out.stdout + out.stderr
