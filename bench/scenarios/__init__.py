"""The scenarios, one module per family: each a set of timed runs (`git push` into fresh bare
repositories, or a hook's command run directly) that `bench.report` turns into the table.

* `core`: the sizes, `Timing`, `Case`, `PushSpec` and `BenchCore`, the machinery they share;
* `pushes`: small, large, wide, refs, reftable (the generated histories);
* `histories`: real, policies (real projects' histories from ../shared/data);
* `review`: the review push with its sealed receipt; `signed`: SSH-signed commits;
* `client`: the client hooks and a commit through pre-commit; `ledger`: the ledger's pushes;
* `agent`: `gate agents check`, as a coding agent runs it before each tool call.

`Bench` is all of them: `getattr(bench, NAME)()` runs scenario NAME (`bench.cli.SCENARIOS`), and
`bench.specs(NAME)` gives a push scenario's pushes (`bench.profile`).
"""

from __future__ import annotations

from .agent import Agents
from .client import Clients
from .core import FULL, QUICK, Case, PushSpec, Sizes, Timing, _k, clean_env_for_process, cpu_of_children
from .histories import Histories
from .ledger import Ledgers
from .pushes import Pushes
from .review import Reviews
from .signed import Signed


class Bench(Pushes, Histories, Reviews, Signed, Clients, Ledgers, Agents):
    """Every scenario's runs (the classes of `bench.scenarios`' modules together)."""


__all__ = ["FULL", "QUICK", "Bench", "Case", "PushSpec", "Sizes", "Timing", "_k", "clean_env_for_process",
           "cpu_of_children"]
