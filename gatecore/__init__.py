"""Gate engine: models, digests, seals, policy, decisions, codes."""

__version__ = "0.1.0"
