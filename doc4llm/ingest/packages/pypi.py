"""PyPI and PEP 503/691 indexes: a version and the archive to build its docs from.

The JSON API (`<prefix>/pypi/<name>/json`, PyPI and most mirrors) is asked first; an index
without it is read as a simple index (PEP 691 JSON, else PEP 503 HTML). The archive is an
sdist when there is one (it carries the docs folder and the changelog), else a pure wheel.
Nothing is built or installed: no `pip download`, whose sdist path runs the build backend.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from doc4llm.errors import ExternalError, InputError
from doc4llm.ingest.packages.http import Http, NotFoundOnRegistry
from doc4llm.ingest.packages.integrity import Pin
from doc4llm.ingest.packages.registry_config import display_url, pip_index_url, pypi_json_base
from doc4llm.ingest.packages.spec import PackageRef, Release, normalize_pypi

SIMPLE_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


def resolve(http: Http, ref: PackageRef, index_url: str | None = None, pin: Pin | None = None) -> Release:
    """The release `ref` asks for; with a lockfile's `pin`, a file the lockfile lists is
    preferred (so its hash can be checked)."""
    index_url = index_url or pip_index_url()
    name = normalize_pypi(ref.name)
    files = _files_from_json_api(http, name, index_url)
    if files is None:
        files = _files_from_simple(http, name, index_url)
    if not files:
        raise InputError(f"PyPI package {ref.name!r} has no downloadable files on {display_url(index_url)}")
    by_version: dict[Version, list[dict]] = {}
    for f in files:
        if f.get("yanked") and ref.requested is None:
            continue
        v = f.get("version")
        if v is not None:
            by_version.setdefault(v, []).append(f)
    version = _choose(ref, sorted(by_version))
    chosen = _pick_file(by_version[version], pin)
    if chosen is None:
        raise InputError(f"{name} {version} has no sdist or wheel to read",
                         hint="only .tar.gz/.zip sdists and .whl wheels are read")
    return Release("pypi", name, str(version), chosen["url"], chosen["filename"],
                   {"sha256": chosen["sha256"]} if chosen.get("sha256") else {},
                   display_url(index_url))


def _choose(ref: PackageRef, versions: list[Version]) -> Version:
    if not versions:
        raise InputError(f"PyPI package {ref.name!r} has no release")
    req = ref.requested
    if req is None:
        stable = [v for v in versions if not v.is_prerelease]
        return (stable or versions)[-1]
    try:
        exact = Version(req)
    except InvalidVersion:
        exact = None
    if exact is not None:
        if exact in versions:
            return exact
        raise InputError(f"{ref.name} has no version {req} on the index",
                         candidates=[str(v) for v in versions[-10:]])
    try:
        spec = SpecifierSet(req)
    except InvalidSpecifier as exc:
        raise InputError(f"cannot read the version specifier {req!r} for {ref.name}") from exc
    matching = list(spec.filter(versions))
    if not matching:
        raise InputError(f"no version of {ref.name} matches {req}", candidates=[str(v) for v in versions[-10:]])
    return matching[-1]


def _pick_file(files: list[dict], pin: Pin | None = None) -> dict | None:
    def rank(f: dict) -> tuple:
        fn = f["filename"].lower()
        if fn.endswith((".tar.gz", ".zip")) and f["kind"] == "sdist":
            return (0, fn)
        if fn.endswith("-none-any.whl"):
            return (1, fn)
        return (2, fn)

    usable = [f for f in files if f["kind"] in ("sdist", "wheel")]
    if pin is not None and pin.hashes:
        named = pin.named_files()
        hashes = {h for _, a, h in pin.hashes if a == "sha256"}
        pinned = [f for f in usable if f["filename"] in named or (not named and (f.get("sha256") or "").lower() in hashes)]
        usable = pinned or usable  # none listed: the check after download says so
    return min(usable, key=rank) if usable else None


def _describe(filename: str, name: str) -> tuple[str, Version | None]:
    try:
        if filename.endswith(".whl"):
            return "wheel", parse_wheel_filename(filename)[1]
        if filename.endswith((".tar.gz", ".zip")):
            return "sdist", parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        pass
    return "other", None


def _files_from_json_api(http: Http, name: str, index_url: str) -> list[dict] | None:
    base = pypi_json_base(index_url)
    if base is None:
        return None
    try:
        data = http.get_json(f"{base}/{name}/json")
    except NotFoundOnRegistry:
        # the JSON API answers 404 for an unknown project: let the simple index confirm it
        return None
    files = []
    releases = data.get("releases")
    if not isinstance(releases, dict):
        return None
    for ver, items in releases.items():
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("url"), str) or \
                    not isinstance(item.get("filename"), str) or not item["url"] or not item["filename"]:
                continue
            kind, _ = _describe(item["filename"], name)
            try:
                version = Version(ver)
            except InvalidVersion:
                continue
            files.append({"filename": item["filename"], "url": urljoin(base + "/", item["url"]),
                          "sha256": _sha256_of(item.get("digests")), "kind": kind,
                          "version": version, "yanked": bool(item.get("yanked"))})
    return files


def _files_from_simple(http: Http, name: str, index_url: str) -> list[dict]:
    page = index_url.rstrip("/") + f"/{name}/"
    try:
        body, ctype = http.get_text(page, SIMPLE_ACCEPT)
    except NotFoundOnRegistry:
        raise InputError(f"no PyPI package named {name!r} on {display_url(index_url)}",
                         hint="check the spelling (pypi:NAME[==VERSION])") from None
    if "json" in ctype:
        from doc4llm.corpus.safe_data import DataError, loads_json

        try:
            raw = loads_json(body, display_url(page)).get("files") or []
        except DataError as exc:
            raise ExternalError(exc.message) from None
        if not isinstance(raw, list):
            raw = []
        entries = [(f["url"], f["filename"], _sha256_of(f.get("hashes")), bool(f.get("yanked")))
                   for f in raw if isinstance(f, dict) and isinstance(f.get("url"), str)
                   and isinstance(f.get("filename"), str)]
    else:
        parser = _Anchors()
        parser.feed(body)
        entries = parser.entries
    files = []
    for href, filename, sha, yanked in entries:
        if not href or not filename:
            continue
        url = urljoin(page, href)
        frag = urlsplit(url).fragment
        if not sha and frag.startswith("sha256="):
            sha = frag[len("sha256="):]
        kind, version = _describe(filename, name)
        if version is None:
            continue
        files.append({"filename": filename, "url": url.split("#", 1)[0], "sha256": sha, "kind": kind,
                      "version": version, "yanked": yanked})
    return files


def _sha256_of(digests: object) -> str | None:
    value = digests.get("sha256") if isinstance(digests, dict) else None
    return value if isinstance(value, str) else None


class _Anchors(HTMLParser):
    """`<a href=...>filename</a>` of a PEP 503 page (the HTML parser is linear-time)."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[tuple[str, str, str | None, bool]] = []
        self._href: str | None = None
        self._yanked = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "a":
            d = dict(attrs)
            self._href, self._yanked, self._text = d.get("href") or "", "data-yanked" in d, []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.entries.append((self._href, "".join(self._text).strip(), None, self._yanked))
            self._href = None
