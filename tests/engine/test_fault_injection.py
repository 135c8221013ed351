"""Faults the engine must turn into a rejection with its code, injected in process: configuration
files broken every way (read by the hook's own loaders), an empty keyring, the pushed objects
invisible, and the ledger on the server unreadable, corrupt, missing, or sealed with a key revoked
since. `FaultyReader` (the hook's `GitStream` told which objects are missing) is held here to a
real missing object.

`tests/push/test_faults.py` keeps one real push per family (a policy and a keyring missing, a
corrupt installation record, the quarantine invisible, a ledger record blob deleted from disk) and
every fault that only the hook's process can meet: killed, out of time, its chained hook or its
audit log broken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.engine import EngineLab, Faults, FaultyReader, objects_brought
from support.faults import CONFIG_FAULTS, break_config
from support.gitutil import HUMAN, WorkRepo, git
from support.lab import LAB_POLICY
from support.verdicts import assert_refused

from gatecore.adapters import config
from gatecore.adapters.gitstream import GitStream
from gatecore.errors import GateError
from gatecore.git.refs import ATTEMPTS_PREFIX

# --- configuration: the policy and keyring as installed, broken ----------------------------------

LOADERS: dict[str, tuple[Callable[[Path], Any], str]] = {
    "policy.toml": (config.load_policy, "GATE-CONFIG-POLICY"),
    "keyring.toml": (config.load_keyring, "GATE-CONFIG-KEYRING"),
}


@pytest.fixture
def installed(tmp_path: Path, lab: EngineLab) -> Path:
    """A gate directory holding the lab's policy and keyring as `gate server install` leaves them:
    each file with its validated cache, which the hook reads instead of validating again."""
    source, gate_dir = tmp_path / "source", tmp_path / "gate"
    source.mkdir()
    gate_dir.mkdir()
    (source / "policy.toml").write_text(LAB_POLICY)
    (source / "keyring.toml").write_text(lab.keyring_text)
    config.install(config.validated_policy(source / "policy.toml"), gate_dir / "policy.toml")
    config.install(config.validated_keyring(source / "keyring.toml"), gate_dir / "keyring.toml")
    return gate_dir


@pytest.mark.parametrize("how", CONFIG_FAULTS)
@pytest.mark.parametrize("which", sorted(LOADERS))
def test_a_broken_policy_or_keyring_is_its_configuration_error(installed: Path, which: str, how: str) -> None:
    """What the hook's stage 3 meets (`server/prereceive.py`: `config.load_policy`, `load_keyring`):
    every fault is the file's own code, exit 2; a FIFO is refused without being opened to read."""
    load, code = LOADERS[which]
    load(installed / which)  # as installed, it loads
    break_config(installed / which, how)
    with pytest.raises(GateError) as err:
        load(installed / which)
    assert err.value.code == code and err.value.exit_code == 2, err.value
    if how == "fifo":
        assert "not a regular file" in err.value.detail


def test_a_corrupt_validated_cache_is_not_trusted(installed: Path) -> None:
    """Garbage in the caches: the loaders validate the source files again."""
    expected = {name: load(installed / name) for name, (load, _code) in LOADERS.items()}
    for name in LOADERS:
        (installed / f"{name}.validated.json").write_text("{garbage")
    assert {name: load(installed / name) for name, (load, _code) in LOADERS.items()} == expected


@pytest.mark.parametrize("content", ["{", '{"version": 1, "platform": "git"}', "[]", ""])
def test_a_corrupt_installation_record_is_a_configuration_error(tmp_path: Path, content: str) -> None:
    from server import installation

    (tmp_path / installation.CONFIG_FILE).write_text(content)
    with pytest.raises(GateError) as err:
        installation.read(tmp_path)
    assert err.value.code == "GATE-CONFIG-INSTALL" and err.value.exit_code == 2


@pytest.fixture
def keyring_back(lab: EngineLab) -> Iterator[None]:
    """Whatever a test installs as the keyring, the lab's own is back afterwards."""
    yield
    lab.server.set_keyring(lab.keyring_text)


def test_an_empty_keyring_rejects_every_review(lab: EngineLab, keyring_back: None) -> None:
    attempt = lab.open()
    receipt = lab.record(attempt, lab.change(f"empty-keyring-{attempt}"))
    lab.server.set_keyring("")
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, receipt), "GATE-SEAL-UNKNOWN-KEY")


# --- the objects --------------------------------------------------------------------------------

