"""The orchestrator's ledger commands: `gate attempt open | select-model | failover | close | show`.

Records are written to the trusted side's clone and pushed with plain `git push`; the
server's gate validates everything (`gatecore.reserved`). Before appending, the local ledger
ref is synced from the server, so that every record extends the chain the server holds.
Opening an attempt also creates its generation claim, `refs/gate/generations/<sha256>`,
pushed atomically with the attempt's first record: git's ref transaction refuses a
second claim of the same generation.

Every command is idempotent: run again after its push landed (a CI retry after a network
error), it finds its record on the server already and pushes nothing (`ALREADY`). It says so
only for the state the command would have left: an attempt closed since is named as closed
(`GATE-LEDGER-CLOSED`), never acknowledged as just opened or just failed over.

The ledger lives where the remote is, or in a ledger repository of its own (`ledger_remote`,
`--ledger-remote`: on a hosted forge, where no hook guards `refs/gate/*`, docs/forges.md): then
every `refs/gate/*` ref is read from and pushed to that one, and the remote (the forge) is asked
only for what is the forge's: the branch its HEAD names, an attempt's default target.
"""

from __future__ import annotations

from pathlib import Path

from .. import ids
from ..adapters import gitcmd
from ..adapters.gitrepo import GitRepo
from ..checks.independence import Author
from ..configuration.policy import Policy
from ..errors import GateError
from ..git.objects import Objects
from ..git.refs import ATTEMPTS_PREFIX, HELD_PREFIX, generation_ref
from ..records import ledger
from ..signing.keys import SigningKey

LEDGER_NAME, LEDGER_EMAIL = "gate ledger", "ledger@gate.invalid"

#: What a trusted command answers when its retry finds its work on the server already.
ALREADY = "already on the server: nothing to push"


def open_clone(path: Path) -> None:
    """The trusted side's clone (`--repo`) must be a git repository: say which path is not."""
    if not path.is_dir():
        raise GateError("GATE-GIT-REPOSITORY", f"--repo {path}: no such directory")
    probe = gitcmd.run_git(["rev-parse", "--git-dir"], cwd=path, ok=None)
    if not probe.ok:
        raise GateError("GATE-GIT-REPOSITORY", f"--repo {path} is not a git repository")


def check_attempt_id(attempt: str) -> None:
    if not ids.is_attempt_id(attempt):
        raise GateError("GATE-INPUT-ARGUMENT", f"attempt id {attempt!r} is not of the allowed form")


#: `attempt_state`'s default: the tip as the clone's ref has it now.
LOCAL = "local"


def attempt_state(repo: GitRepo, attempt: str, now: int, tip: str | None = LOCAL) -> ledger.AttemptState | None:
    """The attempt as the local ledger has it (seals not verified: the trusted side's own view), at
    `tip` where given (what `sync_ledger` judged: the ref may have moved since)."""
    if tip == LOCAL:
        tip = repo.ref_target(ATTEMPTS_PREFIX + attempt)
    return None if tip is None else ledger.read_state(Objects(repo), tip, None, now, attempt)


def sync_ledger(repo_path: Path, store: str, attempt: str, env: gitcmd.Env = None) -> str | None:
    """Make the clone's ledger of `attempt` the one `store` holds, forward only: a ledger the clone
    holds records of that `store` no longer continues (rewound to an earlier record, rewritten,
    deleted) is refused, GATE-LEDGER-REWRITE, and the clone's copy kept. Where no hook guards
    `refs/gate/*` (a forge holding the ledger) an agent can rewind it, say to before a failover,
    so that model A is on record again: the orchestrator's close appended to that ledger would
    seal the rewind, and model A's stale receipt would pass the check (docs/forges.md).

    What the clone holds is its memory (`HELD_PREFIX`, `remember`), not its `refs/gate/attempts/`
    copy, which any fetch of the reserved refs overwrites (`gate ledger archive`'s, the documented
    `git fetch origin '+refs/gate/*:refs/gate/*'`); the copy of a clone from before the memory
    stands in for it. The ledger is judged as fetched (`gitcmd.sync_ref`), not as listed before;
    returns it (None: the store holds none), what the command reads and appends to."""
    ref = ATTEMPTS_PREFIX + attempt
    repo = GitRepo.at(repo_path)
    remembered = repo.ref_target(HELD_PREFIX + attempt)
    held = remembered or repo.ref_target(ref)
    found = gitcmd.sync_ref(repo_path, store, ref, env=env)
    if held is None or found == held or (found is not None and repo.is_ancestor(held, found)):
        if found is not None:
            remember(repo, attempt, found)
        return found
    if found is None:
        repo.set_ref(ref, held, None)  # (a memory's commit is in the clone: the ref kept it)
        why = (f"{store} no longer holds it (archived by gate ledger archive, or deleted): nothing is appended to "
               "it (an attempt archived is done: open a new one; one deleted there: push this clone's copy back, "
               f"git push {store} {ref}:{ref}, then run again)")
    else:
        repo.set_ref(ref, held, found)
        why = (f"{store} holds {found[:12]}, which does not continue it: the ledger was rewound or rewritten "
               f"there, and nothing is appended to it or read from it (push this clone's copy back, git push {store} "
               f"{ref}:{ref}, a fast-forward of a rewound ledger, then run again; or open a new attempt)")
    raise GateError("GATE-LEDGER-REWRITE", f"this clone holds attempt {attempt}'s ledger up to {held[:12]}, and {why}")


