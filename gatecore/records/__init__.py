"""Records: what the trusted side writes and the gate reads back, each strictly parsed and sealed.

`schema` and `fields` (strict reading of a JSON document's members, the checks records share),
`receipt` (the review receipt), `ledger` (the attempt ledger's sealed records), `archive` (the
archive's layout: closed attempts folded into one tree), `approvals` (maintainer approvals),
`attestation` (what the gate accepted, as in-toto statements), and the runner's model exchange
whose answer a receipt records: `modelcall` (the request, the challenge) and `modeloutput` (the
verdict and reasons read from the answer).

These say what a record is; the checks of the refs that carry them are `gatecore.reserved`'s
(`ledgerrefs`, `archiverefs`, `approvalrefs`, ...). Pure: it may import `gatecore`'s shared
modules (`errors`, `codes`, `findings`, `ids`, `strictjson`), `gatecore.git`,
`gatecore.signing`, `gatecore.configuration` and itself.
"""
