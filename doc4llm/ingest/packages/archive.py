"""Download a release's archive and extract it safely.

An archive from a registry is untrusted input. Extraction refuses the whole archive when a
member is absolute or climbs out with `..` (that is an attack, not an accident), skips links
and special files (never created, so nothing written later can follow one), and stops at
caps on file count, total bytes and bytes per file, counted on the bytes really written
(a gzip bomb lies about sizes). Files are created with O_EXCL|O_NOFOLLOW.

Every member counts against `MAX_MEMBERS`, whatever it is (directory, link, skipped
binary): 100,000 directory entries in a 297 KB tar.bz2 made 100,000 folders, and 1M skipped
`.so` members in 2.2 MB took 497 MB because tarfile keeps every header it reads. Directory
members create nothing (a file's folders are made when the file is written), tar headers
are dropped once read, and a zip's central directory is sized before it is read. A member
that collides with another (a file `docs`, then `docs/a.md`) or whose path is too long
refuses the archive; a name that is not UTF-8 keeps U+FFFD in place of its bad bytes.
Tar's extended headers (long names, pax) are bounded before tarfile reads them
(tar_headers.py): a 1 GB long name in 1 MB of gzip took 2.1 GB.
"""

from __future__ import annotations

import errno
import lzma
import os
import stat
import struct
import tarfile
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from doc4llm.errors import InputError
from doc4llm.ingest.packages.http import Http
from doc4llm.ingest.packages.spec import Release
from doc4llm.ingest.packages.tar_headers import GuardedTarInfo, TarHeaderError, start_member

MAX_FILES = 20_000
MAX_MEMBERS = 100_000  # every member: files, folders, links, skipped binaries
MAX_TOTAL_BYTES = 400 * 1024 * 1024
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_SCAN_BYTES = 4 * 1024 * 1024 * 1024  # uncompressed bytes walked through (bombs)
MAX_ZIP_DIRECTORY = 32 * 1024 * 1024  # a zip's central directory (~120 bytes a member)
MAX_DEPTH = 40
MAX_PATH_BYTES = 1024  # a member's path; with the docs dir in front it stays under PATH_MAX
# never read by the docs pipeline: compiled code, models, media, nested archives, C sources
SKIP_SUFFIXES = frozenset(
    ".so .dll .dylib .pyd .a .o .lib .exe .bin .onnx .pt .pth .safetensors .gguf .npy .npz .pkl "
    ".whl .jar .zip .gz .tgz .xz .bz2 .zst .7z .png .jpg .jpeg .gif .ico .bmp .webp .svg .woff .woff2 "
    ".ttf .otf .eot .pdf .mp3 .mp4 .webm .wasm .node .c .cc .cpp .cxx .h .hh .hpp .rs .go .java "
    ".pyc .map .db .sqlite .parquet .arrow .h5 .tflite .mo".split())


class ArchiveError(InputError):
    """A corrupt or hostile archive (exit 2): nothing of it is used."""


@dataclass
class Extracted:
    root: Path  # the package's top folder (an sdist's `name-1.0/`, npm's `package/`)
    files: int = 0
    bytes: int = 0
    members: int = 0  # every member read, of any kind
    skipped: list[str] = field(default_factory=list)  # links, special files, duplicates, too large
    not_needed: int = 0  # binaries, media, C sources...: never written


def archive_filename(release: Release) -> str:
    """The name the archive is saved under: the last part of the registry's file name, which
    must be a plain file name with an archive suffix (a URL ending in `/..` is refused)."""
    name = os.path.basename(release.filename.replace("\\", "/"))
    if name in ("", ".", "..") or "\x00" in name or len(name.encode("utf-8", "replace")) > 255:
        raise ArchiveError(f"{release.ecosystem}:{release.name} {release.version}: the registry's archive "
                           f"URL does not end in a file name ({release.filename[:80]!r}): not downloaded")
    return name


