"""Bounded HTTP GETs against package registries, with clear errors.

A registry that is down, slow or answering garbage must end in one sentence the user can
act on (exit 3), never a traceback; a 404 means the package or version does not exist
(exit 2). Bodies are read in chunks against a byte cap, so a hostile server cannot fill
memory or disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import httpx

from doc4llm import __version__
from doc4llm.errors import ExternalError
from doc4llm.ingest.packages.registry_config import display_url

USER_AGENT = f"doc4llm/{__version__} (package docs)"
MAX_JSON_BYTES = 64 * 1024 * 1024  # a big npm packument (all versions, readme) is ~30 MB
MAX_ARCHIVE_BYTES = 200 * 1024 * 1024
_RETRY_STATUS = {429, 500, 502, 503, 504}


class NotFoundOnRegistry(Exception):
    """HTTP 404/410: the caller knows whether that is a package or a version."""


class Http:
    """One httpx client (connection reuse across a sync), retries with backoff."""

    def __init__(self, *, timeout: float = 30.0, retries: int | None = None):
        # DOC4LLM_REGISTRY_RETRIES: retries for a 429/5xx or a network error (default 2)
        env = os.environ.get("DOC4LLM_REGISTRY_RETRIES", "")
        self.retries = retries if retries is not None else int(env) if env.isdigit() else 2
        self.client = httpx.Client(timeout=timeout, follow_redirects=True,
                                   headers={"User-Agent": USER_AGENT}, trust_env=True)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stream(self, url: str, headers: dict | None, sink, max_bytes: int) -> httpx.Response:
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(8.0, 0.5 * 2 ** attempt))
            try:
                with self.client.stream("GET", url, headers=headers or {}) as resp:
                    if resp.status_code in (404, 410):
                        raise NotFoundOnRegistry(url)
                    if resp.status_code in _RETRY_STATUS:
                        last = ExternalError(f"{display_url(url)} answered HTTP {resp.status_code}")
                        continue
                    if resp.status_code >= 400:
                        raise ExternalError(f"{display_url(url)} answered HTTP {resp.status_code}",
                                            hint="check the registry URL and your credentials")
                    total = 0
                    sink.reset()
                    for chunk in resp.iter_bytes(256 * 1024):
                        total += len(chunk)
                        if total > max_bytes:
                            raise ExternalError(f"{display_url(url)} is larger than "
                                                f"{max_bytes // (1024 * 1024)} MB: not downloaded")
                        sink.write(chunk)
                    return resp
            except httpx.HTTPError as exc:
                last = exc
        reason = last.message if isinstance(last, ExternalError) else f"{type(last).__name__}: {last}"
        raise ExternalError(f"cannot reach {display_url(url)} ({reason})",
                            hint="is the registry up and reachable? (pip: PIP_INDEX_URL / pip.conf; "
                                 "npm: npm_config_registry / .npmrc)")

    def get_json(self, url: str, accept: str = "application/json") -> dict:
        sink = _Memory()
        self._stream(url, {"Accept": accept}, sink, MAX_JSON_BYTES)
        try:
            data = json.loads(bytes(sink.buf))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ExternalError(f"{display_url(url)} did not answer JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise ExternalError(f"{display_url(url)} answered JSON that is not an object")
        return data

    def get_text(self, url: str, accept: str) -> tuple[str, str]:
        """(body, content type)."""
        sink = _Memory()
        resp = self._stream(url, {"Accept": accept}, sink, MAX_JSON_BYTES)
        return bytes(sink.buf).decode("utf-8", errors="replace"), resp.headers.get("content-type", "")

    def download(self, url: str, dest: Path, max_bytes: int = MAX_ARCHIVE_BYTES) -> str:
        """Stream `url` into `dest`; return its sha256 hex digest."""
        sink = _File(dest)
        try:
            self._stream(url, None, sink, max_bytes)
        finally:
            sink.close()
        return sink.sha256.hexdigest()


class _Memory:
    def __init__(self) -> None:
        self.buf = bytearray()

    def reset(self) -> None:
        self.buf = bytearray()

    def write(self, chunk: bytes) -> None:
        self.buf += chunk


class _File:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.sha256 = hashlib.sha256()

    def reset(self) -> None:  # a retry starts the file over
        self.fh.seek(0)
        self.fh.truncate()
        self.sha256 = hashlib.sha256()

    def write(self, chunk: bytes) -> None:
        self.fh.write(chunk)
        self.sha256.update(chunk)

    def close(self) -> None:
        self.fh.close()
