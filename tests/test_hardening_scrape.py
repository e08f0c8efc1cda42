"""Issue 29 items 1 and 3: robots.txt matching in linear time on a capped file, and a scope
and robots.txt that judge `..%2F` paths as the server resolves them.

The end-to-end test serves a folder with Python's own http.server, which decodes `%2F`
before it resolves `..` (as the issue's reproduction did): a page outside the scope or
disallowed by robots.txt would be fetched and saved if the checks read the raw spelling.
"""

from __future__ import annotations

import pytest
from conftest import serve_directory
from growth import cpu_per_call

import doc4llm.ingest.scrape.robots as robots_mod
from doc4llm.ingest.scrape import ScrapeOptions, scrape_site
from doc4llm.ingest.scrape.robots import MAX_ROBOTS_BYTES, parse_robots
from doc4llm.ingest.scrape.urls import Scope, canonical_url, server_path

UA = "doc4llm/0.1 (documentation indexer)"



def test_the_issues_wildcard_rule_is_matched_without_backtracking():
    """98 s before: `*` became `.*` and eight of them backtracked over 60 `a`s."""
    rules = parse_robots("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b\n", "doc4llm")
    assert rules.allowed("http://h/docs/" + "a" * 60)  # no `b`: the rule does not apply
    assert not rules.allowed("http://h/docs/" + "a" * 60 + "b")
    # growth with the URL length is linear: x8 longer costs ~x8, far from x64 (quadratic)
    small, large = ("http://h/docs/" + "a" * n for n in (2_000, 16_000))
    ratio = cpu_per_call(rules.allowed, large, min_s=0.02) / cpu_per_call(rules.allowed, small, min_s=0.02)
    assert ratio < 30, ratio


@pytest.mark.parametrize("rule, url, allowed", [
    ("/*.json$", "/data/file.json", False),
    ("/*.json$", "/data/file.json?x=1", True),
    ("/a*b*c", "/a-b-c-d", False),
    ("/a*b*c$", "/a-b-c-d", True),
    ("/a*c$", "/a-c-c", False),  # the last piece is found at the end, not leftmost
    ("/ab*ba$", "/aba", True),  # pieces may not overlap
    ("/x$", "/x", False),
    ("/x$", "/xy", True),
    ("/**", "/anything", False),
    ("/p%C3%A4ge", "/p\u00e4ge", False),  # percent-decoded on both sides
])
def test_wildcard_matching_follows_rfc9309(rule, url, allowed):
    assert parse_robots(f"User-agent: *\nDisallow: {rule}\n", UA).allowed("https://h" + url) is allowed


def test_robots_txt_is_capped_at_500_kib_and_a_check_does_not_visit_every_rule(monkeypatch):
    """200k rules made every URL check 57 ms (a 50k-link llms.txt never started)."""
    calls = []
    real = robots_mod.Rule.matches
    monkeypatch.setattr(robots_mod.Rule, "matches", lambda self, t: calls.append(1) or real(self, t))
    literal = "User-agent: *\nDisallow: /docs/private\n" + "".join(f"Disallow: /p{i}/\n" for i in range(200_000))
    rules = parse_robots(literal, UA)
    assert rules.truncated_at is not None and rules.truncated_at <= MAX_ROBOTS_BYTES
    assert 0 < len(rules.rules) < 200_000
    assert not rules.allowed("https://h/docs/private/x") and rules.allowed("https://h/docs/guide")
    assert rules.allowed("https://h/p1") and not rules.allowed("https://h/p1/x")
    assert len(calls) <= 8, "only the rules whose literal start prefixes the URL are tried"

    calls.clear()  # the same start for every rule, told apart only after the `*`
    wild = "User-agent: *\n" + "".join(f"Disallow: /*a{i}z\n" for i in range(200_000))
    rules = parse_robots(wild, UA)
    assert not rules.allowed("https://h/docs/a17z") and rules.allowed("https://h/docs/guide")
    assert len(calls) <= 8, len(calls)


def test_a_short_robots_txt_is_read_whole():
    assert parse_robots("User-agent: *\nDisallow: /x\n", UA).truncated_at is None


