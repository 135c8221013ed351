"""Refs that git's short-name lookup prefers to a review ref.

git resolves a short name through `refs/NAME`, `refs/tags/NAME`, `refs/heads/NAME`, ... in that
order (`git help revisions`), and takes the first that exists ("warning: refname ... is
ambiguous"). So `review/runner/<id>` - what a maintainer types to inspect or merge a review
(`git checkout review/runner/<id>` in a clone, which fetches tags; `git merge`, `git log`,
`git archive` on the server or a mirror) - names `refs/review/runner/<id>` or
`refs/tags/review/runner/<id>` before the review ref `refs/heads/review/runner/<id>`. The gate
reserves the review namespace to the trusted runner, but an agent creates either shadow,
pointing at a commit nobody reviewed, and the hook accepts it."""

from __future__ import annotations

import pytest
from support.gitutil import AGENT, git
from support.lab import AGENT_PUSH, Lab


@pytest.mark.xfail(strict=True, reason="refs/review/runner/* and refs/tags/review/runner/*, which git's short-name "
                                       "lookup takes before refs/heads/review/runner/*, are open to any pusher")
@pytest.mark.parametrize("shadow", ["refs/review/runner/", "refs/tags/review/runner/"])
def test_an_agent_cannot_shadow_a_review_ref_by_its_short_name(lab: Lab, shadow: str) -> None:
    attempt = lab.fresh()
    unreviewed = lab.change(f"shadow-{attempt}", identity=AGENT)  # an ordinary change, reviewed by nobody
    out = lab.server.push(f"{unreviewed}:{shadow}{attempt}", pusher_env=AGENT_PUSH)
    resolved = git(lab.server.bare, "rev-parse", "-q", "--verify", f"review/runner/{attempt}", check=False)
    assert resolved.stdout.strip() != unreviewed, "review/runner/<id> names the agent's unreviewed commit"
    assert out.returncode != 0
