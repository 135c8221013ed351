"""Every indirect write of a frozen path, decided by the engine in process: merges, renames, modes,
symlinks, submodules, look-alike paths and identities, ref-name tricks, malformed, deep and huge
trees, evaluate mode.

The cases are `support.cases.frozen`, collected here with an `EngineLab` (real objects, the lab's
policy; `PushChecker` decides). `tests/push/test_frozen_attacks.py` keeps one real push per family.
"""

from __future__ import annotations

from support.cases.frozen import (  # noqa: F401
    deep_commit,
    test_a_deeply_nested_frozen_write_is_rejected,
    test_a_deeply_nested_frozen_write_is_rejected_as_frozen,
    test_a_huge_frozen_tree_is_rejected,
    test_a_symbolic_ref_into_the_review_namespace_does_not_bypass_the_gate,
    test_a_symlink_pointing_into_a_frozen_dir_writes_nothing_frozen,
    test_a_tree_with_duplicate_entries_is_rejected,
    test_agent_cannot_squat_the_parent_of_the_review_namespace,
    test_agent_committer_with_human_author_is_rejected,
    test_agent_push_to_reserved_namespaces_is_rejected,
    test_agent_rebase_onto_newer_frozen_content_is_accepted,
    test_agent_writes_a_frozen_path_indirectly,
    test_all_refs_of_a_push_are_checked,
    test_annotated_tag_on_a_new_agent_commit_is_checked,
    test_case_and_unicode_look_alike_paths_are_frozen,
    test_case_variant_of_the_review_namespace_is_an_ordinary_branch_still_frozen,
    test_commit_identity_alone_is_self_asserted,
    test_evaluate_mode_does_not_open_the_reserved_namespaces,
    test_evaluate_mode_reports_and_accepts,
    test_every_change_kind_by_an_agent_is_rejected,
    test_every_violation_is_listed_then_capped,
    test_fast_forward_of_a_protected_branch_to_commits_that_landed_elsewhere,
    test_gitmodules_games_are_rejected,
    test_hfs_ignorable_code_points_are_frozen,
    test_identity_globs_are_case_insensitive,
    test_look_alike_identities_are_restricted,
    test_merge_taking_a_frozen_change_from_a_parent_is_accepted,
    test_merge_that_reverts_a_frozen_file_to_a_stale_parent_is_rejected,
    test_merge_with_an_evil_resolution_is_rejected,
    test_non_frozen_change_by_agent_is_accepted,
    test_non_utf8_frozen_path_is_escaped_in_output,
    test_ref_name_tricks_in_the_reserved_namespaces,
    test_restricted_pusher_cannot_delete_refs_but_humans_can,
    test_rewinding_away_a_human_frozen_change_is_rejected,
)