@pytest.mark.parametrize("url", [
    "https://x.dev/docs/..%2Fadmin",
    "https://x.dev/docs/..%2fadmin",
    "https://x.dev/docs/..%5Cadmin",
    "https://x.dev/docs/a/..%2F..%2Fadmin",
    "https://x.dev/docs/..\\admin",
])
def test_encoded_separators_cannot_leave_the_scope(url):
    scope = Scope("https://x.dev/docs/")
    assert scope.reason_excluded(canonical_url(url)) == "out of scope (outside path prefix)"


def test_encoded_separators_that_stay_inside_are_in_scope():
    scope = Scope("https://x.dev/docs/")
    assert scope.reason_excluded(canonical_url("https://x.dev/docs/a%2Fb")) is None
    assert scope.reason_excluded(canonical_url("https://x.dev/docs/x/..%2Fguide")) is None
    assert server_path("/docs/x/..%2Fprivate/s") == "/docs/private/s"
    assert server_path("/docs/a%2Fb/") == "/docs/a/b/"
    assert server_path("/docs/%2E%2E/plain") == "/docs/%2E%2E/plain"  # canonical_url resolves those


def test_encoded_separators_cannot_pass_a_robots_disallow():
    rules = parse_robots("User-agent: *\nDisallow: /docs/private\n", UA)
    assert not rules.allowed(canonical_url("https://x.dev/docs/x/..%2Fprivate/s"))
    assert not rules.allowed(canonical_url("https://x.dev/docs/x/..%5Cprivate/s"))
    assert rules.allowed(canonical_url("https://x.dev/docs/x/public"))




def _html(title: str, body: str) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body><main>"
            f"<h1>{title}</h1><p>{body}</p></main></body></html>")


def test_a_lenient_server_cannot_be_made_to_serve_pages_outside_scope_or_robots(tmp_path):
    site = tmp_path / "site"
    (site / "docs" / "private").mkdir(parents=True)
    (site / "docs" / "index.html").write_text(_html("Docs home", (
        "Read <a href='guide.html'>the guide</a>, <a href='..%2Fadmin.html'>admin</a>, "
        "<a href='x/..%2Fprivate/s.html'>private</a>, <a href='x/..%5Cprivate/s.html'>private2</a> "
        "and <a href='late.html'>late</a>. The docs home explains how the product works.")))
    (site / "docs" / "guide.html").write_text(_html("Guide", "The guide explains the whole workflow."))
    (site / "docs" / "late.html").write_text(_html("Late", "Listed after the robots.txt cap, so it is read."))
    (site / "docs" / "private" / "s.html").write_text(_html("Private", "PRIVATE-MARKER internal notes."))
    (site / "admin.html").write_text(_html("Admin", "ADMIN-MARKER the admin console."))
    padding = "# padding line to push the robots.txt past its size cap\n" * (MAX_ROBOTS_BYTES // 40)
    (site / "robots.txt").write_text(f"User-agent: *\nDisallow: /docs/private\n{padding}Disallow: /docs/late\n")

    with serve_directory(site) as base:
        docs = tmp_path / "md_docs"
        options = ScrapeOptions(concurrency=2, delay=0.0, timeout=5, retries=0)
        summary = scrape_site(f"{base}/docs/", docs, "Lenient@1", options)

    saved = "\n".join(p.read_text(encoding="utf-8") for p in docs.glob("Lenient@1/*/docContent.md"))
    assert "The guide explains" in saved and "Listed after the robots.txt cap" in saved
    assert "PRIVATE-MARKER" not in saved and "ADMIN-MARKER" not in saved
    skipped = {o.url: o.reason for o in summary.outcomes if o.status == "skipped"}
    assert skipped[f"{base}/docs/..%2Fadmin.html"] == "out of scope (outside path prefix)"
    assert skipped[f"{base}/docs/x/..%2Fprivate/s.html"] == "disallowed by robots.txt"
    assert skipped[f"{base}/docs/x/..%5Cprivate/s.html"] == "disallowed by robots.txt"
    assert 0 < summary.discovery["robots_txt_truncated_at"] <= MAX_ROBOTS_BYTES