def remember(repo: GitRepo, attempt: str, tip: str) -> None:
    """The clone's memory of `attempt`'s ledger is `tip` (a record it synced, or sealed and landed)."""
    memory = HELD_PREFIX + attempt
    current = repo.ref_target(memory)
    if current != tip:
        repo.set_ref(memory, tip, current)


def ledger_of(remote: str | None, ledger_remote: str | None, flag: str = "--push",
              repo_path: Path | None = None) -> str | None:
    """Where the ledger (`refs/gate/*`) is read from and pushed to: `ledger_remote`, else `remote`
    (one server, whose hook guards `refs/gate/*`). A ledger remote comes with the remote the
    command talks to for the rest (`flag` names it): GATE-INPUT-ARGUMENT without it, and when it
    names the same repository (`same_repository`, read in the clone `repo_path`): the ledger would
    be written where the agent writes, in two pushes where one atomic push was due."""
    if ledger_remote is None:
        return remote
    if remote is None:
        raise GateError("GATE-INPUT-ARGUMENT", f"--ledger-remote needs {flag} too: the remote the ledger is kept "
                                               "apart from, where the review ref and the target branch are (the "
                                               "forge)")
    if repo_path is not None and same_repository(repo_path, remote, ledger_remote):
        raise GateError("GATE-INPUT-ARGUMENT", f"--ledger-remote {ledger_remote} names the same repository as {flag} "
                                               f"{remote}: the ledger is kept in a repository of its own, which "
                                               "only the trusted side writes (docs/forges.md); without "
                                               f"--ledger-remote the ledger is read and written on {flag}")
    return ledger_remote


def same_repository(repo_path: Path, one: str, other: str) -> bool:
    """Do two remotes (each a remote name of the clone, or a URL or path) name one repository, as
    git resolves them (`git ls-remote --get-url`: the remote's URL, `insteadOf` applied)?
    `repository_key` says how each is compared."""

    def where(remote: str) -> str:
        got = gitcmd.run_git(["ls-remote", "--get-url", remote], cwd=repo_path, ok=None) if repo_path.is_dir() else None
        url = got.stdout.decode("utf-8", "surrogateescape").strip() if got is not None and got.ok else ""
        return repository_key(url or remote, repo_path)

    return one == other or where(one) == where(other)


def repository_key(url: str, base: Path) -> str:
    """What names one repository the same however git is told it: a local path (or `file://` URL,
    `localhost` and %-escapes as git reads them) by its real path, the repository `git` would open
    there (`X/.git`, else `X.git` where `X` is none); a remote URL (`scheme://[user@]host/path`, or
    scp-like `[user@]host:path`) by its host (in lower case) and path, without the scheme, a trailing
    slash or `.git` (`git@github.com:acme/p.git` and `https://github.com/acme/p` are one), and with
    the user where the path is in the user's home (`~`, or scp-like and relative) for any user but
    `git` (the forges'). Two names of one repository that differ otherwise (a host's alias or port,
    a path's case, a mirror) are not told apart."""
    import os
    import re
    from urllib.parse import unquote

    if url.startswith("file://"):
        url = unquote(url[len("file://"):])
        url = url[len("localhost"):] if url.startswith("localhost/") else url
    elif "://" in url or re.match(r"[^/]+:", url):  # a URL, or scp-like host:path
        if "://" in url:
            authority, _, path = url.split("://", 1)[1].partition("/")
            path = "/" + path
        else:
            authority, _, path = url.partition(":")
        user, _, host = authority.rpartition("@")
        path = path.rstrip("/")
        path = path[:-len(".git")] if path.endswith(".git") else path
        home = path.startswith(("/~", "~")) or not path.startswith("/")
        path = path.lstrip("/").removeprefix("~").lstrip("/")
        owner = f"{user}@" if home and user not in ("", "git") else ""
        return f"{owner}{host.lower()}/{'~/' if owner else ''}{path}"
    path = os.path.realpath(os.path.join(base, url))
    if os.path.isdir(os.path.join(path, ".git")):
        path = os.path.join(path, ".git")
    elif not os.path.exists(path) and os.path.isdir(path + ".git"):
        path += ".git"
    return os.path.realpath(path)


