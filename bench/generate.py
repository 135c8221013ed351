"""Deterministic test repositories, streamed into one `git fast-import` process, and cached.

Every repository is a bare repository built from a seeded `random.Random`, so the same
parameters give the same commit ids on every machine. A cached repository lives in
`<cache>/<kind>-<hash of the parameters>` and is reused until the parameters or
`GENERATOR_VERSION` change.

History (`history`): one initial commit with `files` files (in directories of about 20
files two levels below `src/`, plus the frozen and near-miss files), then commits of 1-4 changed
files each until `commits` commits exist in all. Identities:

* humans (`*@example.com`, `chen@corp.example.org`) - they alone touch the frozen paths
  (`ci/**`, `gate.toml`, `.pre-commit-config.yaml`), in about 6% of their commits;
* agents (`*@agents.example.com`, one of them upper-case) author about 35% of the commits
  and also commit 5% of the humans' ones (a restricted committer); they touch near misses
  of the frozen paths (`ci-notes/`, `src/ci/`, `docs/ci.md`, `gate.toml.example`) but never
  a frozen path, so a correct check accepts every push;
* every 40th main-line commit is a merge of a two-commit side branch written by an agent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import IO

from .gitenv import Git, link_copy

GENERATOR_VERSION = 1
EPOCH = 1_700_000_000

HUMANS = [("Alice Able", "alice@example.com"), ("Bob Baker", "bob@example.com"),
          ("Chen Cho", "chen@corp.example.org"), ("Dana Diaz", "dana@example.com")]
AGENTS = [("Agent One", "agent-1@agents.example.com"), ("Agent Two", "agent-2@agents.example.com"),
          ("Agent Three", "agent-3@agents.example.com"), ("Review Bot", "ci-bot@AGENTS.example.com")]
FROZEN_FILES = ["ci/deploy.yml", "ci/test.yml", "ci/workflows/build.yml", "ci/workflows/release.yml",
                "gate.toml", ".pre-commit-config.yaml"]
NEAR_MISSES = ["ci-notes/README.md", "src/ci/helpers.py", "docs/ci.md", "gate.toml.example", "docs/gate.toml"]
AGENT_DOMAIN = "agents.example.com"


def _ident(who: tuple[str, str], when: int) -> bytes:
    return f"{who[0]} <{who[1]}> {when} +0000".encode()


def _data(payload: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(payload), payload)


def _content(path: str, rev: int, rng: random.Random) -> bytes:
    lines = [f"# {path}\n"] + [f"line {i} of {path}\n" for i in range(6)]
    lines.append(f"revision {rev} {rng.getrandbits(64):016x}\n")
    return "".join(lines).encode()


def _m(path: str, payload: bytes) -> bytes:
    return b"M 100644 inline %s\n%s" % (path.encode(), _data(payload))


class _Stream:
    """Buffers fast-import commands and hands them to the process in large writes."""

    def __init__(self, sink: IO[bytes]) -> None:
        self.sink = sink
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, *chunks: bytes) -> None:
        for c in chunks:
            self.parts.append(c)
            self.size += len(c)
        if self.size > 1 << 20:
            self.flush()

    def flush(self) -> None:
        self.sink.write(b"".join(self.parts))
        self.parts.clear()
        self.size = 0


def fast_import(git: Git, repo: Path, produce: Callable[[_Stream], None]) -> None:
    # fast-import sets up zlib for every object; glibc's default heap trimming then turns each
    # one into brk/page-fault churn (over half the run). Keeping the heap cuts 50k commits ~3x.
    env = {**git.env, "GLIBC_TUNABLES": "glibc.malloc.trim_threshold=536870912:glibc.malloc.top_pad=67108864"}
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done", "--date-format=raw"], cwd=repo,
                            env=env, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    stream = _Stream(proc.stdin)
    try:
        produce(stream)
        stream.add(b"done\n")
        stream.flush()
    finally:
        proc.stdin.close()
    err = proc.stderr.read() if proc.stderr else b""
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed: {err.decode(errors='replace')[-2000:]}")


def _leaves(files: int) -> list[str]:
    """Directories of about 20 files, two levels below src/ (wide flat trees make fast-import slow)."""
    n = max(1, files // 20)
    return [f"src/a{i % 10}/b{i // 10:02d}" for i in range(n)]


class _Commits:
    """fast-import commit commands written to a stream: marks from 1, a minute apart from EPOCH."""

    def __init__(self, s: _Stream) -> None:
        self.s = s
        self.mark = 0
        self.when = EPOCH

    def add(self, ref: str, author: tuple[str, str], committer: tuple[str, str], msg: str,
            parent: int | None, changes: list[bytes], merge: int | None = None) -> int:
        self.mark += 1
        self.when += 60
        self.s.add(b"commit %s\nmark :%d\n" % (ref.encode(), self.mark),
                   b"author " + _ident(author, self.when) + b"\n",
                   b"committer " + _ident(committer, self.when) + b"\n", _data(msg.encode()))
        if parent is not None:
            self.s.add(b"from :%d\n" % parent)
        if merge is not None:
            self.s.add(b"merge :%d\n" % merge)
        self.s.add(*changes, b"\n")
        return self.mark


def _history(commits: int, files: int, seed: int) -> Callable[[_Stream], None]:
    def produce(s: _Stream) -> None:
        rng = random.Random(seed)
        leaves = _leaves(files)
        free = [f"{leaves[i % len(leaves)]}/mod{i // len(leaves):03d}.py" for i in range(files)]
        free += ["README.md", "docs/index.md", *NEAR_MISSES]
        main_marks: list[int] = []
        rev = 0
        commit = _Commits(s).add

        first = [_m(p, _content(p, 0, rng)) for p in free + FROZEN_FILES]
        main_marks.append(commit("refs/heads/main", HUMANS[0], HUMANS[0], "initial import", None, first))
        total = 1
        side_no = 0
        while total < commits:
            rev += 1
            if len(main_marks) % 40 == 0 and commits - total >= 3 and len(main_marks) > 5:
                side_no += 1
                agent = rng.choice(AGENTS)
                fork = main_marks[-4]
                tip = fork
                side_files: list[tuple[str, bytes]] = []
                for j in range(2):
                    path = f"{rng.choice(leaves)}/side_{side_no}_{j}.py"
                    payload = _content(path, rev, rng)
                    side_files.append((path, payload))
                    tip = commit("refs/bench/side", agent, agent, f"side {side_no}.{j}", tip, [_m(path, payload)])
                who = rng.choice(AGENTS) if rng.random() < 0.3 else rng.choice(HUMANS)
                main_marks.append(commit("refs/heads/main", who, who, f"Merge side {side_no}", main_marks[-1],
                                         [_m(p, c) for p, c in side_files], merge=tip))
                for p, _ in side_files:
                    free.append(p)
                total += 3
                continue
            roll = rng.random()
            if roll < 0.35:
                author = committer = rng.choice(AGENTS)
            elif roll < 0.40:
                author, committer = rng.choice(HUMANS), rng.choice(AGENTS)
            else:
                author = committer = rng.choice(HUMANS)
            restricted = AGENT_DOMAIN in author[1].lower() or AGENT_DOMAIN in committer[1].lower()
            changes = []
            touched = set()
            for _ in range(rng.randint(1, 4)):
                path = rng.choice(free)
                if path not in touched:
                    touched.add(path)
                    changes.append(_m(path, _content(path, rev, rng)))
            if not restricted and rng.random() < 0.06:
                path = rng.choice(FROZEN_FILES)
                changes.append(_m(path, _content(path, rev, rng)))
            if rng.random() < 0.04:
                path = f"{rng.choice(leaves)}/new_{rev}.py"
                free.append(path)
                changes.append(_m(path, _content(path, rev, rng)))
            main_marks.append(commit("refs/heads/main", author, committer, f"change {rev}", main_marks[-1], changes))
            total += 1

    return produce


def _wide_history(commits: int, root_files: int, seed: int) -> Callable[[_Stream], None]:
    """The shape that costs a tree walk (a big C project such as git's own): a root
    tree of `root_files` + 30 entries (files, and 30 directories three levels deep), and a
    merge every fourth commit, of a one-commit side branch forked 30 main-line commits back
    (so a merge differs from its second parent in everything the main line changed since the
    fork). Commits of 1-4 files; agents as in `_history`, humans drawn from some 2,800 people
    (git's own history has 2,785 authors: who wrote a commit is matched once per distinct
    identity, so eight of them hid that cost), and messages shaped like git's (`_git_message`:
    about 500 bytes, a trailer block in 73% of them, lines `rev-list` may print otherwise in
    12%, whose message is then read again from the object). No commit writes a frozen path of
    either bench policy (near misses only: `ci-notes/`, `gate.toml.example`), so a push under
    READ_ALL_POLICY reads every commit and is accepted. (Issue 47 measured both on git's own
    history, 81,966 commits: the generator's earlier shape, one-line messages and eight
    identities, missed them.)"""
    people = [(f"Dev{i:04d} Hacker", f"dev{i:04d}@example.org") for i in range(2800)]

    def produce(s: _Stream) -> None:
        rng = random.Random(seed)
        top = [f"d{i:02d}" for i in range(30 - 2)] + ["ci-notes", "docs"]
        deep = [f"{d}/s{j}/t{k}/f{n}.c" for d in top for j in range(4) for k in range(4) for n in range(4)]
        flat = [f"file{i:03d}.c" for i in range(root_files - 4)] + ["README.md", "gate.toml.example"]
        free = flat + deep
        main_marks: list[int] = []
        commits_made = _Commits(s)

        def commit(ref: str, who: tuple[tuple[str, str], tuple[str, str]], msg: str, parent: int | None,
                   changes: list[bytes], merge: int | None = None) -> int:
            return commits_made.add(ref, who[0], who[1], msg, parent, changes, merge)

        def identities() -> tuple[tuple[str, str], tuple[str, str]]:
            roll = rng.random()
            if roll < 0.35:
                a = rng.choice(AGENTS)
                return a, a
            if roll < 0.40:
                return rng.choice(HUMANS), rng.choice(AGENTS)
            # most of git's commits are by a few people, the rest by many (a Pareto draw), and one
            # maintainer commits most of them
            h = people[min(len(people) - 1, int(rng.paretovariate(0.3)) - 1)]
            return h, (HUMANS[1] if rng.random() < 0.8 else h)

        def changes(rev: int) -> list[bytes]:
            paths = {rng.choice(free) for _ in range(rng.randint(1, 4))}
            return [_m(p, _content(p, rev, rng)) for p in sorted(paths)]

        first = [_m(p, _content(p, 0, rng)) for p in free]
        main_marks.append(commit("refs/heads/main", (HUMANS[0], HUMANS[0]), "initial import", None, first))
        rev = 0
        while commits_made.mark < commits:
            rev += 1
            if rev % 3 == 0 and len(main_marks) > 30 and commits - commits_made.mark >= 2:
                who = identities()
                topic = [_m(p, _content(p, rev, rng)) for p in sorted({rng.choice(deep) for _ in range(2)})]
                side = commit("refs/bench/side", who, _git_message(f"topic {rev}", who[0], rng), main_marks[-30], topic)
                who = (HUMANS[1], HUMANS[1]) if rng.random() < 0.7 else identities()
                # the merge's tree: the main line's with the topic's files (fast-import starts from `from`)
                main_marks.append(commit("refs/heads/main", who, _git_message(f"Merge topic {rev}", None, rng),
                                         main_marks[-1], topic, merge=side))
                continue
            who = identities()
            main_marks.append(commit("refs/heads/main", who, _git_message(f"change {rev}", who[0], rng), main_marks[-1],
                                     changes(rev)))

    return produce


_WORDS = ("the", "walk", "tree", "refs", "object", "when", "reading", "pack", "index", "config", "avoid", "a",
          "fix", "handle", "of", "to", "in", "diff", "merge", "test", "option", "path", "commit", "that")


def _git_message(title: str, author: tuple[str, str] | None, rng: random.Random) -> str:
    """A message shaped like git's own (81,966 commits measured): a title, a body paragraph or two
    (about 500 bytes in all), in 12% an indented example whose lines `rev-list` prints re-flowed (the
    gate then reads the message again from the object), and a trailer block (Signed-off-by,
    sometimes Helped-by or Reviewed-by) in nearly every commit but a merge (`author` None): 73% in all."""
    body = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(60, 110)))]
    if rng.random() < 0.13:
        body.append("\n".join(f"    $ git {rng.choice(_WORDS)} --{rng.choice(_WORDS)}   " for _ in range(3)))
        body.append(" ".join(rng.choice(_WORDS) for _ in range(12)))
    parts = [f"{title}: {' '.join(rng.choice(_WORDS) for _ in range(5))}", *body]
    if author is not None and rng.random() < 0.97:
        trailers = [f"Signed-off-by: {author[0]} <{author[1]}>"]
        if rng.random() < 0.2:
            trailers.insert(0, f"Helped-by: {rng.choice(HUMANS)[0]} <{rng.choice(HUMANS)[1]}>")
        if rng.random() < 0.1:
            trailers.append(f"Reviewed-by: {rng.choice(HUMANS)[0]} <{rng.choice(HUMANS)[1]}>")
        parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


class Cache:
    def __init__(self, root: Path, git: Git, log: Callable[[str], None] = print) -> None:
        self.root = root
        self.git = git
        self.log = log
        root.mkdir(parents=True, exist_ok=True)

    def get(self, kind: str, params: dict[str, object], build: Callable[[Path], None]) -> Path:
        key = hashlib.sha256(json.dumps({"v": GENERATOR_VERSION, "kind": kind, **params},
                                        sort_keys=True).encode()).hexdigest()[:12]
        path = self.root / f"{kind}-{key}"
        if (path / "bench-done").exists():
            return path
        tmp = self.root / f".{kind}-{key}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(path, ignore_errors=True)
        self.log(f"  generating {kind} {params} ...")
        build(tmp)
        (tmp / "bench-done").write_text(json.dumps(params, sort_keys=True) + "\n")
        os.rename(tmp, path)
        return path

    # --- repositories ------------------------------------------------------------------
    def history(self, commits: int, files: int, seed: int = 1) -> Path:
        """A bare repository whose only ref is refs/heads/main, `commits` commits in all."""
        def build(path: Path) -> None:
            self.git.init_bare(path)
            fast_import(self.git, path, _history(commits, files, seed))
            self.git.run("update-ref", "-d", "refs/bench/side", cwd=path, check=False)
            self.git.run("pack-refs", "--all", cwd=path)

        return self.get("history", {"commits": commits, "files": files, "seed": seed}, build)

    def wide_history(self, commits: int, root_files: int, seed: int = 1) -> Path:
        """A bare repository of `_wide_history` (refs/heads/main only), `commits` commits in all."""
        def build(path: Path) -> None:
            self.git.init_bare(path)
            fast_import(self.git, path, _wide_history(commits, root_files, seed))
            self.git.run("update-ref", "-d", "refs/bench/side", cwd=path, check=False)
            self.git.run("pack-refs", "--all", cwd=path)

        return self.get("wide", {"commits": commits, "root_files": root_files, "seed": seed, "shape": 3}, build)

    def with_refs(self, history: Path, refs: int, seed: int = 2) -> Path:
        """`history` plus refs up to `refs` in all (half branches, half tags) at seeded commits, packed."""
        def build(path: Path) -> None:
            link_copy(history, path)
            (path / "bench-done").unlink()
            ids = self.git.out("rev-list", "--all", cwd=path).split()
            rng = random.Random(seed)
            self.git.run("pack-refs", "--all", cwd=path)
            packed = path / "packed-refs"
            entries: dict[str, str] = {}
            for line in packed.read_text().splitlines():
                if line and not line.startswith(("#", "^")):
                    oid, name = line.split(" ", 1)
                    entries[name] = oid
            for i in range(refs - len(entries)):
                name = f"refs/heads/feature/f{i:06d}" if i % 2 == 0 else f"refs/tags/v{i:06d}"
                entries[name] = rng.choice(ids)
            # Written directly (50k loose refs through update-ref take ~20 s); all tags are lightweight.
            text = "".join(f"{entries[n]} {n}\n" for n in sorted(entries, key=str.encode))
            packed.unlink()
            packed.write_text("# pack-refs with: peeled fully-peeled sorted \n" + text)
            self.git.run("for-each-ref", "--count=1", cwd=path)

        return self.get("refs", {"history": history.name, "refs": refs, "seed": seed}, build)

    def push_client(self, history: Path, files: int = 5, frozen: bool = False, seed: int = 3) -> Path:
        """`history` plus one agent commit on refs/heads/bench-new changing `files` files.

        With `frozen`, one of them is ci/deploy.yml: a push the check must reject.
        """
        def build(path: Path) -> None:
            link_copy(history, path)
            (path / "bench-done").unlink()
            tip = self.git.out("rev-parse", "refs/heads/main", cwd=path)

            def produce(s: _Stream) -> None:
                rng = random.Random(seed)
                agent = AGENTS[0]
                paths = [f"src/pushed/file{i:05d}.py" for i in range(files - int(frozen))]
                if frozen:
                    paths.append("ci/deploy.yml")
                s.add(b"commit refs/heads/bench-new\n", b"author " + _ident(agent, EPOCH + 10**8) + b"\n",
                      b"committer " + _ident(agent, EPOCH + 10**8) + b"\n", _data(b"agent: the pushed change"),
                      b"from %s\n" % tip.encode(), *[_m(p, _content(p, 1, rng)) for p in paths], b"\n")

            fast_import(self.git, path, produce)

        return self.get("client", {"history": history.name, "files": files, "frozen": frozen, "seed": seed}, build)

    def review_client(self, history: Path, files: int, total_bytes: int, seed: int = 4) -> Path:
        """`history` plus refs/heads/review-head: one agent commit changing `files` files, `total_bytes` of content.

        Three quarters of the files are existing ones rewritten, a quarter are new.
        """
        def build(path: Path) -> None:
            link_copy(history, path)
            (path / "bench-done").unlink()
            tip = self.git.out("rev-parse", "refs/heads/main", cwd=path)
            existing = [p for p in self.git.out("ls-tree", "-r", "--name-only", tip, cwd=path).splitlines()
                        if p.startswith("src/a")]

            def produce(s: _Stream) -> None:
                rng = random.Random(seed)
                n_old = min(len(existing), files * 3 // 4)
                paths = rng.sample(existing, n_old) + [f"data/review/blob{i:05d}.txt" for i in range(files - n_old)]
                weights = [rng.uniform(0.2, 1.8) for _ in paths]
                scale = total_bytes / sum(weights)
                agent = AGENTS[1]
                s.add(b"commit refs/heads/review-head\n", b"author " + _ident(agent, EPOCH + 10**8) + b"\n",
                      b"committer " + _ident(agent, EPOCH + 10**8) + b"\n", _data(b"agent: the reviewed change"),
                      b"from %s\n" % tip.encode())
                for p, w in zip(paths, weights, strict=True):
                    s.add(_m(p, _bulk(rng, int(w * scale))))
                s.add(b"\n")

            fast_import(self.git, path, produce)

        return self.get("review", {"history": history.name, "files": files, "bytes": total_bytes, "seed": seed},
                        build)

    # --- real histories ------------------------------------------------------------------
    def real(self, bundle: Path) -> Path:
        """The bundle's history as a bare repository (refs/heads/main only), packed."""
        def build(path: Path) -> None:
            self.git.run("clone", "-q", "--bare", str(bundle), str(path))
            self.git.run("remote", "remove", "origin", cwd=path, check=False)
            self.git.run("config", "receive.autogc", "false", cwd=path)
            self.git.run("config", "gc.auto", "0", cwd=path)
            self.git.run("pack-refs", "--all", cwd=path)

        return self.get("real", {"bundle": bundle.name, "size": bundle.stat().st_size}, build)

    def real_earlier(self, real: Path, back: int) -> Path:
        """`real` as it was `back` first-parent commits ago: only the objects reachable then."""
        def build(path: Path) -> None:
            self.git.init_bare(path)
            old = self.git.out("rev-parse", f"refs/heads/main~{back}", cwd=real)
            self.git.run("push", "-q", str(path), f"{old}:refs/heads/main", cwd=real)
            self.git.run("pack-refs", "--all", cwd=path)

        return self.get("real-earlier", {"real": real.name, "back": back}, build)

    def real_replayed(self, real: Path, times: int) -> Path:
        """`real`'s main replayed `times` times in a row (about `times` x its commits)."""
        def build(path: Path) -> None:
            self.git.init_bare(path)
            export = self.git.run("fast-export", "--reencode=yes", "--signed-tags=strip", "refs/heads/main",
                                  cwd=real).stdout
            fast_import(self.git, path, _replayed(export, times))
            self.git.run("pack-refs", "--all", cwd=path)

        return self.get("real-replayed", {"real": real.name, "times": times}, build)

    def signed(self, history: Path) -> Path:
        """`history` with every commit SSH-signed by the bench signer (`allowed_signers_line`)."""
        return self.get("signed", {"history": history.name}, lambda p: sign_history(self.git, history, p))


