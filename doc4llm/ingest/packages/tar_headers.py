"""Tar header parsing with bounds: tarfile's extended headers, read in linear time and
bounded memory.

tarfile reads an extended header's whole declared body into memory before looking at it:
a GNU long name (type `L`/`K`) or a pax header (`x`/`g`) declaring 1 GB of name, 1 MB of
gzip, took 2.1 GB of RSS. Extended headers chain by recursion (each one reads the next
header inside its own call), so 10,000 of them in a row raised RecursionError. CPython
before 3.11.10 / 3.12.6 parses pax records with `re.search(rb"\\d+ hdrcharset=")`, which is
quadratic in a run of digits (64 KB: 3.5 s, per member). GNU sparse maps (type `S`
extension blocks, pax `GNU.sparse.*`) are unbounded lists of offsets; no package archive
holds a sparse file.

`GuardedTarInfo` (pass as `tarfile.open(..., tarinfo=GuardedTarInfo)`) refuses an extended
header over `MAX_EXTENDED_HEADER` bytes or `MAX_RECORDS` records, more than `MAX_CHAIN`
extended headers before one member, more than `MAX_TOTAL_BYTES` of extended headers in the
archive (`MAX_GLOBAL_BYTES` of global ones, which accumulate), and any sparse member;
it parses pax records with the linear parser of the fixed CPython releases, on every
Python. Call `start_member(tf)` before each `tf.next()`.
"""

from __future__ import annotations

import re
import tarfile

MAX_EXTENDED_HEADER = 64 * 1024  # a long name or one pax header; names over 1 KB are refused anyway
MAX_CHAIN = 16  # extended headers before one member (a member needs at most three)
MAX_RECORDS = 64  # records of one pax header (a member needs at most a dozen)
MAX_TOTAL_BYTES = 16 * 1024 * 1024  # every extended header of the archive together
MAX_GLOBAL_BYTES = 256 * 1024  # every global pax header together (they accumulate)

_EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
             tarfile.SOLARIS_XHDTYPE)
_LENGTH = re.compile(rb"([0-9]{1,20}) ")  # anchored (`match`), bounded: linear


class TarHeaderError(Exception):
    """A tar header the archive is refused for (its message is one clause)."""


def start_member(tf: tarfile.TarFile) -> None:
    """Reset the count of extended headers: call before each `tf.next()`."""
    tf._doc4llm_chain = 0  # type: ignore[attr-defined]


class GuardedTarInfo(tarfile.TarInfo):
    """TarInfo whose extended headers are bounded (see the module docstring)."""

    def _proc_member(self, tf):  # noqa: ANN001 - tarfile's own hook
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise TarHeaderError(f"member {ascii(self.name[:80])} is a sparse file")
        if self.type in _EXTENDED:
            chain = getattr(tf, "_doc4llm_chain", 0) + 1
            tf._doc4llm_chain = chain
            if chain > MAX_CHAIN:
                raise TarHeaderError(f"more than {MAX_CHAIN} extended headers precede one member")
            if self.size > MAX_EXTENDED_HEADER:
                raise TarHeaderError(f"an extended header (type {self.type.decode('latin-1')!r}) declares "
                                     f"{self.size:,} bytes (at most {MAX_EXTENDED_HEADER:,})")
            total = getattr(tf, "_doc4llm_total", 0) + self.size
            tf._doc4llm_total = total
            if total > MAX_TOTAL_BYTES:
                raise TarHeaderError(f"extended headers add up to more than {MAX_TOTAL_BYTES // 2 ** 20} MB")
            if self.type == tarfile.XGLTYPE:
                tf._doc4llm_global = getattr(tf, "_doc4llm_global", 0) + self.size
                if tf._doc4llm_global > MAX_GLOBAL_BYTES:
                    raise TarHeaderError(f"global pax headers add up to more than {MAX_GLOBAL_BYTES:,} bytes")
        return super()._proc_member(tf)

    def _proc_pax(self, tf):  # noqa: ANN001 - tarfile's own hook
        """tarfile's pax parser as CPython 3.12.6 has it (linear), without sparse formats."""
        buf = tf.fileobj.read(self._block(self.size))
        pax_headers = tf.pax_headers if self.type == tarfile.XGLTYPE else tf.pax_headers.copy()
        pos, encoding, raw = 0, None, []
        while len(buf) > pos and buf[pos] != 0:
            match = _LENGTH.match(buf, pos)
            if not match:
                raise tarfile.InvalidHeaderError("invalid header")
            length = int(match.group(1))
            end = match.start(1) + length - 1  # the record's last byte, its newline
            if length < 5 or pos + length > len(buf):
                raise tarfile.InvalidHeaderError("invalid header")
            key, equals, value = buf[match.end(1) + 1:end].partition(b"=")
            if not key or equals != b"=" or buf[end] != 0x0A:
                raise tarfile.InvalidHeaderError("invalid header")
            if key.startswith(b"GNU.sparse."):
                raise TarHeaderError("a pax header describes a sparse file")
            raw.append((key, value))
            if len(raw) > MAX_RECORDS:
                raise TarHeaderError(f"a pax header holds more than {MAX_RECORDS} records")
            if key == b"hdrcharset" and encoding is None:
                encoding = tf.encoding if value == b"BINARY" else "utf-8"
            pos += length
        encoding = encoding or "utf-8"
        for key, value in raw:
            keyword = self._decode_pax_field(key, "utf-8", "utf-8", tf.errors)
            if keyword in tarfile.PAX_NAME_FIELDS:
                pax_headers[keyword] = self._decode_pax_field(value, encoding, tf.encoding, tf.errors)
            else:
                pax_headers[keyword] = self._decode_pax_field(value, "utf-8", "utf-8", tf.errors)

        try:
            following = self.fromtarfile(tf)
        except tarfile.HeaderError as exc:
            raise tarfile.SubsequentHeaderError(str(exc)) from None
        if self.type in (tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE):
            following._apply_pax_info(pax_headers, tf.encoding, tf.errors)
            following.offset = self.offset
            if "size" in pax_headers:  # the pax size replaces the header's: where the next one starts
                offset = following.offset_data
                if following.isreg() or following.type not in tarfile.SUPPORTED_TYPES:
                    offset += following._block(following.size)
                tf.offset = offset
        return following