def download(http: Http, release: Release, dest_dir: Path) -> tuple[Path, str]:
    """Fetch the archive into `dest_dir`; return (path, sha256). Hashes are checked by
    integrity.check_archive, against the lockfile's and the registry's."""
    folder = dest_dir / "download"  # never the extraction folder, whatever the file's name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / archive_filename(release)
    if path.exists():  # a second archive of the same name (the @types package): its own folder
        folder = Path(tempfile.mkdtemp(prefix="download-", dir=dest_dir))
        path = folder / path.name
    sha256 = http.download(release.url, path)
    return path, sha256


def safe_member_path(name: str) -> PurePosixPath | None:
    """The member's relative path, None for the archive's root entry; ArchiveError when
    it is absolute, climbs out, or is too long or deep. Bytes that are not UTF-8 (tarfile
    hands them over as surrogates) become U+FFFD, so the name can be written anywhere."""
    raw = name.replace("\\", "/")
    if any("\udc80" <= c <= "\udcff" for c in raw):
        raw = raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    shown = ascii(name[:200])
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":") or "\x00" in raw:
        raise ArchiveError(f"archive member {shown} has an absolute path: archive refused")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ArchiveError(f"archive member {shown} climbs out with '..': archive refused")
    if len(parts) > MAX_DEPTH or any(len(p.encode("utf-8")) > 255 for p in parts) or \
            len("/".join(parts).encode("utf-8")) > MAX_PATH_BYTES:
        raise ArchiveError(f"archive member {ascii(name[:80])}... is nested too deep or has too long a path "
                           f"(at most {MAX_DEPTH} folders, {MAX_PATH_BYTES} bytes): archive refused")
    return PurePosixPath(*parts) if parts else None


class _Writer:
    def __init__(self, dest: Path, max_files: int, max_total: int, max_file: int, max_members: int) -> None:
        self.dest = dest
        self.result = Extracted(dest)
        self.max_files, self.max_total, self.max_file = max_files, max_total, max_file
        self.max_members = max_members

    def member(self) -> None:
        """Count one member of any kind against the cap."""
        self.result.members += 1
        if self.result.members > self.max_members:
            raise ArchiveError(f"archive has more than {self.max_members:,} members "
                               f"(files, folders, links together): archive refused")

    def wanted(self, rel: PurePosixPath, declared_size: int) -> bool:
        """False for files the docs never read (not written, not counted) and for files
        larger than the per-file cap (noted, not written)."""
        if rel.suffix.lower() in SKIP_SUFFIXES:
            self.result.not_needed += 1
            return False
        if declared_size > self.max_file:
            self.result.skipped.append(f"{rel} (larger than {self.max_file // (1024 * 1024)} MB, not extracted)")
            return False
        return True

    def file(self, rel: PurePosixPath, stream) -> None:
        if self.result.files >= self.max_files:
            raise ArchiveError(f"archive has more than {self.max_files} files: archive refused")
        target = self.dest / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            if target.is_dir() or not target.parent.is_dir():
                raise self._conflict(rel) from None
            self.result.skipped.append(f"{rel} (duplicate member)")
            return
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG, errno.ELOOP):
                raise self._conflict(rel, exc) from None
            raise
        written = 0
        with os.fdopen(fd, "wb") as out:
            while True:
                chunk = stream.read(1 << 20)
                if not chunk:
                    break
                written += len(chunk)
                self.result.bytes += len(chunk)
                if written > self.max_file:  # more bytes than the member declared: a lie
                    raise ArchiveError(f"archive member {rel} is larger than "
                                       f"{self.max_file // (1024 * 1024)} MB: archive refused")
                if self.result.bytes > self.max_total:
                    raise ArchiveError(f"archive unpacks to more than "
                                       f"{self.max_total // (1024 * 1024)} MB: archive refused")
                out.write(chunk)
        self.result.files += 1

    @staticmethod
    def _conflict(rel: PurePosixPath, exc: OSError | None = None) -> ArchiveError:
        if exc is not None and exc.errno == errno.ENAMETOOLONG:
            return ArchiveError(f"archive member {ascii(str(rel)[:80])}... has a path too long to write: "
                                "archive refused")
        return ArchiveError(f"archive member {ascii(str(rel)[:200])} collides with another member "
                            "(a file where a folder is needed, or the reverse): archive refused")


