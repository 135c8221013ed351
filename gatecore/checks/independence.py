"""Reviewer independence: is the model that reviewed an attempt's change another than the one
that wrote it, or another vendor's? (pure; docs/receipts.md, Reviewer independence).

A receipt proves which model reviewed which change. Forges now let an AI approve a change
another agent of the same vendor wrote; `[review] independent` makes the gate ask:

* `"off"` (default): not asked;
* `"model"`: the reviewing model (the one the ledger has on record for the attempt) must not be
  the model that wrote the change (the ledger's `author_model`, sealed by the orchestrator when it
  opened the attempt), both ids read by their providers' naming schemes (`gatecore.configuration.modelnames`:
  `us.deepseek.r1-v1:0` and `deepseek/deepseek-r1` are one model): `GATE-REVIEW-SAME-MODEL`. An
  id no scheme places (a customer's deployment name, a word the table does not know) cannot be
  told apart from the other model, so it is refused, `GATE-REVIEW-MODEL-UNPLACED`, until the
  table or the policy's `[review.models]` names it;
* `"vendor"`: that, and no vendor in common (`GATE-REVIEW-SAME-VENDOR`). The author's vendors are
  the one the orchestrator recorded (`author_vendor`) and those the vendor table gives its model;
  the reviewer's, those the table gives the reviewing model. A model without a known vendor is
  not independent of anyone (`GATE-REVIEW-VENDOR-UNKNOWN`): the policy's `[review.vendors]` or the
  packaged table must name it.

An attempt whose ledger names no author (opened before the gate recorded authors, or without
`--author-model`) cannot show independence, so under `"model"` and `"vendor"` its reviews are
refused, `GATE-REVIEW-AUTHOR-UNKNOWN`: close it and review in an attempt opened with an author.
Everything recorded only adds: a recorded vendor can make a reviewer dependent, never independent.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..configuration.modelnames import ModelName, ModelNames, Unplaced
from ..configuration.vendors import vendors_of
from ..findings import Failure
from ..valueclass import valueclass


@valueclass(frozen=True, slots=True)
class Author:
    """Who wrote an attempt's change, and who started the attempt, as its opened record says
    (`gate attempt open --author-model --author-vendor --initiator`; None: not recorded). The
    initiator is shown and exported, never judged."""

    model: str | None = None
    vendor: str | None = None
    initiator: str | None = None


def failures(setting: str, author: Author, reviewer: str, table: Sequence[tuple[str, str, str]],
             names: ModelNames | None = None) -> list[Failure]:
    """Why `reviewer` (the model on record for the attempt) is not independent of `author` under
    `setting` ("off", "model" or "vendor"); empty when it is, or when nothing is asked."""
    if setting == "off":
        return []
    if author.model is None:
        return [Failure("GATE-REVIEW-AUTHOR-UNKNOWN", "author_model",
                        "the ledger does not say which model wrote this attempt's change (opened without "
                        "--author-model, or before the gate recorded authors), so the reviewer's independence "
                        f"cannot be shown ([review] independent = {setting!r})")]
    theirs_name, ours_name = read_name(names, author.model), read_name(names, reviewer)
    unplaced = [Failure("GATE-REVIEW-MODEL-UNPLACED", field,
                        f"the {role} {r.id} is placed by no model-id scheme ({r.detail}), so it cannot be told "
                        f"apart from {other}: name it in the policy's [review.models]")
                for role, field, r, other in (("author's model", "author_model", theirs_name, "the reviewing model"),
                                              ("reviewing model", "model_id", ours_name, "the author's model"))
                if isinstance(r, Unplaced)]
    if isinstance(theirs_name, Unplaced) or isinstance(ours_name, Unplaced):
        return unplaced
    if theirs_name.same_model(ours_name):
        both = (f"both read {ours_name.canonical}" if ours_name.canonical == theirs_name.canonical else
                f"{ours_name.canonical} and {theirs_name.canonical} are one model")
        return [Failure("GATE-REVIEW-SAME-MODEL", "model_id",
                        f"the reviewing model {reviewer} is the model that wrote the change ({author.model}; {both})")]
    if setting != "vendor":
        return []
    theirs = vendors_of(theirs_name.canonical, table)
    if author.vendor is not None:
        theirs.setdefault(author.vendor, "the ledger's author_vendor")
    ours = vendors_of(ours_name.canonical, table)
    out = []
    if not theirs:
        out.append(Failure("GATE-REVIEW-VENDOR-UNKNOWN", "author_model",
                           f"no vendor is known for the author's model {author.model} ({theirs_name.canonical})"
                           ": name it in the policy's [review.vendors], or record --author-vendor"))
    if not ours:
        out.append(Failure("GATE-REVIEW-VENDOR-UNKNOWN", "model_id",
                           f"no vendor is known for the reviewing model {reviewer} ({ours_name.canonical}): "
                           "name it in the policy's [review.vendors]"))
    if out:
        return out
    shared = [v for v in ours if v in theirs]
    if shared:
        v = shared[0]
        return [Failure("GATE-REVIEW-SAME-VENDOR", "model_id",
                        f"the reviewing model {reviewer} is {v}'s ({ours[v]}), and so is the model that wrote the "
                        f"change, {author.model} ({theirs[v]})")]
    return []


def read_name(names: ModelNames | None, model_id: str) -> ModelName | Unplaced:
    """`model_id` as `names` reads it (no table: placed by none)."""
    if names is None:
        return Unplaced(model_id, "", "the policy carries no model-id table")
    return names.read(model_id)
