"""Reading git: what the engine knows of a repository's objects and refs, read as git reads them.

`gitmodel` (the port: what the engine asks of git, a Protocol), `grammar` (the strict parsers of
commits, trees and tags), `objects` (the cached store and the walk, through the port), `treediff`
(tree-to-tree changes and the name search), `digest` (canonical diff digests), `changetext` (a
change as the model reads it, shown by the gate's rules, not by `git diff`), `trailers`
(commit message trailers), `refs` (ref updates, the reserved namespaces, ref names) and `limits`
(how much one push may ask: ref updates, new commits).

Pure, like every engine package: it may import `gatecore`'s shared modules (`errors`, `codes`,
`findings`, `ids`, `strictjson`) and itself, nothing else of the package; the machine is read
through the port by `gatecore.adapters`.
"""
