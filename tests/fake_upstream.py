"""Loopback stand-ins for a forge (GitHub-style tag archives) and a docs site.

`FakeWeb` answers GETs from a dict of path -> (status, content type, body) on 127.0.0.1
and records every request path. Tests point doc4llm at it the way a user points it at a
mirror: `DOC4LLM_FORGE_URLS=github.com=<base>` and `DOC4LLM_DOCS_SITE_URLS=<host>=<base>`,
so the package's metadata keeps naming github.com and its real docs host.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


class FakeWeb:
    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, str, bytes]] = {}
        self.requests: list[str] = []
        self.drip: dict[str, float] = {}  # path -> seconds between single bytes (a slow server)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                path = unquote(self.path.split("?", 1)[0])
                owner.requests.append(path)
                status, ctype, body = owner.routes.get(path, (404, "text/plain", b"not found"))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    if 300 <= status < 400:  # a redirect: the body is where to
                        self.send_header("Location", body.decode())
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if path in owner.drip:  # bounded: the body's bytes, one at a time
                        for i in range(len(body)):
                            self.wfile.write(body[i:i + 1])
                            self.wfile.flush()
                            time.sleep(owner.drip[path])
                    else:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def add(self, path: str, body: bytes | str, ctype: str = "text/html; charset=utf-8", status: int = 200) -> None:
        self.routes[path] = (status, ctype, body.encode() if isinstance(body, str) else body)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
