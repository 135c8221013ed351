"""The prose names what exists: every backticked module, class, function and
file name in the docs and in the package's docstrings resolves. Names of other libraries,
placeholders (`GIT_DIR/gate/...`) and shell commands are not this project's and are left alone."""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.gitutil import ROOT

PACKAGES = ("gatecore", "server", "hooks")
DOCS = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])
TOP = {p.name for p in ROOT.iterdir() if not p.name.startswith(".")}
#: Backticked names that are other programs' (sshd_config keywords, JSON's NaN): not this project's.
EXTERNAL = {"NaN", "AcceptEnv", "SetEnv", "PermitUserEnvironment", "gpg.ssh.allowedSignersFile",
            # the coding agents' hook events and tool names (docs/agent-hooks.md)
            "PreToolUse", "PostToolUse", "BeforeTool", "MultiEdit", "NotebookEdit", "WebFetch", "UserPromptSubmit"}

_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
#: A file of the project: a path with an extension (`hooks/pre-receive` is git's hooks directory, not ours).
_FILE = re.compile(r"^(?:[\w.-]+/)*[\w-]+\.(?:py|md|toml|yaml|yml|sh|json)(?:#[\w-]+)?$")
_DOTTED = re.compile(r"^(?:gatecore|server|hooks)(?:\.[A-Za-z_]\w*)+(?:\(\))?$")
_CLASS = re.compile(r"^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*(?:\.[A-Za-z_]\w*)?(?:\(\))?$")
_CALL = re.compile(r"^(?:[a-z_]\w*\.)?[a-z_]\w*\(\)$")
#: `adapters.files`, `policy.Mode`, `keys.keyring_from_plain`: a module of the project named without its package.
_RELATIVE = re.compile(r"^[a-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?$")
_BARE_FILE = re.compile(r"^[\w-]+\.py$")
#: gatecore's packages (`git`, `records`, `adapters`, ...): a module named without its package is looked up in each.
SUBPACKAGES = sorted(p.parent.name for p in (ROOT / "gatecore").glob("*/__init__.py"))
MODULES = {p.stem for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")} | set(SUBPACKAGES)


def _spans() -> Iterator[tuple[str, str]]:
    """(where, span) for every backticked span outside code blocks."""
    for doc in DOCS:
        text = _FENCE.sub("", doc.read_text())
        for m in _SPAN.finditer(text):
            yield f"{doc.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1).strip()
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    doc_text = ast.get_docstring(node, clean=False)
                    if doc_text:
                        line = node.body[0].lineno if node.body else 0
                        for m in _SPAN.finditer(doc_text):
                            yield f"{path.relative_to(ROOT)}:{line}", m.group(1).strip()


@functools.cache
def _defined() -> tuple[set[str], dict[str, set[str]]]:
    """Every function and class name the project defines or imports, and each class's members
    (read once per run: every source file parsed; the callers only read the sets)."""
    names: set[str] = set(dir(builtins))
    members: dict[str, set[str]] = {}
    # (the project's files, as git lists them, untracked ones too: not what git ignores, such as the
    # bench's caches, whose hook environments hold thousands of other packages' modules)
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                             "gatecore/*.py", "server/*.py", "hooks/*.py", "tests/*.py", "bench/*.py"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\0")
    for path in sorted({ROOT / name for name in listed if name and (ROOT / name).is_file()}):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            if isinstance(node, ast.ImportFrom):
                names |= {a.asname or a.name for a in node.names}
            if isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            if isinstance(node, ast.ClassDef):
                own = members.setdefault(node.name, set())
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        own.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        own.add(item.target.id)
                    elif isinstance(item, ast.Assign):
                        own |= {t.id for t in item.targets if isinstance(t, ast.Name)}
    return names, members


def _resolves(dotted: str) -> bool:
    parts = dotted.removesuffix("()").split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        for attr in parts[n:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _policy_key(span: str) -> bool:
    """`trusted.pushers`, `refs.delete`: a key of the policy file (docs/policy.md), not a module."""
    from gatecore.configuration.configerrors import model_at
    from gatecore.configuration.configschema import PolicyModel

    *table, key = span.split(".")
    model = model_at(PolicyModel, table)
    return model is not None and key in model.model_fields


def _ignored(paths: list[str]) -> set[str]:
    """The paths git ignores (generated: bench results, caches)."""
    out = subprocess.run(["git", "check-ignore", "--stdin"], cwd=ROOT, input="\n".join(paths), capture_output=True,
                         text=True, check=False)
    return set(out.stdout.split())


def problems() -> list[str]:
    names, members = _defined()
    spans = list(_spans())
    ignored = _ignored([s.split("#")[0] for _, s in spans if _FILE.match(s)])
    found = []
    for where, span in spans:
        if span in EXTERNAL or span.split("#")[0] in ignored:
            continue
        if _DOTTED.match(span):
            if not _resolves(span):
                found.append(f"{where}: `{span}` does not resolve")
        elif _BARE_FILE.match(span):
            if not (ROOT / span).is_file() and not any(ROOT.glob(f"*/**/{span}")):  # top level, or below
                found.append(f"{where}: `{span}` is not a file of the project")
        elif (_RELATIVE.match(span) and span.split(".")[0] in MODULES and not _policy_key(span)
              and span.rsplit(".", 1)[1] not in ("json", "toml", "log", "txt", "yaml", "gpg", "key")):  # file names
            if not any(_resolves(prefix + span) for prefix in ("gatecore.", *(f"gatecore.{p}." for p in SUBPACKAGES),
                                                                "server.", "hooks.")):
                found.append(f"{where}: `{span}` does not resolve")
        elif _FILE.match(span) and span.split("/")[0] in TOP:
            if not (ROOT / span.split("#")[0]).exists():
                found.append(f"{where}: `{span}` is not a file of the project")
        elif _CLASS.match(span):
            head, _, attr = span.removesuffix("()").partition(".")
            if head not in names:
                found.append(f"{where}: `{span}`: no class {head}")
            elif attr and head in members and attr not in members[head]:
                found.append(f"{where}: `{span}`: {head} has no {attr}")
        elif _CALL.match(span):
            head, _, attr = span.removesuffix("()").rpartition(".")
            if attr not in names and not head:
                found.append(f"{where}: `{span}`: no function {attr}")
    return found


def test_every_backticked_name_resolves() -> None:
    assert not problems(), "\n".join(problems())


@pytest.mark.parametrize("stale", ["`gatecore.policyfile`", "`server/deadline.py`'s `DeadlineExceeded`"])
def test_the_check_would_catch_the_stale_names_it_was_written_for(stale: str, tmp_path: Path) -> None:
    names, _ = _defined()
    spans = [m.group(1) for m in _SPAN.finditer(stale)]
    assert any((_DOTTED.match(s) and not _resolves(s)) or (_CLASS.match(s) and s not in names) for s in spans)
