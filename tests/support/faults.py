"""Configuration files broken the ways a disk, an editor or an admin breaks them, for both tiers:
the in-process tier reads each through the hook's own loaders (`tests/engine/test_fault_injection.py`),
the push tier installs one of each family and pushes (`tests/push/test_faults.py`)."""

from __future__ import annotations

from pathlib import Path

#: Every way `break_config` breaks a file.
CONFIG_FAULTS = ("missing", "directory", "dangling-symlink", "not-toml", "not-utf8", "invalid", "oversize",
                 "truncated", "fifo", "deeply-nested")


def break_config(path: Path, how: str) -> None:
    """Break the policy or keyring at `path` (an installed one: it exists) in the way `how` names."""
    import os

    if how in ("missing", "directory", "dangling-symlink", "fifo"):
        path.unlink()
    if how == "directory":
        path.mkdir()
    elif how == "dangling-symlink":
        path.symlink_to("/nonexistent/config.toml")
    elif how == "fifo":  # never opened for a blocking read: regular files only
        os.mkfifo(path)
    elif how == "not-toml":
        path.write_text("this is [ not toml\n")
    elif how == "not-utf8":
        path.write_bytes(b'mode = "\xff"\n')
    elif how == "invalid":
        path.write_text("[[key]]\nid = 3\n" if path.name == "keyring.toml" else "mode = 'sometimes'\n")
    elif how == "oversize":
        path.write_text(path.read_text() + "#" * (1 << 20) + "\n")
    elif how == "truncated":  # a write cut short
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif how == "deeply-nested":
        path.write_text("x = " + "[" * 3000 + "]" * 3000 + "\n")
    elif how == "empty":
        path.write_text("")
