"""The test's pre-tool hook, for every agent: `record_and_deny.py LOG [RULES]`.

It appends the payload it got on stdin (one JSON line) to LOG, then answers by the first rule whose
needle the tool's input contains: RULES is a JSON list of [needle, exit code, stdout or null]
(default: [["frozen/", 2, null]]). A matching rule prints `BLOCKED-BY-TEST` on stderr, its stdout
(a JSON decision in the agent's format, say) if any, and exits with its code. No rule: exit 0, silent.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    log_path = sys.argv[1]
    rules = json.loads(sys.argv[2]) if len(sys.argv) > 2 else [["frozen/", 2, None]]
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"unparsed": raw}
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(json.dumps(payload) + "\n")
    # the tool's input under each agent's key (Copilot's own form: camelCase toolArgs)
    tool_input = next((payload[k] for k in ("tool_input", "toolArgs", "toolInput") if k in payload), payload)
    text = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
    for needle, code, stdout in rules:
        if needle in text:
            print("BLOCKED-BY-TEST", file=sys.stderr)
            if stdout is not None:
                print(stdout)
            return int(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