def record_commit(repo: GitRepo, filename: str, data: bytes, parent: str | None, message: str, now: int) -> str:
    """A ledger or receipt commit: a tree of exactly one file, on top of `parent`."""
    tree = repo.write_tree({filename: data})
    return repo.write_commit(tree, [] if parent is None else [parent], message, LEDGER_NAME, LEDGER_EMAIL, now)


def append_record(repo_path: Path, attempt: str, key: SigningKey, kind: str, remote: str | None, now: int, *,
                  repository: str | None = None, workspace: str | None = None,
                  workspace_generation: str | None = None, prompt_sha256: str | None = None,
                  target: str | None = None, model_id: str | None = None, note: str | None = None,
                  author: Author | None = None, env: gitcmd.Env = None,
                  ledger_remote: str | None = None) -> tuple[ledger.AttemptState, gitcmd.PushResult | None]:
    """Append one record to the attempt's ledger (after syncing it from the ledger's remote:
    `ledger_remote`, else `remote`), then push it there. `remote` is asked only for the branch its
    HEAD names (an opened record's default target). `author` (opened records only): who wrote the
    change and who started the attempt."""
    author = author or Author()
    check_attempt_id(attempt)
    store = ledger_of(remote, ledger_remote, repo_path=repo_path)
    open_clone(repo_path)
    ref = ATTEMPTS_PREFIX + attempt
    repo = GitRepo.at(repo_path)
    tip = sync_ledger(repo_path, store, attempt, env) if store is not None else repo.ref_target(ref)
    state = attempt_state(repo, attempt, now, tip)
    landed = store is not None and state is not None and _on_record(
        state, kind, repository, workspace, workspace_generation, prompt_sha256, target, model_id, author)
    if _retried(state, attempt, kind, landed):
        assert state is not None
        return state, gitcmd.PushResult(True, ALREADY)  # a retry after the push landed: nothing to do
    repository = repository or (state.repository if state else None)
    if repository is None:
        raise GateError("GATE-INPUT-ARGUMENT", "--repository-id is required to open an attempt")
    claim = None if workspace_generation is None else generation_ref(workspace_generation)
    if kind == "opened" and remote is not None and store is not None and claim is not None:
        if gitcmd.ls_remote(repo_path, store, claim, env=env):
            raise GateError("GATE-LEDGER-GENERATION-REUSED", f"generation {workspace_generation} is already "
                                                             f"claimed on {store}; mint a fresh one")
        target = target or gitcmd.remote_head(repo_path, remote, env)
    data = ledger.make_record(key, state, attempt_id=attempt, kind=kind, repository=repository, now=now,
                              workspace=workspace, workspace_generation=workspace_generation,
                              prompt_sha256=prompt_sha256, target=target, model_id=model_id, note=note,
                              author_model=author.model, author_vendor=author.vendor, initiator=author.initiator)
    parent = tip  # (the ledger judged: the push's lease holds the store to it, the swap below the clone)
    commit = record_commit(repo, ledger.RECORD_FILE, data, parent, f"gate attempt {attempt}: {kind}\n", now)
    claim = claim if kind == "opened" else None
    new_state = attempt_state(repo, attempt, now, commit)
    assert new_state is not None
    if claim is not None:  # (before the push: the client hooks' pre-push finds it there, `companions`)
        gitcmd.delete_ref(repo_path, claim)
        repo.set_ref(claim, commit, None)
    if store is None:
        repo.set_ref(ref, commit, parent)
        return new_state, None
    # the ledger pushed by its id, the clone's ref moved once it landed: a push cut off (killed,
    # interrupted) leaves the clone's ledger as it was, not on a record the store never had (for an
    # opened record, with no memory yet, every run after it was refused: the store "no longer" held it)
    refspecs = [f"{commit}:{ref}", *([f"{claim}:{claim}"] if claim is not None else [])]
    result = gitcmd.push(repo_path, store, *refspecs, atomic=True, lease=f"{ref}:{parent or ''}", env=env)
    if result.ok:
        repo.set_ref(ref, commit, parent)
        remember(repo, attempt, commit)
    elif claim is not None:
        repo.delete_ref(claim, commit)
    return new_state, result


def _retried(state: ledger.AttemptState | None, attempt: str, kind: str, landed: bool) -> bool:
    """Is this a retry of a record that landed (`landed`: the server's ledger says it already)?
    Else may a `kind` record follow the ledger as it is? GATE-LEDGER-CLOSED for a retry after the
    attempt was closed, GATE-LEDGER-SEQUENCE or -MISSING for a record out of order."""
    if landed:
        if state is not None and state.closed and kind != "closed":  # the attempt has moved on since
            raise GateError("GATE-LEDGER-CLOSED", f"attempt {attempt}'s {kind} record is on the server, but the "
                                                  "attempt has been closed since: open a new attempt")
        return True
    if kind == "opened" and state is not None:
        raise GateError("GATE-LEDGER-SEQUENCE", f"attempt {attempt} is already open")
    if kind != "opened" and state is None:
        raise GateError("GATE-LEDGER-MISSING", f"attempt {attempt} has no ledger; open it first")
    return False


