"""The only code in the package that touches the machine: git (pygit2 and the git command),
files, the environment. The engine in `gatecore/` reads and writes through these."""
