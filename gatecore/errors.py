"""Exceptions that carry a stable code from `gatecore.codes`.

Entry points catch `GateError` at their single error boundary and map it to an exit
code: 1 for a rejection of the input, 2 for configuration, 3 for internal failures.
Nothing else in the package catches broadly.
"""

from __future__ import annotations


class GateError(Exception):
    """An error with a stable code and a one-line reason."""

    exit_code = 3

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class InputError(GateError):
    """Bad input from the subject of the check (a push, a receipt, an argument)."""

    exit_code = 1


class ConfigError(GateError):
    """Missing or invalid server-side configuration (policy, keyring, installation)."""

    exit_code = 2


class GitReadError(GateError):
    """The repository or one of its objects could not be read."""

    exit_code = 3

    def __init__(self, detail: str, code: str = "GATE-GIT-UNREADABLE") -> None:
        super().__init__(code, detail)


class DeadlineExceeded(GateError):
    exit_code = 3

    def __init__(self, detail: str) -> None:
        super().__init__("GATE-HOOK-DEADLINE", detail)
