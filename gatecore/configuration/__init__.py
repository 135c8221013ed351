"""Configuration: the policy, the keyring's and the data tables' schemas, and what they expand to.

`policy` (the policy as plain values and its matching), `configschema` (the files' schemas,
pydantic, validated from bytes), `configerrors` (configuration errors in the admin's words),
`policyreport` (what `gate policy check` and doctor say of a valid policy), `catalogue` (the
built-in agent catalogue and the named sets), `vendors` and `modelnames` (which vendor made a
model, which model an id names), `tables` (the versioned data tables shipped), `durations`
(durations as the command line takes them) and `versions` (push-gate's own versions).

Pure: it may import `gatecore`'s shared modules (`errors`, `codes`, `findings`, `ids`,
`strictjson`), `gatecore.signing` (keys and envelopes the schemas build) and itself; the files
are read by `gatecore.adapters.config`. Only `configschema` loads pydantic, and the hook's
plain push path imports neither it nor the tables' parsers (tests/unit/test_layers.py).
"""
