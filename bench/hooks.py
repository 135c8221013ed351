"""The hooks a push is timed with: none, floor, peer, native digest, and the gate itself.

* `none`   - no pre-receive hook: the cost of the push itself.
* `floor`  - `git rev-list NEW... --not --all`: the least any history-checking hook does.
* `peer`   - the gate's frozen-path rule in native git (`git log --raw`), written to be a
  fair, careful peer: the same identities (author or committer `*@agents.example.com`,
  any case, filtered by git before any diff is computed; every commit when the pusher is
  `agent-*`), the same paths (`ci/**`, `gate.toml`, `.pre-commit-config.yaml`), pruned by
  case-insensitive pathspecs so git compares only those subtrees, then matched exactly
  with the gate's normalisation (case-folded, trailing dots and spaces of each segment
  dropped); merges count a path as written when it differs from every parent (`-c`), and
  `--full-history` keeps side branches that a merge discarded.
* `native-digest` - review pushes only: `git diff-tree -r --no-renames` from the
  reviewed base to the pushed commit, and every changed blob (old and new) hashed once
  with `sha256sum` (one stream through `git cat-file --batch`): the native floor of the
  gate's digest recomputation.
* `gate`   - installed with `gate server install` (`server.install.install`, the function
  the command runs), with the bench policy and a keyring.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Callable
from pathlib import Path

from server.demo import POLICY as DEMO_POLICY

# The demo's policy, with the deadline raised from the default so that slow pushes are
# measured rather than cut off (the table says which ones would have passed the default).
POLICY = DEMO_POLICY + "\n[limits]\ndeadline_seconds = 120.0\n"

#: The frozen paths of `POLICY` (the peer matches the same).
FROZEN = ("ci/**", "gate.toml", ".pre-commit-config.yaml")

#: Every commit read (the tree search's measurement): the pusher `agent-bench` is restricted, so every
#: pushed commit is checked, at paths no commit of the histories it is used with writes.
READ_ALL_FROZEN = ("ci/**", "gate.toml", ".gate/**")
READ_ALL_POLICY = f"""\
mode = "enforce"

[[freeze]]
name = "read-all"
paths = {list(READ_ALL_FROZEN)!r}
pushers = ["agent-*"]

[trusted]
pushers = ["gate-runner"]

[limits]
deadline_seconds = 120.0
""".replace("'", '"')
READ_ALL_PUSHER = "agent-bench"

#: The policies people write, each pushed by a human (`POLICY_PUSHER`), so that who is
#: restricted is decided by what each commit says: the README's minimal policy as it stands there
#: (`@known-agents` emails, names and trailers; `@agent-config` paths, whose `**/AGENTS.md` patterns
#: make every changed directory matter), everyone restricted by `authors = ["*"]` (every commit's
#: trees compared), and agents' emails only (nobody in a real history matches: the identity question
#: alone). The last two freeze READ_ALL_FROZEN, paths the real histories never write.
_LIMITS = "\n[limits]\ndeadline_seconds = 120.0\n"
MINIMAL_POLICY = """\
mode = "enforce"
[[freeze]]
paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml", "@agent-config"]
authors = ["@known-agents", "*@agents.example.com"]
names = ["@known-agents"]
trailers = ["@known-agents"]
pushers = ["@known-agents", "agent-*"]
refs = ["refs/heads/*"]
""" + _LIMITS
AUTHORS_ALL_POLICY = f"""\
mode = "enforce"
[[freeze]]
paths = {list(READ_ALL_FROZEN)!r}
authors = ["*"]
""".replace("'", '"') + _LIMITS
AGENT_EMAILS_POLICY = f"""\
mode = "enforce"
[[freeze]]
paths = {list(READ_ALL_FROZEN)!r}
authors = ["*@agents.example.com"]
""".replace("'", '"') + _LIMITS
#: policy name -> (its text, what the table calls it)
POLICIES = {
    "minimal": (MINIMAL_POLICY, "the README's minimal policy"),
    "authors-all": (AUTHORS_ALL_POLICY, 'authors = ["*"]'),
    "agent-emails": (AGENT_EMAILS_POLICY, 'authors = ["*@agents.example.com"]'),
}
POLICY_PUSHER = "bench-human"

REPOSITORY_ID = "bench/repo"
ZERO = "0" * 40

_READ_NEWS = f"""\
z={ZERO}
news=
while read -r old new ref; do
  [ "$new" = "$z" ] || news="$news $new"
