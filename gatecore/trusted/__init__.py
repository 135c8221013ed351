"""The trusted side's commands: the orchestrator (`bootstrap`, `attempts`, `ledgerarchive`), the
runner (`runner`), the maintainer (`approve`), the export of what the gate accepted (`attest`) and
the seed's file flow (`filereceipts`). The gate validates everything they push.

It may import the engine and `gatecore.adapters`; nothing of `server/`, `hooks/` or the command
line.
"""
