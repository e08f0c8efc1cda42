"""Bytes to text for pages whose encoding is declared in the header, in a <meta>, or not at all.

Docs sites still serve Latin-1 and Windows-1252 pages; decoding them as UTF-8 with
replacement would put U+FFFD into every accented word and every search for it would miss.
"""

from __future__ import annotations

import codecs
import re

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.IGNORECASE)
_XML_DECL = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)""")


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_body(body: bytes, header_charset: str | None = None) -> str:
    """BOM, then the HTTP charset, then <meta charset> / XML declaration, then UTF-8,
    then Windows-1252 (a superset of Latin-1 that never fails)."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"),
                      (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return body.decode(name, errors="replace").lstrip("\ufeff")
    head = body[:4096]
    declared = _codec(header_charset)
    if declared is None:
        match = _META_CHARSET.search(head) or _XML_DECL.search(head)
        declared = _codec(match.group(1).decode("ascii")) if match else None
    if declared:
        if declared in ("latin-1", "iso8859-1", "ascii"):
            declared = "cp1252"  # what browsers do for these labels (WHATWG Encoding)
        return body.decode(declared, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace")
