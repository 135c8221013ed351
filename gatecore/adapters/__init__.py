"""The only code in the package that touches the machine: git (through its own commands, in every
repository format it opens), files, the environment. The engine in `gatecore/` reads and writes
through these.

`gitstream` (the hook's and the client hooks' reader: git's object stream), `gitcmd` (the one
wrapper around the `git` command), `spawn` (the hooks' child processes without `subprocess`),
`gitlayout` (the few readings of git's layout by hand),
`gitrepo` (the trusted side's repository, pygit2), `treescan` and `treeworker` (the second
process of a big push's tree search: the hook's side and the worker, started by file path),
`gpg` (OpenPGP signatures through `gpgv`), `modelcmd` (the runner's model command), `childproc` (a
child process read to a deadline, whatever it leaves behind: the model's command, the trusted
side's transport), `files`,
`config` (configuration files to plain values) and `environment`.

It may import the engine (every package of `gatecore/` but `trusted` and the command line) and
itself; nothing of `server/` or `hooks/`.
"""