def test_the_faulty_reader_reports_a_missing_object_as_git_does(tmp_path: Path) -> None:
    """The same object, deleted from disk and read by `GitStream`, and declared missing to a
    `FaultyReader` over an intact copy: the same code and the same words, whatever asks for it."""
    intact, broken = WorkRepo(tmp_path / "intact"), WorkRepo(tmp_path / "broken")
    for w in (intact, broken):
        w.write("src/a.py", "print('a')\n")
        w.commit("one", identity=HUMAN)
    blob = git(intact.path, "rev-parse", "HEAD:src/a.py").stdout.strip()
    (broken.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    real = GitStream(str(broken.path / ".git"))
    faulty = FaultyReader(str(intact.path / ".git"), Faults(missing=frozenset({blob})))
    try:
        for ask in (lambda r: r.read(blob), lambda r: r.header(blob), lambda r: r.blob_digests([blob]),
                    lambda r: list(r.read_many([blob]))):
            errors = []
            for reader in (real, faulty):
                with pytest.raises(GateError) as err:
                    ask(reader)
                errors.append((err.value.code, err.value.detail))
                reader.close()  # a failed request leaves a stream unusable: start afresh
            assert errors[0] == errors[1]
        assert not faulty.exists(blob) and not real.exists(blob)
    finally:
        real.close()
        faulty.close()


def test_the_faulty_reader_without_faults_reads_as_the_hook_reads(lab: EngineLab) -> None:
    """Every object of the lab's repository: the same type, bytes and digest from both readers."""
    listed = git(lab.server.bare, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
    objects = [line.split() for line in listed.stdout.splitlines()]
    real, faulty = GitStream(str(lab.server.bare)), FaultyReader(str(lab.server.bare), Faults())
    try:
        ids = [oid for oid, _kind in objects]
        assert list(real.read_many(ids)) == list(faulty.read_many(ids))
        blobs = [oid for oid, kind in objects if kind == "blob"]
        assert real.blob_digests(blobs) == faulty.blob_digests(blobs)
        assert all(real.header(oid) == faulty.header(oid) for oid in ids[:50])
    finally:
        real.close()
        faulty.close()


@pytest.fixture
def faults_off(lab: EngineLab) -> Iterator[None]:
    yield
    lab.server.faults = None


def test_pushed_objects_the_hook_cannot_read_reject(lab: EngineLab, faults_off: None) -> None:
    """The hook must never take 'object not found' for 'nothing to check' (what an invisible
    quarantine looks like to it)."""
    head = lab.change(lab.fresh("invisible"), {"src/ok.py": "ok\n"}, identity=HUMAN)
    lab.server.faults = Faults(missing=objects_brought(lab.server, head))
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f"{head}:refs/heads/faults/{head[:12]}"), "GATE-GIT-UNREADABLE")
    lab.server.faults = None
    assert lab.server.push(f"{head}:refs/heads/faults/{head[:12]}").ok  # the fault, not the push


# --- the ledger on the server: unreadable, corrupt or missing -----------------------------------

@pytest.mark.parametrize("how,code", [
    ("ref-to-missing-object", "GATE-GIT-UNREADABLE"),
    ("record-blob-missing", "GATE-GIT-UNREADABLE"),
    ("record-blob-corrupt", "GATE-SEAL-MALFORMED"),
    ("ref-to-a-corrupt-record", "GATE-SEAL-MALFORMED"),
    ("ref-to-another-attempts-chain", "GATE-LEDGER-ATTEMPT"),
    ("ref-deleted", "GATE-LEDGER-MISSING"),
    ("sealing-key-revoked-since", "GATE-SEAL-KEY-REVOKED"),
])
def test_ledger_unreadable_corrupt_or_missing_rejects_the_review(lab: EngineLab, faults_off: None,
                                                                 keyring_back: None, how: str, code: str) -> None:
    attempt = lab.open()
    head = lab.change(f"ledger-fault-{attempt}")
    receipt = lab.record(attempt, head)
    ref = ATTEMPTS_PREFIX + attempt
    tip = lab.ledger_tip(attempt)
    assert tip is not None
    record = git(lab.work.path, "rev-parse", f"{tip}:record.json").stdout.strip()
    if how == "ref-to-missing-object":  # a ref file naming an object the repository lacks
        (lab.server.bare / ref).parent.mkdir(parents=True, exist_ok=True)
        (lab.server.bare / ref).write_text("1" * 40 + "\n")
    elif how == "record-blob-missing":
        lab.server.faults = Faults(missing=frozenset({record}))
    elif how == "record-blob-corrupt":
        lab.server.faults = Faults(replaced={record: ("blob", b"{not json")})
    elif how in ("ref-to-a-corrupt-record", "ref-to-another-attempts-chain"):
        other = lab.ledger_tip(lab.open())
        data = b"{not json" if how == "ref-to-a-corrupt-record" else git(
            lab.work.path, "show", f"{other}:record.json").stdout.encode()
        lab.server.set_ref(ref, lab.ledger_commit(data, tip))  # an admin's (or a disk's) mistake
    elif how == "ref-deleted":
        lab.server.set_ref(ref, None)
    elif how == "sealing-key-revoked-since":
        text = lab.keyring_text
        start = text.index('id = "orch-1"')
        end = text.index("revoked = false", start)
        lab.server.set_keyring(text[:end] + "revoked = true" + text[end + len("revoked = false"):])
    before = lab.snapshot()
    out = lab.push_receipt_bytes(attempt, receipt.read_bytes(), head)
    assert_refused(lab, before, out, code)

