"""Checks and decisions: the rules a push is judged by, and what the pusher is told.

`pushcheck` (every ref update against the policy's ref rules and frozen files), `frozen` (which
commits a restricted identity wrote, and which frozen paths they wrote), `frozenbatch` (checking
many commits at once, beside the rule), `binding` (what a receipt must say, and the judgement of
one), `authorship` (who wrote a change, from its commits and the ledger), `independence`
(whether the reviewing model is another than the author's), `verdict` (the one decision of
server and client), `report` (the lines the pusher sees) and `forgereport` (what a forge's
required check shows: GitHub annotations and job summary, GitLab's Code Quality report).

The reserved namespaces' checks are `gatecore.reserved`; the one composition of a push's stages
is `gatecore.pipeline`. Pure: it may import `gatecore`'s shared modules (`errors`, `codes`,
`findings`, `ids`, `strictjson`), `gatecore.git`, `gatecore.signing`, `gatecore.configuration`,
`gatecore.records` and itself.
"""
