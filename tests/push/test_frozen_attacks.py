"""Frozen paths written indirectly, through real pushes: one attack of each family (an evil merge,
a look-alike path, a look-alike pusher, a ref-name trick, a malformed tree), a symbolic ref on the
server, evaluate mode. The tests are `support.cases.frozen`, whose every case (merges, renames,
modes, symlinks, submodules, look-alike paths and identities, ref-name tricks, deep and huge trees)
runs in process in `tests/engine/test_frozen_permutations.py` (SHA-256 repositories:
test_sha256.py)."""

from __future__ import annotations

from support.cases import frozen as cases
from support.cases.frozen import (  # noqa: F401
    test_a_symbolic_ref_into_the_review_namespace_does_not_bypass_the_gate,
    test_a_tree_with_duplicate_entries_is_rejected,
    test_evaluate_mode_does_not_open_the_reserved_namespaces,
    test_merge_with_an_evil_resolution_is_rejected,
)
from support.gitutil import HUMAN
from support.lab import RUNNER, Lab

from gatecore.git.refs import REVIEW_PREFIX


def test_a_case_and_trailing_dot_look_alike_path_is_frozen(lab: Lab) -> None:
    cases.test_case_and_unicode_look_alike_paths_are_frozen(lab, "Gate.Toml. .")


def test_an_upper_case_agent_pusher_is_restricted(lab: Lab) -> None:
    """The pusher's account as the web server authenticated it, in another case."""
    cases.test_look_alike_identities_are_restricted(lab, HUMAN, None, {"REMOTE_USER": "AGENT-1"})


def test_a_nested_review_ref_name_is_refused(lab: Lab) -> None:
    cases.test_ref_name_tricks_in_the_reserved_namespaces(lab, f"{REVIEW_PREFIX}nested/id", RUNNER, "GATE-REF-NAME")
