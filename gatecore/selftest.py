"""`gate selftest`: the decision table and the offline attacks, run against the binder."""

from __future__ import annotations

from .scenarios import DECISION_TABLE, Kit, row_ok, run_attacks, run_row


def run() -> tuple[str, bool]:
    kit = Kit()
    lines = ["decision table (bound gate vs the incident's naive gate)", ""]
    lines.append(f"  {'observed state':<40} {'naive':<18} {'bound':<7} {'named':<22} ok")
    ok = True
    for row in DECISION_TABLE:
        decision, naive = run_row(kit, row)
        good = row_ok(row, decision, naive)
        ok &= good
        naive_text = row.naive if naive is None else ("accept" if naive else "reject")
        bound_text = "accept" if decision.accepted else "reject"
        named = ",".join(decision.fields) or "-"
        lines.append(f"  {row.observed:<40} {naive_text:<18} {bound_text:<7} {named:<22} "
                     f"{'ok' if good else 'WRONG'}")
    lines += ["", "attacks (each must be rejected with its code)", ""]
    results = run_attacks(kit)
    for r in results:
        ok &= r.ok
        got = ",".join(r.decision.codes) or "accepted!"
        lines.append(f"  {'ok   ' if r.ok else 'WRONG'} {r.name:<62} {got}")
    passed = sum(r.ok for r in results)
    lines += ["", f"{len(DECISION_TABLE)} table rows, {len(results)} attacks, "
              f"{passed} attacks rejected as expected: {'PASS' if ok else 'FAIL'}"]
    return "\n".join(lines), ok
