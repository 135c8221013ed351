"""The one exception the gate raises: a stable code from `gatecore.codes` and a one-line reason.

Entry points catch `GateError` at their single error boundary and exit with the status
the code's registry entry names (`codes.exit_code`): 1 when the input is rejected, 2 for
configuration, 3 for internal failures. The status belongs to the code, never to the
place that raised it, so one code always exits the same way. Nothing else in the
package catches broadly.
"""

from __future__ import annotations


class GateError(Exception):
    """An error with a stable code and a one-line reason."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail

    @property
    def exit_code(self) -> int:
        from .codes import exit_code

        return exit_code(self.code)


def unreadable(detail: str) -> GateError:
    """An object that is absent, or a repository that cannot be read (exit 3)."""
    return GateError("GATE-GIT-UNREADABLE", detail)


def malformed(detail: str) -> GateError:
    """An object that is present but not what git itself would read the same way (exit 1)."""
    return GateError("GATE-GIT-MALFORMED", detail)
