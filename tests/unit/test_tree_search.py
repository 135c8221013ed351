"""Trees searched for the frozen names (`treediff.extract`) give what parsing them whole gives.

The frozen-path check reads, in each tree along a frozen path, only the entries whose names
can matter (a 500-entry root tree parsed whole costs some 300 us; a big history has one per
commit). These tests hold the search to the whole parse it replaces (`FrozenChecker` with
`search_names=False`): every violation of every commit, over real histories
(`/work/shared/data/*.bundle`) and generated hostile ones (names in every case, with trailing
dots and spaces, outside ASCII, folding onto a frozen name; names that hold a frozen name
after a space; ids that hold one; raw and zero-padded modes; files turned directories,
symlinks and submodules; merges), and the search itself on crafted bytes.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from support.gitutil import AGENT, git

from gatecore.adapters.gitstream import GitStream
from gatecore.adapters.treescan import TreeScanner
from gatecore.checks.frozen import FrozenChecker
from gatecore.checks.frozenbatch import Batches, walk_violations
from gatecore.configuration.policy import FreezeRule, PathGlob
from gatecore.errors import GateError
from gatecore.findings import Violation
from gatecore.git.objects import Objects
from gatecore.git.treediff import NameSearch, checked_entries, name_pattern
from server import launch

DATA = Path("/work/shared/data")


def rule(index: int, *paths: str) -> FreezeRule:
    """A rule naming nobody: it freezes its paths for every commit (every tree is read)."""
    return FreezeRule(index, f"r{index}", tuple(PathGlob.compile(p) for p in paths), (), (), None)


def _key(v: Violation) -> tuple[str, ...]:
    return (v.code, v.commit or "", v.path or "", v.rule or "", v.detail)


SECOND_PROCESS: list[bool] = []  # whether the searched reading used treescan, per call


def scanner(git_dir: Path) -> TreeScanner:
    """The second process, started as the hook starts it (by file path, bound to these packages)."""
    return TreeScanner(launch.helper_argv(launch.TREE_WORKER, str(git_dir)), launch.identity)


def both_readings(git_dir: Path, tips: list[str], rules: list[FreezeRule],
                  whole_change: bool = False) -> tuple[list[Violation], list[Violation]]:
    """Every violation of the commits reachable from `tips`, with trees searched and parsed whole."""
    out = []
    for search in (True, False):
        reader = GitStream(str(git_dir))
        scan = scanner(git_dir)
        try:
            objects = Objects(reader)
            checker = FrozenChecker(objects, whole_change=whole_change, search_names=search)
            commits = objects.walk(tips, [], None)
            out.append(sorted(walk_violations(Batches(checker, scan), commits, rules, "refs/heads/main", "someone"),
                              key=_key))
            if search:
                SECOND_PROCESS.append(scan.proc is not None)
        finally:
            scan.close()
            reader.close()
    return out[0], out[1]


# --- the search on crafted bytes ----------------------------------------------------------------

def _entry(mode: bytes, name: bytes, oid: bytes = b"\x11" * 20) -> bytes:
    return mode + b" " + name + b"\0" + oid


def test_a_name_is_found_only_where_it_is_an_entry() -> None:
    hits = NameSearch(["ci", "gate.toml"])
    data = b"".join([
        _entry(b"100644", b"40000 ci"),  # a file named "40000 ci": not a directory ci
        _entry(b"100644", b"1 ci", b"\x00" * 3 + b" ci\x00" + b"\x07" * 13),  # an id holding " ci\0"
        _entry(b"40000", b"CI", b"\x22" * 20),
        _entry(b"100644", b"Gate.TOML. .", b"\x33" * 20),
        _entry(b"100644", b"gate.tomlx", b"\x44" * 20),
        _entry(b"100664", b"ci ", b"\x55" * 20),
    ])
    assert hits.find(data, 20) == [(b"40000", b"CI", b"\x22" * 20), (b"100644", b"Gate.TOML. .", b"\x33" * 20),
                                   (b"100664", b"ci ", b"\x55" * 20)]
    # a name starting with a byte no frozen name starts with is passed over, whatever follows but `/`
    assert hits.find(_entry(b"100644", "x\u00e9.ci".encode()), 20) == []
    assert hits.find(_entry(b"100644", "x\u00e9/../ci".encode()), 20) is None  # read whole, and refused


@pytest.mark.parametrize("data", [
    _entry(b"100644", "c\u200ci".encode()),  # outside ASCII: Unicode folding could map it onto ci
    _entry(b"100644", "\u212ai".encode()),  # starting outside ASCII (the Kelvin sign folds to k)
    _entry(b"100644", b"ci/deploy.yml"),  # a name holding a slash, starting like ci
    _entry(b"100644", b"a") + b"trailing garbage",
    _entry(b"100644", b"a")[:-3],  # a cut id
    _entry(b"1x0644", b"a"),  # not an octal mode
    _entry(b"100644", b"ci", b"\x11" * 10),  # the name's id cut short
])
def test_a_tree_that_is_not_plain_entries_is_read_whole(data: bytes) -> None:
    assert NameSearch(["ci"]).find(data, 20) is None


def test_a_frozen_name_outside_ascii_reads_trees_whole() -> None:
    assert name_pattern(["\u00e7i"]) is None and name_pattern(["ci", "gate.toml"]) is not None


def test_entries_named_dot_or_dot_dot_are_found_and_refused_whatever_the_rules() -> None:
    """git fsck's hasDot and hasDotdot: a path through such an entry reads, to a reader that joins
    names, as one without it (./ci/deploy.yml); the search finds names of dots wherever it looks."""
    data = b"".join([_entry(b"40000", b"."), _entry(b"100644", b".github"), _entry(b"100644", b"...")])
    assert NameSearch(["ci"]).find(data, 20) == [(b"40000", b".", b"\x11" * 20), (b"100644", b"...", b"\x11" * 20)]
    for name in (b".", b".."):
        with pytest.raises(GateError, match="an entry named"):
            checked_entries("t", NameSearch(["ci"]).find(_entry(b"40000", name), 20) or [])
    assert checked_entries("t", [(b"100644", b"...", b"\x11" * 20)]) == [(0o100644, b"...", b"\x11" * 20)]


def test_ids_of_either_length_are_tokenised() -> None:
    data = _entry(b"100644", b"a", b"\x01" * 32) + _entry(b"40000", b"ci", b" ci\x00" * 8)
    assert NameSearch(["ci"]).find(data, 32) == [(b"40000", b"ci", b" ci\x00" * 8)]
    assert NameSearch(["ci"]).find(data, 20) is None


# --- hostile histories --------------------------------------------------------------------------

class Raw:
    """Objects written byte for byte (`hash-object --literally`), as a hostile client can."""

    def __init__(self, path: Path) -> None:
        self.path = path
        git(path.parent, "init", "-q", "--bare", str(path))
        self.when = 1_700_000_000

    def write(self, kind: str, data: bytes) -> str:
        return subprocess.run(["git", "hash-object", "-t", kind, "-w", "--literally", "--stdin"], cwd=self.path,
                              input=data, capture_output=True, check=True).stdout.decode().strip()

    def tree(self, entries: dict[bytes, tuple[bytes, str]]) -> str:
        """A well-formed tree (git's order, one entry per name) of raw (mode text, id) entries."""
        def key(name: bytes) -> bytes:
            mode = entries[name][0]
            return name + b"/" if int(mode, 8) & 0o170000 == 0o040000 else name

        return self.write("tree", b"".join(entries[n][0] + b" " + n + b"\0" + bytes.fromhex(entries[n][1])
                                           for n in sorted(entries, key=key)))

    def commit(self, tree: str, parents: list[str]) -> str:
        self.when += 60
        ident = f"{AGENT[0]} <{AGENT[1]}> {self.when} +0000"
        head = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
        return self.write("commit", f"{head}author {ident}\ncommitter {ident}\n\nc\n".encode())


#: Names at the root and below `ci`: frozen ones in every spelling git and other tools fold
#: onto each other, near misses, and names that hold a frozen name after a space.
ROOT_NAMES = [b"ci", b"CI", b"Ci.", b"ci ", b"ci. .", b"ci-notes", b"cI..", "c\u200ci".encode(), "\uff43i".encode(),
              "ci\u0301".encode(), "c\u0327i".encode(), "\u00e7I".encode(), b"gate.toml", b"GATE.TOML", b"gate.toml.example", b"gate.toml.", b"40000 ci",
              b"1 gate.toml", b"kit", "\u212ait".encode(), b"KIT ", b"docs", b"Docs", b"src", b"README",
              b".pre-commit-config.yaml", b".Pre-Commit-Config.YAML ", b"secret", b"a secret"]
SUB_NAMES = [b"deploy.yml", b"Deploy.YML.", b"x", b"Ci", b"secret", b"Md.MD", b"md.md"]
MODES = [b"100644", b"100755", b"120000", b"160000", b"100664", b"30644", b"120755", b"100600", b"0100644"]
TREE_MODES = [b"40000", b"40000", b"40000", b"040000", b"40755"]
RULES = [rule(0, "ci/**"), rule(1, "gate.toml"), rule(2, "kit/deploy.yml"), rule(3, ".pre-commit-config.yaml"),
         rule(4, "docs/ci/md.md"), rule(5, "src/*/secret")]
UNPRUNABLE = [*RULES, rule(6, "**/*ecret")]
#: `**/NAME` patterns (`@agent-config`'s shape): searched for their names and every subdirectory.
TAILS = [*RULES, rule(6, "**/secret"), rule(7, "**/ci/Deploy.yml"), rule(8, "**/md.md/**"), rule(9, "**/Kit/x/**"),
         rule(10, "**/\u00e7i")]
UNICODE = [rule(0, "\u00e7i/**"), rule(1, "gate.toml")]  # a frozen name outside ASCII: trees read whole


def _hostile_history(raw: Raw, rng: random.Random, commits: int) -> str:
    blobs = [raw.write("blob", f"blob {i}\n".encode()) for i in range(6)]
    odd_ids = [(b"\x00 ci\x00" + bytes(rng.randrange(256) for _ in range(15))).hex(),
               (b"1 gate.toml\x00" + bytes(8)).hex()]

    def subtree(depth: int) -> str:
        entries: dict[bytes, tuple[bytes, str]] = {}
        for name in rng.sample(SUB_NAMES, rng.randint(1, 4)):
            if depth < 2 and rng.random() < 0.3:
                entries[name] = (rng.choice(TREE_MODES), subtree(depth + 1))
            else:
                entries[name] = (rng.choice(MODES), rng.choice(blobs + odd_ids))
        return raw.tree(entries)

    def root(previous: dict[bytes, tuple[bytes, str]]) -> dict[bytes, tuple[bytes, str]]:
        entries = dict(previous)
        for name in rng.sample(ROOT_NAMES, rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.2:
                entries.pop(name, None)
            elif roll < 0.6:
                entries[name] = (rng.choice(TREE_MODES), subtree(1))
            elif roll < 0.8 and name in entries:  # the same object under another (raw) mode
                mode, oid = entries[name]
                entries[name] = (rng.choice(TREE_MODES if int(mode, 8) & 0o170000 == 0o040000 else MODES), oid)
            else:
                entries[name] = (rng.choice(MODES), rng.choice(blobs + odd_ids))
        return entries

    states: list[tuple[str, dict[bytes, tuple[bytes, str]]]] = []
    current: dict[bytes, tuple[bytes, str]] = {}
    for i in range(commits):
        if states and i % 7 == 6:  # a merge: one side's entries over the other's, some of each
            other_commit, other = rng.choice(states)
            mixed = {**current, **{k: v for k, v in other.items() if rng.random() < 0.5}}
            current = mixed if rng.random() < 0.8 else dict(rng.choice([current, other]))
            tip = raw.commit(raw.tree(current), [states[-1][0], other_commit])
        else:
            current = root(current)
            tip = raw.commit(raw.tree(current), [states[-1][0]] if states else [])
        states.append((tip, current))
    return states[-1][0]


@pytest.mark.parametrize("seed", range(6))
def test_hostile_histories_read_the_same_searched_or_parsed_whole(tmp_path: Path, seed: int) -> None:
    raw = Raw(tmp_path / "r.git")
    tip = _hostile_history(raw, random.Random(seed), 60)
    for rules, whole in ((RULES, False), (UNPRUNABLE, False), (RULES, True), (UNICODE, False), (TAILS, False),
                         (TAILS[:-1], False), (TAILS[:-1], True)):
        searched, parsed = both_readings(raw.path, [tip], rules, whole)
        assert searched == parsed
        assert searched  # the history does write frozen paths (the comparison is not vacuous)
    codes = {v.code for v in searched}
    assert {"GATE-FROZEN-PATH", "GATE-GIT-MODE"} <= codes


def test_what_a_search_keeping_subdirectories_holds_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `**/NAME` search keeps every subdirectory of every tree it reads: those entries are not
    shared between trees (two trees with the same subdirectories and nothing else are one tree), and
    the entries kept between levels are bounded in number, not only the trees (80,000 commits under
    `@agent-config` held 500 MiB before)."""
    from gatecore.git.treediff import TreeDiff

    monkeypatch.setattr(TreeDiff, "KEPT_ENTRIES", 64)
    raw = Raw(tmp_path / "r.git")
    tip = _hostile_history(raw, random.Random(7), 60)
    reader = GitStream(str(raw.path))
    try:
        objects = Objects(reader)
        checker = FrozenChecker(objects)
        batches = Batches(checker)
        walk_violations(batches, objects.walk([tip], [], None), [rule(0, "**/secret"), rule(1, "**/md.md/**")],
                        "refs/heads/main", None)
        assert not checker.diff._same
        assert checker.diff._held < 64 + 200  # (cleared before a level once over the bound)
    finally:
        reader.close()


def test_two_entries_of_a_frozen_name_are_refused_and_elsewhere_left_to_fsck(tmp_path: Path) -> None:
    raw = Raw(tmp_path / "r.git")
    blob = raw.write("blob", b"x\n")
    base = raw.commit(raw.tree({b"README": (b"100644", blob)}), [])

    def pushed(entries: list[tuple[bytes, bytes]]) -> str:
        tree = raw.write("tree", b"".join(m + b" " + n + b"\0" + bytes.fromhex(blob) for m, n in entries))
        return raw.commit(tree, [base])

    def check(tip: str, search: bool) -> list[Violation]:
        reader = GitStream(str(raw.path))
        try:
            objects = Objects(reader)
            return walk_violations(Batches(FrozenChecker(objects, search_names=search)),
                                   objects.walk([tip], [base], None), RULES, "refs/heads/main", None)
        finally:
            reader.close()

    dup_frozen = pushed([(b"100644", b"README"), (b"100644", b"gate.toml"), (b"100644", b"gate.toml")])
    for search in (True, False):
        with pytest.raises(GateError) as got:
            check(dup_frozen, search)
        assert got.value.code == "GATE-GIT-MALFORMED"
    dup_other = pushed([(b"100644", b"README"), (b"100644", b"README")])
    assert check(dup_other, True) == []  # two READMEs: not a frozen path, left to git fsck (install --fsck)
    with pytest.raises(GateError):
        check(dup_other, False)  # what reading the tree whole said


def _malformed_both_ways(raw: Raw, tip: str, base: str, rules: list[FreezeRule]) -> None:
    """The push of `tip` onto `base` is refused as malformed, trees searched and parsed whole alike."""
    for search in (True, False):
        reader = GitStream(str(raw.path))
        try:
            objects = Objects(reader)
            with pytest.raises(GateError) as got:
                walk_violations(Batches(FrozenChecker(objects, search_names=search)),
                                objects.walk([tip], [base], None), rules, "refs/heads/main", None)
            assert got.value.code == "GATE-GIT-MALFORMED", (search, got.value.detail)
        finally:
            reader.close()


@pytest.mark.parametrize("entries", [
    [b"100644 x", b"40000 x"],
    [b"120000 x", b"40000 x"],
    [b"160000 x", b"40000 x"],
    [b"100755 x", b"40000 x.d", b"100644 x.txt", b"40000 x"],  # (git's order: x, x.d/, x.txt, x/)
    [b"100644 x", b"100644 x-1", b"40000 x-2", b"40000 x"],
    [b"100644 README", b"100644 x", b"40000 x"],
    pytest.param([b"40000 x", b"100644 x"], marks=pytest.mark.xfail(strict=True, reason=(
        "out of git's order, the file after the directory: git's lookups find the directory (what the search "
        "reads), readers that take the last entry the file; finding it would search the whole tree for each "
        "directory's name (order outside the names found is git fsck's)"))),
], ids=["file", "symlink", "submodule", "between", "between-2", "after-readme", "unsorted"])
def test_a_file_named_as_a_directory_a_tail_search_reads_is_refused(tmp_path: Path, entries: list[bytes]) -> None:
    """git fsck's duplicateEntries, a file and a directory both named `x`: git's path lookups find the
    first (the file: `git show C:x/AGENTS.md` finds nothing), other readers the directory. A `**/NAME`
    search reads every directory, but skipped the file (no rule names `x`), and so took a tree the
    whole parse refuses: the agent's commit hides `x/AGENTS.md` from git's lookups (the search of a
    literal `x/AGENTS.md` finds both `x` and refuses it)."""
    raw = Raw(tmp_path / "r.git")
    blob = raw.write("blob", b"x\n")
    sub = raw.tree({b"AGENTS.md": (b"100644", blob)})
    base = raw.commit(raw.tree({b"README": (b"100644", blob), b"x": (b"40000", sub)}), [])
    tip = raw.commit(raw.write("tree", b"".join(e + b"\0" + bytes.fromhex(sub if e.startswith(b"40000") else blob)
                                                for e in entries)), [base])
    for rules in ([rule(0, "**/AGENTS.md")], [rule(0, "**/.claude/**", "**/AGENTS.md"), rule(1, "ci/**")]):
        _malformed_both_ways(raw, tip, base, rules)


def test_a_root_entry_holding_a_slash_is_refused_searched_or_parsed_whole(tmp_path: Path) -> None:
    """`x/../ci` at the root of an agent's commit: a reader that joins names reads it as `ci`. The
    whole parse refuses it (fullPathname, hasDotdot); the name search passed over it as a name no
    frozen name starts like, and accepted the push."""
    raw = Raw(tmp_path / "r.git")
    blob = raw.write("blob", b"x\n")
    base = raw.commit(raw.tree({b"README": (b"100644", blob)}), [])
    sub = raw.tree({b"deploy.yml": (b"100644", blob)})
    tip = raw.commit(raw.write("tree", b"40000 x/../ci\0" + bytes.fromhex(sub) + b"100644 README\0"
                               + bytes.fromhex(blob)), [base])
    _malformed_both_ways(raw, tip, base, RULES)


def test_a_tail_below_a_directory_named_only_of_ignorable_code_points_is_frozen(tmp_path: Path) -> None:
    """A directory named U+200C (or U+FEFF, ...) is an empty segment once normalised: `**/AGENTS.md`
    and `**/.claude/**` matched nothing below it, searched or parsed whole (an agent's AGENTS.md
    in a directory named U+200C was no `@agent-config` path)."""
    raw = Raw(tmp_path / "r.git")
    blob = raw.write("blob", b"x\n")
    base = raw.commit(raw.tree({b"README": (b"100644", blob)}), [])
    claude = raw.tree({b".claude": (b"40000", raw.tree({b"settings.json": (b"100644", blob)}))})
    tip = raw.commit(raw.tree({
        b"README": (b"100644", blob),
        "\u200c".encode(): (b"40000", raw.tree({b"AGENTS.md": (b"100644", blob)})),
        b"src": (b"40000", raw.tree({"\ufeff\u200d".encode(): (b"40000", claude)})),
        b"x": (b"40000", raw.tree({"\u200c".encode(): (b"40000", raw.tree({b"a": (b"40000", raw.tree({
            b"b": (b"100644", blob)}))}))})),
    }), [base])
    rules = [rule(0, "**/AGENTS.md", "**/.claude/**"), rule(1, "**/a/b"), rule(2, "src/**/settings.json")]
    searched, parsed = both_readings(raw.path, [tip], rules)
    assert searched == parsed
    assert {(v.path, v.rule) for v in searched} == {
        ("\\xe2\\x80\\x8c/AGENTS.md", "freeze[0]:r0"),
        ("src/\\xef\\xbb\\xbf\\xe2\\x80\\x8d/.claude/settings.json", "freeze[0]:r0"),
        ("src/\\xef\\xbb\\xbf\\xe2\\x80\\x8d/.claude/settings.json", "freeze[2]:r2"),
        ("x/\\xe2\\x80\\x8c/a/b", "freeze[1]:r1"),
    }


# --- real histories -----------------------------------------------------------------------------

#: Frozen paths that real histories write: literal, deep, in another case, and unprunable globs.
#: (A glob without a literal first segment makes every tree of its rules' group be read whole:
#: each history is read once with literal rules only, which the search serves, and once more
#: with such a glob added.)
REAL_RULES = {
    "pallets-flask": [rule(0, "src/flask/**"), rule(1, "CHANGES.rst"), rule(2, ".GitHub/**"),
                      rule(3, "docs/Tutorial/*.rst"), rule(4, "tests/conftest.py")],
    "ohmyzsh-ohmyzsh": [rule(0, "plugins/git/**"), rule(1, "Themes/robbyrussell.zsh-theme"), rule(2, "oh-my-zsh.sh"),
                        rule(3, "lib/*.zsh"), rule(4, "tools/**")],
    "django-debug-toolbar": [rule(0, "debug_toolbar/panels/**"), rule(1, "setup.py"), rule(2, "debug_toolbar/*.py")],
}
UNPRUNABLE_REAL = {"pallets-flask": rule(5, "*.toml"), "django-debug-toolbar": rule(3, "**/*.html")}
#: `**/NAME` patterns each history writes (searched for their names and every subdirectory).
TAILS_REAL = {"pallets-flask": [rule(5, "**/conftest.py"), rule(6, "**/Templates/**")],
              "ohmyzsh-ohmyzsh": [rule(5, "**/README.md"), rule(6, "**/git/git.plugin.zsh")],
              "django-debug-toolbar": [rule(3, "**/panels/**"), rule(4, "**/__init__.py")]}


def _real(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    bundle = DATA / f"{name}.bundle"
    if not bundle.exists():
        pytest.skip(f"{bundle} is not on this machine")
    repo = tmp_path_factory.mktemp(name) / "r.git"
    git(repo.parent, "clone", "-q", "--bare", str(bundle), str(repo))
    return repo


def _tips(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(objectname)", "refs/heads").stdout.split()


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(REAL_RULES))
def test_real_histories_read_the_same_searched_or_parsed_whole(tmp_path_factory: pytest.TempPathFactory,
                                                             monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    from gatecore.checks import frozenbatch

    monkeypatch.setattr(frozenbatch, "SCAN_AFTER_BYTES", 0)  # the second process from the first big batch on
    repo = _real(tmp_path_factory, name)
    rules = REAL_RULES[name]
    searched, parsed = both_readings(repo, _tips(repo), rules)
    assert searched == parsed
    assert len({v.rule for v in searched}) >= len(rules) - 1  # nearly every rule is hit somewhere
    if len(git(repo, "rev-list", "--all").stdout.split()) > 4000:
        assert SECOND_PROCESS[-1]  # half of each big batch was searched by treescan
    if name in UNPRUNABLE_REAL:
        searched, parsed = both_readings(repo, _tips(repo), [*rules, UNPRUNABLE_REAL[name]])
        assert searched == parsed
    tails = TAILS_REAL[name]
    searched, parsed = both_readings(repo, _tips(repo), tails)
    assert searched == parsed
    assert len({v.rule for v in searched}) == len(tails)  # every tail is written somewhere


# --- the second process ---------------------------------------------------------------------------

def test_the_second_process_sends_back_every_pair_it_cannot_call_clean(tmp_path: Path) -> None:
    raw = Raw(tmp_path / "r.git")
    blob, other = raw.write("blob", b"a\n"), raw.write("blob", b"b\n")
    ci = raw.tree({b"deploy.yml": (b"100644", blob)})
    ci2 = raw.tree({b"deploy.yml": (b"100644", other)})
    base = raw.tree({b"README": (b"100644", blob), b"ci": (b"40000", ci)})
    readme_changed = raw.tree({b"README": (b"100644", other), b"ci": (b"40000", ci)})
    ci_changed = raw.tree({b"README": (b"100644", blob), b"ci": (b"40000", ci2)})
    raw_mode = raw.tree({b"README": (b"100644", blob), b"ci": (b"40755", ci)})
    folded = raw.tree({b"README": (b"100644", blob), b"ci": (b"40000", ci), "c\u200ci".encode(): (b"40000", ci2)})
    dup = raw.write("tree", b"".join(m + b" " + n + b"\0" + bytes.fromhex(i) for m, n, i in (
        (b"100644", b"README", blob), (b"40000", b"ci", ci), (b"40000", b"ci", ci))))
    pairs: list[tuple[str | None, str | None]] = [
        (base, readme_changed),  # 0: clean (the frozen directory is the same)
        (base, ci_changed),  # 1: the frozen directory changed
        (base, raw_mode),  # 2: the same directory under a raw mode
        (base, folded),  # 3: a name outside ASCII: read whole by the hook
        (None, base),  # 4: a root commit
        (dup, dup),  # 5: two entries named ci, the same in both: the hook refuses it
        (readme_changed, base),  # 6: clean
    ]
    scan = scanner(raw.path)
    try:
        assert scan(pairs, ["ci"], 20)() == {1, 2, 3, 4, 5}
        assert scan([], ["ci"], 20)() == set()
        assert scan(pairs[:1], ["readme"], 20)() == {0}  # the file itself changed
    finally:
        scan.close()


def test_a_second_process_that_dies_fails_closed(tmp_path: Path) -> None:
    raw = Raw(tmp_path / "r.git")
    tree = raw.tree({b"ci": (b"100644", raw.write("blob", b"a\n"))})
    scan = scanner(raw.path)
    try:
        assert scan([(tree, tree)], ["ci"], 20)() == set()
        assert scan.proc is not None
        scan.proc.kill()
        scan.proc.wait()
        with pytest.raises(GateError) as got:
            scan([(tree, tree)], ["ci"], 20)()
        assert got.value.code == "GATE-GIT-UNREADABLE"
        with pytest.raises(GateError):
            scan([(tree, tree)], ["ci"], 20)  # never asked again
    finally:
        scan.close()


def test_a_second_process_that_runs_other_code_is_refused(tmp_path: Path) -> None:
    """The worker says first what code it runs; one that runs another copy of push-gate (another
    installation, say, importable by name) is refused before it is asked anything, and so is one
    started by module name, which says nothing of the kind."""
    import shutil
    import sys

    from support.gitutil import ROOT

    raw = Raw(tmp_path / "r.git")
    tree = raw.tree({b"ci": (b"100644", raw.write("blob", b"a\n"))})
    other = tmp_path / "other"
    for name in ("gatecore", "server", "hooks"):
        shutil.copytree(ROOT / name, other / name, ignore=shutil.ignore_patterns("__pycache__"))
    starts = {
        "GATE-CONFIG-INSTALL": [sys.executable, "-I", str(other / "server" / "launch.py"), launch.TREE_WORKER,
                                str(raw.path)],
        "GATE-GIT-UNREADABLE": [sys.executable, "-m", launch.TREE_WORKER, str(raw.path)],
    }
    for code, argv in starts.items():
        scan = TreeScanner(argv, launch.identity)
        try:
            with pytest.raises(GateError) as got:
                scan([(tree, tree)], ["ci"], 20)()
            assert got.value.code == code, got.value.detail
            if code == "GATE-CONFIG-INSTALL":
                assert "runs other code than the hook" in got.value.detail and str(other) in got.value.detail
            with pytest.raises(GateError):
                scan([(tree, tree)], ["ci"], 20)  # never asked again
        finally:
            scan.close()


def test_the_search_uses_no_possessive_quantifier() -> None:
    """CPython before 3.11.5 matches a possessive quantifier over an alternation wrongly (gh-106052):
    on Debian 12's python3 (3.11.2), the one a server's hook may run on, `X*+` read valid trees as
    unsorted and refused them. The search is written with atomic groups, `(?>X*)`, which every 3.11
    matches as 3.11.5 does (a bare Debian 12 found it: tests pass on 3.11.7 either way)."""
    import re

    from gatecore.git.treediff import NameSearch

    search = NameSearch(["ci", "gate.toml", ".github"])
    for width in (20, 32):
        for pattern in search._patterns(width):
            assert not re.search(rb"(?<!\\)[*+?}][+]", pattern.pattern), pattern.pattern
    assert not re.search(rb"(?<!\\)[*+?}][+]", search._name)
