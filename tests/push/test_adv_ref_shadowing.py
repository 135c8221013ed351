"""Refs that git's short-name lookup prefers to a review ref.

git resolves a short name through `refs/NAME`, `refs/tags/NAME`, `refs/heads/NAME`, ... in that
order (`git help revisions`), and takes the first that exists ("warning: refname ... is
ambiguous"). So `review/runner/<id>` - what a maintainer types to inspect or merge a review
(`git checkout review/runner/<id>` in a clone, which fetches tags; `git merge`, `git log`,
`git archive` on the server or a mirror) - names `refs/review/runner/<id>` or
`refs/tags/review/runner/<id>` before the review ref `refs/heads/review/runner/<id>`. The gate
reserves the review namespace to the trusted runner, and an agent created either shadow, pointing at
a commit nobody reviewed, and the hook accepted it. Now neither is taken from anyone
(GATE-REF-RESERVED: `refs.REVIEW_SHADOWS`); one already there may be deleted."""

from __future__ import annotations

import pytest
from support.gitutil import AGENT, git
from support.lab import AGENT_PUSH, RUNNER, Lab


@pytest.mark.parametrize("shadow", ["refs/review/runner/", "refs/tags/review/runner/"])
def test_an_agent_cannot_shadow_a_review_ref_by_its_short_name(lab: Lab, shadow: str) -> None:
    attempt = lab.fresh()
    unreviewed = lab.change(f"shadow-{attempt}", identity=AGENT)  # an ordinary change, reviewed by nobody
    out = lab.server.push(f"{unreviewed}:{shadow}{attempt}", pusher_env=AGENT_PUSH)
    resolved = git(lab.server.bare, "rev-parse", "-q", "--verify", f"review/runner/{attempt}", check=False)
    assert resolved.stdout.strip() != unreviewed, "review/runner/<id> names the agent's unreviewed commit"
    assert out.returncode != 0 and "GATE-REF-RESERVED" in out.stderr, out.stderr


def test_not_even_the_runner_creates_a_shadow_and_one_already_there_may_go(lab: Lab) -> None:
    """The trusted runner writes review refs under their own name only; a shadow an older server
    took (or an admin wrote) is deleted by a push as any ref is."""
    attempt = lab.fresh()
    commit = lab.change(f"shadow-runner-{attempt}")
    out = lab.server.push(f"{commit}:refs/tags/review/runner/{attempt}", pusher_env=RUNNER)
    assert out.returncode != 0 and "GATE-REF-RESERVED" in out.stderr, out.stderr
    main = git(lab.server.bare, "rev-parse", "refs/heads/main").stdout.strip()
    git(lab.server.bare, "update-ref", f"refs/review/runner/{attempt}", main)
    out = lab.server.push(f":refs/review/runner/{attempt}", pusher_env=RUNNER)
    assert out.returncode == 0, out.stderr
    assert git(lab.server.bare, "rev-parse", "-q", "--verify", f"refs/review/runner/{attempt}",
               check=False).returncode != 0
