"""What a shell command would write, read without running a shell: best effort, and said so.

An agent's shell tool (`Bash`, `run_shell_command`, `bash`, ...) names no path of its own; this
module reads the command the way a careful reviewer would, with `shlex` and no shell:

* redirections (`>`, `>>`, `>|`, `&>`, `<>`), a heredoc's target included;
* `tee`, `sed -i`, `perl -i`, `cp`, `mv`, `rm`, `ln`, `install`, `truncate`, `touch`, `chmod`,
  `dd of=`, `curl -o`, `wget -O`: their targets;
* `git checkout|restore -- PATH`, `git rm`, `git mv`, `git apply FILE`, `patch`: the paths they
  write (a patch file is named in `patches`: the caller reads it, `patch_paths` reads the diff);
* Codex's `apply_patch` (which Codex runs itself from its shell tool): the files its patch names,
  the patch given as its argument, in a heredoc or here-string, or piped from a heredoc;
* wrappers (`sudo`, `env`, `nohup`, `time`, `command`, `exec`, `timeout`, `nice`), `VAR=value`
  prefixes, reserved words (`then`, `do`, `{`), `cd DIR` and `pushd` before later commands, and
  `bash -c '...'`, subshells and process substitutions (each read as a command of its own);
* where a command runs: a `cd` holds for what `&&` chains after it; past `;`, `||`, `|`, `&`, or
  the end of the subshell or `bash -c` it ran in, it may have failed, been skipped or ended, and
  the paths are read from each directory the command may be in (`_Reader.alts`);
* what switches a gate hook off (`off`): `git commit|push|merge|... --no-verify` (or a prefix
  git takes for it; `-n` for commit), `git -c core.hooksPath=...` (`--config-env` too), `git config
  core.hooksPath ...` (`include.path`, `includeIf.*.path` too), `pre-commit uninstall`,
  pre-commit's `SKIP=` naming a gate hook and git's `GIT_CONFIG_KEY_N`/`GIT_CONFIG_PARAMETERS`
  setting `core.hooksPath` (before a command, or `export`ed).

The commands a command substitutes (`$(...)`, backquotes, in double quotes too) and `eval`'s words
are read as commands of their own. What it cannot read it says in `unread` and does not guess: a
target that needs the shell to expand it (`$VAR`, `$(...)`), a program that writes where its own
code says (`python -c`, `xargs`, `tar -x`), a command `shlex` cannot split. Those calls are allowed, and the
docs say that the server, at push, is where the rule is enforced. Paths come back as the
command names them (relative to the call's directory, after any `cd`, or absolute); globs are
left for the caller, which can look at the work tree (`PathWrite.path` holds them as written).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Sequence

from ..errors import GateError
from ..valueclass import valueclass
from .toolcall import DELETE, MODE, MODIFY, WRITE, PathWrite

#: How deep `bash -c '...'`, `eval` and command substitutions are followed (past it, the command is
#: refused: what it would write is not read in part).
MAX_DEPTH = 4
#: The ids of the gate's client hooks (.pre-commit-hooks.yaml's, not the console scripts' names): `SKIP=`
#: naming one switches it off.
GATE_HOOK_IDS = ("gate-frozen-files", "gate-frozen-files-msg", "gate-frozen-files-push", "gate-review-receipt")

_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n", "(", ")", ";;", ";&"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_READ_REDIRECTS = frozenset({"<", "<<", "<<-", "<<<"})
_DUP_REDIRECTS = frozenset({">&", "<&"})
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z0-9_.-]+)\2")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: Programs that only run the rest of the command line (their own options skipped: `_unwrap`).
_WRAPPERS = frozenset({"sudo", "doas", "env", "nohup", "time", "command", "builtin", "exec", "nice", "timeout",
                       "stdbuf", "ionice", "chronic", "unbuffer", "busybox", "xargs"})
#: A wrapper's options that take the next word.
_WRAPPER_VALUES = {"sudo": ("-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"), "doas": ("-u", "-C"),
                   "nice": ("-n",), "ionice": ("-c", "-n"), "env": ("-u", "--unset", "-C", "--chdir", "-S",
                                                               "--split-string"),
                   "timeout": ("-s", "--signal", "-k", "--kill-after"), "stdbuf": ("-i", "-o", "-e"),
                   "xargs": ("-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--arg-file", "--delimiter",
                             "--max-args", "--max-procs", "--max-lines", "--eof", "--max-chars")}
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})
#: Programs whose writes their own code decides (inline code, or names read from elsewhere).
_OPAQUE = frozenset({"python", "python3", "node", "ruby", "php", "lua", "deno", "bun", "source",
                     ".", "awk", "gawk", "make", "tar", "unzip", "parallel"})
#: `git` subcommands after which `--no-verify` skips a hook.
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                                     "--config-env", "--super-prefix"})


@valueclass(frozen=True, slots=True)
class ShellReading:
    """What a command would write, what it switches off, what could not be read."""

    writes: tuple[PathWrite, ...] = ()
    off: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()
    patches: tuple[str, ...] = ()  # patch files it applies (paths as named): the caller reads them


class _Reader:
    def __init__(self) -> None:
        self.writes: list[PathWrite] = []
        self.off: list[str] = []
        self.unread: list[str] = []
        self.patches: list[str] = []
        self.cwd = ""  # relative to the call's directory ("" itself), or absolute after `cd /x`
        #: the other directories the command may be in: before a `cd` that may not have run, or not
        #: here (after `;`, `||`, `|`, `&`: a `cd` that failed, was skipped, ran in a subshell)
        self.alts: list[str] = []
        #: the directories before a `cd` whose later commands run only if it did (`cd X && ...`)
        self.pending: list[str] = []
        self.oldpwd: str | None = None  # `cd -`'s
        self.scopes: list[tuple[str, list[str], list[str]]] = []  # the state at each open `(`
        self.stdin: str | None = None  # the heredoc or here-string the command being read is given
        self.heredocs: Sequence[str] = ()  # every heredoc's body in the command

    def at(self, path: str, cwd: str | None = None) -> str:
        """`path` as the command names it, seen from the call's directory (after any `cd`; `~+` is it)."""
        if path == "~+" or path.startswith("~+/"):
            path = "." + path[2:]
        if path.startswith("~"):
            return path
        return posixpath.normpath(path if path.startswith("/") else posixpath.join(self.cwd if cwd is None else cwd,
                                                                                   path))

    def write(self, path: str, kind: str = WRITE, tree: bool = False, source: str = "") -> None:
        if not path or path == "-":
            return
        if "$" in path or "`" in path:
            self.unread.append(f"a target the shell would expand: {path}")
            return
        for cwd in dict.fromkeys([self.cwd, *self.alts]):
            self.writes.append(PathWrite(self.at(path, cwd), kind, tree, self.at(source, cwd) if source else ""))

    def state(self) -> tuple[str, list[str], list[str]]:
        return self.cwd, list(self.alts), list(self.pending)

    def restore(self, state: tuple[str, list[str], list[str]]) -> None:
        self.cwd, self.alts, self.pending = state[0], list(state[1]), list(state[2])

    def enter(self, target: str) -> None:
        """The command's directory moved to `target` (and every other it may be in with it)."""
        self.cwd = self.at(target) if not target.startswith("~") else target
        self.alts = [self.at(target, a) if not target.startswith("~") else target for a in self.alts]

    def chdir(self, target: str) -> None:
        """`cd TARGET`: later commands run there, but where the `cd` may not apply (it fails, is
        skipped, runs in a subshell) also where they were (`separator`)."""
        self.pending += [self.cwd, *self.alts]
        self.oldpwd = self.cwd
        self.enter(target)

    def separator(self, token: str) -> None:
        """After a command: past anything but `&&`, the directories before a `cd` may be the command's."""
        if token != "&&":  # noqa: S105 - an operator
            self.alts = [a for a in dict.fromkeys(self.alts + self.pending) if a != self.cwd]
            self.pending = []
        if token == "(":  # noqa: S105 - an operator
            self.scopes.append(self.state())
        elif token == ")" and self.scopes:  # noqa: S105 - an operator
            self.restore(self.scopes.pop())  # a subshell's `cd` ends with it

    def reading(self) -> ShellReading:
        return ShellReading(tuple(self.writes), tuple(dict.fromkeys(self.off)), tuple(dict.fromkeys(self.unread)),
                            tuple(self.patches))


