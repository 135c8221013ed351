"""Faults: each ends in a rejected push with its code, and no ref (ledger included) moved.

The hook killed mid-run, the deadline passed (cooperatively and by the watchdog), the
pushed objects invisible, the keyring, policy, installation record or ledger unreadable,
corrupt or missing, the audit log not writable or its disk full. After each fault is
repaired, the same push is accepted: the fault, not the push, caused the rejection.

Faults of the files and objects the hook reads are one real push per family here (a policy and a
keyring missing, a corrupt installation record and caches, the quarantine invisible, a ledger
record deleted from disk); every way of breaking each runs in process in
`tests/engine/test_fault_injection.py` (the hook's own loaders, and the engine over a reader told
which objects are missing or corrupt).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.faults import break_config
from support.gitutil import HUMAN, gate, git, git_env
from support.lab import RUNNER, Lab
from support.verdicts import Outcome, codes_of, declined, refused, text_of

from gatecore.git.refs import REVIEW_PREFIX


def _save(path: Path) -> dict[str, tuple[str, bytes]]:
    out = {}
    for p in sorted(path.rglob("*")):
        rel = str(p.relative_to(path))
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p).encode())
        elif p.is_file():
            out[rel] = (oct(p.stat().st_mode), p.read_bytes())
        elif p.is_dir():
            out[rel] = ("dir", b"")
    return out


def _restore(path: Path, saved: dict[str, tuple[str, bytes]]) -> None:
    for p in sorted(path.rglob("*"), reverse=True):
        if str(p.relative_to(path)) not in saved or saved[str(p.relative_to(path))][0] != (
                "link" if p.is_symlink() else "dir" if p.is_dir() else oct(p.stat().st_mode)):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
    for rel, (kind, data) in saved.items():
        p = path / rel
        if kind == "dir":
            p.mkdir(parents=True, exist_ok=True)
        elif kind == "link":
            if not p.is_symlink():
                p.symlink_to(data.decode())
        else:
            p.write_bytes(data)
            p.chmod(int(kind, 8) & 0o7777)


@pytest.fixture
def server_state(lab: Lab) -> Iterator[None]:
    """Whatever a test breaks in GIT_DIR/gate/ and GIT_DIR/hooks/ is put back afterwards."""
    dirs = [lab.server.gate_dir, lab.server.bare / "hooks"]
    saved = [_save(d) for d in dirs]
    try:
        yield
    finally:
        for d, s in zip(dirs, saved, strict=True):
            _restore(d, s)


def _human_push(lab: Lab, files: dict[str, str] | None = None) -> tuple[str, str]:
    """A refspec for a push the gate accepts (a human's change on a new branch), and its ref."""
    head = lab.change(lab.fresh("h"), files or {"src/ok.py": "ok\n"}, identity=HUMAN)
    ref = f"refs/heads/faults/{head[:12]}"
    return f"{head}:{ref}", ref


def _audit_lines(lab: Lab) -> list[str]:
    """The decision lines (post-receive adds a "landed" line after each accepted push)."""
    lab.server.settle()
    path = lab.server.gate_dir / "audit.log"
    return [x for x in path.read_text().splitlines() if '"event":"landed"' not in x] if path.is_file() else []


_text = text_of


def _assert_rejected(lab: Lab, out: Outcome, code: str | None,
                     before: dict[str, str], git_may_refuse_first: bool = False) -> None:
    """Rejected by the hook with `code` (None: the hook died, git says it declined); nothing moved.
    With `git_may_refuse_first`, git's own checks may also refuse the push, but the hook ran and
    reported `code`."""
    if code is None:
        assert isinstance(out, subprocess.CompletedProcess) and declined(out), _text(out)[-1500:]
    elif git_may_refuse_first:
        ok = out.returncode != 0 if isinstance(out, subprocess.CompletedProcess) else not out.ok
        assert ok and code in codes_of(out), _text(out)[-1500:]
    else:
        assert refused(out, code), _text(out)[-1500:]
    assert lab.snapshot() == before


def _install_chain(lab: Lab, script: str) -> None:
    """Chain `script` after the gate (as `gate server install --chain` does for a foreign hook)."""
    hook = lab.server.bare / "hooks" / "pre-receive"
    hook.write_text(script)
    hook.chmod(0o755)
    out = gate("server", "install", str(lab.server.bare), "--chain")
    assert out.returncode == 0, out.stderr


def _review_push(lab: Lab) -> tuple[str, Path]:
    attempt = lab.open()
    head = lab.change(f"fault-{attempt}")
    return attempt, lab.record(attempt, head)


# --- the hook killed mid-run -----------------------------------------------------------------

SLOW_CHAIN = """#!/bin/sh
cat > /dev/null
echo $$ > {dir}/chained.pid
echo $PPID > {dir}/gate.pid
i=0
while [ ! -e {dir}/release ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done
exit 0
"""


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for git to reap it counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(path: Path, timeout: float = 30) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


@pytest.mark.parametrize("victim", ["chained", "gate"])
def test_hook_killed_mid_run_rejects(lab: Lab, server_state: None, tmp_path: Path, victim: str) -> None:
    """A review push (ledger append + receipt + review ref) whose hook is SIGKILLed while the
    gate waits for its chained hook: the chained hook (GATE-HOOK-CHAINED) or the gate itself
    (git: pre-receive hook declined; no audit line, no partial one)."""
    attempt, receipt = _review_push(lab)
    _install_chain(lab, SLOW_CHAIN.format(dir=tmp_path))
    before = lab.snapshot()
    audit_before = _audit_lines(lab)
    doc = lab.receipt_doc(receipt)
    commit = lab.receipt_commit(attempt, receipt.read_bytes())
    push = subprocess.Popen(["git", "push", "--porcelain", "--atomic", lab.remote(),
                             f"{doc['new_commit']}:{REVIEW_PREFIX}{attempt}",
                             f"{commit}:refs/gate/receipts/{attempt}"],
                            cwd=lab.work.path, env=git_env(HUMAN, **RUNNER),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = _wait_for(tmp_path / ("chained.pid" if victim == "chained" else "gate.pid"))
    assert "server.prereceive" in Path(f"/proc/{_wait_for(tmp_path / 'gate.pid')}/cmdline").read_text()
    os.kill(pid, signal.SIGKILL)
    if victim == "gate":
        (tmp_path / "release").touch()  # let the orphaned chained hook go
    stdout, stderr = push.communicate(timeout=60)
    out = subprocess.CompletedProcess(push.args, push.returncode, stdout, stderr)
    _assert_rejected(lab, out, "GATE-HOOK-CHAINED" if victim == "chained" else None, before)
    after = _audit_lines(lab)
    for line in after:
        json.loads(line)  # every line whole
    if victim == "chained":
        assert len(after) == len(audit_before) + 1 and json.loads(after[-1])["codes"] == ["GATE-HOOK-CHAINED"]
    else:
        assert after == audit_before  # killed before its audit write: nothing, not half a line
    (tmp_path / "release").touch()


# --- deadlines ---------------------------------------------------------------------------------

def _set_deadline(lab: Lab, seconds: float) -> None:
    policy = lab.server.gate_dir / "policy.toml"
    policy.write_text(policy.read_text() + f"[limits]\ndeadline_seconds = {seconds}\n")


def test_deadline_passed_in_the_gate_rejects(lab: Lab, server_state: None) -> None:
    attempt, receipt = _review_push(lab)
    _set_deadline(lab, 0.001)
    before = lab.snapshot()
    _assert_rejected(lab, lab.push_review(attempt, receipt), "GATE-HOOK-DEADLINE", before)
    assert json.loads(_audit_lines(lab)[-1])["codes"] == ["GATE-HOOK-DEADLINE"]


#: Long enough that the gate reaches its chained hook on any machine; the chain hangs until
#: released, so the deadline passes for certain, and no test waits on a timing.
HANGING_DEADLINE = 3.0


def _push_into_a_hanging_chain(lab: Lab, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """A human push whose chained hook hangs (until released): the gate's deadline passes."""
    _install_chain(lab, SLOW_CHAIN.format(dir=tmp_path).replace("-lt 300", "-lt 100000"))
    _set_deadline(lab, HANGING_DEADLINE)
    refspec, _ref = _human_push(lab)
    push = subprocess.Popen(["git", "push", "--porcelain", lab.remote(), refspec], cwd=lab.work.path,
                            env=git_env(HUMAN), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    gate_pid = tmp_path / "gate.pid"
    try:
        # Wait for the gate's own process to end (or for the push to end by itself, when the gate ran
        # out of time before it reached the chain).
        while push.poll() is None and not (gate_pid.exists() and gate_pid.read_text().strip()
                                           and not _alive(int(gate_pid.read_text()))):
            time.sleep(0.05)
        if gate_pid.exists():
            # The chain was reached: the watchdog ended the gate and the chain with it (the chain runs
            # in a session of its own whose group the watchdog kills; before, it outlived the gate).
            chained = int((tmp_path / "chained.pid").read_text())
            end = time.monotonic() + 30
            while _alive(chained) and time.monotonic() < end:
                time.sleep(0.05)
            assert not _alive(chained)
    finally:
        (tmp_path / "release").touch()
    stdout, stderr = push.communicate(timeout=300)
    return subprocess.CompletedProcess(push.args, push.returncode, stdout, stderr)


#: A chained hook that passes and leaves a process of its own session holding its stdout and stderr.
LINGERING_CHAIN = """#!/bin/sh
cat > /dev/null
setsid sleep 3600 &
echo $! > {dir}/lingering.pid
echo "chained hook: fine"
exit 0
"""


def test_a_chained_hook_that_leaves_a_process_behind_holds_up_no_push(lab: Lab, server_state: None,
                                                                       tmp_path: Path) -> None:
    """The chained hook accepts and leaves a `setsid` child holding its output for an hour: the
    push lands at once, with the chained hook's words, and the child is ended. Before, the chain
    wrote to git's own pipes, and git waited for that child before it answered the push (issue
    44's sibling); the run is held to the test's own clock, far below the child's hour."""
    _install_chain(lab, LINGERING_CHAIN.format(dir=tmp_path))
    refspec, ref = _human_push(lab)
    started = time.monotonic()
    try:
        out = lab.server.push(refspec)
        took = time.monotonic() - started
        assert took < 60, f"the push took {took:.0f} s"
        assert out.returncode == 0 and "chained hook: fine" in out.stderr, out.stderr
        assert lab.server.ref(ref) is not None
        lingering = int((tmp_path / "lingering.pid").read_text())
        assert not _alive(lingering)
    finally:
        if (tmp_path / "lingering.pid").exists() and _alive(int((tmp_path / "lingering.pid").read_text())):
            os.kill(int((tmp_path / "lingering.pid").read_text()), signal.SIGKILL)


def test_deadline_passed_where_the_gate_cannot_check_rejects(lab: Lab, server_state: None, tmp_path: Path) -> None:
    """Stuck outside the gate's own loops (a chained hook that hangs): the watchdog ends it."""
    before = lab.snapshot()
    out = _push_into_a_hanging_chain(lab, tmp_path)
    _assert_rejected(lab, out, "GATE-HOOK-DEADLINE", before)


def test_a_deadline_enforced_by_the_watchdog_is_audited(lab: Lab, server_state: None, tmp_path: Path) -> None:
    n = len(_audit_lines(lab))
    _push_into_a_hanging_chain(lab, tmp_path)
    lines = _audit_lines(lab)
    assert len(lines) == n + 1 and json.loads(lines[-1])["codes"] == ["GATE-HOOK-DEADLINE"]


# --- the repository and the pushed objects -------------------------------------------------------

def _wrap_hook(lab: Lab, prelude: str) -> None:
    """Run the installed gate hook behind a wrapper that first runs `prelude` (shell)."""
    hooks = lab.server.bare / "hooks"
    real = hooks / "pre-receive.real"
    shutil.copy2(hooks / "pre-receive", real)
    (hooks / "pre-receive").write_text(f"#!/bin/sh\n{prelude}\nexec {real} \"$@\"\n")


@pytest.mark.parametrize("prelude,code", [
    ("unset GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_QUARANTINE_PATH", "GATE-GIT-UNREADABLE"),
    ("export GIT_DIR=/nonexistent/repo.git", "GATE-GIT-REPOSITORY"),
], ids=["quarantine-invisible", "git-dir-missing"])
def test_hook_that_cannot_read_the_pushed_objects_rejects(lab: Lab, server_state: None, prelude: str,
                                                          code: str) -> None:
    """The hook must never take 'object not found' for 'nothing to check'."""
    _wrap_hook(lab, prelude)
    refspec, _ref = _human_push(lab)
    before = lab.snapshot()
    _assert_rejected(lab, lab.server.push(refspec), code, before)


def test_a_broken_hook_script_rejects(lab: Lab, server_state: None) -> None:
    hook = lab.server.bare / "hooks" / "pre-receive"
    hook.write_text(hook.read_text().replace(sys.executable, "/nonexistent/python3"))
    refspec, _ref = _human_push(lab)
    before = lab.snapshot()
    _assert_rejected(lab, lab.server.push(refspec), None, before)


@pytest.mark.parametrize("how", ["missing", "not executable"])
def test_a_chained_hook_that_cannot_run_rejects(lab: Lab, server_state: None, how: str) -> None:
    _install_chain(lab, "#!/bin/sh\nexit 0\n")
    chained = lab.server.bare / "hooks" / "gate-chained" / "pre-receive"
    if how == "missing":
        chained.unlink()
    else:
        chained.chmod(0o644)
    refspec, _ref = _human_push(lab)
    before = lab.snapshot()
    out = lab.server.push(refspec)
    assert declined(out) and codes_of(out) == {"GATE-CONFIG-INSTALL"} and "Traceback" not in out.stderr, out.stderr
    assert lab.snapshot() == before


# --- configuration: policy, keyring, installation record ------------------------------------------

@pytest.mark.parametrize("which,code", [("policy.toml", "GATE-CONFIG-POLICY"), ("keyring.toml", "GATE-CONFIG-KEYRING")])
def test_policy_or_keyring_missing_rejects(lab: Lab, server_state: None, which: str, code: str) -> None:
    path = lab.server.gate_dir / which
    refspec, _ref = _human_push(lab)
    break_config(path, "missing")
    before = lab.snapshot()
    _assert_rejected(lab, lab.server.push(refspec), code, before)
    assert json.loads(_audit_lines(lab)[-1])["codes"] == [code]


def test_installation_record_corrupt_rejects(lab: Lab, server_state: None) -> None:
    (lab.server.gate_dir / "config.json").write_text("{")
    refspec, _ref = _human_push(lab)
    before = lab.snapshot()
    _assert_rejected(lab, lab.server.push(refspec), "GATE-CONFIG-INSTALL", before)


def test_a_corrupt_validated_cache_is_not_trusted(lab: Lab, server_state: None) -> None:
    """Garbage in the caches: the gate validates the source files again and decides as usual."""
    for name in ("policy.toml.validated.json", "keyring.toml.validated.json"):
        (lab.server.gate_dir / name).write_text("{garbage")
    head = lab.change(lab.fresh("agent"), {"ci/deploy.yml": "x\n"})
    before = lab.snapshot()
    _assert_rejected(lab, lab.server.push(f"{head}:refs/heads/faults/{head[:12]}"), "GATE-FROZEN-PATH", before)
    refspec, _ref = _human_push(lab)
    assert lab.server.push(refspec).returncode == 0


# --- the ledger ref unreadable, corrupt or missing --------------------------------------------------

def test_a_ledger_record_deleted_from_disk_rejects_the_review(lab: Lab, server_state: None) -> None:
    attempt, receipt = _review_push(lab)
    bare = lab.server.bare
    tip = lab.ledger_tip(attempt)
    assert tip is not None
    blob = git(bare, "rev-parse", f"{tip}:record.json").stdout.strip()
    obj = bare / "objects" / blob[:2] / blob[2:]
    assert obj.exists(), "record blobs arrive as loose objects (transfer.unpackLimit)"
    saved = obj.read_bytes()
    obj.unlink()
    before = lab.snapshot()
    doc = lab.receipt_doc(receipt)
    out = lab.push_receipt_bytes(attempt, receipt.read_bytes(), doc["new_commit"])
    try:
        _assert_rejected(lab, out, "GATE-GIT-UNREADABLE", before)
    finally:
        obj.write_bytes(saved)


# --- the audit log ---------------------------------------------------------------------------------

def _fsize_wrapper(lab: Lab, limit: int) -> None:
    """RLIMIT_FSIZE for the hook: writes past `limit` bytes fail (EFBIG; Python ignores SIGXFSZ)."""
    hooks = lab.server.bare / "hooks"
    real = hooks / "pre-receive.real"
    shutil.copy2(hooks / "pre-receive", real)
    (hooks / "pre-receive").write_text(
        f"#!{sys.executable}\nimport os, resource\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        f"os.execv({str(real)!r}, [{str(real)!r}])\n")


@pytest.mark.parametrize("how", ["directory", "dev-full", "fsize-limit"])
def test_audit_log_not_writable_rejects_without_a_partial_line(lab: Lab, server_state: None, how: str) -> None:
    """Even a push the gate would accept (a valid review) is rejected when its decision cannot
    be audited; a failed write leaves the log exactly as it was."""
    attempt, receipt = _review_push(lab)
    lab.server.settle()  # the earlier pushes' "landed" lines are in before the file is replaced
    audit = lab.server.gate_dir / "audit.log"
    if not audit.exists():
        audit.write_text("")
    original = audit.read_bytes()
    if how == "directory":
        audit.unlink()
        audit.mkdir()
    elif how == "missing-directory":
        audit.unlink()
        audit.symlink_to("/nonexistent/dir/audit.log")
    elif how == "dev-full":
        audit.unlink()
        audit.symlink_to("/dev/full")
    else:
        _fsize_wrapper(lab, len(original) + 40)  # room for 40 bytes: the line is cut short
    before = lab.snapshot()
    _assert_rejected(lab, lab.push_review(attempt, receipt), "GATE-AUDIT-WRITE", before)
    if how == "fsize-limit":
        assert audit.read_bytes() == original  # truncated back: no partial line
        (lab.server.bare / "hooks" / "pre-receive.real").replace(lab.server.bare / "hooks" / "pre-receive")
    else:
        if audit.is_dir():
            audit.rmdir()
        else:
            audit.unlink()
        audit.write_bytes(original)
    # Repaired: the very same push is accepted, and audited.
    assert lab.push_review(attempt, receipt).ok
    assert json.loads(_audit_lines(lab)[-1])["attempt_ids"] == [attempt]


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if out.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {out.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_disk_full_on_the_audit_path_leaves_no_partial_line(lab: Lab, server_state: None, tiny_tmpfs: Path) -> None:
    """A real full file system: a 64 KiB tmpfs holding the audit log and a filler file."""
    attempt, receipt = _review_push(lab)
    lab.server.settle()
    audit = lab.server.gate_dir / "audit.log"
    on_tmpfs = tiny_tmpfs / "audit.log"
    # Whole lines ending 100 bytes short of a page: the next line starts in that page (a short
    # write) and needs a page the file system no longer has (ENOSPC on the rest).
    pad = 4096 - 100 - len('{"pad":""}\n')
    on_tmpfs.write_bytes(json.dumps({"pad": "x" * pad}, separators=(",", ":")).encode() + b"\n")
    assert on_tmpfs.stat().st_size == 4096 - 100
    fd = os.open(tiny_tmpfs / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    filler = tiny_tmpfs / "filler"
    original = on_tmpfs.read_bytes()
    audit.unlink(missing_ok=True)
    audit.symlink_to(on_tmpfs)
    before = lab.snapshot()
    _assert_rejected(lab, lab.push_review(attempt, receipt), "GATE-AUDIT-WRITE", before)
    assert on_tmpfs.read_bytes() == original
    for line in on_tmpfs.read_text().splitlines():
        json.loads(line)
    filler.unlink()
    assert lab.push_review(attempt, receipt).ok
    decisions = [d for d in map(json.loads, on_tmpfs.read_text().splitlines()) if d.get("event") == "decision"]
    assert decisions[-1]["attempt_ids"] == [attempt]
