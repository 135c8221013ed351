"""Tool calls inside coding agents: each agent's pre-tool hook payload read, and the answer given.

`toolcall` (the `ToolCall` read from a payload, the `Answer` given back, the strict payload
reader, the agents and how each is recognised), `shellwrites` (what a shell command would write,
best effort), `applypatch` (Codex's patch envelope), `hookfiles` (the agents' hook files as `gate
agents install` writes them), and one module per agent's payload format: `claude`, `copilot`,
`cursor`, `codex`, `gemini`, `windsurf`, `cline`, `kiro`. Pure: they
import `gatecore`'s shared modules only (errors, the value classes), and no module reads the
machine; the hook that runs them is `hooks/agent_check.py`.
"""
