"""The search result contract (DESIGN.md), the text output, and bad input on real files."""

from __future__ import annotations

import json
import re
import shlex
import sqlite3

import pytest
from conftest import run_cli
from test_search_helpers import MDMEM_SET, NO_EMBED, lines_of, make_mdmem, search_json

from doc4llm.errors import InputError, NotFoundError
from doc4llm.index.service import build_index
from doc4llm.search.engine import Searcher

TOP_KEYS = {"query": str, "query_type": str, "strategy": str, "confidence": int, "abstained": bool,
            "results": list, "timing_ms": dict}
RESULT_KEYS = {"rank": int, "doc_set": str, "page": str, "heading_path": list, "source": str,
               "toc_path": str, "content_path": str, "lines": list, "tokens": int, "score": float,
               "relevance": str, "found_by": list, "snippet": str}
QUERY_TYPES = {"howto", "error", "concept", "code_lookup", "api_reference", "general"}


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return make_mdmem(tmp_path_factory.mktemp("contract") / "docs")


@pytest.fixture(scope="module")
def searcher(docs):
    s = Searcher(docs, embedder="none", quiet=True)
    yield s
    s.close()


def check_contract(res: dict, k: int) -> None:
    for key, typ in TOP_KEYS.items():
        assert isinstance(res[key], typ), key
    assert "guidance" in res and (res["guidance"] is None or isinstance(res["guidance"], dict))
    assert res["query_type"] in QUERY_TYPES
    assert 0 <= res["confidence"] <= 100
    assert len(res["results"]) <= k
    for i, r in enumerate(res["results"], 1):
        for key, typ in RESULT_KEYS.items():
            assert isinstance(r[key], typ), (key, r[key])
        assert "url" in r and (r["url"] is None or isinstance(r["url"], str))
        assert r["rank"] == i
        assert r["relevance"] in {"high", "medium", "low"}
        assert r["found_by"] and all(isinstance(f, str) for f in r["found_by"])
        a, b = r["lines"]
        assert 1 <= a <= b
        assert r["toc_path"].endswith(f"{r['doc_set']}/{r['page']}/docTOC.md")
        assert r["content_path"].endswith(f"{r['doc_set']}/{r['page']}/docContent.md")
        assert r["heading_path"] and all(isinstance(h, str) for h in r["heading_path"])


@pytest.mark.parametrize("query", ["how do I undo a bad deploy", "HELIOS_WAL_SEGMENT_MB",
                                   "HELIOS_REPLICATION_FACTOR", "what is backpressure"])
def test_in_process_result_has_every_contract_key(searcher, query):
    res = searcher.search(query, k=4)
    check_contract(res, 4)
    if res["abstained"]:
        assert isinstance(res["guidance"], dict)


def test_cli_json_matches_contract_and_lines_hold_the_match(docs):
    res = search_json(docs, "HELIOS_WAL_SEGMENT_MB", "-k", "3")
    check_contract(res, 3)
    top = res["results"][0]
    assert top["heading_path"] == ["Helios Configuration Reference", "Environment Variables", "Storage"]
    assert top["source"].endswith("configuration.md")
    assert any("HELIOS_WAL_SEGMENT_MB" in ln for ln in lines_of(top))
    assert "HELIOS_WAL_SEGMENT_MB" in top["snippet"]


def test_k_is_respected(searcher):
    for k in (1, 2, 7):
        assert len(searcher.search("ingest pipeline stages", k=k)["results"]) <= k
    assert len(searcher.search("ingest pipeline stages", k=7)["results"]) > 2


def test_text_output_is_compact_within_budget_and_read_commands_work(docs, tmp_path):
    for budget in (150, 600):
        proc = run_cli("search", "--docs-dir", docs, "--max-tokens", budget, "rolling back a deployment",
                       env=NO_EMBED)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.strip()
        assert len(out) / 4 <= budget
        assert not out.startswith("{")
    # each result: `N. SOURCE:A-B ~Tt  heading path`, then its best lines `   LINE: text`
    heads = re.findall(r"^\d+\. (\S+):(\d+)-(\d+) ~\d+t  (.+)$", out, re.M)
    assert len(heads) >= 2
    assert heads[0][3].endswith("Rolling Back")
    best = re.findall(r"^   (\d+): \S", out, re.M)
    assert best and all(int(heads[0][1]) <= int(n) <= int(heads[0][2]) for n in best[:1])
    reads = re.findall(r"^read: (doc4llm read .+ --lines (\d+):(\d+)(?: --docs-dir .+)?)$", out, re.M)
    conf = int(re.match(r"confidence (\d+)/100", out).group(1))
    assert len(reads) == (conf < 60)  # one ready command, for result 1, while it may not answer
    cmd, ra, rb = reads[0] if reads else (
        f"doc4llm read {shlex.quote(heads[0][0])} --lines {heads[0][1]}:{heads[0][2]} --docs-dir {docs}",
        heads[0][1], heads[0][2])
    assert (heads[0][1], heads[0][2]) == (ra, rb)
    read = run_cli(*shlex.split(cmd)[1:], env=NO_EMBED, cwd=tmp_path)  # exactly as printed
    assert read.returncode == 0, read.stderr
    assert "# " + heads[0][3].split(" > ")[-1] in read.stdout


