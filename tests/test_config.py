"""Configuration precedence: flags > environment > doc4llm.yaml > defaults."""

from __future__ import annotations

import json

from conftest import run_cli

from doc4llm.corpus.writer import SetWriter


def _make_docs(root):
    w = SetWriter(root, "Cfg_Docs@1", origin="test")
    w.write_page("Retries", "## Backoff\n\nRetries wait 2, 4 then 8 seconds.\n", source="r.md", key="r")
    w.finish({})


def test_docs_dir_from_yaml_then_env_then_flag(tmp_path):
    yaml_docs, env_docs, flag_docs = tmp_path / "yaml_docs", tmp_path / "env_docs", tmp_path / "flag_docs"
    for d in (yaml_docs, env_docs, flag_docs):
        _make_docs(d)
    (tmp_path / "doc4llm.yaml").write_text(f"docs_dir: {yaml_docs}\nsearch:\n  embedder: none\n")
    def docs_dir_used(*args, env=None):
        out = run_cli("sets", "--json", *args, cwd=tmp_path, env={"DOC4LLM_DOCS_DIR": None, **(env or {})})
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["docs_dir"]

    assert docs_dir_used() == str(yaml_docs)
    assert docs_dir_used(env={"DOC4LLM_DOCS_DIR": str(env_docs)}) == str(env_docs)
    assert docs_dir_used("--docs-dir", str(flag_docs), env={"DOC4LLM_DOCS_DIR": str(env_docs)}) == str(flag_docs)


def test_embedder_from_yaml_is_used_and_a_flag_overrides_it(tmp_path):
    docs = tmp_path / "md_docs"
    _make_docs(docs)
    (tmp_path / "doc4llm.yaml").write_text("search:\n  embedder: none\n")
    res = run_cli("search", "backoff seconds", "--json", cwd=tmp_path, env={"DOC4LLM_EMBEDDER": None})
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["results"][0]["heading_path"][-1] == "Backoff"
    assert "vectors_load" not in data["timing_ms"]  # embedder none from doc4llm.yaml: lexical only
    bad = run_cli("search", "backoff", "--embedder", "no-such-embedder", cwd=tmp_path, env={"DOC4LLM_EMBEDDER": None})
    assert "no-such-embedder" in bad.stderr  # the flag wins over the file
