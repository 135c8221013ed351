"""Tool calls inside coding agents: each agent's pre-tool hook payload read, and the answer given.

`toolcall` (the `ToolCall` read from a payload, the `Answer` given back, the strict payload
reader), `shellwrites` (what a shell command would write, best effort), `applypatch` (Codex's
patch envelope), and one module per agent's payload format: `claude`, `gemini`. Pure: they
import `gatecore`'s shared modules only (errors, the value classes), and no module reads the
machine; the hook that runs them is `hooks/agent_check.py`.
"""
