"""A push whose commands say whatever the test wants: the old value of a ref included.

`git push` always states the old value the server advertised. A hostile client can state
any: it speaks the protocol itself. `raw_push` does that against the real `git
receive-pack` of a bare repository (so the installed hook, quarantine and ref updates are
git's own), with a pack made by `git pack-objects` from the client repository.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from .gitutil import git_env


def _pkt(data: bytes) -> bytes:
    return b"%04x" % (len(data) + 4) + data


def _read_pkts(stream: bytes) -> tuple[list[bytes], bytes]:
    """pkt-lines up to the first flush, and what follows."""
    out, pos = [], 0
    while pos < len(stream):
        size = int(stream[pos:pos + 4], 16)
        if size == 0:
            return out, stream[pos + 4:]
        out.append(stream[pos + 4:pos + size])
        pos += size
    return out, b""


@dataclass(frozen=True)
class RawResult:
    returncode: int
    status: list[str]  # report-status lines: "unpack ok", "ok <ref>", "ng <ref> <reason>"
    stderr: str

    def ok(self, ref: str) -> bool:
        return f"ok {ref}" in self.status

    @property
    def stdout(self) -> str:
        return "\n".join(self.status)


def advertised(bare: Path) -> dict[str, str]:
    out = subprocess.run(["git", "receive-pack", "--advertise-refs", str(bare)], capture_output=True,
                         env=git_env(), check=True).stdout
    refs = {}
    for line in _read_pkts(out)[0]:
        oid, _, rest = line.partition(b" ")
        name = rest.split(b"\0")[0].strip().decode()
        if name != "capabilities^{}":
            refs[name] = oid.decode()
    return refs


def raw_push(client: Path, bare: Path, commands: list[tuple[str, str, str]], env: dict[str, str],
             atomic: bool = False, objects: list[str] | None = None) -> RawResult:
    """Send `(old, new, ref)` commands as stated, with a pack of everything the new ids reach, or
    of exactly `objects` (objects git's own client would refuse to walk: a tree it cannot parse)."""
    caps = b"report-status" + (b" atomic" if atomic else b"")
    fmt = subprocess.run(["git", "rev-parse", "--show-object-format"], cwd=client, capture_output=True,
                         env=git_env(), check=True).stdout.strip()
    if fmt != b"sha1":  # the protocol names any other format (a sha1 client never does)
        caps += b" object-format=" + fmt
    lines = [f"{old} {new} {ref}".encode() for old, new, ref in commands]
    request = _pkt(lines[0] + b"\0" + caps + b"\n") + b"".join(_pkt(line + b"\n") for line in lines[1:]) + b"0000"
    news = [new for _old, new, _ref in commands if set(new) != {"0"}]
    if objects is not None:
        request += subprocess.run(["git", "pack-objects", "--stdout", "-q"], cwd=client,
                                  input="".join(f"{o}\n" for o in objects).encode(), capture_output=True,
                                  env=git_env(), check=True).stdout
    elif news:
        request += subprocess.run(["git", "pack-objects", "--stdout", "--revs", "-q"], cwd=client,
                                  input="".join(f"{n}\n" for n in news).encode(), capture_output=True,
                                  env=git_env(), check=True).stdout
    proc = subprocess.run(["git", "receive-pack", str(bare)], input=request, capture_output=True,
                          env=git_env(**env), timeout=300)
    _adv, rest = _read_pkts(proc.stdout)
    status, _ = _read_pkts(rest)
    return RawResult(proc.returncode, [s.decode().rstrip("\n") for s in status], proc.stderr.decode())