done
[ -n "$news" ] || exit 0
"""

FLOOR = f"""#!/bin/sh
# bench floor: list the new commits, nothing else
{_READ_NEWS}exec git rev-list $news --not --all >/dev/null
"""


def _frozen_filter(test: str) -> str:
    """The awk both peers pipe `git log --raw` into: each changed path, lower-cased and with
    git's look-alike endings folded as the gate folds them, held to `test`; exit 1 on a hit."""
    return f"""awk '
/^peer-error/ {{ print; bad = 1; next }}
/^commit / {{ c = $2; next }}
/^:/ {{
  p = tolower(substr($0, index($0, "\\t") + 1))
  gsub(/[ .]+\\//, "/", p); sub(/[ .]+$/, "", p)
  if ({test}) {{
    print "peer: frozen path " p " written by " c; bad = 1
  }}
}}
END {{ exit bad }}'
"""


def peer(frozen: tuple[str, ...] = FROZEN) -> str:
    """The peer hook for frozen paths like `ci/**` and `gate.toml` (a directory or a file, no
    other wildcards): `:(icase)` pathspecs prune, awk matches exactly."""
    names = [p.removesuffix("/**") for p in frozen]
    specs = " ".join(f"':(icase){n}*'" for n in names)
    test = " ||\n      ".join(f'p == "{_awk(n)}" || p ~ /^{_awk_re(n)}\\//' for n in names)
    return f"""#!/bin/sh
# bench peer: the gate's frozen-path rule in native git (see bench/hooks.py)
{_READ_NEWS}pusher=${{REMOTE_USER:-$(id -un)}}
case "$pusher" in
  agent-*) filters=all ;;
  *) filters="--author --committer" ;;
esac
for f in $filters; do
  if [ "$f" = all ]; then set -- ; else set -- -i "$f=@agents\\.example\\.com>"; fi
  git -c core.quotePath=false log --no-renames --full-history -c --raw --format='commit %H' "$@" \\
      $news --not --all -- {specs} ||
    echo "peer-error: git log exited $?"
done | {_frozen_filter(test)}"""


def _awk(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _awk_re(name: str) -> str:
    return "".join("\\" + c if c in ".[]()*+?^$|/\\" else c for c in name)


PEER = peer()


def _ere(glob: str, star: str) -> str:
    """An identity glob (`*` any run, `?` one character, the rest literal) as a POSIX ERE, `*`
    standing for `star` (inside an email: anything but `>`)."""
    one = star.removesuffix("*")
    return "".join(star if c == "*" else one if c == "?" else ("\\" + c if c in ".[]()*+?^$|{}\\" else c)
                   for c in glob)


def _path_ere(pattern: str) -> str:
    """A frozen-path glob, normalised as the gate reads paths (case-folded, segment tails of dots
    and spaces dropped), as an ERE over a path the peer normalised alike: the path or anything below."""
    out = []
    for i, seg in enumerate(s for s in pattern.lower().split("/") if s):
        sep = "/" if i else ""
        if seg == "**":
            out.append("(/[^/]+)*" if i else "([^/]+/)*")
            continue
        text = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else ("\\" + c if c in ".[]()+^$|{}\\/" else c)
                       for c in seg)
        out.append(("" if i and out and out[-1] == "([^/]+/)*" else sep) + text)
    return ("^" + "".join(out) + "(/.*)?$").replace("/", "\\/")  # (awk ends a regex literal at a bare /)


def _pathspec(pattern: str) -> str:
    """A case-insensitive pathspec for what `pattern` freezes, as the issue's careful peer writes
    it (`:(icase)ci` for `ci/**`; `:(icase,glob)**/AGENTS.md` where the pattern has wildcards), so
    that git prunes the diff by it in C. (It does not see the `ci.` and `CI ` variants the gate
    folds; a `ci*` pathspec would, at 3.5x the peer's cost on ohmyzsh.)"""
    text = pattern.strip("/")
    literal = text.removesuffix("/**")
    if "*" not in literal and "?" not in literal:
        return f"':(icase){literal}'"
    return f"':(icase,glob){text}'"


