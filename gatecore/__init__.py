"""push-gate's package: the pure engine, the shell around it, and the `gate` command.

The shared vocabulary (`codes`, `errors`, `findings`, `ids`, `strictjson`); the engine's packages by
concern, each importing only those before it: `git` (reading git), `signing` (keys, seals,
signatures), `configuration` (the policy and data tables), `records` (receipts, the ledger,
approvals, attestations), `checks` (the push rules and judgements), `reserved` (the reserved
stage); the one composition of a push (`pipeline`) and the self-test (`selftest`); the shell,
`adapters` (the machine) and `trusted` (the trusted side's commands); the command line (`cli`).
docs/architecture.md has the floors and the module map.
"""

# The version of this build, written by the build (hatch_build.py: the release in VERSION, or
# X.Y.(Z+1).devN+g<commit> between releases; docs/upgrading.md, "Versions"). Imported, never
# computed: no git process on the hook's start-up path.
try:
    from ._build import COMMIT as COMMIT  # type: ignore[import-not-found, unused-ignore]
    from ._build import VERSION as __version__  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # a tree no build ran in: ./dev and every sdist and wheel write gatecore/_build.py
    __version__, COMMIT = "0+unknown", ""

__all__ = ["COMMIT", "__version__"]
