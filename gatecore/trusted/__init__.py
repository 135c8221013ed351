"""The trusted side: the orchestrator (`bootstrap`, `attempts`), the runner (`review`) and the
seed's file flow (`filereceipts`). The gate validates everything they push."""