def careful_peer(policy_text: str) -> str:
    """The careful native peer of a policy: the same identity question asked of git's
    own reading of each commit, then the same frozen-path rule, every walk pruned by path in C.

    Per rule: `git log -i -E --author=RE` (the rule's emails inside `<...>`, its names before the
    `<`), the same with `--committer`, and `--grep=RE` for its trailer lines and `Co-authored-by`
    emails (git ANDs --author with --grep, so each question is a walk of its own); a rule that
    names `*` among its emails restricts everyone: one walk with no filter. Each walk is `git log
    --raw -c --full-history --no-renames NEW --not --all -- PATHSPECS`; its output is matched
    exactly as the gate matches paths (awk, case-folded, trailing dots and spaces dropped)."""
    from gatecore.adapters.config import policy_from_bytes

    policy = policy_from_bytes(policy_text.encode(), "bench peer")
    walks: list[str] = []
    tests: list[str] = []
    specs: list[str] = []
    for rule in policy.rules:
        emails = [g.pattern for g in rule.authors]
        names = [g.pattern for g in rule.names]
        filters: list[str] = []
        if "*" in emails or rule.everyone:
            filters.append("")
        else:
            idents = [f"<({'|'.join(_ere(e, '[^>]*') for e in emails)})>"] if emails else []
            idents += [f"^({'|'.join(_ere(n, '[^<]*') for n in names)})[[:space:]]*<"] if names else []
            if idents:
                both = "|".join(idents)
                filters += [f"--author='{both}'", f"--committer='{both}'"]
            greps = [f"^({'|'.join(_ere(t, '.*') for t in (g.pattern for g in rule.trailers))})$"] \
                if rule.trailers else []
            if emails:
                greps.append(f"^co-authored-by:.*<({'|'.join(_ere(e, '[^>]*') for e in emails)})>")
            if greps:
                filters.append(" ".join(f"--grep='{g}'" for g in greps))
        walks += [f"-i -E {f}".strip() for f in filters]
        for g in rule.paths:
            specs.append(_pathspec(g.pattern))
            tests.append(f"p ~ /{_path_ere(g.pattern)}/")
    spec_text = " ".join(dict.fromkeys(specs))
    test = " ||\n      ".join(dict.fromkeys(tests))
    body = "".join(f"""git -c core.quotePath=false log --no-renames --full-history -c --raw --format='commit %H' {w} \\
    $news --not --all -- {spec_text} || echo "peer-error: git log exited $?"
""" for w in walks)
    return f"""#!/bin/sh
# bench careful peer: the policy's identity question and frozen-path rule in native git (bench/hooks.py)
{_READ_NEWS}{{
{body}}} | {_frozen_filter(test)}"""


def native_digest(base: str) -> str:
    return f"""#!/bin/sh
# bench native digest: diff-tree from the reviewed base, every changed blob hashed once
z={ZERO}
while read -r old new ref; do
  case "$ref" in refs/heads/review/runner/*) ;; *) continue ;; esac
  git diff-tree -r --no-renames --raw {base} "$new" |
    awk -v z="$z" '$2 != "160000" && $3 != z {{ print $3 }} $2 != "160000" && $4 != z {{ print $4 }}' |
    git cat-file --batch | sha256sum >/dev/null || exit 1
done
exit 0
"""


def _write_hook(git_dir: Path, text: str) -> None:
    hook = git_dir / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(text)
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def installer(variant: str, policy: Path, keyring: Path | None, base: str | None = None,
              frozen: tuple[str, ...] = FROZEN, peer_text: str | None = None) -> Callable[[Path], None]:
    """A function that puts `variant`'s hook into a fresh bare repository (`frozen`: the
    policy's frozen paths, for the peer; `peer_text`: the peer hook itself, a `careful_peer`)."""
    if variant == "none":
        return lambda git_dir: None
    if variant == "floor":
        return lambda git_dir: _write_hook(git_dir, FLOOR)
    if variant == "peer":
        text = peer(frozen) if peer_text is None else peer_text
        return lambda git_dir: _write_hook(git_dir, text)
    if variant == "native-digest":
        assert base is not None
        return lambda git_dir: _write_hook(git_dir, native_digest(base))
    if variant == "gate":
        from server.install import install

        def gate(git_dir: Path) -> None:
            install(git_dir, policy, keyring, "git", REPOSITORY_ID)

        return gate
    raise ValueError(variant)


def wrap_for_memory(git_dir: Path, memfile: Path) -> None:
    """Run the installed hook under /usr/bin/time to record its peak RSS (one extra, untimed push)."""
    hook = git_dir / "hooks" / "pre-receive"
    inner = hook.with_name("pre-receive.measured")
    os.replace(hook, inner)
    _write_hook(git_dir, f"#!/bin/sh\nexec /usr/bin/time -f %M -o {shlex.quote(str(memfile))} "
                         f"/bin/sh {shlex.quote(str(inner))} \"$@\"\n")


def read_peak_mib(memfile: Path) -> float | None:
    try:
        lines = [ln for ln in memfile.read_text().splitlines() if ln.strip()]
        return int(lines[-1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
