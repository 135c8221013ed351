"""The client hooks and the server agree, on every change of the parity corpora, without a transport:
the pre-commit stage (`python -m hooks.frozen_commit` on the staged change), the pre-push stage
(`hooks.frozen_push` and `hooks.receipt_push` on git's pre-push input) and the server (the engine,
in process, on the same objects) give the same exit status and the same codes.

The hooks run as git runs them (their own processes, in the work repository, with git's input),
not through the pre-commit framework; `tests/client/` runs the framework, `git commit` and
`git push` for real, with one change of each corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

import pytest
from support.corpus import FROZEN_CORPUS, corpus_kind, stage
from support.engine import EngineServer
from support.gitutil import AGENT, HUMAN, WorkRepo, git, git_env
from support.precommit import CLIENT_POLICY, Verdict

ZERO = "0" * 40

def hook_verdict(out: subprocess.CompletedProcess[str]) -> Verdict:
    """A hook's exit status and the codes of its gate-json lines."""
    codes = {json.loads(line[len("gate-json: "):]).get("code") for line in out.stderr.splitlines()
             if line.startswith("gate-json: ")}
    return Verdict(out.returncode, frozenset(c for c in codes if c))


@dataclass
class Client:
    """A work repository with the client policy committed, its remote an `EngineServer`."""

    server: EngineServer
    base: str

    @property
    def work(self) -> WorkRepo:
        return self.server.work

    def hook(self, module: str, *args: str, env: dict[str, str], stdin: str = "") -> Verdict:
        out = subprocess.run([sys.executable, "-m", module, *args], input=stdin, cwd=self.work.path, env=env,
                             capture_output=True, text=True)
        return hook_verdict(out)

    def pre_push(self, lines: list[tuple[str, str, str, str]], env: dict[str, str]) -> Verdict:
        """Both push hooks on git's pre-push input (local ref, local id, remote ref, remote id): the
        first that refuses answers, as git's hook runs them."""
        stdin = "".join(" ".join(line) + "\n" for line in lines)
        url = f"file://{self.server.bare}"
        for module, args in (("hooks.frozen_push", ()), ("hooks.receipt_push", ("--repository-id", "demo/repo"))):
            got = self.hook(module, *args, "origin", url, env=env, stdin=stdin)
            if got.rejected:
                return got
        return got

    def fetched(self) -> None:
        """The remote-tracking refs as `git clone` and `git fetch origin` leave them: the server's
        branches, and origin/HEAD naming its default branch (where the hooks read the policy)."""
        for name, value in self.server.refs().items():
            if name.startswith("refs/heads/"):
                git(self.work.path, "update-ref", "refs/remotes/origin/" + name[len("refs/heads/"):], value)
        git(self.work.path, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Client:
    root = tmp_path_factory.mktemp("client-parity")
    server = EngineServer(root, policy=CLIENT_POLICY)
    w = server.work
    w.write("README", "hello\n")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.write("src/app.py", "print('hi')\n")
    w.write(".gate/policy.toml", CLIENT_POLICY)
    base = w.commit("base", identity=HUMAN)
    w.git("remote", "add", "origin", f"file://{server.bare}")
    assert server.push("main").ok
    c = Client(server, base)
    c.fetched()
    return c


@pytest.mark.parametrize("scenario", sorted(FROZEN_CORPUS))
def test_both_client_stages_and_the_server_agree_on_a_frozen_change(client: Client, scenario: str) -> None:
    author, committer, pusher, codes = FROZEN_CORPUS[scenario]
    w = client.work
    branch = f"corpus-{scenario}"
    w.git("checkout", "-q", "-f", "-B", branch, client.base)
    w.git("clean", "-q", "-fdx")
    env = git_env(author, GIT_COMMITTER_NAME=committer[0], GIT_COMMITTER_EMAIL=committer[1])
    if pusher is not None:
        env["GATE_PUSHER"] = pusher  # the client's guess of the server's truth (REMOTE_USER)
    stage(w, corpus_kind(scenario))
    at_commit = client.hook("hooks.frozen_commit", env=env)
    w.git("commit", "-q", "--no-verify", "-m", scenario, identity=author, env=env)
    head = w.head()
    at_push = client.pre_push([(f"refs/heads/{branch}", head, f"refs/heads/{branch}", ZERO)], env)
    server = client.server.push(f"{head}:refs/heads/{branch}",
                                pusher_env=None if pusher is None else {"REMOTE_USER": pusher})
    expected = Verdict(1 if codes else 0, frozenset(codes))
    assert at_commit == at_push == Verdict(server.exit_code, frozenset(server.codes)) == expected, server.output


PUSH_CORPUS = ("rewind_discards_frozen", "delete_by_restricted_pusher", "two_refs_second_bad", "tag_on_agent_commit")


@pytest.mark.parametrize("scenario", PUSH_CORPUS)
def test_every_ref_of_gits_pre_push_input_is_judged_as_the_server_judges_it(client: Client, scenario: str) -> None:
    """What pre-commit drops or never sees (no new commits, deletions, a second ref, an annotated tag):
    the hooks read git's own pre-push input."""
    w, s = client.work, client.server
    w.git("checkout", "-q", "-f", "-B", f"push-{scenario}", client.base)
    w.git("clean", "-q", "-fdx")
    pusher: dict[str, str] = {}
    if scenario == "rewind_discards_frozen":  # no new commits: pre-commit would not even run
        w.write("ci/deploy.yml", "b\n")
        human = w.commit("human ci", identity=HUMAN)
        target = f"refs/heads/rewind-{scenario}"
        assert s.push(f"{human}:{target}").ok
        pusher = {"REMOTE_USER": "agent-1"}
        lines = [("refs/heads/x", client.base, target, human)]
        refspecs: tuple[str, ...] = (f"+{client.base}:{target}",)
        expected = {"GATE-FROZEN-REF"}
    elif scenario == "delete_by_restricted_pusher":  # pre-commit drops deletions
        target = "refs/heads/old-branch"
        assert s.push(f"{client.base}:{target}").ok
        pusher = {"REMOTE_USER": "agent-1"}
        lines = [("(delete)", ZERO, target, client.base)]
        refspecs = (f":{target}",)
        expected = {"GATE-REF-DELETE"}
    elif scenario == "two_refs_second_bad":
        w.write("ci/x.yml", "x\n")
        agent = w.commit("agent", identity=AGENT)
        w.git("checkout", "-q", "-f", "--detach", client.base)
        w.write("README", "y\n")
        human = w.commit("human", identity=HUMAN)
        lines = [("refs/heads/h2", human, "refs/heads/h2", ZERO), ("refs/heads/a2", agent, "refs/heads/a2", ZERO)]
        refspecs = (f"{human}:refs/heads/h2", f"{agent}:refs/heads/a2")
        expected = {"GATE-FROZEN-PATH"}
    else:
        w.write("ci/deploy.yml", "tagged\n")
        agent = w.commit("agent", identity=AGENT)
        w.git("tag", "-a", "-m", "t", "v1", agent, identity=HUMAN)
        tag = w.head("refs/tags/v1")
        lines = [("refs/tags/v1", tag, "refs/tags/v1", ZERO)]
        refspecs = ("refs/tags/v1",)
        expected = {"GATE-FROZEN-PATH"}
    client.fetched()
    env = git_env(HUMAN, **({"GATE_PUSHER": pusher["REMOTE_USER"]} if pusher else {}))
    at_push = client.pre_push(lines, env)
    server = s.push(*refspecs, pusher_env=pusher)
    assert at_push == Verdict(server.exit_code, frozenset(server.codes)) == Verdict(1, frozenset(expected)), \
        server.output
