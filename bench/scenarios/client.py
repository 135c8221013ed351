"""The client hooks, each command timed directly as pre-commit runs it (`gate-frozen-commit`, a
pre-push run), and a whole commit through the real pre-commit framework."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

from .. import hooks
from ..generate import AGENTS, FROZEN_FILES, _bulk
from ..gitenv import Git, link_copy
from .core import BenchCore, Case, _k


class Clients(BenchCore):
    def client(self) -> list[Case]:
        """The client hooks, each command timed directly (no push around it), as pre-commit runs
        them: `gate-frozen-commit` on a small staged change and on 5,000 staged files, and a
        pre-push run (`gate-frozen-push` then `gate-receipt-push`) of one agent commit with no
        review ref. The policy is .gate/policy.toml, committed (and on the remote)."""
        s = self.sizes
        bindir = Path(sys.executable).parent
        scripts = {name: bindir / name for name in ("gate-frozen-commit", "gate-frozen-push", "gate-receipt-push")}
        missing = [str(p) for p in scripts.values() if not p.exists()]
        if missing or importlib.util.find_spec("hooks.frozen_commit") is None:
            return [Case("client", "client hooks", {}, skipped=f"console scripts missing: {', '.join(missing)}")]
        agent = AGENTS[0]
        as_agent = {**self.git.env, "GIT_AUTHOR_NAME": agent[0], "GIT_AUTHOR_EMAIL": agent[1],
                    "GIT_COMMITTER_NAME": agent[0], "GIT_COMMITTER_EMAIL": agent[1]}
        peer = self.work / "client-peer.sh"
        peer.write_text(CLIENT_PEER)
        push_peer = self.work / "pre-push-peer.sh"
        push_peer.write_text(PRE_PUSH_PEER)
        cases = []

        small = self._client_clone(s.small_files)
        commit_cmds = {"none": ["true"], "floor": ["git", "diff", "--cached", "--name-only", "-z"],
                       "peer": ["/bin/sh", str(peer)], "gate": [str(scripts["gate-frozen-commit"])]}
        cases.append(self.timed_case(
            "client", f"client: gate-frozen-commit, {s.small_files} staged files as an agent, in a clone of "
            f"{_k(s.small_commits)} commits", small, as_agent, commit_cmds, "commit-small",
            f"client: commit hook, {s.small_files} files"))
        self.git.run("commit", "-q", "-m", "agent: the pushed change", cwd=small, extra=as_agent)
        new = self.git.out("rev-parse", "HEAD", cwd=small)
        base = self.git.out("rev-parse", "refs/remotes/origin/main", cwd=small)
        precommit = {**as_agent, "PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": new,
                     "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
                     "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main", "GATE_PUSHER": "agent-1"}
        both = f"{scripts['gate-frozen-push']} && {scripts['gate-receipt-push']}"
        push_cmds = {"none": ["true"], "floor": ["git", "rev-list", new, "--not", "--remotes=origin"],
                     "peer": ["/bin/sh", str(push_peer)], "gate": ["/bin/sh", "-c", both]}
        cases.append(self.timed_case(
            "client", "client: a pre-push run with no review ref (gate-frozen-push + gate-receipt-push, as "
            "pre-commit runs them), one agent commit of "
            f"{s.small_files} files", small, precommit, push_cmds, "pre-push", "client: pre-push, no review ref"))
        shutil.rmtree(small, ignore_errors=True)
        cases += self.precommit_commits(as_agent)

        large = self.work / "client-repo"
        self._client_repo(large, s.client_files)
        cases.append(self.timed_case(
            "client", f"client: gate-frozen-commit, {_k(s.client_files)} staged files as an agent", large, as_agent,
            commit_cmds, "commit-large", f"client: commit hook, {_k(s.client_files)} files"))
        shutil.rmtree(large, ignore_errors=True)
        return cases

    def precommit_commits(self, env: dict[str, str]) -> list[Case]:
        """A commit through the real pre-commit framework: `git commit` of a small staged
        change, as an agent, in a clone whose `.pre-commit-config.yaml` runs the gate's commit hooks as
        the README configures them (`gate-frozen-files` and `gate-frozen-files-msg`, from this project
        as a hook repository, the environment pre-commit builds for it), and in one that runs the
        commit-msg hook alone ("gate-msg": what one of them costs), and in one whose two hooks only start
        Python ("py-floor": `language: python`, `python -I -c pass`, one a stage: the floor under any two
        hooks in Python), against the same commit in a clone
        whose pre-commit runs one trivial hook (`language: system`, `entry: true`, at both stages),
        and with no hook at all (`--no-verify`). Every configuration installs the same hook types
        (pre-commit and commit-msg: git starts pre-commit twice either way). Each commit is undone
        after it is timed (`reset --soft`, in the same command for every variant)."""
        s = self.sizes
        home = self.cache.root.parent / "pre-commit-home"  # the hook environment is built once, and kept
        hook_repo = self.cache.root.parent / "hook-repo"  # (one path: pre-commit keys its environments by it)
        rev = _project_snapshot(self.git, hook_repo)
        pc_env = {**env, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
        configs = {
            "peer": ("repos:\n- repo: local\n  hooks:\n  - id: trivial\n    name: trivial\n    language: system\n"
                     "    entry: 'true'\n    pass_filenames: false\n    always_run: true\n"),
            "gate": (f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: gate-frozen-files\n"
                     "  - id: gate-frozen-files-msg\n"),
            "gate-msg": f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: gate-frozen-files-msg\n",
            # the floor under the gate's two hooks: two `language: python` hooks that only start Python,
            # one a stage (pre-commit checks a Python hook's environment before it runs it)
            "py-floor": "repos:\n- repo: local\n  hooks:\n" + "".join(
                f"  - id: floor-{stage}\n    name: floor\n    language: python\n    entry: python -I -c pass\n"
                f"    pass_filenames: false\n    always_run: true\n    stages: [{stage}]\n"
                for stage in ("pre-commit", "commit-msg")),
        }
        repos = {}
        for variant, config in configs.items():
            repo = self._client_clone(s.small_files, name=f"precommit-{variant}")
            self.git.run("reset", "-q", cwd=repo)
            (repo / ".pre-commit-config.yaml").write_text(
                "default_install_hook_types: [pre-commit, commit-msg]\n" + config)
            self.git.run("add", ".pre-commit-config.yaml", cwd=repo)
            self.git.run("commit", "-q", "--no-verify", "-m", "pre-commit configuration", cwd=repo)
            for args in (["install"], ["install-hooks"]):
                proc = subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=pc_env,
                                      capture_output=True, check=False)
                if proc.returncode != 0:
                    return [Case("client", "client: commits through pre-commit", {},
                                 skipped=f"pre-commit {args[0]}: " + (proc.stdout + proc.stderr).decode(errors="replace")[-300:])]
            paths = sorted(self.git.out("ls-files", "src", cwd=repo).splitlines())[:s.small_files]
            for i, rel in enumerate(paths):
                (repo / rel).write_text(f"changed by the agent {i}\n")
            self.git.run("add", *paths, cwd=repo)
            repos[variant] = repo

        def commit(repo: Path, *extra: str) -> list[str]:
            # (sh -c SCRIPT REPO: $0 is the repository)
            return ["/bin/sh", "-c", f"cd \"$0\" && git commit -q {' '.join(extra)} -m 'agent: a change' && "
                    "git reset -q --soft HEAD~1", str(repo)]

        commands = {"none": commit(repos["gate"], "--no-verify"), "peer": commit(repos["peer"]),
                    "gate": commit(repos["gate"]), "gate-msg": commit(repos["gate-msg"]),
                    "py-floor": commit(repos["py-floor"])}
        case = self.timed_case("client", f"client: a commit through pre-commit ({s.small_files} staged files, as an "
                               "agent): the gate's commit hooks (the commit-msg one alone: gate-msg; two hooks that only start Python: "
                               "py-floor) against one trivial hook", self.work, pc_env,
                               commands, "precommit", f"client: commit via pre-commit, {s.small_files} files")
        for repo in repos.values():
            shutil.rmtree(repo, ignore_errors=True)
        return [case]

    def _client_repo(self, repo: Path, files: int) -> None:
        """HEAD: the policy, the frozen files and `files` files; staged: half of them changed, as many new."""
        import random

        rng = random.Random(5)
        self.git.run("init", "-q", "-b", "main", str(repo))
        (repo / ".gate").mkdir()
        (repo / ".gate" / "policy.toml").write_text(hooks.POLICY)
        for p in FROZEN_FILES:
            (repo / p).parent.mkdir(parents=True, exist_ok=True)
            (repo / p).write_text(f"{p}\n")
        paths = [f"src/d{i % 50:02d}/f{i:05d}.txt" for i in range(files)]
        for p in paths:
            (repo / p).parent.mkdir(parents=True, exist_ok=True)
            (repo / p).write_bytes(_bulk(rng, 300))
        self.git.run("add", "-A", cwd=repo)
        self.git.run("commit", "-q", "-m", "base", cwd=repo)
        for p in paths[: files // 2]:
            (repo / p).write_bytes(_bulk(rng, 300))
        for i in range(files - files // 2):
            new = repo / f"new/d{i % 50:02d}/n{i:05d}.txt"
            new.parent.mkdir(parents=True, exist_ok=True)
            new.write_bytes(_bulk(rng, 300))
        self.git.run("add", "-A", cwd=repo)

    def _client_clone(self, files: int, name: str = "client-clone") -> Path:
        """A clone (with `origin`) of the small scenario's history, whose remote has the policy
        committed, with `files` changed files staged."""
        s = self.sizes
        hist = self.cache.history(s.small_commits, s.files)
        server = self.work / f"{name}-server.git"
        link_copy(hist, server)
        (server / "bench-done").unlink(missing_ok=True)
        repo = self.work / name
        self.git.run("clone", "-q", str(server), str(repo))
        (repo / ".gate").mkdir(exist_ok=True)
        (repo / ".gate" / "policy.toml").write_text(hooks.POLICY)
        self.git.run("add", ".gate/policy.toml", cwd=repo)
        self.git.run("commit", "-q", "-m", "the gate's policy", cwd=repo)
        self.git.run("push", "-q", "origin", "HEAD:refs/heads/main", cwd=repo)
        paths = sorted(self.git.out("ls-files", "src", cwd=repo).splitlines())[:files]
        for i, rel in enumerate(paths):
            (repo / rel).write_text(f"changed by the agent {i}\n")
        self.git.run("add", *paths, cwd=repo)
        return repo


#: The native peers' frozen-path filter over `git log/diff --raw` lines (case-folded, trailing
#: dots and spaces dropped, as the gate reads names).
_FROZEN_AWK = """awk '
/^:/ {
  p = tolower(substr($0, index($0, "\\t") + 1))
  gsub(/[ .]+\\//, "/", p); sub(/[ .]+$/, "", p)
  if (p == "ci" || p ~ /^ci\\// || p == "gate.toml" || p ~ /^gate\\.toml\\// ||
      p == ".pre-commit-config.yaml" || p ~ /^\\.pre-commit-config\\.yaml\\//) { print "frozen: " p; bad = 1 }
}
END { exit bad }'
"""

PRE_PUSH_PEER = """#!/bin/sh
# bench pre-push peer: the pushed commits (pre-commit's variables) checked against the frozen
# paths in native git, every commit (GATE_PUSHER is an agent), as the server's peer does
git -c core.quotePath=false log --no-renames --full-history -c --raw --format='commit %H' \\
    "$PRE_COMMIT_TO_REF" --not --remotes="$PRE_COMMIT_REMOTE_NAME" -- ':(icase)ci*' ':(icase)gate.toml*' \\
    ':(icase).pre-commit-config.yaml*' | """ + _FROZEN_AWK


CLIENT_PEER = """#!/bin/sh
# bench client peer: the staged change checked against the frozen paths, in native git
case "$(git var GIT_AUTHOR_IDENT) $(git var GIT_COMMITTER_IDENT)" in
  *@[Aa][Gg][Ee][Nn][Tt][Ss].[Ee][Xx][Aa][Mm][Pp][Ll][Ee].[Cc][Oo][Mm]\\>*) ;;
  *) exit 0 ;;
esac
git -c core.quotePath=false diff --cached --raw --no-renames -- ':(icase)ci*' ':(icase)gate.toml*' \\
    ':(icase).pre-commit-config.yaml*' | """ + _FROZEN_AWK


#: What pre-commit needs of this project to build the hooks' environment (tests/support/snapshot.py).
SNAPSHOT = ("gatecore", "server", "hooks", "pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml",
            "hatch_build.py", "VERSION")  # the build's version hook and the release it reads


def _project_snapshot(git: Git, dest: Path) -> str:
    """This project's files as a git repository (a forge's copy, for pre-commit's `repo:`/`rev:`):
    the commit id. The same files give the same id, so pre-commit's environment is built once."""
    root = Path(__file__).resolve().parents[2]
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in SNAPSHOT:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_build.py"))
        else:
            shutil.copy2(src, dest / name)
    fixed = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    git.run("init", "-q", "-b", "main", cwd=dest)
    git.run("add", "-A", cwd=dest)
    git.run("commit", "-q", "-m", "snapshot", cwd=dest, extra=fixed)
    return git.out("rev-parse", "HEAD", cwd=dest)