def _on_record(state: ledger.AttemptState, kind: str, repository: str | None, workspace: str | None,
               generation: str | None, prompt_sha256: str | None, target: str | None, model_id: str | None,
               author: Author) -> bool:
    """Is what this record would say already what the server's ledger says? (A retry of a
    command whose push landed, though its answer was lost.)"""
    if kind == "opened":
        return ((state.repository, state.workspace, state.workspace_generation, state.prompt_sha256,
                 state.author_model, state.author_vendor, state.initiator)
                == (repository or state.repository, workspace, generation, prompt_sha256, author.model,
                    author.vendor, author.initiator)
                and target in (None, state.target))
    if kind == "model-selected":
        return state.models == (model_id,)
    if kind == "failover":
        return len(state.models) > 1 and state.model_id == model_id
    return kind == "closed" and state.closed


#: Where a repository commits the policy the client hooks read (docs/client.md): a copy of the server's.
COMMITTED_POLICY = ".gate/policy.toml"


def reading_policy(repo_path: Path, given: Path | None) -> tuple[Policy | None, str | None]:
    """The policy `gate attempt show` reads model ids with, and where it came from: `given`, else the
    repository's committed `.gate/policy.toml` (at HEAD), else none (None, None)."""
    from ..adapters.config import load_policy, policy_from_bytes
    from ..configuration.policy import MAX_POLICY_BYTES

    if given is not None:
        return load_policy(given, cached=False), str(given)
    got = gitcmd.run_git(["cat-file", "blob", f"HEAD:{COMMITTED_POLICY}"], cwd=repo_path, ok=None)
    if got.returncode != 0:
        return None, None
    if len(got.stdout) > MAX_POLICY_BYTES:
        raise GateError("GATE-CONFIG-POLICY", f"{COMMITTED_POLICY} at HEAD of {repo_path} is larger than a policy "
                                              f"may be ({MAX_POLICY_BYTES} bytes)")
    where = f"{COMMITTED_POLICY} at HEAD of {repo_path}"
    return policy_from_bytes(got.stdout, where), where


def people(state: ledger.AttemptState, policy: Policy | None = None, origin: str | None = None) -> list[str]:
    """`gate attempt show`'s first lines: who wrote the change, who reviews it, who started it,
    each model with its vendors (the ledger's, then the vendor table's) and its canonical form
    (`gatecore.configuration.vendors`), read as a server with `policy` reads them (its
    `[review.models]` and, when it judges vendors, its `[review.vendors]`); then which policy that
    was. Without one an id no packaged naming scheme places is named so, and the server decides."""
    from ..adapters.config import load_model_names, load_vendor_table
    from ..configuration.modelnames import ModelNames, Unplaced, reading
    from ..configuration.vendors import merged, vendors_of

    table = load_vendor_table()
    rows: list[tuple[str, str, str]] = [(g, v, o) for g, v, o in merged(table, {})]
    if policy is not None and policy.review_vendors:
        rows = [(g, v, o) for g, v, o in policy.review_vendors]
    names = ModelNames.from_plain(load_model_names().plain, policy.model_aliases if policy is not None else None)

    def model(m: str | None, recorded: str | None = None) -> str:
        if m is None:
            return "not recorded"
        read = names.read(m)
        found = {} if isinstance(read, Unplaced) else vendors_of(read.canonical, rows)
        vendors = ([f"{recorded} (on record)"] if recorded else []) + [
            f"{v} ({o})" for v, o in found.items() if v != recorded]
        said = m + f", {reading(read)}; vendor " + (", ".join(vendors) or "unknown")
        if isinstance(read, Unplaced) and policy is None:
            said += " (read without the server's policy: its [review.models] may name it; the server decides)"
        return said

    if policy is None:
        source = ("model ids read by the packaged naming schemes and vendor table only; the server reads them with "
                  f"its policy ([review.models], [review.vendors]): --policy FILE, or a committed {COMMITTED_POLICY}, "
                  "reads them so here")
    else:
        source = (f"model ids read with the policy {origin} ([review] independent = {policy.independent}), as a "
                  "server holding that policy reads them")
    return [f"author: {model(state.author_model, state.author_vendor)}",
            f"reviewer: {model(state.model_id) if state.model_id else 'no model selected yet'}",
            f"initiator: {state.initiator or 'not recorded'}",
            source]


def restore(repo: GitRepo, ref: str, parent: str | None, current: str) -> None:
    if parent:
        repo.set_ref(ref, parent, current)
    else:
        repo.delete_ref(ref, current)