def read_command(command: str) -> ShellReading:
    """What `command` would write (module docstring)."""
    reader = _Reader()
    _read_into(reader, command, 0)
    return reader.reading()


def _without_heredoc_bodies(command: str) -> tuple[str, list[str]]:
    """The command with every heredoc's body taken out (its lines are data, not commands), and the
    bodies, one per heredoc in the order the command opens them."""
    lines = command.split("\n")
    out: list[str] = []
    pending: list[tuple[str, bool]] = []
    bodies: list[str] = []
    body: list[str] = []
    for line in lines:
        if pending:
            delimiter, strip = pending[0]
            if (line.lstrip("\t") if strip else line) == delimiter:
                pending.pop(0)
                bodies.append("\n".join(body))
                body = []
            else:
                body.append(line.lstrip("\t") if strip else line)
            continue
        out.append(line)
        pending += [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(line)]
    if pending:
        bodies.append("\n".join(body))  # (a body the command does not close: the shell reads it to the end)
    return "\n".join(out), bodies


def _without_comments(command: str) -> str:
    """The command with its comments taken out: an unquoted `#` that starts a word, to the line's end."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                out.append(command[i:i + 2])
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "\\" and i + 1 < len(command):
            out.append(command[i:i + 2])
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or command[i - 1] in " \t\n;&|()"):
            end = command.find("\n", i)
            i = len(command) if end < 0 else end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


#: The shell's operators, longest first (a run of operator characters is split into them: `;>x`).
_OPERATORS = ("&>>", "<<<", "&&", "||", ";;", ";&", "|&", ">>", ">|", "&>", "<>", ">&", "<&", "<<", ">", "<", ";",
              "&", "|", "(", ")", "\n")
_OPERATOR_CHARS = frozenset(";&|<>()\n")


#: The characters of a brace expansion, where quotes or a backslash keep them literal: masked while the
#: command is split (private-use characters), so that only the shell's own braces are expanded.
_MASK = str.maketrans({"{": "\ue000", "}": "\ue001", ",": "\ue002"})
_UNMASK = str.maketrans({"\ue000": "{", "\ue001": "}", "\ue002": ","})


def _quoted_braces_masked(command: str) -> str:
    """`command` with the `{`, `}` and `,` in quotes or after a backslash masked (`_MASK`): the shell
    does not brace-expand `'{"a":1,"b":2}'` (a JSON body, an awk program), and neither does the reading."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        ch = command[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\" and i + 1 < len(command):
            out.append(ch + command[i + 1].translate(_MASK))
            i += 2
            continue
        elif ch == "'" and not quote:
            quote = "'"
        elif ch == '"':
            quote = "" if quote else '"'
        out.append(ch.translate(_MASK) if quote else ch)
        i += 1
    return "".join(out)


