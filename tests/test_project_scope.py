"""Project scope, versions and first use (issue 36 items 6-7), with real CLI subprocesses:
packages synced from loopback registries beside an imported set, searched from inside
and outside the synced projects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from fake_registries import FakeRegistries, sdist
from test_packages_add import env_for

from doc4llm.search.versions import mentions, narrow

# the same guide in every version, so only scope and version rules can tell them apart
GUIDE = ("# Validators\n\n## Validate two fields together\n\nA root validator sees every field of the model "
         "at once, so two fields can be compared together: raise an error when they disagree.\n")


def lib_pkg(name: str, version: str) -> bytes:
    mod = name.replace("-", "_")
    return sdist(name, version, {f"{mod}/__init__.py": f'def only_{version.replace(".", "_")}() -> None:\n'
                                                      f'    """Present in {version}."""\n',
                                 "docs/validators.md": GUIDE},
                 readme=f"# {name}\n\n{name} version {version}.\n")


@pytest.fixture
def reg():
    r = FakeRegistries()
    for v in ("1.10.2", "2.7.0"):
        r.add_pypi("vallib", v, lib_pkg("vallib", v))
    r.add_pypi("other", "3.0", lib_pkg("other", "3.0"))
    yield r
    r.close()


@pytest.fixture
def world(reg, tmp_path):
    """Project `old` pins vallib 1.10.2, project `new` pins vallib 2.7.0 and other 3.0, and
    the team's own notes (a folder added: an import) sit in the same docs dir."""
    docs, env = tmp_path / "md", env_for(reg, tmp_path) | {"DOC4LLM_EMBEDDER": "none"}
    for name, pins in (("old", "vallib==1.10.2\n"), ("new", "vallib==2.7.0\nother==3.0\n")):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "requirements.txt").write_text(pins)
        r = run_cli("sync", tmp_path / name, "--docs-dir", docs, "--json", env=env)
        assert r.returncode == 0, r.stderr + r.stdout
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "runbook.md").write_text("# Runbook\n\n## Validate two fields together in our forms\n\n"
                                      "Our forms compare two fields together before saving.\n")
    assert run_cli("add", notes, "--set", "team_notes@1", "--docs-dir", docs, env=env).returncode == 0
    return tmp_path, docs, env


def search(docs: Path, query: str, env: dict, *extra: str, cwd: Path | None = None) -> tuple[dict, str]:
    r = run_cli("search", query, "--docs-dir", docs, "--json", "-k", "6", *extra, cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), r.stderr


def test_sync_records_which_set_serves_each_dependency(world):
    tmp, docs, _ = world
    from doc4llm.corpus.projects import find_project

    project = find_project(docs, tmp / "new" / "src")  # a subfolder finds its project
    assert project is not None and project.path == (tmp / "new").resolve()
    assert project.sets == {"pypi:other": "other@3.0", "pypi:vallib": "vallib@2.7.0"}
    assert find_project(docs, tmp / "notes") is None


def test_inside_a_project_search_uses_its_sets_and_says_so(world):
    tmp, docs, env = world
    res, _ = search(docs, "validate two fields together", env, cwd=tmp / "old" / "src")
    assert set(res["sets"]) == {"vallib@1.10.2", "team_notes@1"}  # another project's sets are out
    assert {r["doc_set"] for r in res["results"]} <= {"vallib@1.10.2", "team_notes@1"}
    assert res["scope"]["note"] == "project old: 2 of 4 sets (--all-sets for all)"
    text = run_cli("search", "validate two fields together", "--docs-dir", docs, cwd=tmp / "old", env=env).stdout
    assert [ln for ln in text.splitlines() if ln.startswith("scope:")] == \
        ["scope: project old: 2 of 4 sets (--all-sets for all)"]
    res, _ = search(docs, "validate two fields together", env, "--project", tmp / "new")
    assert set(res["sets"]) == {"vallib@2.7.0", "other@3.0", "team_notes@1"}
    res, _ = search(docs, "validate two fields together", env, "--all-sets", cwd=tmp / "old")
    assert len(res["sets"]) == 4 and "scope" not in res  # nothing left out: nothing said
    res, _ = search(docs, "validate two fields together", env, "--set", "vallib@2.7.0", cwd=tmp / "old")
    assert res["sets"] == ["vallib@2.7.0"] and "scope" not in res  # --set is what the user asked
    res, _ = search(docs, "validate two fields together", env, cwd=tmp)  # not a project: every set
    assert len(res["sets"]) == 4 and "scope" not in res


def test_project_that_was_never_synced_is_bad_input(world):
    tmp, docs, env = world
    r = run_cli("search", "fields", "--docs-dir", docs, "--project", tmp / "notes", env=env)
    assert r.returncode == 2 and "was not synced into" in r.stderr


