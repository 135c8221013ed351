"""The change kinds every frozen-file test runs (server, both client stages, the digest).

Each kind edits a work tree whose base holds README, ci/deploy.yml and src/app.py, and
stages the result (`git add -A`; a submodule pointer through the index).
"""

from __future__ import annotations

from collections.abc import Callable

from .gitutil import AGENT, HUMAN, WorkRepo


def _modify(w: WorkRepo) -> None:
    w.write("ci/deploy.yml", "deploy: false\n")


def _delete(w: WorkRepo) -> None:
    (w.path / "ci/deploy.yml").unlink()


def _rename_out(w: WorkRepo) -> None:
    (w.path / "ci/deploy.yml").rename(w.path / "deploy.yml")


def _rename_in(w: WorkRepo) -> None:
    (w.path / "src/app.py").rename(w.path / "ci/app.py")


def _mode(w: WorkRepo) -> None:
    (w.path / "ci/deploy.yml").chmod(0o755)


def _symlink(w: WorkRepo) -> None:
    w.symlink("ci/deploy.yml", "../README")


def _file_to_dir(w: WorkRepo) -> None:
    (w.path / "ci/deploy.yml").unlink()
    w.write("ci/deploy.yml/inner", "x\n")


def _root_file(w: WorkRepo) -> None:
    w.write("gate.toml", "x = 1\n")


def _case_variant(w: WorkRepo) -> None:
    w.write("CI/Deploy.yml", "shadow\n")


def _trailing_dot(w: WorkRepo) -> None:
    w.write("gate.toml.", "shadow\n")


def _policy_file(w: WorkRepo) -> None:
    w.write(".gate/policy.toml", 'mode = "evaluate"\n')


def _not_frozen(w: WorkRepo) -> None:
    w.write("src/app.py", "print('x')\n")


#: kind -> edit of the work tree. Every kind but not_frozen writes a path the test policies freeze.
EDITS: dict[str, Callable[[WorkRepo], None]] = {
    "modify": _modify, "delete": _delete, "rename_out": _rename_out, "rename_in": _rename_in, "mode": _mode,
    "symlink": _symlink, "file_to_dir": _file_to_dir, "root_file": _root_file, "case_variant": _case_variant,
    "trailing_dot": _trailing_dot, "policy_file": _policy_file, "not_frozen": _not_frozen,
}
#: Kinds that only change the index (git add -A would drop them).
INDEX_ONLY = ("submodule",)
KINDS = (*EDITS, *INDEX_ONLY)


def stage(w: WorkRepo, kind: str) -> None:
    """Apply one change kind to the work tree and stage it."""
    if kind == "submodule":
        w.git("update-index", "--add", "--cacheinfo", f"160000,{w.head()},vendor/sub")
        return
    EDITS[kind](w)
    w.git("add", "-A")


#: The parity corpus: scenario -> (author, committer, pusher account or None, the codes every stage
#: and the server answer). A scenario is a change kind, but "committer" and "pusher" (a human's
#: modify committed by an agent, pushed by an agent's account) and "human" (a human's modify).
FROZEN_CORPUS: dict[str, tuple[tuple[str, str], tuple[str, str], str | None, set[str]]] = {
    "modify": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "delete": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "rename_out": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "rename_in": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "mode": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "symlink": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "file_to_dir": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "root_file": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "submodule": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "case_variant": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "trailing_dot": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "policy_file": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "committer": (HUMAN, AGENT, None, {"GATE-FROZEN-PATH"}),
    "pusher": (HUMAN, HUMAN, "agent-1", {"GATE-FROZEN-PATH"}),
    "not_frozen": (AGENT, AGENT, None, set()),
    "human": (HUMAN, HUMAN, None, set()),
}


def corpus_kind(scenario: str) -> str:
    """The change kind a parity scenario stages."""
    return "modify" if scenario in ("committer", "pusher", "human") else scenario