def _tokens(command: str) -> list[str]:
    """The command's words and operators, each word brace-expanded as the shell would (`_braces`)."""
    text = _without_comments(command)
    # (a command holding the masks' own characters is not masked: every brace in it read as unquoted)
    masked = set(text).isdisjoint("\ue000\ue001\ue002")
    unmask = _UNMASK if masked else {}
    lexer = shlex.shlex(_quoted_braces_masked(text) if masked else text, posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    out: list[str] = []
    for word in lexer:
        rest = word
        while rest and set(rest) <= _OPERATOR_CHARS and rest not in _OPERATORS:
            op = next(o for o in _OPERATORS if rest.startswith(o))
            out.append(op)
            rest = rest[len(op):]
        if rest:
            out += [w.translate(unmask) for w in _braces(rest)] if "{" in rest and "}" in rest else \
                [rest.translate(unmask)]
    return out


def _read_into(reader: _Reader, command: str, depth: int) -> None:
    text, bodies = _without_heredoc_bodies(command)
    try:
        tokens = _tokens(text)
    except ValueError as exc:
        reader.unread.append(f"a command shlex cannot split ({exc})")
        return
    _read_tokens(reader, tokens, iter(bodies), bodies, depth)
    for inner in _substitutions(text):
        if depth >= MAX_DEPTH:
            _too_deep("a command substitution")
        saved = reader.state()
        _read_into(reader, inner, depth + 1)  # (its own `cd`s end with it)
        reader.restore(saved)


def _substitutions(text: str) -> list[str]:
    """The commands substituted into `text` (`$(...)`, backquotes), outside single quotes: inside
    double quotes too, where the words around them do not split them out."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "'" and not quote:
            quote = "'"
        elif ch == '"':
            quote = "" if quote == '"' else '"'
        elif ch == "`":
            end = text.find("`", i + 1)
            end = len(text) if end < 0 else end
            out.append(text[i + 1:end])
            i = end
        elif text.startswith("$(", i) and not text.startswith("$((", i):
            level, j = 0, i + 1
            while j < len(text):
                level += 1 if text[j] == "(" else -1 if text[j] == ")" else 0
                if level == 0:
                    break
                j += 1
            out.append(text[i + 2:j])
            i = j
        i += 1
    return out


def _eval(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    """`eval WORDS`: the words, joined, read as a command of its own."""
    if depth >= MAX_DEPTH:
        _too_deep("eval")
    if args:
        _read_into(reader, " ".join(args), depth + 1)


def _too_deep(what: str) -> None:
    """A command nested past `MAX_DEPTH`: refused (GATE-AGENT-PAYLOAD), not allowed unread."""
    raise GateError("GATE-AGENT-PAYLOAD", f"{what} nested deeper than {MAX_DEPTH} levels: the check does not read "
                                          "that far")


_BRACE = re.compile(r"\{([^{}]*)\}")
_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")
#: How many words one word's brace expansion is read as, at most (past it, the command is refused).
MAX_BRACE_WORDS = 4096


def _braces(word: str) -> list[str]:
    """The shell's brace expansion of `word` (`{a,b}` lists and `{a..z}` sequences, nested ones from
    the inside out); GATE-AGENT-PAYLOAD past `MAX_BRACE_WORDS` words (what it would name is not read
    in part: a frozen name may be among the rest)."""
    out = [word]
    while True:
        grown: list[str] = []
        for w in out:
            m = next((m for m in _BRACE.finditer(w) if "," in m.group(1) or _SEQUENCE.fullmatch(m.group(1))), None)
            if m is None:
                grown.append(w)
                continue
            seq = _SEQUENCE.fullmatch(m.group(1))
            items = _sequence(*seq.groups()) if seq else m.group(1).split(",")
            grown += [w[:m.start()] + item + w[m.end():] for item in items]
        if grown == out:
            return out
        if len(grown) > MAX_BRACE_WORDS:
            raise GateError("GATE-AGENT-PAYLOAD", f"a word the shell expands to more than {MAX_BRACE_WORDS} words: "
                                                  f"{word[:80]}")
        out = grown


def _sequence(first: str, last: str, step: str | None) -> list[str]:
    by = abs(int(step)) if step and step.lstrip("-").isdigit() and int(step) else 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // by >= MAX_BRACE_WORDS:
            raise GateError("GATE-AGENT-PAYLOAD", f"a sequence the shell expands to more than {MAX_BRACE_WORDS} "
                                                  f"words: {{{first}..{last}}}")
        return [str(n) for n in range(a, b + (1 if b >= a else -1), by if b >= a else -by)]
    if len(first) == 1 and len(last) == 1 and not first.isdigit() and not last.isdigit():
        a, b = ord(first), ord(last)
        return [chr(n) for n in range(a, b + (1 if b >= a else -1), by if b >= a else -by)]
    return [f"{first}..{last}"]


def _closing(tokens: Sequence[str], i: int) -> int:
    """The index of the `)` that closes the `(` at `i` (the end when none does)."""
    level = 0
    for j in range(i, len(tokens)):
        level += 1 if tokens[j] == "(" else -1 if tokens[j] == ")" else 0
        if level == 0:
            return j
    return len(tokens)


def _read_tokens(reader: _Reader, tokens: Sequence[str], heredocs: Iterator[str], bodies: Sequence[str],
                 depth: int) -> None:
    words: list[str] = []
    stdin: str | None = None  # what a heredoc or a here-string gives the simple command being read
    i = 0
    while i <= len(tokens):
        token = tokens[i] if i < len(tokens) else ";"
        if token in ("<", ">") and i + 1 < len(tokens) and tokens[i + 1] == "(":
            end = _closing(tokens, i + 1)  # a process substitution: a command of its own, a file to this one
            saved = reader.state()
            _read_tokens(reader, tokens[i + 2:end], heredocs, bodies, depth)
            reader.restore(saved)
            words.append("/dev/fd/63")
            i = end + 1
            continue
        if token in _SEPARATORS:
            if words:
                reader.stdin, reader.heredocs = stdin, bodies
                _simple(reader, words, depth)
                reader.stdin = None
            reader.separator(token)
            words = []
            stdin = None
        elif token in _WRITE_REDIRECTS or token in _READ_REDIRECTS or token in _DUP_REDIRECTS:
            if words and words[-1].isdigit():
                words.pop()  # the redirected descriptor (`2>`)
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if target in _SEPARATORS or target in _WRITE_REDIRECTS or target in _READ_REDIRECTS:
                target = ""
            stdin = _redirect(reader, token, target, words, heredocs, stdin)
            i += 1 if target else 0
        else:
            words.append(token)
        i += 1


def _applies_a_patch(words: Sequence[str]) -> bool:
    """Whether the command reads a diff on its standard input (`patch`, `git apply`)."""
    names = [posixpath.basename(w) for w in words]
    return "patch" in names or ("git" in names and "apply" in words)


def _redirect(reader: _Reader, token: str, target: str, words: Sequence[str], heredocs: Iterator[str],
              stdin: str | None) -> str | None:
    """One redirection: the file it writes, the diff it gives `patch`; what the command then reads
    on its standard input (a heredoc's body, a here-string), as far as the reading knows."""
    if token in _WRITE_REDIRECTS:
        reader.write(target)
    elif token in _DUP_REDIRECTS and target and not target.isdigit() and target != "-":
        reader.write(target)  # `>& FILE`: both streams to a file
    elif token == "<" and _applies_a_patch(words):  # noqa: S105 - an operator
        reader.patches.append(reader.at(target))
    elif token in ("<<", "<<-"):
        return next(heredocs, None)
    elif token == "<<<":  # noqa: S105 - an operator
        return target
    return stdin


#: The shell's words that open a compound command or a list in one: the command follows them.
_RESERVED = frozenset({"if", "then", "else", "elif", "do", "while", "until", "{", "!"})


def _unwrap(words: list[str], reader: _Reader) -> list[str]:
    """The command under its reserved words (`then`, `do`, `{`), `VAR=value` prefixes and wrappers."""
    while words:
        head = words[0]
        if head in _RESERVED:
            words = words[1:]
            continue
        if _ASSIGNMENT.match(head):
            _assignment(reader, head)
            words = words[1:]
            continue
        base = posixpath.basename(head)
        if base not in _WRAPPERS:
            return words
        rest = words[1:]
        while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])
                        or (base == "timeout" and rest[0][:1].isdigit())):
            if rest[0] in _WRAPPER_VALUES.get(base, ()):
                if base == "env" and rest[0] in ("-C", "--chdir") and len(rest) > 1:
                    reader.enter(rest[1])  # (for this command only: `_simple` puts it back)
                rest = rest[2:]
            else:
                if _ASSIGNMENT.match(rest[0]):
                    _assignment(reader, rest[0])
                rest = rest[1:]
        if base == "xargs":
            reader.unread.append("xargs adds the arguments it reads to the command")
        words = rest
    return words