def test_grep_and_toc_use_the_project_scope(world):
    tmp, docs, env = world
    r = run_cli("grep", "Present in", "--docs-dir", docs, "--json", cwd=tmp / "old", env=env)
    out = json.loads(r.stdout)
    assert {m["doc_set"] for m in out["matches"]} == {"vallib@1.10.2"} and out["scope"]["searched"] == 2
    r = run_cli("grep", "Present in", "--docs-dir", docs, cwd=tmp / "new", env=env)
    assert "scope: project new: 3 of 4 sets" in r.stdout and "only_1_10_2" not in r.stdout
    # `vallib (API)` is a page of both versions: in a project it is the pinned one's
    r = run_cli("toc", "vallib (API)", "--docs-dir", docs, "--json", cwd=tmp / "new", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["doc_set"] == "vallib@2.7.0"
    r = run_cli("toc", "vallib (API)", "--docs-dir", docs, "--json", cwd=tmp, env=env)
    assert r.returncode == 1 and "several sets" in r.stderr  # outside a project: ambiguous, as before
    r = run_cli("read", "Runbook", "--docs-dir", docs, "--json", cwd=tmp / "new", env=env)
    assert r.returncode == 0 and json.loads(r.stdout)["doc_set"] == "team_notes@1"


def test_a_version_named_in_the_question_picks_that_versions_set(world):
    tmp, docs, env = world
    for query, want in (("our project is on vallib 1.10: how do I validate two fields together", "vallib@1.10.2"),
                        ("vallib 2.7 validate two fields together", "vallib@2.7.0"),
                        ("vallib==2.7.0 validate two fields together", "vallib@2.7.0"),
                        ("vallib v1 validate two fields together", "vallib@1.10.2")):
        res, _ = search(docs, query, env, "--all-sets", cwd=tmp)
        got = [r["doc_set"] for r in res["results"]]  # the team's look-alike runbook comes second
        assert got and set(got) == {want}, (query, got)
        assert want in res["scope"]["note"]
    res, _ = search(docs, "vallib 5.1 validate two fields together", env, cwd=tmp)
    assert "no vallib 5.1 set" in res["scope"]["note"]  # said, nothing left out
    assert {"vallib@1.10.2", "vallib@2.7.0"} <= set(res["sets"])


def test_pinned_versions_rank_first_outside_the_project(reg, tmp_path):
    """Two versions of one library, one of them pinned by a synced project and the other
    added by hand: a search outside the project (or with --all-sets) ranks the pinned
    version's twin section first, whichever version is pinned."""
    env = env_for(reg, tmp_path) | {"DOC4LLM_EMBEDDER": "none"}
    for pinned, other in (("1.10.2", "2.7.0"), ("2.7.0", "1.10.2")):
        docs, project = tmp_path / f"md{pinned}", tmp_path / f"p{pinned}"
        project.mkdir()
        (project / "requirements.txt").write_text(f"vallib=={pinned}\n")
        # the other version first: on a tie the earlier-indexed twin would rank first
        assert run_cli("add", f"pypi:vallib=={other}", "--docs-dir", docs, env=env).returncode == 0
        assert run_cli("sync", project, "--docs-dir", docs, env=env).returncode == 0
        for extra in ((), ("--all-sets",)):
            res, _ = search(docs, "how do I validate two fields together", env, *extra,
                            cwd=tmp_path if not extra else project)
            assert res["results"][0]["doc_set"] == f"vallib@{pinned}", (pinned, extra)
            assert len(res["sets"]) == 2


def test_sync_and_add_leave_the_lexical_index_built(world):
    tmp, docs, env = world
    from doc4llm.index.store import open_store

    conn = open_store(docs, create=False)
    indexed = {r[0] for r in conn.execute("SELECT DISTINCT set_name FROM pages")}
    conn.close()
    assert indexed == {"vallib@1.10.2", "vallib@2.7.0", "other@3.0", "team_notes@1"}
    r = run_cli("add", tmp / "notes", "--set", "more_notes@1", "--docs-dir", docs, env=env)
    assert r.returncode == 0, r.stderr
    # the first search after sync/add has nothing to index: no "index updated" on stderr
    _, err = search(docs, "validate two fields together", env, cwd=tmp)
    assert "index updated" not in err and err.strip() == ""


def test_while_vectors_are_missing_a_search_says_one_line(world):
    tmp, docs, env = world
    env = env | {"DOC4LLM_EMBEDDER": "minilm", "DOC4LLM_BACKGROUND_EMBED": "0"}
    _, err = search(docs, "validate two fields together", env, "--all-sets", cwd=tmp)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("doc4llm: 4 sets: ") and len(lines[0]) < 160, err
    assert "no vectors yet" in lines[0] and "`doc4llm index` builds them" in lines[0]


@pytest.mark.parametrize("query, want", [
    ("our project is on pydantic 1.10: how do I validate two fields together", {"pydantic": [(1, 10)]}),
    ("sqlalchemy 2.0 declarative base class", {"sqlalchemy": [(2, 0)]}),
    ("We're on Django 4.2 - is USE_TZ on?", {"django": [(4, 2)]}),
    ("Django's 5.0 admin facets", {"django": [(5, 0)]}),
    ("click 7 option groups", {"click": [(7,)]}),
    ("pydantic==1.10.13 validators", {"pydantic": [(1, 10, 13)]}),
    ("pydantic version 2.x model_dump", {"pydantic": [(2,)]}),
    ("migrate from pydantic v1 to v2", {"pydantic": [(1,), (2,)]}),
    ("@scope/pkg@3.1 exports", {"scope__pkg": [(3, 1)]}),
    ("how do I use pydantic with click", {}),
    ("pydantic/v1/fields.py", {}),
])
def test_version_mentions(query, want):
    got = {m.library: m.versions for m in mentions(query, {"pydantic", "sqlalchemy", "django", "click", "scope__pkg"})}
    assert got == want


def test_the_named_version_is_searched_first_and_all_sets_when_it_has_nothing(world):
    tmp, docs, env = world
    ops = tmp / "ops"
    ops.mkdir()
    (ops / "deploy.md").write_text("# Deploying\n\n## Kubernetes helm deployment\n\nInstall the helm chart "
                                   "into the cluster; the deployment rolls out one pod at a time.\n")
    assert run_cli("add", ops, "--set", "ops@1", "--docs-dir", docs, env=env).returncode == 0
    res, _ = search(docs, "vallib 1.10: kubernetes helm deployment", env, "--all-sets", cwd=tmp)
    assert res["results"][0]["doc_set"] == "ops@1"  # vallib 1.10 alone abstained: every set searched
    assert "(--set to choose)" not in res["scope"]["note"]
    res, _ = search(docs, "vallib 1.10: validate two fields together", env, "--all-sets", cwd=tmp)
    assert {r["doc_set"] for r in res["results"]} == {"vallib@1.10.2"}
    assert res["scope"]["note"] == "vallib@1.10.2 for 'vallib 1.10' (--set to choose)"


def test_a_version_that_picks_the_set_is_not_a_question_about_changes():
    from doc4llm.search.features import asks_about_changes

    assert asks_about_changes("our project is on pydantic 1.10: validate two fields")
    assert not asks_about_changes("our project is on pydantic 1.10: validate two fields", ["1.10"])
    assert not asks_about_changes("pydantic v1.10 validators", ["1.10"])
    assert asks_about_changes("what changed in pydantic 1.10", ["1.10"])
    assert narrow("our project is on pydantic 1.10: x", ["pydantic@1.10.13", "pydantic@2.7.4"]).versions == ["1.10"]


def test_focus_is_the_named_versions_and_the_libraries_the_question_names():
    sets = ["pydantic@1.10.13", "pydantic@2.7.4", "fastapi@0.95.2", "attrs@23.2.0", "notes@1"]
    v = narrow("our project is on pydantic 1.10: validate two fields together", sets)
    assert v.focus == ["pydantic@1.10.13"] and v.named == ["pydantic 1.10"]
    assert v.note(focused=True) == "pydantic@1.10.13 for 'pydantic 1.10' (--set to choose)"
    assert narrow("pydantic 1.10 models in fastapi routes", sets).focus == ["pydantic@1.10.13", "fastapi@0.95.2"]
    assert narrow("validate two fields together", sets).focus == []  # no version named: all sets
    assert narrow("attrs 23.2 validators", ["attrs@23.2.0"]).focus == []  # nothing to leave out


def test_narrowing_keeps_other_libraries_and_the_nearest_major():
    sets = ["pydantic@1.10.13", "pydantic@2.7.4", "fastapi@0.95.2", "notes@1"]
    v = narrow("pydantic 1.9 with fastapi", sets)
    assert v.sets == ["pydantic@1.10.13", "fastapi@0.95.2", "notes@1"]
    assert v.note() == "pydantic@1.10.13 for 'pydantic 1.9'"
    assert narrow("pydantic 1 to 2 migration", sets).sets == sets  # both named: both searched
    assert narrow("fastapi 0.100 routers", sets).note() == "no fastapi 0.100 set"  # major 0: no nearest
    long = "pydantic " * 2000 + "1.10"
    assert narrow(long, sets).sets[0] == "pydantic@1.10.13"


def test_mcp_tools_use_the_project_scope(world, monkeypatch):
    tmp, docs, _ = world
    monkeypatch.setenv("DOC4LLM_EMBEDDER", "none")
    from doc4llm.mcp.server import DocsService

    service = DocsService(docs, project=tmp / "old")
    try:
        out = service.search_docs("validate two fields together", k=5)  # the compact reply: the CLI text
        assert "scope: project old: 2 of 4 sets (--all-sets for all)" in out["text"].split("\n")
        full = service.search_docs("validate two fields together", k=5, detail=True)
        assert full["scope"]["note"] == "project old: 2 of 4 sets (--all-sets for all)"
        assert {r["doc_set"] for r in full["results"]} <= {"vallib@1.10.2", "team_notes@1"}
        assert service.get_toc("vallib (API)")["doc_set"] == "vallib@1.10.2"
        grep = service.grep_docs("Present in", detail=True)
        assert {m["doc_set"] for m in grep["matches"]} == {"vallib@1.10.2"}
        assert "vallib@1.10.2" in service.grep_docs("Present in")["text"]
    finally:
        service.close()
