"""Gate engine: models, digests, seals, policy, decisions, codes."""

# The version of this build, written by the build (hatch_build.py: the release in VERSION, or
# X.Y.(Z+1).devN+g<commit> between releases; docs/upgrading.md, "Versions"). Imported, never
# computed: no git process on the hook's start-up path.
try:
    from ._build import COMMIT as COMMIT  # type: ignore[import-not-found, unused-ignore]
    from ._build import VERSION as __version__  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # a tree no build ran in: ./dev and every sdist and wheel write gatecore/_build.py
    __version__, COMMIT = "0+unknown", ""

__all__ = ["COMMIT", "__version__"]
