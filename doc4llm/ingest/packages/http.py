"""Bounded HTTP GETs against package registries, with clear errors.

A registry that is down, slow or answering garbage must end in one sentence the user can
act on (exit 3), never a traceback; a 404 means the package or version does not exist
(exit 2). Bodies are read in chunks against a byte cap, so a hostile server cannot fill
memory or disk.

Time is bounded per download, not per read: httpx's read timeout restarts with every chunk,
so a server dripping one byte every 10 s kept one `add` busy for hours. Each request runs in
a worker thread while the caller watches one deadline: `DOWNLOAD_GRACE` seconds, plus one
second per `MIN_RATE` bytes received (a big archive on a slow but honest link goes on; a drip
does not), at most `MAX_DOWNLOAD_SECONDS`, and never past the budget of the whole `add` or
`sync` (`Http(budget=...)`). The wait covers connecting, the headers and the body alike.
"""

from __future__ import annotations

import hashlib
import os
import threading
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
DOWNLOAD_GRACE = 20.0  # seconds any download may take (DOC4LLM_DOWNLOAD_TIMEOUT overrides)
MIN_RATE = 100 * 1024  # then it must average this many bytes a second
MAX_DOWNLOAD_SECONDS = 600.0


class DeadlineError(ExternalError):
    """A download or the whole add/sync ran out of time (exit 3)."""


class _Cancelled(Exception):
    pass


class _Transfer:
    """One attempt's shared state between the worker thread and the watching caller."""

    def __init__(self, sink) -> None:
        self.sink = sink
        self.received = 0
        self.cancelled = False
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.result: httpx.Response | None = None
        self.error: BaseException | None = None

    def reset(self) -> None:
        with self.lock:
            if self.cancelled:
                raise _Cancelled
            self.received = 0
            self.sink.reset()

    def write(self, chunk: bytes) -> None:
        with self.lock:  # once cancelled, an abandoned worker never touches the sink again
            if self.cancelled:
                raise _Cancelled
            self.received += len(chunk)
            self.sink.write(chunk)

    def cancel(self) -> None:
        with self.lock:
            self.cancelled = True


def _grace() -> float:
    raw = os.environ.get("DOC4LLM_DOWNLOAD_TIMEOUT", "")
    try:
        return max(1.0, float(raw)) if raw else DOWNLOAD_GRACE
    except ValueError:
        return DOWNLOAD_GRACE


class NotFoundOnRegistry(Exception):
    """HTTP 404/410: the caller knows whether that is a package or a version."""


class Http:
    """One httpx client (connection reuse across a sync), retries with backoff."""

    def __init__(self, *, timeout: float = 30.0, retries: int | None = None, budget: float | None = None,
                 what: str = "this run"):
        """`budget`: seconds for every request of this client together (the whole `add` or
        `sync`, named `what` in the error), None for no total."""
        # DOC4LLM_REGISTRY_RETRIES: retries for a 429/5xx or a network error (default 2)
        env = os.environ.get("DOC4LLM_REGISTRY_RETRIES", "")
        self.retries = retries if retries is not None else int(env) if env.isdigit() else 2
        self.client = httpx.Client(timeout=timeout, follow_redirects=True,
                                   headers={"User-Agent": USER_AGENT}, trust_env=True)
        self.grace = _grace()
        self.budget = budget
        self.what = what
        self.deadline = time.monotonic() + budget if budget else None

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check_budget(self) -> None:
        """DeadlineError when the whole add/sync has used its time budget."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise DeadlineError(f"the time budget of {self.budget:.0f} s for {self.what} ran out",
                                hint="raise it with --timeout SECONDS")

    def _sleep(self, seconds: float) -> None:
        if self.deadline is not None:
            seconds = min(seconds, max(0.0, self.deadline - time.monotonic()))
        time.sleep(seconds)
        self.check_budget()

    def _stream(self, url: str, headers: dict | None, sink, max_bytes: int) -> httpx.Response:
        last: Exception | None = None
        self.check_budget()
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(min(8.0, 0.5 * 2 ** attempt))
            try:
                resp = self._watched(url, headers, sink, max_bytes)
            except httpx.HTTPError as exc:
                last = exc
                continue
            if resp.status_code in _RETRY_STATUS:
                last = ExternalError(f"{display_url(url)} answered HTTP {resp.status_code}")
                continue
            return resp
        reason = last.message if isinstance(last, ExternalError) else f"{type(last).__name__}: {last}"
        raise ExternalError(f"cannot reach {display_url(url)} ({reason})",
                            hint="is the registry up and reachable? (pip: PIP_INDEX_URL / pip.conf; "
                                 "npm: npm_config_registry / .npmrc)")

    def _watched(self, url: str, headers: dict | None, sink, max_bytes: int) -> httpx.Response:
        """One attempt in a worker thread, watched against the download's deadline."""
        transfer = _Transfer(sink)

        def work() -> None:
            try:
                transfer.result = self._attempt(url, headers, transfer, max_bytes)
            except BaseException as exc:  # noqa: BLE001 - handed to the watching thread
                transfer.error = exc
            finally:
                transfer.done.set()

        started = time.monotonic()
        threading.Thread(target=work, name="doc4llm-download", daemon=True).start()
        while True:
            limit = min(started + MAX_DOWNLOAD_SECONDS, started + self.grace + transfer.received / MIN_RATE)
            if self.deadline is not None:
                limit = min(limit, self.deadline)
            now = time.monotonic()
            if transfer.done.wait(timeout=max(0.0, min(1.0, limit - now))):
                break
            if time.monotonic() >= limit:
                transfer.cancel()  # the worker stops at its next chunk; nothing waits for it
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    self.check_budget()
                raise DeadlineError(f"{display_url(url)} took more than {time.monotonic() - started:.0f} s "
                                    f"({transfer.received:,} bytes received): not downloaded",
                                    hint="a registry this slow is stalling; DOC4LLM_DOWNLOAD_TIMEOUT "
                                         "gives every download more seconds")
        if transfer.error is not None:
            raise transfer.error
        assert transfer.result is not None
        return transfer.result

    def _attempt(self, url: str, headers: dict | None, transfer: _Transfer, max_bytes: int) -> httpx.Response:
        with self.client.stream("GET", url, headers=headers or {}) as resp:
            if resp.status_code in (404, 410):
                raise NotFoundOnRegistry(url)
            if resp.status_code in _RETRY_STATUS:
                return resp
            if resp.status_code >= 400:
                raise ExternalError(f"{display_url(url)} answered HTTP {resp.status_code}",
                                    hint="check the registry URL and your credentials")
            total = 0
            transfer.reset()
            for chunk in resp.iter_bytes():  # as the bytes arrive: the deadline sees every one
                total += len(chunk)
                if total > max_bytes:
                    raise ExternalError(f"{display_url(url)} is larger than "
                                        f"{max_bytes // (1024 * 1024)} MB: not downloaded")
                transfer.write(chunk)
            return resp

    def get_json(self, url: str, accept: str = "application/json") -> dict:
        from doc4llm.corpus.safe_data import DataError, loads_json

        sink = _Memory()
        self._stream(url, {"Accept": accept}, sink, MAX_JSON_BYTES)
        try:
            return loads_json(bytes(sink.buf), display_url(url))
        except DataError as exc:  # a registry answering garbage (or 200,000 `[`): an external failure
            raise ExternalError(exc.message) from None

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