def _bulk(rng: random.Random, size: int) -> bytes:
    """`size` bytes of base64 text lines (compresses about as well as minified code)."""
    raw = base64.encodebytes(rng.randbytes(size * 3 // 4 + 3))
    return raw[:size]


# --- real histories (../shared/data) ---------------------------------------------------

def _shared_data() -> Path:
    """`shared/data` beside the checkout or one of its parents (a worktree sits a level deeper)."""
    here = Path(__file__).resolve()
    for up in here.parents[1:5]:
        if (up / "shared" / "data").is_dir():
            return up / "shared" / "data"
    return here.parents[2] / "shared" / "data"


#: The real project whose history the "real" scenarios push (see ../shared/data/README.md).
FLASK_BUNDLE = _shared_data() / "pallets-flask.bundle"


def real_bundle() -> Path | None:
    """The bundle, from GATE_BENCH_BUNDLE or ../shared/data; None if it is not on this machine."""
    path = Path(os.environ.get("GATE_BENCH_BUNDLE") or FLASK_BUNDLE)
    return path if path.is_file() else None


#: Further real histories pushed whole (first push only): many merges and wide directories.
OTHER_BUNDLES = ("ohmyzsh-ohmyzsh.bundle",)


def other_bundles() -> list[Path]:
    """Those of OTHER_BUNDLES on this machine (../shared/data), unless GATE_BENCH_BUNDLE names another."""
    if os.environ.get("GATE_BENCH_BUNDLE"):
        return []
    return [p for p in (FLASK_BUNDLE.with_name(name) for name in OTHER_BUNDLES) if p.is_file()]


def all_bundles() -> list[Path]:
    """Every real history in ../shared/data (the policies scenario pushes each), smallest first;
    only GATE_BENCH_BUNDLE's when it names one."""
    if os.environ.get("GATE_BENCH_BUNDLE"):
        return [p for p in (real_bundle(),) if p is not None]
    return sorted(FLASK_BUNDLE.parent.glob("*.bundle"), key=lambda p: (p.stat().st_size, p.name))


def _replayed(export: bytes, times: int) -> Callable[[_Stream], None]:
    """A `git fast-export` stream of one branch, imported `times` times in a row: each replay's
    root commits start from the previous replay's tip (with `deleteall`, so every tree is the
    original's) and reuse the first replay's blobs, so every commit is new and the trees real."""
    records = _export_records(export)
    commit_marks = [m for kind, m, _ in records if kind == "commit" and m is not None]
    offset = max(commit_marks) + 1

    def produce(s: _Stream) -> None:
        tip: int | None = None
        for k in range(times):
            last = None
            for kind, mark, lines in records:
                if kind == "blob":
                    if k == 0:
                        s.add(*lines)
                    continue
                if kind != "commit":
                    continue
                out = []
                has_parent = any(ln.startswith(b"from ") for ln in lines)
                for ln in lines:
                    if k and ln.startswith((b"mark :", b"from :", b"merge :")):
                        word, _, num = ln.rstrip(b"\n").partition(b":")
                        out.append(word + b":%d\n" % (int(num) + k * offset))
                    else:
                        out.append(ln)
                if not has_parent and tip is not None:
                    i = next(j for j, ln in enumerate(out) if ln.startswith(b"data "))
                    out[i + 1:i + 1] = [b"from :%d\n" % tip, b"deleteall\n"]
                s.add(*out)
                last = (mark or 0) + k * offset
            tip = last

    return produce


def _export_records(export: bytes) -> list[tuple[str, int | None, list[bytes]]]:
    """(kind, mark, chunks) for each command of a fast-export stream (a data block is one chunk
    with its `data N` line, so its bytes are never read as commands)."""
    records: list[tuple[str, int | None, list[bytes]]] = []
    pos = 0
    current: list[bytes] | None = None
    while pos < len(export):
        end = export.index(b"\n", pos) + 1
        line = export[pos:end]
        pos = end
        if line.startswith(b"data "):
            n = int(line[5:])
            chunk = line + export[pos:pos + n]
            pos += n
            if pos < len(export) and export[pos:pos + 1] == b"\n":
                chunk += b"\n"
                pos += 1
            assert current is not None
            current.append(chunk)
            continue
        if line.startswith((b"blob", b"commit ", b"reset ", b"tag ", b"feature ", b"done")):
            current = [line]
            records.append((line.split(b" ")[0].strip().decode(), None, current))
            continue
        if line.startswith(b"mark :") and records:
            kind, _, chunks = records[-1]
            records[-1] = (kind, int(line[6:]), chunks)
        if current is not None:
            current.append(line)
    return records


# --- signed histories ------------------------------------------------------------------

#: The benchmark's signer: a fixed ed25519 key, so signed histories are cached like the rest.
SIGNER_PRINCIPAL = "bench-signer"
_SIGNER_SEED = hashlib.sha256(b"push-gate bench signer").digest()


def _ssh_string(b: bytes) -> bytes:
    return len(b).to_bytes(4, "big") + b


def signer_public_blob() -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    pub = Ed25519PrivateKey.from_private_bytes(_SIGNER_SEED).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return _ssh_string(b"ssh-ed25519") + _ssh_string(pub)


def allowed_signers_line() -> str:
    return f'{SIGNER_PRINCIPAL} namespaces="git" ssh-ed25519 {base64.b64encode(signer_public_blob()).decode()}\n'


def _sshsig(payload: bytes) -> bytes:
    """An armored SSHSIG (namespace git, sha512) of `payload` by the bench signer, as ssh-keygen -Y sign makes it."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(_SIGNER_SEED)
    signed = (b"SSHSIG" + _ssh_string(b"git") + _ssh_string(b"") + _ssh_string(b"sha512")
              + _ssh_string(hashlib.sha512(payload).digest()))
    sig = _ssh_string(b"ssh-ed25519") + _ssh_string(key.sign(signed))
    blob = (b"SSHSIG" + (1).to_bytes(4, "big") + _ssh_string(signer_public_blob()) + _ssh_string(b"git")
            + _ssh_string(b"") + _ssh_string(b"sha512") + _ssh_string(sig))
    text = base64.b64encode(blob)
    lines = [text[i:i + 70] for i in range(0, len(text), 70)]
    return b"-----BEGIN SSH SIGNATURE-----\n" + b"\n".join(lines) + b"\n-----END SSH SIGNATURE-----\n"


def sign_history(git: Git, src: Path, dst: Path) -> None:
    """`src`'s main with every commit re-written SSH-signed (parents re-pointed), as loose objects in `dst`."""
    import zlib

    link_copy(src, dst)
    (dst / "bench-done").unlink(missing_ok=True)
    order = git.out("rev-list", "--reverse", "--topo-order", "refs/heads/main", cwd=dst).split()
    raw = git.run("cat-file", "--batch", cwd=dst, input="".join(f"{o}\n" for o in order).encode()).stdout
    mapped: dict[str, str] = {}
    pos = 0
    for oid in order:
        end = raw.index(b"\n", pos)
        size = int(raw[pos:end].split()[2])
        body = raw[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
        header, _, message = body.partition(b"\n\n")
        lines = header.split(b"\n")
        lines = [(b"parent " + mapped[ln[7:].decode()].encode()) if ln.startswith(b"parent ") else ln for ln in lines]
        payload = b"\n".join(lines) + b"\n\n" + message
        armored = _sshsig(payload).rstrip(b"\n").split(b"\n")
        gpgsig = b"gpgsig " + b"\n ".join(armored)
        signed = b"\n".join([*lines, gpgsig]) + b"\n\n" + message
        store = b"commit %d\0" % len(signed) + signed
        new = hashlib.sha1(store).hexdigest()
        path = dst / "objects" / new[:2] / new[2:]
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(zlib.compress(store, 1))
        mapped[oid] = new
    git.run("update-ref", "refs/heads/main", mapped[order[-1]], cwd=dst)
    git.run("repack", "-adq", cwd=dst)