def _assignment(reader: _Reader, word: str) -> None:
    """`NAME=value` (before a command, given to `env` or `export`): what switches a hook off, pre-commit's
    `SKIP` naming a gate hook, and git's configuration from the environment setting `core.hooksPath`
    (`GIT_CONFIG_KEY_N`, `GIT_CONFIG_PARAMETERS`)."""
    name, _, value = word.partition("=")
    if name == "SKIP" and {v.strip() for v in value.split(",")} & set(GATE_HOOK_IDS):  # (as pre-commit splits it)
        reader.off.append(f"SKIP={value} skips the gate's client hook")
    elif (name.startswith("GIT_CONFIG_KEY_") and value.strip("'\"").casefold() == "core.hookspath") or \
            (name == "GIT_CONFIG_PARAMETERS" and "core.hookspath" in value.casefold()):
        reader.off.append(f"{name}={value} makes git run other hooks than the repository's")


def _export(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    """`export`, `declare`, `typeset`, `readonly`: the assignments they make, for the commands after them."""
    for a in args:
        if _ASSIGNMENT.match(a):
            _assignment(reader, a)


def _operands(args: Sequence[str], with_value: frozenset[str] = frozenset()) -> tuple[list[str], set[str]]:
    """A command's operands and the options it was given (short flags split: `-rf` is -r and -f;
    `with_value`: options that take the next word)."""
    operands: list[str] = []
    options: set[str] = set()
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            operands += args[i + 1:]
            break
        if a.startswith("--") and len(a) > 2:
            name = a.split("=", 1)[0]
            options.add(a if "=" in a else name)
            if "=" not in a and name in with_value:
                options.add(f"{name}={args[i + 1] if i + 1 < len(args) else ''}")
                i += 1
        elif a.startswith("-") and len(a) > 1:
            for j, ch in enumerate(a[1:], 1):
                options.add(f"-{ch}")
                if f"-{ch}" in with_value:
                    value = a[j + 1:] or (args[i + 1] if i + 1 < len(args) else "")
                    options.add(f"-{ch}={value}")
                    if not a[j + 1:]:
                        i += 1
                    break
        else:
            operands.append(a)
        i += 1
    return operands, options


def _value(options: set[str], *names: str) -> str | None:
    for o in sorted(options):
        for n in names:
            if o.startswith(n + "="):
                return o[len(n) + 1:]
    return None


def _simple(reader: _Reader, words: list[str], depth: int) -> None:
    """One simple command: its program's reader (`_PROGRAMS`), after its prefixes and wrappers."""
    saved = reader.state()
    words = _unwrap(words, reader)
    if (reader.cwd, reader.alts) != saved[:2]:
        moved = reader.state()  # `env -C DIR`: the command runs there, and what follows where it was
        _program(reader, words, depth)
        if (reader.cwd, reader.alts) == moved[:2]:
            reader.restore(saved)
        return
    _program(reader, words, depth)


def _program(reader: _Reader, words: list[str], depth: int) -> None:
    if not words:
        return
    name = posixpath.basename(words[0])
    program = _PROGRAMS.get(name)
    if program is not None:
        program(reader, name, words[1:], depth)
    elif name in _OPAQUE or name.startswith("python"):
        reader.unread.append(f"{name} writes where its own code says")


def _cd(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    """`cd`, `pushd` (`popd`: back where the command was before, as far as the reading knows)."""
    ops = [a for a in args if not (a.startswith("-") and a != "-")] if name != "popd" else []
    target = ops[0] if ops else "~" if name == "cd" else None
    if target == "-" or target is None:
        if reader.oldpwd is None:
            reader.alts = list(dict.fromkeys([*reader.alts, reader.cwd, ""]))  # somewhere it was: the start too
            return
        back = reader.oldpwd  # (as the reading holds it: from the call's directory)
        reader.pending += [reader.cwd, *reader.alts]
        reader.oldpwd, reader.cwd = reader.cwd, back
        return
    if "$" in target or "`" in target:
        reader.unread.append(f"{name} to a directory the shell would expand: {target}")
    reader.chdir(target)


def _shell(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    ops, opts = _operands(args)
    if "-c" in opts and ops:
        if depth >= MAX_DEPTH:
            _too_deep(f"{name} -c")
        saved = reader.state()
        _read_into(reader, ops[0], depth + 1)
        reader.restore(saved)  # (a `cd` in it ends with it)
    elif ops:
        reader.unread.append(f"{name} runs the script {ops[0]}")


def _tee(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    for path in _operands(args)[0]:
        reader.write(path)


def _rm(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    ops, opts = _operands(args)
    tree = bool(opts & {"-r", "-R", "--recursive"})
    for path in ops:
        reader.write(path, DELETE, tree)


def _touch(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    ops, _ = _operands(args, frozenset({"-s", "--size", "-r", "--reference", "-d", "--date", "-t"}))
    for path in ops:
        reader.write(path, MODIFY if name == "truncate" else WRITE)


def _chmod(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    ops, opts = _operands(args)
    ops = ops if any(o.startswith("--reference") for o in opts) else ops[1:]
    for path in ops:
        reader.write(path, MODE, bool(opts & {"-R", "--recursive"}))


def _dd(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    for a in args:
        if a.startswith("of="):
            reader.write(a[3:])


def _download(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    """`curl -o FILE`, `wget -O FILE`; `curl -O` and `wget` (into `-P DIR`) name the file after the URL."""
    names = ("-o", "--output", "--output-document") if name == "curl" else ("-O", "--output-document")
    valued = {"-P", "--directory-prefix", "-H", "--header", "-d", "--data", "-u", "--user", "-X", "--request", "-A",
              "-e", "-T", "-w", "-b", "-c", "-F", "-x", "--url", "--output-dir", *names}
    ops, opts = _operands(args, frozenset(valued - ({"-O"} if name == "curl" else set())))
    out = _value(opts, *names)
    if out:
        reader.write(out)
        return
    remote = name == "wget" or bool(opts & {"-O", "--remote-name", "--remote-name-all"})
    if remote:
        folder = _value(opts, "-P", "--directory-prefix", "--output-dir") or ""
        for url in ops + ([_value(opts, "--url") or ""] if name == "curl" else []):
            file = posixpath.basename(url.split("?", 1)[0].split("#", 1)[0].rstrip("/")) if "/" in url else ""
            if file and "://" not in file:
                reader.write(posixpath.join(folder, file))


def _patch(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    ops, opts = _operands(args, frozenset({"-i", "--input", "-p", "--strip", "-d", "--directory", "-o", "--output",
                                           "-B", "-r", "-D", "-F", "-V", "-z"}))
    patch = _value(opts, "-i", "--input")
    if patch:
        reader.patches.append(reader.at(patch))
    if ops:
        reader.write(ops[0], MODIFY)
        if len(ops) > 1:
            reader.patches.append(reader.at(ops[1]))
    if not patch and len(ops) < 2 and not _stdin_patch(reader):
        reader.unread.append("patch reads its diff from stdin")


def _stdin_patch(reader: _Reader) -> bool:
    """The diff a heredoc or here-string gives `patch` or `git apply`: its paths written."""
    if reader.stdin is None:
        return False
    for w in patch_paths(reader.stdin):
        reader.write(w.path, w.kind)
    return True


def _unlink(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    """`unlink FILE`, `shred -u FILE...` (without `-u` it overwrites them), `sort -o FILE`, `rsync SRC... DEST`."""
    if name == "rsync":
        _rsync(reader, args)
        return
    if name == "sort":
        out = _value(_operands(args, frozenset({"-o", "--output", "-k", "-t", "-S", "-T"}))[1], "-o", "--output")
        if out:
            reader.write(out)
        return
    ops, opts = _operands(args, frozenset({"-n", "--iterations", "-s", "--size", "--random-source"}))
    for path in ops:
        reader.write(path, DELETE if name == "unlink" or "-u" in opts or "--remove" in opts else MODIFY)


#: rsync's options that take the next word (`--opt=VALUE` too): not a source or the destination.
_RSYNC_VALUES = frozenset({
    "-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from", "--include-from", "--files-from",
    "-T", "--temp-dir", "--partial-dir", "--backup-dir", "--compare-dest", "--copy-dest", "--link-dest", "-B",
    "--block-size", "--suffix", "--chmod", "--chown", "--usermap", "--groupmap", "-M", "--remote-option",
    "--rsync-path", "--password-file", "--log-file", "--log-file-format", "--out-format", "--timeout",
    "--contimeout", "--bwlimit", "--max-size", "--min-size", "--max-delete", "--modify-window", "--port",
    "--address", "--sockopts", "--iconv", "--info", "--debug", "--protocol", "--checksum-choice", "--cc",
    "--compress-choice", "--zc", "--compress-level", "--zl", "--skip-compress", "--outbuf", "--stop-after",
    "--stop-at", "--write-batch", "--only-write-batch", "--read-batch", "--checksum-seed", "--mkpath-mode"})


def _rsync(reader: _Reader, args: list[str]) -> None:
    """`rsync [OPTIONS] SRC... DEST` as `cp` reads it: a source ending in `/` copies what is in it (as
    `cp -r SRC/. DEST`); `--delete*` removes what DEST holds that the sources lack (DEST's files
    counted as deleted); `--log-file`, `--write-batch` write their file."""
    ops, opts = _operands(args, _RSYNC_VALUES)
    for option in ("--log-file", "--write-batch", "--only-write-batch"):
        out = _value(opts, option)
        if out:
            reader.write(out)
    recursive = bool(opts & {"-r", "-a", "--recursive", "--archive"})
    if len(ops) < 2:
        return
    sources = [f"{s}." if s.endswith("/") else s for s in ops[:-1]]
    dest = ops[-1]
    if any(o == "--del" or o.startswith("--delete") for o in opts):
        reader.write(dest, DELETE, True)
    if "--remove-source-files" in opts:
        for src in ops[:-1]:
            reader.write(src, DELETE, True)
    _copy(reader, "cp", [*sources, dest] + (["-r"] if recursive else []))


def _find(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    """`find PATH... -delete` without a test: everything below its paths. What its tests choose, and
    what its `-exec` runs, is its own expression's: unread."""
    paths = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        paths.append(a)
    expression = args[len(paths):]
    if "-delete" in expression and set(expression) <= {"-delete", "-depth", "-xdev", "-mount"}:
        for path in paths or ["."]:
            reader.write(path, DELETE, True)
    elif any(a in _FIND_ACTIONS for a in expression):
        reader.unread.append("find deletes, runs or writes what its expression chooses")


_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"})


def _apply_patch(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    """Codex's `apply_patch` (which Codex runs itself when its shell tool is given it, and puts on the
    shell's PATH): the patch is its argument, else its standard input (a heredoc, a here-string; else
    any heredoc of the command that holds a patch, as `cat <<EOF | apply_patch` gives one)."""
    from .applypatch import patch_writes

    texts = [args[0]] if args else [reader.stdin] if reader.stdin is not None else \
        [b for b in reader.heredocs if "*** Begin Patch" in b]
    if not texts:
        reader.unread.append(f"{name} reads a patch it is not given here")
    for text in texts:
        for w in patch_writes(text):
            reader.write(w.path, w.kind)


def _pre_commit(reader: _Reader, name: str, args: list[str], depth: int) -> None:
    if args[:1] == ["uninstall"]:
        reader.off.append("pre-commit uninstall removes the client hooks")


def _in_place(reader: _Reader, name: str, args: list[str], depth: int = 0) -> None:
    """`sed -i` / `perl -i`: the files after the script (which `-e`/`-f` may give instead)."""
    ops, opts = _operands(args, frozenset({"-e", "--expression", "-f", "--file"}))
    if "-i" not in opts and not any(o.startswith("--in-place") for o in opts):
        return
    if ops[:1] == [""]:
        ops = ops[1:]  # BSD sed's `-i ''`
    scripted = any(o.startswith(("-e=", "--expression=", "-f=", "--file=")) for o in opts)
    for path in ops if scripted else ops[1:]:
        reader.write(path, MODIFY)


def _copy(reader: _Reader, name: str, args: list[str], depth: int = 0) -> None:
    """`cp`, `mv`, `install`, `ln`: the destination (and, for `mv`, the sources it removes)."""
    valued = frozenset({"-t", "--target-directory", "-S", "--suffix"} | (
        {"-m", "--mode", "-o", "--owner", "-g", "--group"} if name == "install" else set()))
    ops, opts = _operands(args, valued)
    if name == "install" and "-d" in opts:
        return  # it makes directories
    target_dir = _value(opts, "-t", "--target-directory")
    tree = bool(opts & {"-r", "-R", "-a", "--recursive", "--archive"}) or name == "mv"
    if name == "ln" and target_dir is None and len(ops) == 1:
        reader.write(posixpath.basename(ops[0].rstrip("/")))
        _linked(reader, name, opts, ops, "")
        return
    if target_dir is not None:
        sources, dest = ops, target_dir
    elif len(ops) >= 2:
        sources, dest = ops[:-1], ops[-1]
    else:
        return
    into = target_dir is not None or len(sources) > 1 or dest.endswith("/")
    _linked(reader, name, opts, sources, dest if into else posixpath.dirname(dest))
    if not into:
        reader.write(dest, WRITE, tree, sources[0])  # the destination itself, a file or a new directory
    for src in sources:
        reader.write(posixpath.join(dest, posixpath.basename(src.rstrip("/"))), WRITE, tree, src)
        if name == "mv":
            reader.write(src, DELETE, True)


def _linked(reader: _Reader, name: str, opts: set[str], sources: Sequence[str], where: str) -> None:
    """`ln` and `cp -l`/`cp -s`: what a link makes writable from its own name, counted as written. A
    hard link shares its source's content (a write to the link is one to the source); a symbolic
    link's target, relative to the directory the link is in (`where`), is reached through it (by
    the writes after it in the same command: the file system does not hold it yet)."""
    symbolic = bool(opts & {"-s", "--symbolic"}) if name == "ln" else bool(opts & {"-s", "--symbolic-link"})
    if name != "ln" and not symbolic and not opts & {"-l", "--link"}:
        return
    for src in sources:
        if not symbolic:
            reader.write(src, MODIFY)
        elif name == "ln" and not src.startswith(("/", "~")):
            reader.write(posixpath.join(where, src), WRITE, True)
        else:
            reader.write(src, WRITE, True)


def _git(reader: _Reader, name: str, args: list[str], depth: int = 0) -> None:  # noqa: PLR0912 - one branch per subcommand
    """git's global options, then the subcommands that write paths or switch hooks off."""
    i = 0
    saved = reader.state()
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        if a in _GIT_OPTIONS_WITH_VALUE and i + 1 < len(args):
            value = args[i + 1]
            if a in ("-c", "--config-env") and _names_hooks(value.split("=", 1)[0]):
                reader.off.append(f"git {a} {value} runs other hooks than the repository's")
            if a == "-C":
                reader.enter(value)
            i += 2
            continue
        setting = a[2:] if a.startswith("-c") else a[len("--config-env="):] if a.startswith("--config-env=") else ""
        if setting and _names_hooks(setting.split("=", 1)[0]):
            reader.off.append(f"git {a} runs other hooks than the repository's")
        i += 1
    if i >= len(args):
        reader.restore(saved)
        return
    sub, rest = args[i], args[i + 1:]
    if any(_no_verify(a) for a in rest) or (sub == "commit" and _short_flag(rest, "n", "mFCctS")):
        reader.off.append(f"git {sub} --no-verify skips the client hooks")
    if sub == "config" and any(_names_hooks(a) for a in rest) and not any(a.startswith("--unset") for a in rest):
        reader.off.append("git config core.hooksPath (or a file it includes) makes git run other hooks than the "
                          "repository's")
    if sub in ("checkout", "restore"):
        ops, opts = _operands(rest, frozenset({"-s", "--source", "-b", "-B", "--orphan", "--conflict"}))
        paths = rest[rest.index("--") + 1:] if "--" in rest else (ops if sub == "restore" else ops[1:])
        for path in paths:
            reader.write(path, MODIFY, True)
    elif sub == "rm":
        ops, opts = _operands(rest)
        for path in ops:
            reader.write(path, DELETE, "-r" in opts)
    elif sub == "mv":
        _copy(reader, "mv", rest)
    elif sub == "apply":
        ops, opts = _operands(rest, frozenset({"-p", "-C", "--directory", "--exclude", "--include"}))
        if "--check" not in opts and "--stat" not in opts:
            reader.patches += [reader.at(p) for p in ops]
            if not ops and not _stdin_patch(reader):
                reader.unread.append("git apply reads its diff from stdin")
    reader.restore(saved)


def _names_hooks(key: str) -> bool:
    """A configuration key that can set where git runs hooks from: `core.hooksPath`, or a file of
    configuration included (`include.path`, `includeIf.<condition>.path`), which may set it."""
    key = key.casefold()
    return key in ("core.hookspath", "include.path") or (key.startswith("includeif.") and key.endswith(".path"))


def _no_verify(arg: str) -> bool:
    """`--no-verify`, or a prefix of it git takes for it (git reads a long option's unambiguous prefix:
    `--no-veri`; a prefix git finds ambiguous fails there, and is counted too)."""
    return len(arg) >= len("--no-v") and "--no-verify".startswith(arg)


def _short_flag(args: Sequence[str], flag: str, with_value: str) -> bool:
    """Whether short option `flag` is among `args` (combined flags read until one that takes a value;
    the word after such a flag is its value, not an option)."""
    value_next = False
    for a in args:
        if value_next:
            value_next = False
            continue
        if a == "--":
            return False
        if a.startswith("-") and not a.startswith("--"):
            for j, ch in enumerate(a[1:], 1):
                if ch == flag:
                    return True
                if ch in with_value:
                    value_next = j == len(a) - 1
                    break
    return False


#: program -> its reader (every reader takes the reader, the program's name, its arguments, the depth)
_PROGRAMS: dict[str, Callable[[_Reader, str, list[str], int], None]] = {
    "cd": _cd, "pushd": _cd, "popd": _cd, **dict.fromkeys(_SHELLS, _shell), "tee": _tee, "sed": _in_place,
    "perl": _in_place,
    **dict.fromkeys(("cp", "mv", "install", "ln"), _copy), "rm": _rm, "truncate": _touch, "touch": _touch,
    "chmod": _chmod, "dd": _dd, "curl": _download, "wget": _download, "git": _git, "patch": _patch,
    "pre-commit": _pre_commit, "apply_patch": _apply_patch, "applypatch": _apply_patch, "eval": _eval, "find": _find,
    **dict.fromkeys(("unlink", "shred", "sort", "rsync"), _unlink),
    **dict.fromkeys(("export", "declare", "typeset", "readonly", "local"), _export),
}

_DIFF_GIT = re.compile(r"^diff --git (\S+) (\S+)$")


def patch_paths(text: str) -> list[PathWrite]:
    """The paths a unified or git diff writes (`--- a/X`, `+++ b/Y`, `rename from/to`, deletions),
    the `a/` and `b/` prefixes taken off where both sides carry them."""
    out: list[PathWrite] = []
    for line in text.split("\n"):
        if line.startswith(("--- ", "+++ ")):
            path = line[4:].split("\t", 1)[0].strip()
            if path and path != "/dev/null":
                if path.startswith(("a/", "b/")):
                    path = path[2:]
                out.append(PathWrite(path, MODIFY))
        elif line.startswith(("rename from ", "rename to ", "copy to ")):
            out.append(PathWrite(line.split(" ", 2)[2], DELETE if line.startswith("rename from") else WRITE))
        elif (m := _DIFF_GIT.match(line)) is not None:
            for side in m.groups():
                out.append(PathWrite(side[2:] if side.startswith(("a/", "b/")) else side, MODIFY))
    return list(dict.fromkeys(out))
