"""The layout tells the truth: the pure engine touches nothing, the hook starts light, and every
code a raise site names is in the registry (docs/architecture.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, ROOT, git, git_env
from support.server import Server

from gatecore import codes

#: The layers, outermost first (docs/architecture.md). A layer may import the ones after it, never one before:
#: * the command line, the package `gatecore/cli/`: one module per command group and the wiring, the server's
#:   commands included, so it imports `server` (install, doctor, the approvals verifier) and `hooks` (the agents'
#:   check); nothing imports it;
#: * the entry points, `server/` and `hooks/`: the pre-receive hook, the installer, the client hooks;
#: * the shell, `gatecore/adapters/` (the machine) and `gatecore/trusted/` (the trusted side's commands);
#: * the pure engine, every other module of `gatecore/`.
COMMAND_LINE = ROOT / "gatecore" / "cli"
ENTRY_POINTS = ("server", "hooks")
#: The shell's packages inside gatecore/; every other package of gatecore/ is the pure engine.
SHELL = ("adapters", "trusted")
#: The pure engine: gatecore's own modules (but the CLI) and every package of gatecore/ but the shell's.
ENGINE_PACKAGES = sorted(p.parent.name for p in (ROOT / "gatecore").glob("*/__init__.py")
                         if p.parent.name not in (*SHELL, COMMAND_LINE.name))
PURE = sorted([p.stem for p in (ROOT / "gatecore").glob("*.py") if p.stem != "__init__"]
              + [f"{pkg}.{p.stem}" for pkg in ENGINE_PACKAGES for p in (ROOT / "gatecore" / pkg).glob("*.py")])
#: What a pure module must not pull in, whatever it imports.
MACHINE = ("pygit2", "subprocess", "typer")
#: Names whose use in a pure module means it reads the machine itself.
FORBIDDEN_CALLS = {("os", "environ"), ("os", "getenv"), ("time", "time"), ("time", "monotonic"), ("os", "open"),
                   ("os", "listdir"), ("os", "stat"), ("os", "lstat")}
FORBIDDEN_NAMES = {"open", "input", "print"}
FORBIDDEN_METHODS = {"read_bytes", "read_text", "write_bytes", "write_text", "open", "mkdir", "unlink"}


#: Standard modules the hooks do without, each measured to cost their start-up a millisecond or more of CPU:
#: `dataclasses` (with `inspect`, `ast`, `dis`, `tokenize`: the package's value classes are `gatecore.valueclass`'s),
#: `pathlib` (with `urllib.parse`, `ipaddress`, `fnmatch`: the hook's paths are strings), `hashlib` (it loads
#: OpenSSL, about 3 ms: the validated caches' small files are hashed by CPython's built-in SHA-256).
HOOK_STARTUP_BANNED = ("dataclasses", "inspect", "ast", "dis", "tokenize", "pathlib", "urllib.parse", "ipaddress",
                       "fnmatch", "hashlib", "_hashlib")


def _imported(module: str) -> set[str]:
    out = subprocess.run([sys.executable, "-I", "-c", f"import sys, {module}; print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("module", PURE)
def test_a_pure_module_imports_nothing_that_touches_the_machine(module: str) -> None:
    loaded = _imported(f"gatecore.{module}")
    assert not loaded & set(MACHINE), f"gatecore.{module} pulls in {sorted(loaded & set(MACHINE))}"


@pytest.mark.parametrize("module", PURE)
def test_a_pure_module_reads_no_environment_files_or_clock(module: str) -> None:
    tree = ast.parse((ROOT / "gatecore" / f"{module.replace('.', '/')}.py").read_text())
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and (node.value.id, node.attr) in FORBIDDEN_CALLS):
            found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_NAMES:
                found.append(f"{func.id}() (line {node.lineno})")
            if isinstance(func, ast.Attribute) and func.attr in FORBIDDEN_METHODS:
                found.append(f".{func.attr}() (line {node.lineno})")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in SHELL:
            found.append(f"from {node.module} (line {node.lineno})")
        if isinstance(node, ast.ImportFrom) and node.level >= 1 and (node.module or "").split(".")[0] in (
                *SHELL, "cli"):
            found.append(f"from .{node.module} (line {node.lineno})")
    assert not found, f"gatecore/{module.replace('.', '/')}.py: {found}"


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, absolute (`from . import x` in gatecore/ is gatecore.x)."""
    package = list(path.relative_to(ROOT).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_the_engine_never_imports_the_entry_points_or_the_command_line() -> None:
    for pkg in ("gatecore", *ENTRY_POINTS):
        for path in (ROOT / pkg).rglob("*.py"):
            if COMMAND_LINE in path.parents:
                continue
            imported = _imports(path)
            assert "gatecore.cli" not in imported, path
            if pkg == "gatecore":
                assert not {m.split(".")[0] for m in imported} & set(ENTRY_POINTS), path


#: gatecore/'s floors, lowest first (docs/architecture.md, "Packages"): a module imports modules of its own floor
#: and of the floors below, never one above. The shared vocabulary; reading git; signatures and seals; the
#: configuration; the records; the checks; the reserved stage; the composition of a push and the self-test; the
#: shell (the machine, then the trusted side's commands); the command line.
FLOORS = (("gatecore", "_build", "codes", "errors", "findings", "ids", "strictjson", "valueclass"), ("git", "toolcalls"),
          ("signing",),
          ("configuration",), ("records",), ("checks",), ("reserved",), ("pipeline", "selftest"), ("adapters",),
          ("trusted",), ("cli",))


def _modules() -> dict[str, Path]:
    """Every module of gatecore/, server/ and hooks/ by its dotted name (a package by its own)."""
    out = {}
    for pkg in ("gatecore", *ENTRY_POINTS):
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _graph() -> dict[str, set[str]]:
    """Who imports whom among the project's modules, lazy imports (inside functions) included."""
    modules = _modules()
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def _floor(module: str) -> int:
    name = module.split(".")[1] if "." in module else module
    return next(i for i, floor in enumerate(FLOORS) if name in floor)


def test_no_module_name_is_used_twice_inside_gatecore() -> None:
    """A traceback or a grep that says `ledger.py` means one module (packages count as names)."""
    names = [p.parent.name if p.stem == "__init__" else p.stem for p in (ROOT / "gatecore").rglob("*.py")
             if p != ROOT / "gatecore" / "__init__.py"]
    assert not [n for n in set(names) if names.count(n) > 1], sorted(names)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` (a path that ends where it starts), or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module):], module]
        if module in done:
            return None
        for imported in sorted(graph[module]):
            found = visit(imported, [*path, module])
            if found:
                return found
        done.add(module)
        return None

    return next((c for c in (visit(m, []) for m in sorted(graph)) if c), None)


def test_no_import_cycle() -> None:
    """No module of gatecore/, server/ or hooks/ reaches itself through its imports, lazy ones included."""
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_would_catch_the_cycle_it_was_written_for() -> None:
    """The shape the check exists for: two sibling modules importing each other lazily."""
    assert _cycle({"gitstream": {"treescan"}, "treescan": {"gitstream"}, "x": set()}) == [
        "gitstream", "treescan", "gitstream"]


def test_every_gatecore_package_and_module_has_a_floor() -> None:
    """A new package or top-level module of gatecore/ is placed in `FLOORS` (and in the docs) before it is used."""
    top = ({p.stem for p in (ROOT / "gatecore").glob("*.py")}
           | {p.parent.name for p in (ROOT / "gatecore").glob("*/__init__.py")})
    placed = {name for floor in FLOORS for name in floor}
    assert top - {"__init__"} <= placed, sorted(top - placed - {"__init__"})
    assert placed - {"gatecore", "_build"} <= top, sorted(placed - top)


def test_no_gatecore_module_imports_a_floor_above_its_own() -> None:
    """The engine's packages stack: git reading knows nothing of records, records nothing of checks, no
    engine package anything of the shell (0 upward imports)."""
    found = [f"{m} imports {i}" for m, imported in _graph().items() if m.startswith("gatecore")
             for i in imported if i.startswith("gatecore") and _floor(i) > _floor(m)]
    assert not found, found


def test_every_gatecore_package_says_what_it_holds_and_imports_nothing() -> None:
    """Each package's `__init__` has a docstring naming its modules and what it may import; only the
    reserved stage's (its one entry) and the command line's (`main`, the console script's entry and error
    boundary) hold code, and no package `__init__` loads a module on import but those the hook needs anyway
    (the hook's start-up path is measured)."""
    for init in (ROOT / "gatecore").glob("*/__init__.py"):
        tree = ast.parse(init.read_text())
        doc = ast.get_docstring(tree) or ""
        assert doc, init
        modules = sorted(p.stem for p in init.parent.glob("*.py") if p.stem != "__init__")
        assert all(f"`{m}`" in doc or f"`{m}.py`" in doc for m in modules), (init, modules)
        if init.parent.name not in ("reserved", "cli"):
            assert all(isinstance(node, ast.Expr) for node in tree.body), f"{init}: code beside the docstring"


def test_the_command_line_is_the_outer_layer_and_imports_the_server() -> None:
    """The one package above the entry points: it wires the server's commands and the agents' check
    (so the statement in the layer list above stays true, not an exemption)."""
    imported = set().union(*(_imports(p) for p in COMMAND_LINE.glob("*.py")))
    assert {m.split(".")[0] for m in imported} & set(ENTRY_POINTS) == {"server", "hooks"}


def test_the_hooks_start_up_import_set_excludes_pydantic_and_typer() -> None:
    """What the pre-receive hook loads for a push that touches no reserved ref."""
    loaded = _imported("server.prereceive, gatecore.adapters.gitstream, gatecore.checks.pushcheck, "
                       "gatecore.git.objects")
    assert "pydantic" not in loaded and "typer" not in loaded and "pygit2" not in loaded
    assert "pydantic" not in _imported("hooks.frozen_commit, hooks.frozen_push")


def test_the_client_hooks_start_light() -> None:
    """pre-commit starts a client hook for every commit and push: its paths are strings, and the
    traceback module is imported only by its error boundary, when it has one to print."""
    loaded = _imported("hooks.frozen_commit, hooks.frozen_message, hooks.frozen_push, hooks.receipt_push")
    assert not loaded & {*HOOK_STARTUP_BANNED, "traceback", "pydantic", "typer", "pygit2"}, \
        sorted(loaded & {*HOOK_STARTUP_BANNED, "traceback"})


def test_a_review_push_reads_model_ids_without_pydantic_or_the_tables_parsers() -> None:
    """Reviewer independence reads model ids by the table the validated policy carries: the modules
    a review push loads for it parse no table and load no pydantic (nor tomllib)."""
    loaded = _imported("gatecore.reserved.reviewrefs, gatecore.checks.independence, gatecore.configuration.modelnames, "
                       "gatecore.configuration.vendors")
    assert not loaded & {"pydantic", "tomllib", "gatecore.configuration.configschema",
                         "gatecore.configuration.catalogue"}, loaded


def test_a_whole_hook_run_reads_through_git_without_pygit2_or_pydantic(tmp_path: Path) -> None:
    """The hook, run as receive-pack runs it on a real agent push (rejected: it writes a frozen
    file), loads neither pygit2 (git's own processes read the objects) nor pydantic, nor modules
    it does not need (each costs a millisecond or more of every push)."""
    server = Server(tmp_path)
    server.work.write("README", "hello\n")
    server.work.commit("base")
    server.work.write("ci/deploy.yml", "x\n")
    head = server.work.commit("agent", identity=AGENT)
    # The objects reach the server without its hook, as receive-pack's quarantine would hold them.
    git(server.bare, "fetch", "-q", str(server.work.path), "main:refs/incoming")
    git(server.bare, "update-ref", "-d", "refs/incoming")
    program = ("import sys, server.prereceive as p; sys.argv = ['pre-receive', '--gate-dir', 'gate']; "
               "rc = p.main(); print(rc, ' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-I", "-c", program], cwd=server.bare, capture_output=True, text=True,
                         input=f"{'0' * 40} {head} refs/heads/topic\n", check=False,
                         env={**git_env(), "GIT_DIR": "."})
    rc, _, modules = out.stdout.partition(" ")
    assert rc == "1" and "GATE-FROZEN-PATH" in out.stderr, out.stdout[-500:] + out.stderr[-2000:]
    assert not set(modules.split()) & {"pygit2", "pydantic", "typer"}
    # nor the shipped tables' parsers (their bytes are hashed only), nor what parsing them needs
    assert not set(modules.split()) & {"gatecore.configuration.catalogue", "gatecore.configuration.vendors",
                                       "gatecore.configuration.modelnames", "gatecore.configuration.configschema",
                                       "tomllib", "datetime", "shutil"}
    # nor what starts the second process of a big push's tree search
    assert not set(modules.split()) & {"gatecore.adapters.treescan", "server.launch"}
    # nor the standard modules a push does without (docs/architecture.md, "The hooks' start-up")
    assert not set(modules.split()) & set(HOOK_STARTUP_BANNED), sorted(set(modules.split()) & set(HOOK_STARTUP_BANNED))


#: The standard modules a small push's hook is written with, and what for: it imports no other
#: (what these import comes with them; the test compares with what they load in the same Python).
SMALL_PUSH_STANDARD = {
    "re": "the grammar, names, ids", "json": "the validated caches, the audit line", "threading": "the deadline's "
    "watchdog, the writers feeding git", "contextlib": "cleanup", "fcntl": "the audit log's lock, pipes that hold "
    "more", "errno": "reading files", "pwd": "the pusher's account", "gc": "the collector held off (launch.py)",
    "select": "the children's pipes (spawn.py)", "binascii": "the keyring's keys", "_signal": "SIGKILL, SIGPIPE",
    "collections.abc": "Mapping, Sequence", "encodings.ascii": "ids decoded", "__future__": "annotations as strings",
}
#: The project's modules a small fast-forward push loads (an agent's commit: its trees searched).
SMALL_PUSH_PROJECT = {
    "gatecore", "gatecore._build", "gatecore.adapters", "gatecore.adapters.config", "gatecore.adapters.environment",
    "gatecore.adapters.files", "gatecore.adapters.gitcmd", "gatecore.adapters.gitlayout",
    "gatecore.adapters.gitstream", "gatecore.adapters.spawn", "gatecore.checks", "gatecore.checks.frozen",
    "gatecore.checks.frozenbatch", "gatecore.checks.pushcheck", "gatecore.checks.verdict", "gatecore.configuration",
    "gatecore.configuration.policy", "gatecore.configuration.tables", "gatecore.errors", "gatecore.findings",
    "gatecore.git", "gatecore.git.gitmodel", "gatecore.git.grammar", "gatecore.git.limits", "gatecore.git.objects",
    "gatecore.git.refs", "gatecore.git.trailers", "gatecore.git.treediff", "gatecore.pipeline", "gatecore.signing",
    "gatecore.signing.keys", "gatecore.valueclass", "hooks", "server", "server.audit", "server.deadline",
    "server.installation", "server.prereceive",
}


def test_a_small_push_imports_what_it_uses_and_nothing_else(tmp_path: Path) -> None:
    """Issue 47: the hook as receive-pack starts it (launch.py by path) on a small fast-forward push of
    an agent's commit, accepted: the project's modules it loads are `SMALL_PUSH_PROJECT`, and of the
    standard library only what a bare start loads and what `SMALL_PUSH_STANDARD` pulls in (no
    `typing`, `subprocess`, `signal`, `locale`, `base64`, `unicodedata`, `dataclasses`, `pathlib`...)."""
    server = Server(tmp_path)
    server.work.write("README", "hello\n")
    server.work.commit("base")
    assert server.push("main").returncode == 0
    hook = (server.bare / "hooks" / "pre-receive").read_text()
    launch = next(w for w in hook.split() if w.endswith("launch.py"))
    server.work.write("src/app.py", "x\n")
    head = server.work.commit("agent", identity=AGENT)
    git(server.bare, "fetch", "-q", str(server.work.path), "main:refs/incoming")
    git(server.bare, "update-ref", "-d", "refs/incoming")
    old = git(server.bare, "rev-parse", "main").stdout.strip()
    out = subprocess.run([sys.executable, "-I", "-X", "importtime", launch, "server.prereceive", "--gate-dir", "gate"],
                         cwd=server.bare, capture_output=True, text=True, input=f"{old} {head} refs/heads/main\n",
                         env={**git_env(), "GIT_DIR": "."}, check=False)
    loaded = _imported_names(out.stderr)
    assert out.returncode == 0 and "gatecore.checks.pushcheck" in loaded, out.stderr[-2000:]
    assert {m for m in loaded if m.split(".")[0] in ("gatecore", "server", "hooks")} == SMALL_PUSH_PROJECT
    bare = _loaded_by("pass")
    standard = _loaded_by(f"import {', '.join(SMALL_PUSH_STANDARD)}") | {"_sha256", "_sha2"}
    extra = {m for m in loaded - bare - standard if m.split(".")[0] not in ("gatecore", "server", "hooks")}
    assert not extra, f"a small push imports {sorted(extra)}: each costs every push (docs/architecture.md)"


def _imported_names(importtime: str) -> set[str]:
    """The modules `python -X importtime` says were imported."""
    return {line.rsplit("|", 1)[1].strip() for line in importtime.splitlines()
            if line.startswith("import time:") and "self [us]" not in line}


def _loaded_by(statement: str) -> set[str]:
    out = subprocess.run([sys.executable, "-I", "-X", "importtime", "-c", statement], capture_output=True, text=True,
                         check=True)
    return _imported_names(out.stderr)


def _hook_git_commands(trace: str) -> list[str]:
    """The git commands the pre-receive hook ran, as git traced them (`GIT_TRACE`): those between
    receive-pack starting the hook and its next command (the hook starts its git processes itself,
    so git traces no `run_command` for them)."""
    lines = trace.splitlines()
    start = next(i for i, line in enumerate(lines) if "run_command:" in line and "hooks/pre-receive" in line)
    ran = []
    for line in lines[start + 1:]:
        if "run_command:" in line:
            break
        if "trace: built-in: git " in line or "trace: exec: git" in line:
            ran.append(line.split("trace: ", 1)[1].split(": ", 1)[1])
    return ran


def _fast_forward(tmp_path: Path, identity: tuple[str, str]) -> list[str]:
    """The git commands of the hook on a small fast-forward push (one commit on main, which the
    server has) by `identity`, accepted."""
    server = Server(tmp_path)
    server.work.write("README", "hello\n")
    server.work.commit("base")
    assert server.push("main").returncode == 0
    server.work.write("README", "hello again\n")
    server.work.commit("next", identity=identity)
    trace = tmp_path / "trace"
    pushed = server.push("main", pusher_env={"GIT_TRACE": str(trace)})
    assert pushed.returncode == 0, pushed.stderr
    return _hook_git_commands(trace.read_text())


def test_a_small_fast_forward_push_starts_three_git_processes(tmp_path: Path) -> None:
    """Issue 47: the refs listed once (their symbolic targets and values), one walk of what the push
    brings (which ids are commits, whether main moves forward, which commits are new:
    `pushcheck.QuickWalk`), one question outside the quarantine (whether that walk is exact). The
    object format is the width of the ids on the hook's stdin, confirmed by the first id git prints."""
    ran = _fast_forward(tmp_path, HUMAN)
    assert [" ".join(c.split()[:2]) for c in ran] == ["git for-each-ref", "git rev-list", "git cat-file"], ran
    assert "%(symref)" in ran[0] and "--boundary" in ran[1] and "%(objecttype)" in ran[2]


def test_reading_a_restricted_commits_trees_is_one_process_more(tmp_path: Path) -> None:
    """An agent's commit (restricted: its trees searched for the frozen names) adds one `cat-file
    --batch`, which every object the push reads goes through. The quarantine question cannot ride on
    it: git answers it with the quarantine out of sight, and the trees are in the quarantine."""
    ran = _fast_forward(tmp_path, AGENT)
    assert [" ".join(c.split()[:2]) for c in ran] == ["git for-each-ref", "git rev-list", "git cat-file",
                                                       "git cat-file"], ran
    assert ran[3].endswith("cat-file --batch")
    listings = [c for c in ran if "for-each-ref" in c]  # the refs listed once
    assert len(listings) == 1, listings


def test_the_post_receive_hook_starts_light() -> None:
    """Post-receive runs after every accepted push: it loads none of what the pre-receive hook does
    without, nothing of the judgement, and not `typing` (3 ms: its modules take `TYPE_CHECKING` as a
    constant of their own)."""
    loaded = _imported("server.postreceive")
    assert not loaded & {*HOOK_STARTUP_BANNED, "pydantic", "typer", "pygit2", "subprocess", "gatecore.pipeline",
                         "gatecore.configuration.policy", "gatecore.adapters.config", "typing",
                         "gatecore.git.gitmodel"}, sorted(loaded)


def _code_arguments(tree: ast.AST) -> list[tuple[int, ast.expr]]:
    """The code argument of every GateError/Violation/Failure/violation call."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node.func, ast.Attribute) else "")
        if name in ("GateError", "Violation", "Failure", "violation", "_v"):
            out.append((node.lineno, node.args[0]))
    return out


def test_every_raise_site_names_a_registered_code_and_so_its_exit_class() -> None:
    literal = 0
    for pkg in ("gatecore", "server", "hooks"):
        for path in (ROOT / pkg).rglob("*.py"):
            for line, arg in _code_arguments(ast.parse(path.read_text())):
                choices = ([arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else
                           list(arg.values) if isinstance(arg, ast.BoolOp) else [arg])  # too_large or code
                for choice in choices:
                    if isinstance(choice, ast.Constant) and isinstance(choice.value, str):
                        assert choice.value in codes.CODES, f"{path}:{line}: {choice.value} is not registered"
                        literal += 1
                    elif not isinstance(choice, ast.Name | ast.Attribute):  # passed on (exc.code): not a new one
                        named = [n.value for n in ast.walk(choice) if isinstance(n, ast.Constant)
                                 and isinstance(n.value, str) and n.value.startswith("GATE-")]
                        assert named and set(named) <= set(codes.CODES), f"{path}:{line}: code built at the call"
    assert literal > 100


def test_one_code_exits_the_same_way_everywhere() -> None:
    from gatecore.errors import GateError

    for code, entry in codes.CODES.items():
        assert GateError(code, "x").exit_code == entry.exit in (1, 2, 3)
    assert GateError("GATE-NOT-A-CODE", "x").exit_code == 3


def _literal_codes_in(fn: ast.FunctionDef) -> list[tuple[int, str]]:
    """The literal codes `fn`'s own body raises or reports (nested functions are their own)."""
    found = []
    for line, arg in _code_arguments(ast.Module(body=[n for n in fn.body
                                                      if not isinstance(n, ast.FunctionDef)], type_ignores=[])):
        for choice in [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]:
            if isinstance(choice, ast.Constant) and isinstance(choice.value, str):
                found.append((line, choice.value))
    return found


def test_a_function_told_its_code_raises_that_code() -> None:
    """A function that takes the caller's `code` must not raise a literal code of its own: that is
    how an oversized ledger record once came out as GATE-RECEIPT-TOO-LARGE (the receipts' area).
    A second code for a second kind of fault is another parameter (`too_large`)."""
    flagged = []
    for pkg in ("gatecore", "server", "hooks"):
        for path in (ROOT / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.FunctionDef):
                    continue
                params = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
                if "code" in params:
                    flagged += [f"{path.relative_to(ROOT)}:{line}: {node.name}(code=...) raises {code}"
                                for line, code in _literal_codes_in(node)]
    assert not flagged, flagged
