"""URL canonical form and crawl scope.

Two spellings of one page (`HTTP://Host:80/a/./b?y=2&x=1#top`) must be one page, or the
crawl fetches it twice and the set gets a ` (2)` copy. The scope decides what is the
documentation: same host and path prefix by default, `allow` regexes replacing the
prefix rule, `deny` regexes excluding always.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from doc4llm.errors import InputError

_DEFAULT_PORTS = {"http": "80", "https": "443"}
_TRACKING = re.compile(r"^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid)$", re.IGNORECASE)

# Links to these are never documentation pages: not fetched at all.
NON_PAGE_EXTENSIONS = frozenset(
    """
    png jpg jpeg gif webp svg ico bmp tif tiff avif pdf zip gz tgz bz2 xz 7z rar tar whl
    egg exe dmg msi deb rpm apk jar war bin iso img mp3 mp4 m4a ogg wav webm mov avi mkv
    woff woff2 ttf otf eot css js mjs map json xml rss atom csv xls xlsx doc docx ppt pptx
    wasm pkl npz npy parquet
    """.split()
)


def canonical_url(url: str, base: str | None = None) -> str | None:
    """Absolute canonical form: lower-case scheme and host, no default port, no fragment,
    dot segments resolved, tracking parameters dropped, query sorted. None if not http(s)."""
    if base:
        url = urljoin(base, url)
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        return None
    netloc = host if port is None or str(port) == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    path = _decode_unreserved(parts.path) or "/"
    trailing = path.endswith("/")
    path = posixpath.normpath(path)
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    if trailing and path != "/":
        path += "/"
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if not _TRACKING.match(k)))
    return urlunsplit((scheme, netloc, path, query, ""))


_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _decode_unreserved(path: str) -> str:
    """`%2e%2E` -> `..` before dot segments are resolved (RFC 3986 6.2.2.2: an escaped
    unreserved character is that character), so `/docs/%2e%2e/admin` cannot pass the scope
    check as if it were under /docs/. Other escapes keep their meaning, in upper case."""
    def one(m: re.Match) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else "%" + m.group(1).upper()

    return _PERCENT.sub(one, path) if "%" in path else path


_SEPARATOR_ESCAPES = re.compile(r"%(?:2f|5c)", re.IGNORECASE)


def server_path(path: str) -> str:
    """The path as a lenient server resolves it: `%2F` and `%5C` (and `\\`) decoded to `/`,
    then dot segments resolved. Python's http.server, IIS and many proxies do this, so
    `/docs/..%2Fadmin` is `/admin` to them: scope and robots.txt decide on this form, not
    on the spelling that looks like it is under /docs/."""
    if "%" not in path and "\\" not in path:
        return path
    decoded = _SEPARATOR_ESCAPES.sub("/", path).replace("\\", "/")
    if decoded == path:
        return path
    trailing = decoded.endswith("/")
    resolved = "/" + posixpath.normpath(decoded).lstrip("/")
    return resolved + "/" if trailing and resolved != "/" else resolved


def extension(url: str) -> str:
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def is_markdown_url(url: str) -> bool:
    return extension(url) in ("md", "mdx", "markdown")


def html_counterpart(md_url: str) -> str:
    """The HTML page a markdown URL stands for (llms.txt convention: `page.md` is the
    markdown of `page`, `dir/index.html.md` of `dir/index.html`)."""
    parts = urlsplit(md_url)
    path = parts.path
    for suffix in (".html.md", ".md", ".mdx", ".markdown"):
        if path.endswith(suffix):
            path = path[: -len(suffix)] + (".html" if suffix == ".html.md" else "")
            break
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    elif path.endswith("/index"):
        path = path[: -len("index")]
    return urlunsplit((parts.scheme, parts.netloc, path or "/", parts.query, ""))


def same_page(a: str, b: str) -> bool:
    """Two spellings of one page: they differ only by a trailing slash, `index.html` or the
    query. Used to trust rel=canonical only that far: sites that point every page's
    canonical at their home page must not lose every page as a 'duplicate'."""
    def norm(url: str) -> tuple[str, str]:
        parts = urlsplit(url)
        path = re.sub(r"/index\.html?$", "/", parts.path).rstrip("/")
        return parts.netloc, path

    return norm(a) == norm(b)


def _compile(patterns: list[str], what: str) -> list[re.Pattern]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise InputError(f"--{what} {pattern!r} is not a valid regular expression: {exc}") from exc
    return compiled


class Scope:
    """Which URLs belong to the documentation being scraped."""

    def __init__(self, root_url: str, allow: list[str] | None = None, deny: list[str] | None = None):
        root = canonical_url(root_url)
        if root is None:
            raise InputError(f"{root_url!r} is not an http(s) URL", hint="scrape https://docs.example.com/")
        self.root = root
        parts = urlsplit(root)
        self.netloc = parts.netloc
        path = parts.path
        last = path.rsplit("/", 1)[-1]
        if "." in last:  # a file: its folder is the prefix
            path = path.rsplit("/", 1)[0] + "/"
        self.prefix = path.rstrip("/") + "/"
        self.allow = _compile(allow or [], "allow")
        self.deny = _compile(deny or [], "deny")

    def reason_excluded(self, url: str) -> str | None:
        """None when `url` (canonical) is in scope, else why not. The path is judged as
        the server will resolve it (server_path): `/docs/..%2Fadmin` is outside /docs/."""
        parts = urlsplit(url)
        if parts.netloc != self.netloc:
            return "out of scope (other host)"
        path = server_path(parts.path)
        resolved = url if path == parts.path else urlunsplit(parts._replace(path=path))
        if any(p.search(url) or p.search(resolved) for p in self.deny):
            return "denied by --deny"
        if self.allow:
            if resolved != self.root and not any(p.search(resolved) for p in self.allow):
                return "out of scope (no --allow match)"
        elif not (path + "/").startswith(self.prefix) and resolved != self.root:
            return "out of scope (outside path prefix)"
        return None

    def site_root(self) -> str:
        return f"{urlsplit(self.root).scheme}://{self.netloc}/"
