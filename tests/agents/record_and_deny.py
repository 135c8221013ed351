"""The test's pre-tool hook, for every agent: appends the payload it got on stdin (one JSON line)
to the file named by its argument, and denies the call (exit 2, `BLOCKED-BY-TEST` on stderr) when
the tool's input names a path under `frozen/`; else it exits 0 and says nothing."""

from __future__ import annotations

import json
import sys


def main() -> int:
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"unparsed": raw}
    with open(sys.argv[1], "a", encoding="utf-8") as log:
        log.write(json.dumps(payload) + "\n")
    # the tool's input under each agent's key (Copilot: camelCase toolArgs, a JSON string)
    tool_input = next((payload[k] for k in ("tool_input", "toolArgs", "toolInput") if k in payload), payload)
    if "frozen/" in (tool_input if isinstance(tool_input, str) else json.dumps(tool_input)):
        print("BLOCKED-BY-TEST", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
