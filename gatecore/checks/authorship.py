"""Who wrote a change, from the evidence of its commits as well as the ledger's word (pure).

Reviewer independence (`gatecore.checks.independence`) compares the reviewing model with the author the
orchestrator recorded when it opened the attempt (`--author-model`, `--author-vendor`). That is
the orchestrator's word. The reviewed commits carry their own: the agent catalogue's signals
(`gatecore/data/agents.toml`: emails, names, trailers such as `Co-authored-by: Claude
<noreply@anthropic.com>`). Under `[review] independent` the author side is the union of both:

* `shown` reads every commit of the reviewed range (the receipt's base to the reviewed commit),
  commit by commit, as the frozen-file rule reads a commit's identities (`frozen.signals`,
  `FreezeRule.evidence`: the same emails, names and trailers, read the way git reads them), for
  each agent of the catalogue the validated policy carries (`Policy.review_agents`);
* each agent a commit shows is an author: of its vendor, where the tool runs one vendor's models
  only (the catalogue's `vendor`), and of every model a trailer names, where it names one in a
  documented shape (`Assisted-by: AGENT:MODEL` of the Linux kernel's rules, aider's
  `Co-authored-by: aider (MODEL) <...>`). Every signal counts, never the first alone: a commit
  with two `Assisted-by` trailers names both models, one whose author email is one agent's and
  whose trailer is another's shows both agents (the evidence of a commit is the union of what each
  of its signals shows alone: tests/unit/test_authorship_evidence.py);
* `failures` asks the ledger's question (`independence.failures`, unchanged) and then the same
  question of every author the evidence shows: under `"model"` a model the evidence names must
  not be the reviewer, both ids read as the ledger's are (`Policy.model_reader()`: two names of
  one model are one model; a named model no scheme places is refused as the ledger's would be,
  GATE-REVIEW-MODEL-UNPLACED); under `"vendor"` no vendor of the evidence may be the reviewer's.
  Each refusal names the commit and the signal. Under `"off"` nothing is read.

Evidence only adds authors, never removes one: a change with no agent signal is judged on the
ledger's word alone, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..configuration.modelnames import ModelNames, Unplaced
from ..configuration.policy import AuthorAgent, FreezeRule, IdentityGlob, Policy
from ..configuration.vendors import vendors_of
from ..findings import Failure
from ..git.grammar import Commit
from ..git.objects import Objects
from ..valueclass import valueclass
from .independence import Author, read_name
from .independence import failures as claim_failures

if TYPE_CHECKING:
    from ..records.ledger import AttemptState

KNOWN = "@known-agents"


@valueclass(frozen=True, slots=True)
class Shown:
    """An agent one reviewed commit shows: who, whose models, every model its trailers name, and why."""

    commit: str
    agent: str  # the catalogue's id
    vendor: str | None
    models: tuple[str, ...]  # every model the agent's trailers name, in order (none: no model named)
    signal: str  # the strongest of what matched, as the frozen-file rule's evidence says it

    @property
    def said(self) -> str:
        return f"commit {self.commit[:12]} shows {self.agent} ({self.signal})"


def _rules(agents: Sequence[AuthorAgent]) -> list[tuple[AuthorAgent, FreezeRule]]:
    out = []
    for i, a in enumerate(agents):
        where = f"{KNOWN} ({a.id})"
        rule = FreezeRule(i, a.id, (), tuple(IdentityGlob.compile(p, where) for p in a.emails), (), None,
                          names=tuple(IdentityGlob.compile(p, where) for p in a.names),
                          trailers=tuple(IdentityGlob.compile(p, where) for p in a.trailers),
                          anonymous_restricted=False)
        if not rule.everyone:  # an agent known only by the account it pushes as shows in no commit
            out.append((a, rule))
    return out


def named_models(trailers: Iterable[str]) -> tuple[str, ...]:
    """Every model the trailers name in a documented shape, in order, each once: `Assisted-by:
    AGENT:MODEL [TOOL...]` (docs/process/coding-assistants.rst of the Linux kernel) or aider's
    `Co-authored-by: aider (MODEL) <email>`."""
    out: list[str] = []
    for line in trailers:
        key, _, value = line.partition(": ")
        model = ""
        if key.casefold() in ("assisted-by", "generated-by"):
            first = value.split()[0] if value.split() else ""
            agent, colon, named = first.partition(":")
            model = named if colon and agent else ""
        elif key.casefold() == "co-authored-by" and value.casefold().startswith("aider ("):
            model = value[len("aider ("):].partition(")")[0].strip()
        if model:
            out.append(model)
    return tuple(dict.fromkeys(out))


def commit_shows(commit: Commit, rules: Sequence[tuple[AuthorAgent, FreezeRule]]) -> list[Shown]:
    """The agents one commit shows (each once, with its strongest signal and every model its
    trailers name)."""
    from .frozen import signals

    seen = signals(commit, [r for _, r in rules])
    author, committer = commit.identities()
    out = []
    for agent, rule in rules:
        why = rule.evidence((author.name, author.email), (committer.name, committer.email), None, seen)
        if why:
            models = named_models(line for line in (seen.trailers if seen else ()) if rule_matches(rule, line))
            out.append(Shown(commit.id, agent.id, agent.vendor, models, why[0]))
    return out


def rule_matches(rule: FreezeRule, line: str) -> bool:
    return any(g.matches(line) for g in rule.trailers)


def shown(objects: Objects, base: str, new: str, agents: Sequence[AuthorAgent], limit: int) -> list[Shown]:
    """Every agent the commits of base..new show, commit by commit (at most `limit` commits are
    read: `[limits] max_new_commits`, GATE-LIMIT-COMMITS past it)."""
    rules = _rules(agents)
    if not rules:
        return []
    out: list[Shown] = []
    for commit in objects.walk([new], [base], None, messages=True, limit=(limit, " in the reviewed range")):
        out += commit_shows(commit, rules)
    return out


def failures(setting: str, claim: Author, evidence: Sequence[Shown], reviewer: str,
             table: Sequence[tuple[str, str, str]], names: ModelNames | None = None) -> list[Failure]:
    """Why `reviewer` is not independent of the change's authors: the ledger's (`claim`) and those
    the commits show (`evidence`); empty when it is, or under "off". Model ids are read as the
    claim's are (`names`, `Policy.model_reader()`): two names of one model are one model in the
    evidence too, and a model the evidence names that no scheme places cannot be told apart from
    the reviewer (GATE-REVIEW-MODEL-UNPLACED, naming the commit)."""
    out = claim_failures(setting, claim, reviewer, table, names)
    if setting == "off" or not evidence:
        return out
    ours_name = read_name(names, reviewer)
    if isinstance(ours_name, Unplaced):
        return out  # the claim's question refused the reviewer already
    ours = vendors_of(ours_name.canonical, table) if setting == "vendor" else {}
    done: set[tuple[str, str]] = set()

    def add(found: Failure, agent: str) -> None:
        if (found.code, agent) not in done:
            out.append(found)
            done.add((found.code, agent))

    for s in evidence:
        theirs = dict.fromkeys([v for v in (s.vendor,) if v is not None])
        for named in s.models:
            model = read_name(names, named)
            if isinstance(model, Unplaced):
                add(Failure("GATE-REVIEW-MODEL-UNPLACED", "model_id",
                            f"{s.said}, naming {named}, which no model-id scheme places ({model.detail}), so it "
                            f"cannot be told apart from the reviewing model {reviewer}: name it in the policy's "
                            "[review.models]"), f"{s.agent} {named}")
                continue
            if model.same_model(ours_name):
                add(Failure("GATE-REVIEW-SAME-MODEL", "model_id",
                            f"the reviewing model {reviewer} is the model the reviewed commits show wrote the change: "
                            f"{s.said}, naming {named}"), f"{s.agent} {named}")
            theirs.update(dict.fromkeys(vendors_of(model.canonical, table)))
        if setting != "vendor":
            continue
        shared = [v for v in ours if v in theirs]
        if shared:
            add(Failure("GATE-REVIEW-SAME-VENDOR", "model_id",
                        f"the reviewing model {reviewer} is {shared[0]}'s, and the reviewed commits show "
                        f"{shared[0]}'s agent wrote the change: {s.said}"), s.agent)
    return out


def review_question(policy: Policy, state: AttemptState, objects: Objects,
                    new: str) -> Callable[[str | None], list[Failure]] | None:
    """The independence question a review of `new` is asked under the policy (None: "off"): given
    the receipt's base once it is proven (None: no base to read the commits from, the ledger's word
    alone), the failures. The hook and `gate attest export` ask it alike (`binding.judge_review`)."""
    if policy.independent == "off":
        return None
    claim = Author(state.author_model, state.author_vendor)
    names = policy.model_reader()

    def ask(base: str | None) -> list[Failure]:
        evidence = [] if base is None else shown(objects, base, new, policy.review_agents, policy.max_new_commits)
        return failures(policy.independent, claim, evidence, state.model_id or "", policy.review_vendors, names)

    return ask
