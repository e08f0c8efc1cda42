"""Download a release's archive and extract it safely.

An archive from a registry is untrusted input. Extraction refuses the whole archive when a
member is absolute or climbs out with `..` (that is an attack, not an accident), skips links
and special files (never created, so nothing written later can follow one), and stops at
caps on file count, total bytes and bytes per file, counted on the bytes really written
(a gzip bomb lies about sizes). Files are created with O_EXCL|O_NOFOLLOW.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from doc4llm.errors import ExternalError, InputError
from doc4llm.ingest.packages.http import Http
from doc4llm.ingest.packages.spec import Release

MAX_FILES = 20_000
MAX_TOTAL_BYTES = 400 * 1024 * 1024
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_SCAN_BYTES = 4 * 1024 * 1024 * 1024  # uncompressed bytes walked through (bombs)
MAX_DEPTH = 40
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
    skipped: list[str] = field(default_factory=list)  # links, special files, duplicates, too large
    not_needed: int = 0  # binaries, media, C sources...: never written


def download(http: Http, release: Release, dest_dir: Path) -> tuple[Path, str]:
    """Fetch the archive into `dest_dir`; verify the registry's hash; return (path, sha256)."""
    name = os.path.basename(release.filename) or "archive"
    path = dest_dir / name
    sha256 = http.download(release.url, path)
    want = release.hashes.get("sha256")
    if want and want.lower() != sha256:
        raise ExternalError(f"{release.filename}: sha256 {sha256[:12]}... does not match the "
                            f"registry's {want[:12]}...: not used")
    if "sha512" in release.hashes:
        digest = hashlib.sha512(path.read_bytes()).digest()
        if base64.b64encode(digest).decode() != release.hashes["sha512"]:
            raise ExternalError(f"{release.filename}: sha512 integrity does not match the registry's")
    elif "sha1" in release.hashes and hashlib.sha1(path.read_bytes()).hexdigest() != release.hashes["sha1"]:
        raise ExternalError(f"{release.filename}: sha1 does not match the registry's")
    return path, sha256


def safe_member_path(name: str) -> PurePosixPath | None:
    """The member's relative path, None for the archive's root entry; ArchiveError when
    it is absolute or climbs out."""
    raw = name.replace("\\", "/")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":") or "\x00" in raw:
        raise ArchiveError(f"archive member {name[:200]!r} has an absolute path: archive refused")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ArchiveError(f"archive member {name[:200]!r} climbs out with '..': archive refused")
    if len(parts) > MAX_DEPTH or any(len(p.encode("utf-8", "replace")) > 255 for p in parts):
        raise ArchiveError(f"archive member {name[:200]!r} is nested too deep or has too long a name")
    return PurePosixPath(*parts) if parts else None


class _Writer:
    def __init__(self, dest: Path, max_files: int, max_total: int, max_file: int) -> None:
        self.dest = dest
        self.result = Extracted(dest)
        self.max_files, self.max_total, self.max_file = max_files, max_total, max_file

    def directory(self, rel: PurePosixPath) -> None:
        (self.dest / rel).mkdir(parents=True, exist_ok=True)

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
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            self.result.skipped.append(f"{rel} (duplicate member)")
            return
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


def extract(archive: Path, dest: Path, *, max_files: int = MAX_FILES, max_total: int = MAX_TOTAL_BYTES,
            max_file: int = MAX_FILE_BYTES) -> Extracted:
    """Extract `archive` (tar, tar.gz, tgz, tar.bz2, zip, whl) into the empty folder `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    writer = _Writer(dest, max_files, max_total, max_file)
    name = archive.name.lower()
    try:
        if name.endswith((".whl", ".zip")):
            _extract_zip(archive, writer)
        else:
            _extract_tar(archive, writer)
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # disk full, permissions: not the archive's fault
        raise ArchiveError(f"{archive.name} is not a readable archive ({type(exc).__name__}: {exc})") from exc
    if writer.result.files == 0:
        raise ArchiveError(f"{archive.name} holds no files")
    entries = [p for p in dest.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        writer.result.root = entries[0]
    return writer.result


def _extract_tar(archive: Path, writer: _Writer) -> None:
    with tarfile.open(archive, "r:*") as tf:
        for member in tf:  # streamed: members are checked as they come
            rel = safe_member_path(member.name)
            if rel is None:
                continue
            if tf.offset > MAX_SCAN_BYTES:
                raise ArchiveError(f"{archive.name} unpacks to more than "
                                   f"{MAX_SCAN_BYTES // 1024 ** 3} GB: archive refused")
            if member.isdir():
                writer.directory(rel)
            elif member.isfile():
                if not writer.wanted(rel, member.size):
                    continue
                stream = tf.extractfile(member)
                if stream is not None:
                    writer.file(rel, stream)
            else:
                kind = "link" if (member.issym() or member.islnk()) else "special file"
                writer.result.skipped.append(f"{rel} ({kind}, not extracted)")


def _extract_zip(archive: Path, writer: _Writer) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            rel = safe_member_path(info.filename)
            if rel is None:
                continue
            mode = info.external_attr >> 16
            if info.is_dir():
                writer.directory(rel)
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                writer.result.skipped.append(f"{rel} (link or special file, not extracted)")
            elif writer.wanted(rel, info.file_size):
                with zf.open(info) as stream:
                    writer.file(rel, stream)
