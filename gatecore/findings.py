"""What checks report: a `Failure` (a receipt check, naming a field) and a `Violation`
(a reason to reject a push, naming the ref, commit, identity, path and rule)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from .valueclass import valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T", bound=Hashable)


def unique_in_order(items: Iterable[T]) -> list[T]:
    """Each item once, in the order first seen."""
    return list(dict.fromkeys(items))


@valueclass(frozen=True, slots=True)
class Failure:
    code: str
    field: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "field": self.field, "detail": self.detail}


@valueclass(frozen=True, slots=True)
class Violation:
    """One reason a push is rejected, as the pusher sees it (one line, one JSON object)."""

    code: str
    ref: str
    detail: str
    commit: str | None = None
    identity: str | None = None
    path: str | None = None
    rule: str | None = None
    field: str | None = None
    attempt_id: str | None = None
    #: why the commit is restricted, every reason strongest first (`FreezeRule.evidence`)
    evidence: str | None = None

    def as_dict(self) -> dict[str, str]:
        out = {"code": self.code, "ref": self.ref}
        for name in ("commit", "identity", "path", "rule", "field", "attempt_id", "evidence"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        out["detail"] = self.detail
        return out
