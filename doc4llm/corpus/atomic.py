"""Atomic file writes: write a temp file in the same folder, fsync, rename.

A crash mid-write leaves the previous file intact, and a reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Every text file doc4llm writes (pages, docTOC.md, set metadata, sessions) comes
    here, so no configured API key is ever written, whoever put it in the text."""
    from doc4llm.secrets import redact

    atomic_write_bytes(path, redact(text).encode("utf-8"))


_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def read_text_lossy(path: Path) -> tuple[str, bool]:
    """Read UTF-8 (a leading BOM dropped) with replacement; return (text, had_invalid_bytes).

    A UTF-16 or UTF-32 byte-order mark says how to decode instead (editors on Windows
    save markdown that way; read as UTF-8 it looked like binary)."""
    data = Path(path).read_bytes()
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(codec), False
            except UnicodeDecodeError:
                return data[len(bom):].decode(codec, errors="replace"), True
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("utf-8-sig", errors="replace"), True


def mostly_undecodable(text: str, share: float = 0.3) -> bool:
    """True when replacement characters are at least `share` of the non-space characters:
    a binary file without NUL bytes, not text with a few bad bytes."""
    bad = text.count("\ufffd")
    if not bad:
        return False
    return bad >= share * max(1, len(text) - sum(1 for c in text if c.isspace()))


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks (archives and vector files can be large)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

