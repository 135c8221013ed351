"""The differential between the hook and `gate check` through real pushes (issue 49): one change of
each family pushed into a gated bare repository by `git push` (the installed pre-receive hook
decides), and the same commit judged by `gate check --target <the server's main> --head <the pushed
commit> --ref <the pushed branch>` on a CI clone of the server as it stood before the push. Same exit,
same (code, path, rule). Every family of the push tier runs in process the same way
(tests/engine/test_check_differential.py); this keeps one real push of each."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.checkparity import Judgement, check_update, ci_clone, fetch_into, of_check, of_push
from support.corpus import stage
from support.gitutil import AGENT, HUMAN
from support.server import seeded

from gatecore.git.refs import RefUpdate

POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml", "vendor/sub"]
authors = ["*@agents.example.com", "@known-agents"]
names = ["@known-agents"]
trailers = ["@known-agents"]
pushers = ["agent-*"]
[[freeze]]
name = "release-notes"
paths = ["notes/**"]
authors = ["*@agents.example.com"]
refs = ["refs/heads/release/*"]
"""
FROZEN = ("GATE-FROZEN-PATH", "ci/deploy.yml", "freeze[0]:governance")


class Parity:
    def __init__(self, root: Path) -> None:
        self.server = seeded(root, POLICY)
        self.ci = ci_clone(root / "ci", self.server.work, "sha1")
        self.policy = root / "check-policy.toml"
        self.policy.write_text(POLICY)
        self.n = 0

    def both(self, head: str, ref: str | None = None, pusher: str | None = None) -> tuple[Judgement, Judgement]:
        """`head` pushed to `ref` (default: a new branch) by `pusher`, and checked as a pull request onto it."""
        self.n += 1
        ref = ref or f"refs/heads/pr/{self.n}"
        before = self.server.refs()
        fetch_into(self.ci, before)
        zero = "0" * 40
        update = RefUpdate(before.get(ref, zero), head, ref.encode())
        check = of_check(check_update(self.ci, update, before, pusher or "hana", self.policy, None, "demo/repo"))
        out = self.server.push(f"{head}:{ref}", pusher_env={"REMOTE_USER": pusher or "hana"})
        return of_push(out), check

    def commit(self, edit: str | None = None, author: tuple[str, str] = AGENT, committer: tuple[str, str] | None = None,
               message: str = "change", start: str = "main", files: dict[str, str] | None = None) -> str:
        w = self.server.work
        w.git("checkout", "-q", "-f", "-B", "parity", start)
        w.git("clean", "-q", "-fdx")
        if edit is not None:
            stage(w, edit)
        for rel, text in (files or {}).items():
            w.write(rel, text)
            w.git("add", rel)  # (not -A: a submodule pointer staged by `stage` is in the index only)
        env = {} if committer is None else {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        w.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message, identity=author, env=env)
        return w.head()


@pytest.fixture(scope="module")
def parity(tmp_path_factory: pytest.TempPathFactory) -> Parity:
    return Parity(tmp_path_factory.mktemp("parity"))


@pytest.mark.parametrize(("kind", "path"), [
    ("modify", "ci/deploy.yml"), ("delete", "ci/deploy.yml"), ("rename_out", "ci/deploy.yml"),
    ("rename_in", "ci/app.py"), ("mode", "ci/deploy.yml"), ("symlink", "ci/deploy.yml"),
    ("file_to_dir", "ci/deploy.yml"), ("submodule", "vendor/sub"), ("not_frozen", None),
])
def test_each_kind_of_write_is_judged_alike(parity: Parity, kind: str, path: str | None) -> None:
    hook, check = parity.both(parity.commit(kind))
    assert hook == check
    if path is None:
        assert hook == Judgement(0, frozenset())
    else:
        assert hook.exit_code == 1 and ("GATE-FROZEN-PATH", path, "freeze[0]:governance") in hook.found


@pytest.mark.parametrize(("author", "committer", "message", "pusher", "expected"), [
    (HUMAN, AGENT, "change", None, 1),
    (("Hana Human (aider)", "hana@example.com"), None, "change", None, 1),
    (HUMAN, None, "change\n\nCo-authored-by: Claude <noreply@anthropic.com>\n", None, 1),
    (HUMAN, None, "change\n\nAssisted-by: Claude:claude-opus-4\n", None, 1),
    (HUMAN, None, "change", "agent-1", 1),
    (HUMAN, None, "change", None, 0),
], ids=["committer", "name", "co-author", "trailer", "pusher", "human"])
def test_each_identity_is_judged_alike(parity: Parity, author: tuple[str, str], committer: tuple[str, str] | None,
                                       message: str, pusher: str | None, expected: int) -> None:
    hook, check = parity.both(parity.commit("modify", author, committer, message), pusher=pusher)
    assert hook == check
    assert hook == (Judgement(1, frozenset({FROZEN})) if expected else Judgement(0, frozenset()))


def test_a_merge_keeping_a_stale_side_is_judged_alike(parity: Parity) -> None:
    """A human hardens ci/ on main; the agent's merge of main into its old branch keeps the old file."""
    agent = parity.commit(files={"src/agent.py": "1\n"})
    hardened = parity.commit(author=HUMAN, files={"ci/deploy.yml": "deploy: hardened\n"})
    assert parity.both(hardened, "refs/heads/main") == (Judgement(0, frozenset()),) * 2
    w = parity.server.work
    w.git("checkout", "-q", "-f", "--detach", agent)
    w.git("merge", "-q", "-s", "ours", "--no-edit", hardened, identity=AGENT)
    hook, check = parity.both(w.head())
    assert hook == check == Judgement(1, frozenset({FROZEN}))


def test_a_scoped_rule_is_judged_alike(parity: Parity) -> None:
    notes = parity.commit(files={"notes/1.md": "agent's notes\n"})
    assert parity.both(notes) == (Judgement(0, frozenset()),) * 2  # a pull request onto pr/N: out of scope
    hook, check = parity.both(notes, "refs/heads/release/1")
    assert hook == check == Judgement(1, frozenset({("GATE-FROZEN-PATH", "notes/1.md", "freeze[1]:release-notes")}))
    assert parity.server.ref("refs/heads/release/1") is None