def extract(archive: Path, dest: Path, *, max_files: int = MAX_FILES, max_total: int = MAX_TOTAL_BYTES,
            max_file: int = MAX_FILE_BYTES, max_members: int = MAX_MEMBERS) -> Extracted:
    """Extract `archive` (tar, tar.gz, tgz, tar.bz2, zip, whl) into the empty folder `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    writer = _Writer(dest, max_files, max_total, max_file, max_members)
    name = archive.name.lower()
    try:
        if name.endswith((".whl", ".zip")):
            _extract_zip(archive, writer)
        else:
            _extract_tar(archive, writer)
    except TarHeaderError as exc:
        raise ArchiveError(f"{archive.name}: {exc}: archive refused") from exc
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError,
            ValueError, struct.error, UnicodeError, RuntimeError, NotImplementedError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # disk full, permissions: not the archive's fault
        raise ArchiveError(f"{archive.name} is not a readable archive ({type(exc).__name__}: "
                           f"{ascii(str(exc)[:200])})") from exc
    if writer.result.files == 0:
        raise ArchiveError(f"{archive.name} holds no files")
    entries = [p for p in dest.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        writer.result.root = entries[0]
    return writer.result


def _extract_tar(archive: Path, writer: _Writer) -> None:
    with tarfile.open(archive, "r:*", tarinfo=GuardedTarInfo) as tf:
        while True:  # streamed: members are checked as they come, their headers dropped
            start_member(tf)
            member = tf.next()
            if member is None:
                break
            tf.members.clear()  # tarfile keeps every header it reads: 1M members, 500 MB
            writer.member()
            rel = safe_member_path(member.name)
            if rel is None:
                continue
            if tf.offset > MAX_SCAN_BYTES:
                raise ArchiveError(f"{archive.name} unpacks to more than "
                                   f"{MAX_SCAN_BYTES // 1024 ** 3} GB: archive refused")
            if member.isdir():
                continue  # created with the first file inside it, never on its own
            if member.isfile():
                if not writer.wanted(rel, member.size):
                    continue
                stream = tf.extractfile(member)
                if stream is not None:
                    writer.file(rel, stream)
            else:
                kind = "link" if (member.issym() or member.islnk()) else "special file"
                if len(writer.result.skipped) < 1000:
                    writer.result.skipped.append(f"{rel} ({kind}, not extracted)")


def _zip_directory_size(archive: Path) -> tuple[int, int] | None:
    """(entries, bytes) of a zip's central directory as its end record states them, read
    before zipfile loads the whole directory into memory (one object per entry)."""
    reader = getattr(zipfile, "_EndRecData", None)  # the stdlib's own end-record reader (zip64 too)
    if reader is None:
        return None
    try:
        with open(archive, "rb") as fh:
            endrec = reader(fh)
    except OSError:  # shorter than an end record: zipfile says so below
        return None
    if not endrec:
        return None
    return endrec[zipfile._ECD_ENTRIES_TOTAL], endrec[zipfile._ECD_SIZE]


_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


def _extract_zip(archive: Path, writer: _Writer) -> None:
    sizes = _zip_directory_size(archive)
    if sizes and (sizes[0] > writer.max_members or sizes[1] > MAX_ZIP_DIRECTORY):
        raise ArchiveError(f"{archive.name} lists more than {writer.max_members:,} members "
                           f"(or a {sizes[1] // 2 ** 20} MB directory): archive refused")
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            writer.member()
            rel = safe_member_path(info.filename)
            if rel is None:
                continue
            mode = info.external_attr >> 16
            if info.is_dir():
                continue
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                if len(writer.result.skipped) < 1000:
                    writer.result.skipped.append(f"{rel} (link or special file, not extracted)")
            elif info.flag_bits & 0x1 or info.compress_type not in _ZIP_METHODS:
                if len(writer.result.skipped) < 1000:  # zipfile would raise RuntimeError / NotImplementedError
                    writer.result.skipped.append(f"{rel} (encrypted or compressed with an unknown method, "
                                                 "not extracted)")
            elif writer.wanted(rel, info.file_size):
                with zf.open(info) as stream:
                    writer.file(rel, stream)
