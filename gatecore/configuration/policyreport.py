"""What `gate policy check` and `gate server doctor` say about a valid policy (pure).

`describe` lists what each rule restricts (the named sets expanded, the anonymous pusher);
`unmatched` names every frozen path pattern that matches no path of a tree: a pattern
such as `.github/workflow/**` (one letter short) is valid, freezes nothing, and used to
pass every check in silence.
"""

from __future__ import annotations

from collections.abc import Iterable

from .policy import Policy, normalize_path
from .vendors import FROM_POLICY


def describe(policy: Policy) -> list[str]:
    lines = []
    if policy.catalogue_version:
        lines.append(f"named sets expanded from the agent catalogue {policy.catalogue_version}")
    for rule in policy.rules:
        for key in ("paths", "authors", "names", "trailers", "pushers"):
            patterns = [g.pattern for g in getattr(rule, key)]
            if patterns:
                lines.append(f"  {rule.label} {key}: " + ", ".join(patterns))
    lines.append(f"  pushers.anonymous: {policy.anonymous}" + (
        " (git daemon and unauthenticated http pushes are restricted)" if policy.anonymous == "restricted" else ""))
    own = sorted({vendor for _, vendor, origin in policy.review_vendors if origin == FROM_POLICY})
    names = "" if policy.model_names is None else (
        f"; model ids read by the model-id table {policy.model_names.get('version')}"
        + (f" and the policy's [review.models] ({len(policy.model_aliases)})" if policy.model_aliases else "")
        + ", an id none places refused")
    lines.append(f"  review.independent: {policy.independent}" + {
        "off": " (a review by the model that wrote the change is not refused)",
        "model": f" (a review by the model that wrote the change is refused{names})",
        "vendor": f" (a review by a model of the author's vendor is refused; vendor table "
                  f"{policy.vendor_table_version}" + (f", and the policy's vendors {', '.join(own)}" if own else "")
                  + f"{names})"}[policy.independent])
    lines.append(f"  limits: at most {policy.max_ref_updates} ref updates and {policy.max_new_commits} new commits "
                 "a push")
    return lines


#: The client hooks' policy in a repository (docs/client.md): the file the gate's own files are
#: judged by. A rule that freezes it (`.gate/**` or `.gate/policy.toml`) keeps an agent from relaxing
#: the client hooks with a commit; the server's policy lives outside the pushed tree either way.
CLIENT_POLICY = ".gate/policy.toml"


def gate_files_warnings(policy: Policy) -> list[str]:
    """A warning when no freeze rule freezes the gate's own files in a repository: an agent's commit
    could set `mode = "evaluate"` in `.gate/policy.toml`, and the client hooks would pass its next
    frozen write (the server would still refuse it at the push)."""
    norm = normalize_path(CLIENT_POLICY)
    if any(rule.matches_path(norm) for rule in policy.rules):
        return []
    return [f"no freeze rule freezes the gate's own files ({CLIENT_POLICY}, the client hooks' policy): an "
            "agent's commit could set mode = \"evaluate\" there and pass the client hooks; add \".gate/**\" to "
            "a rule's paths (docs/client.md)"]


def unmatched(policy: Policy, paths: Iterable[str]) -> list[tuple[str, str]]:
    """(rule label, pattern) of every frozen path pattern the policy wrote itself that matches none
    of `paths`. Patterns a named set brought (`@agent-config`) are not typos and name files a
    repository may not have yet: they are left out, and so are those that freeze the gate's own
    files (`.gate/**`: a repository without client hooks has none)."""
    gate_file = normalize_path(CLIENT_POLICY)
    waiting = [(rule.label, glob) for rule in policy.rules for glob in rule.paths
               if not glob.origin and not glob.matches(gate_file)]
    for path in paths:
        if not waiting:
            break
        norm = normalize_path(path)
        waiting = [(label, glob) for label, glob in waiting if not glob.matches(norm)]
    return [(label, glob.pattern) for label, glob in waiting]


def unmatched_warnings(policy: Policy, branch: str, paths: Iterable[str]) -> list[str]:
    return [f"{label} paths {pattern!r} matches no path on {branch}: it freezes nothing there "
            "(a typo, or a path that does not exist yet?)" for label, pattern in unmatched(policy, paths)]
