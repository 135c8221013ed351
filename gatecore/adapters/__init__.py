"""The only code in the package that touches the machine: git (through its own commands, in every
repository format it opens), files, the environment. The engine in `gatecore/` reads and writes
through these."""