def test_set_glob_unknown_set_and_empty_docs_dir(docs, tmp_path):
    res = search_json(docs, "ENOSPC", "--set", "mdm*")
    assert res["results"] and {r["doc_set"] for r in res["results"]} == {MDMEM_SET}
    proc = run_cli("search", "--docs-dir", docs, "--set", "nope@1", "ENOSPC", env=NO_EMBED)
    assert proc.returncode == 1
    assert "nope@1" in proc.stderr and MDMEM_SET in proc.stderr and "Traceback" not in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("search", "--docs-dir", empty, "ENOSPC", env=NO_EMBED)
    assert proc.returncode == 1
    assert "no doc sets" in proc.stderr and "doc4llm import" in proc.stderr
    assert not (empty / ".doc4llm").exists() or not any((empty / ".doc4llm").iterdir())


def test_unknown_set_in_process_lists_sets(searcher):
    with pytest.raises(NotFoundError) as exc:
        searcher.search("ENOSPC", sets=["nope@1"])
    assert MDMEM_SET in (exc.value.candidates or [])


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_query_exits_2(docs, searcher, query):
    with pytest.raises(InputError):
        searcher.search(query)
    proc = run_cli("search", "--docs-dir", docs, "--", query, env=NO_EMBED)
    assert proc.returncode == 2
    assert "empty" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_k_and_strategy_are_input_errors(searcher):
    with pytest.raises(InputError):
        searcher.search("deploy", k=0)
    with pytest.raises(InputError):
        searcher.search("deploy", strategy="L9")


def test_huge_query_is_truncated_not_fatal(docs):
    query = "helios wal segment size " * 450  # ~11 kB
    proc = run_cli("search", "--docs-dir", docs, "--json", "-k", "2", query, env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert len(res["query"]) <= 1000 < len(query)
    assert "using the first" in proc.stderr
    check_contract(res, 2)


WEIRD = ["foo(", "a|b", '"x"', "*", "[", "\\", "\\\\d+", "AND OR NOT NEAR", "NEAR(a b)", "-", ":", "a:b",
         "title:deploy", "^start", "'", "x\" OR \"y", "(((", "{col}: x", "$(rm -rf /)", "--", "C++ & c#"]


@pytest.mark.parametrize("strategy", ["auto", "cascade", "L1", "L2", "L3.1", "L3.2", "bm25"])
def test_metacharacters_never_raise_in_process(searcher, strategy):
    for q in WEIRD:
        res = searcher.search(q, k=3, strategy=strategy)
        check_contract(res, 3)


def test_metacharacters_through_the_cli(docs):
    for q in ["foo(", '"x"', "AND OR NOT NEAR", "-"]:
        res = search_json(docs, q, "-k", "2")
        assert res["query"] == q


def test_index_of_another_version_is_rebuilt_with_a_message(tmp_path):
    docs = make_mdmem(tmp_path / "docs")
    build_index(docs, embedder="none")
    db = docs / ".doc4llm" / "index.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value='0-old' WHERE key='format_version'")
    conn.commit()
    conn.close()
    proc = run_cli("search", "--docs-dir", docs, "--json", "ENOSPC", env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    assert "another doc4llm version" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["results"][0]["heading_path"][-1] == "Failure Modes"
    again = run_cli("search", "--docs-dir", docs, "ENOSPC", env=NO_EMBED)
    assert "rebuilding" not in again.stderr


@pytest.mark.parametrize("garbage", [b"garbage" * 1000, b"SQLite format 3\x00" + b"\xff" * 5000, b""],
                         ids=["text", "bad-header", "empty"])
def test_corrupt_index_is_rebuilt_with_a_message(tmp_path, garbage):
    docs = make_mdmem(tmp_path / "docs")
    build_index(docs, embedder="none")
    idx = docs / ".doc4llm"
    for suffix in ("-wal", "-shm"):
        (idx / f"index.sqlite{suffix}").unlink(missing_ok=True)
    (idx / "index.sqlite").write_bytes(garbage)
    proc = run_cli("search", "--docs-dir", docs, "--json", "ENOSPC", env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["results"][0]["heading_path"][-1] == "Failure Modes"
    if garbage:
        assert "rebuilding" in proc.stderr
    sets = run_cli("sets", "--docs-dir", docs, "--json", env=NO_EMBED)
    assert sets.returncode == 0 and "sections" in json.loads(sets.stdout)["sets"][0]["index"]


def test_cli_options_type_explain_no_retry_and_bad_k(docs):
    res = search_json(docs, "what is backpressure", "--type", "error", "--explain", "--no-retry", "-k", "2")
    assert res["query_type"] == "error" and "retried" not in res  # --no-retry: accepted, no effect
    assert all(isinstance(r["explain"], dict) and r["explain"] for r in res["results"])
    text = run_cli("search", "--docs-dir", docs, "--explain", "what is backpressure", env=NO_EMBED)
    assert text.returncode == 0 and "   score: " in text.stdout
    for k in ("0", "101"):
        proc = run_cli("search", "--docs-dir", docs, "-k", k, "deploy", env=NO_EMBED)
        assert proc.returncode == 2 and "-k" in proc.stderr and "Traceback" not in proc.stderr
