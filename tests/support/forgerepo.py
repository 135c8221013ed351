"""A repository shaped like a forge with pull requests, and its checkout (tests/forges/)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .gitutil import AGENT, HUMAN, WorkRepo, git

POLICY = """\
[[freeze]]
paths = ["ci/**"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
"""
#: files a pull request can put in the checkout, each of which would run if Python imported it
#: from there (`python -m venv` and `-m pip` put the working directory first on sys.path)
HOSTILE_MODULES = ("venv/__init__.py", "pip/__init__.py", "ensurepip/__init__.py", "site.py")


@dataclass
class Forge:
    origin: Path
    workspace: Path
    main: str  # the target branch's tip
    agent_head: str  # an agent's change to ci/deploy.yml (branch feature)
    human_head: str  # a human's change to ci/deploy.yml (branch human)
    fork_head: str  # only at refs/pull/7/head: a fork's pull request, in no branch of the checkout
    review_head: str  # branch review/runner/A1
    older_head: str  # feature's tip before its last push (a lagging pull request head)
    ledger: str  # what refs/gate/attempts/A1 points at on the forge


def make_forge(root: Path) -> Forge:
    """A forge (`origin.git`) with a pull request's branches and a ledger ref, and its checkout as
    actions/checkout leaves it with fetch-depth 0 (every branch, no `refs/pull/*`), holding files a
    pull request could put there to run code if Python imported them from the working directory."""
    work = WorkRepo(root / "work")
    work.write("app.py", "print(1)\n")
    work.write("ci/deploy.yml", "deploy: v1\n")
    work.write(".gate/policy.toml", POLICY)
    main = work.commit("base", identity=HUMAN)
    work.git("checkout", "-q", "-b", "feature")
    work.write("app.py", "print(2)\n")
    older = work.commit("agent: app", identity=AGENT)
    work.write("ci/deploy.yml", "deploy: v2\n")
    agent_head = work.commit("agent: deploy", identity=AGENT)
    work.git("checkout", "-q", "-b", "human", "main")
    work.write("ci/deploy.yml", "deploy: v3\n")
    human_head = work.commit("human: deploy", identity=HUMAN)
    work.git("checkout", "-q", "-b", "review/runner/A1", "main")
    work.write("app.py", "print(4)\n")
    review_head = work.commit("agent: reviewed change", identity=AGENT)
    work.git("checkout", "-q", "--detach", "main")
    work.write("app.py", "print(5)\n")
    fork_head = work.commit("a fork's change", identity=AGENT)
    ledger = work.git("commit-tree", "-m", "ledger record", f"{main}^{{tree}}").stdout.strip()
    origin = root / "origin.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    git(origin, "config", "uploadpack.allowReachableSHA1InWant", "true")  # as GitHub serves commits by id
    work.git("push", "-q", str(origin), "main", "feature", "human", "review/runner/A1",
             f"{fork_head}:refs/pull/7/head", f"{ledger}:refs/gate/attempts/A1")
    workspace = root / "workspace"
    git(root, "clone", "-q", f"file://{origin}", str(workspace))  # as actions/checkout, fetch-depth 0: every branch
    for rel in HOSTILE_MODULES:
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text("import pathlib; pathlib.Path(__file__).with_suffix('.ran').touch()\n")
    (workspace / ".python-version").write_text("2.7\n")
    return Forge(origin, workspace, main, agent_head, human_head, fork_head, review_head, older, ledger)


class PullRequests:
    """A forge that runs no hook (`origin.git`, a bare repository every push lands in), an author's
    repository that pushes branches to it (`work`), and the CI job's clone (`ci`), fetched before each
    check as actions/checkout leaves it with fetch-depth 0, plus the forge's `refs/gate/*`.

    main starts with `.gate/policy.toml` (`policy`), ci/deploy.yml and app.py, by a human."""

    def __init__(self, root: Path, policy: str = POLICY, files: dict[str, str] | None = None) -> None:
        self.root = root
        self.work = WorkRepo(root / "work")
        for rel, text in {"app.py": "print(1)\n", "ci/deploy.yml": "deploy: v1\n", ".gate/policy.toml": policy,
                          **(files or {})}.items():
            self.work.write(rel, text)
        self.base = self.work.commit("base", identity=HUMAN)
        self.origin = root / "origin.git"
        git(root, "init", "-q", "--bare", "-b", "main", str(self.origin))
        self.work.git("remote", "add", "origin", f"file://{self.origin}")
        self.work.git("push", "-q", "origin", "main")
        self.ci = root / "ci"
        git(root, "clone", "-q", f"file://{self.origin}", str(self.ci))
        self.n = 0

    def branch(self, name: str, files: dict[str, str | None], identity: tuple[str, str] = AGENT,
               start: str = "main", message: str | None = None) -> str:
        """A commit by `identity` writing `files` (None: deleted) on branch `name` from `start`,
        force-pushed to the forge (a pull request's head; the forge runs no hook): its id."""
        self.work.git("checkout", "-q", "-f", "-B", name, start)
        for rel, text in files.items():
            if text is None:
                self.work.git("rm", "-q", "-r", rel)
            else:
                self.work.write(rel, text)
        head = self.work.commit(message or f"{name}: {', '.join(files)}", identity=identity)
        self.work.git("push", "-q", "-f", "origin", name)
        return head

    def advance(self, files: dict[str, str | None], identity: tuple[str, str] = HUMAN) -> str:
        """The target branch moves on: a commit on main, pushed."""
        return self.branch("main", files, identity, start="main")

    def tip(self, branch: str = "main") -> str:
        return git(self.origin, "rev-parse", f"refs/heads/{branch}").stdout.strip()

    def fetch(self) -> None:
        """The CI clone fetches what the forge holds: its branches, and the trusted side's refs/gate/*."""
        git(self.ci, "fetch", "-q", "--prune", "origin", "+refs/heads/*:refs/remotes/origin/*",
            "+refs/gate/*:refs/gate/*")
