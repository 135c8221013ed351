"""The parity corpus (`support.corpus.FROZEN_CORPUS`) through both client stages and the server,
through the real pre-commit framework (`git commit`, `git push`) and a real push: the same exit
status and codes everywhere. Here an agent's change, an agent's account pushing a human's change,
and a human's change; every scenario of the corpus runs without the framework and the transport in
`tests/engine/test_client_parity.py` (the hooks on git's input, the server in process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.corpus import FROZEN_CORPUS, corpus_kind, stage
from support.precommit import (
    Verdict,
    client_verdict,
    commit,
    pc_env,
    push_both,
    text,
)
from support.server import Server


@pytest.mark.parametrize("scenario", ["modify", "pusher", "human"])
def test_parity_frozen_files_commit_stage_push_stage_and_server(gated: Server, pc_home: Path,
                                                                scenario: str) -> None:
    author, committer, pusher, codes = FROZEN_CORPUS[scenario]
    w = gated.work
    env = pc_env(pc_home, GIT_COMMITTER_NAME=committer[0], GIT_COMMITTER_EMAIL=committer[1])
    if pusher is not None:
        env.update(GATE_PUSHER=pusher, REMOTE_USER=pusher)  # the client's guess, the server's truth
    stage(w, corpus_kind(scenario))
    before = w.head()
    out = commit(w, scenario, author, env)
    at_commit = client_verdict(out)
    if at_commit.rejected:
        assert w.head() == before
        assert commit(w, scenario, author, env, "--no-verify").returncode == 0
    else:
        assert out.returncode == 0, text(out)
    at_push, server, out = push_both(gated, "main", env=env)
    expected = Verdict(1 if codes else 0, frozenset(codes))
    assert at_commit == at_push == server == expected, text(out)

