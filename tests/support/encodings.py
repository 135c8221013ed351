"""The encodings a commit's `encoding` header can name that both git (through glibc's iconv) and
Python read: the differential tests draw from them."""

from __future__ import annotations

import codecs
import shutil
import subprocess


def iconv_and_python() -> dict[str, str]:
    """Every name `iconv -l` lists that Python's codecs also know: iconv's name -> Python's codec
    (empty where there is no iconv)."""
    if shutil.which("iconv") is None:
        return {}
    listing = subprocess.run(["iconv", "-l"], capture_output=True, text=True, check=True).stdout
    out: dict[str, str] = {}
    for name in (n.strip().rstrip("/") for n in listing.replace(",", "\n").split("\n")):
        try:
            out[name] = codecs.lookup(name).name
        except (LookupError, ValueError):
            continue
    return out
