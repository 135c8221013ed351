"""Signatures and seals: keys as plain values, the envelopes records travel in and their seals,
and the signatures git commits carry.

`keys` (signing and verifying keys, keyrings), `envelope` (DSSE-style envelopes), `seal`
(sealing and verifying them: Ed25519, HMAC-SHA256), `sshkeys` (SSH public keys and wire format),
`sshsig` (OpenSSH's SSHSIG, checked in-process), `allowedsigners` (allowed-signers files) and
`signatures` (who signed a commit, and whether the policy requires it).

Pure: it may import `gatecore`'s shared modules (`errors`, `codes`, `findings`, `ids`,
`strictjson`), `gatecore.git` and itself; OpenPGP is checked through a port by
`gatecore.adapters`.
"""
