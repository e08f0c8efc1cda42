"""Loopback stand-ins for PyPI and the npm registry, serving fixture packages built in the
test from small files. Used by tests/test_packages_*.py.

One ThreadingHTTPServer on 127.0.0.1:0 answers:
  /pypi/<name>/json       the PyPI JSON API shape (info + releases with sha256 digests)
  /simple/<name>/         a PEP 503 HTML page (`<a href="...#sha256=...">file</a>`)
  /npm/<name>             an npm packument (versions, dist-tags, dist.tarball/integrity)
  /files/<filename>       the archives
`json_api=False` makes /pypi/ answer 404, as a plain simple index does. Every request
path is recorded in `requests`.

Attack knobs (issue 33): `drip` (seconds between bytes of every answer whose path starts
with a given prefix), `no_hash` (filenames served without any digest), `tarball_url`
(filename -> the URL the npm packument advertises), `raw` (path -> body served as is).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


def tar_gz(members: dict[str, bytes | str], *, links: dict[str, str] | None = None) -> bytes:
    """A .tar.gz of `members` (path -> content) plus symlink members (path -> target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for path, data in members.items():
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(path)
            info.size = len(raw)
            info.mtime = 1_700_000_000
            tf.addfile(info, io.BytesIO(raw))
        for path, target in (links or {}).items():
            info = tarfile.TarInfo(path)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tf.addfile(info)
    return buf.getvalue()


def sdist(name: str, version: str, files: dict[str, str], *, readme: str = "",
          readme_type: str = "text/markdown") -> bytes:
    top = f"{name}-{version}"
    pkg_info = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: demo\n"
                f"Description-Content-Type: {readme_type}\n\n{readme}")
    members = {f"{top}/PKG-INFO": pkg_info}
    members.update({f"{top}/{p}": t for p, t in files.items()})
    return tar_gz(members)


def npm_tgz(name: str, version: str, files: dict[str, str], types: str | None = "index.d.ts") -> bytes:
    pkg = {"name": name, "version": version, "main": "index.js"}
    if types:
        pkg["types"] = types
    members = {"package/package.json": json.dumps(pkg)}
    members.update({f"package/{p}": t for p, t in files.items()})
    return tar_gz(members)


class FakeRegistries:
    def __init__(self, *, json_api: bool = True) -> None:
        self.json_api = json_api
        self.pypi: dict[str, dict[str, tuple[str, bytes]]] = {}  # name -> version -> (filename, data)
        self.npm: dict[str, dict[str, tuple[str, bytes]]] = {}
        self.npm_tags: dict[str, dict[str, str]] = {}
        self.files: dict[str, bytes] = {}
        self.bad_hash: set[str] = set()  # filenames whose advertised hash is wrong
        self.requests: list[str] = []
        self.fail_with: int | None = None  # answer every request with this status
        self.drip: dict[str, float] = {}  # path prefix -> seconds between bytes
        self.no_hash: set[str] = set()  # filenames served without a digest
        self.tarball_url: dict[str, str] = {}  # npm filename -> advertised tarball URL
        self.raw: dict[str, bytes] = {}  # request path -> body (application/json)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                owner.requests.append(self.path)
                status, ctype, body = owner.route(unquote(self.path))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    pause = next((v for k, v in owner.drip.items() if self.path.startswith(k)), 0)
                    if not pause:
                        self.wfile.write(body)
                    for i in range(len(body) if pause else 0):  # a registry that drips
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(pause)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    # -- publishing ----------------------------------------------------------------------
    def add_pypi(self, name: str, version: str, data: bytes, filename: str | None = None) -> None:
        filename = filename or f"{name}-{version}.tar.gz"
        self.pypi.setdefault(name, {})[version] = (filename, data)
        self.files[filename] = data

    def add_npm(self, name: str, version: str, data: bytes, tag_latest: bool = True) -> None:
        filename = f"{name.replace('/', '-').lstrip('@')}-{version}.tgz"
        self.npm.setdefault(name, {})[version] = (filename, data)
        self.files[filename] = data
        if tag_latest:
            self.npm_tags.setdefault(name, {})["latest"] = version

    @property
    def index_url(self) -> str:
        return f"{self.base}/simple"

    @property
    def npm_url(self) -> str:
        return f"{self.base}/npm/"

    # -- answering -----------------------------------------------------------------------
    def _sha256(self, filename: str, data: bytes) -> str:
        return "0" * 64 if filename in self.bad_hash else hashlib.sha256(data).hexdigest()

    def route(self, path: str) -> tuple[int, str, bytes]:
        if self.fail_with:
            return self.fail_with, "text/plain", b"down"
        if path in self.raw:
            return 200, "application/json", self.raw[path]
        parts = [p for p in path.split("?")[0].split("/") if p]
        if len(parts) == 3 and parts[0] == "pypi" and parts[2] == "json":
            if not self.json_api or parts[1] not in self.pypi:
                return 404, "application/json", b'{"message": "Not Found"}'
            releases = {v: [{"filename": fn, "url": f"{self.base}/files/{fn}", "packagetype": "sdist",
                             "digests": {} if fn in self.no_hash else {"sha256": self._sha256(fn, data)},
                             "yanked": False}]
                        for v, (fn, data) in self.pypi[parts[1]].items()}
            latest = max(self.pypi[parts[1]])
            body = {"info": {"name": parts[1], "version": latest}, "releases": releases}
            return 200, "application/json", json.dumps(body).encode()
        if len(parts) == 2 and parts[0] == "simple":
            if parts[1] not in self.pypi:
                return 404, "text/html", b"not found"
            links = "".join(f'<a href="{self.base}/files/{fn}'
                            f'{"" if fn in self.no_hash else "#sha256=" + self._sha256(fn, data)}">{fn}</a><br>\n'
                            for fn, data in self.pypi[parts[1]].values())
            return 200, "text/html", f"<html><body>{links}</body></html>".encode()
        if parts and parts[0] == "npm":
            name = "/".join(parts[1:])
            if name not in self.npm:
                return 404, "application/json", b'{"error": "Not found"}'
            versions = {}
            for v, (fn, data) in self.npm[name].items():
                integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
                if fn in self.bad_hash:
                    integrity = "sha512-" + base64.b64encode(b"x" * 64).decode()
                dist = {"tarball": self.tarball_url.get(fn, f"{self.base}/files/{fn}"), "integrity": integrity}
                if fn in self.no_hash:
                    del dist["integrity"]
                versions[v] = {"name": name, "version": v, "dist": dist}
            body = {"name": name, "dist-tags": self.npm_tags.get(name, {}), "versions": versions}
            return 200, "application/json", json.dumps(body).encode()
        if len(parts) == 2 and parts[0] == "files" and parts[1] in self.files:
            return 200, "application/octet-stream", self.files[parts[1]]
        return 404, "text/plain", b"not found"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_closed_port() -> str:
    """A loopback URL nobody listens on (a registry that is down)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    time.sleep(0.01)
    return f"http://127.0.0.1:{port}"
