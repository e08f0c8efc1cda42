"""No API key ever leaves the process (issue 13): loopback servers that echo the keys back
in model output, web results, titles and URLs; every output stream and every file checked."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from fakes_llm import (
    OPENAI_KEY,
    TAVILY_KEY,
    FakeOpenAI,
    FakeTavily,
    evaluation,
    fake_env,
    make_docs,
    ranking,
)

from doc4llm.secrets import RedactingStream, redact, redact_data

KEYS = (OPENAI_KEY, TAVILY_KEY)
ECHO = f"my key is {OPENAI_KEY} and {TAVILY_KEY} (url-encoded: {OPENAI_KEY})"


@pytest.fixture
def fakes():
    llm, tav = FakeOpenAI(), FakeTavily()
    yield llm, tav
    llm.close()
    tav.close()


def _env(llm: FakeOpenAI | None, tav: FakeTavily | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "TAVILY_API_KEY", "OPENAI_BASE_URL", "DOC4LLM_DOCS_DIR")}
    return {**env, **fake_env(llm, tav), "DOC4LLM_EMBEDDER": "none"}


def _run(docs: Path, *args: str, llm=None, tav=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doc4llm", *args, "--docs-dir", str(docs)],
                          env=_env(llm, tav), capture_output=True, text=True, timeout=90,
                          cwd=docs.parent)


def _assert_no_key(*texts: str) -> None:
    for text in texts:
        for key in KEYS:
            assert key not in text


def _assert_no_key_on_disk(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for key in KEYS:
                assert key.encode() not in data, path
        for key in KEYS:
            assert key not in path.name, path


def _script_echo(llm: FakeOpenAI, tav: FakeTavily) -> None:
    llm.add("reranking", f"[0] {OPENAI_KEY}")
    llm.add("synthesis", f"Not in the docs. {ECHO} [W1]")
    llm.add("evaluation", evaluation("SEARCH_WEB", confidence=10, answers=False,
                                     completeness="minimal", queries=[f"hooks {TAVILY_KEY}"]))
    tav.add([{"title": f"Key {TAVILY_KEY} leaked", "url": f"https://blog.example/{TAVILY_KEY}",
              "content": f"Mount the ConfigMap. {ECHO}", "score": 0.9}])
    llm.add("synthesis", f"Mount the ConfigMap [W1]. {ECHO}")
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=80))


@pytest.mark.parametrize("as_json", [True, False])
def test_echoed_keys_never_reach_output_pages_metadata_or_index(tmp_path, fakes, as_json):
    llm, tav = fakes
    docs = make_docs(tmp_path)
    _script_echo(llm, tav)
    args = ["ask", "how do I run hooks on kubernetes", "--trace", "--save-web", "Web_Notes@1", "-k", "2"]
    proc = _run(docs, *args, *(["--json"] if as_json else []), llm=llm, tav=tav)
    assert proc.returncode == 0, proc.stderr
    _assert_no_key(proc.stdout, proc.stderr)
    assert "***" in proc.stdout  # the echo was there, and masked
    if as_json:
        data = json.loads(proc.stdout)
        assert data["metadata"]["savedWeb"]["pages"]
    # the saved page is searchable, and still carries no key (pages, docTOC, yaml, index)
    again = _run(docs, "search", "ConfigMap leaked", "--json", "--set", "Web_Notes@1")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["results"]
    _assert_no_key(again.stdout, again.stderr)
    _assert_no_key_on_disk(docs)


def test_a_key_inside_a_users_own_page_is_masked_in_output_and_index(tmp_path):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "setup.md").write_text(f"# Setup\n\n## Credentials\n\nexport OPENAI_API_KEY={OPENAI_KEY}\n",
                                  encoding="utf-8")
    docs = tmp_path / "md_docs"
    env_key = {"OPENAI_API_KEY": OPENAI_KEY}
    for args in (["import", str(src), "--set", "Notes@1"], ["index", "--no-vectors"],
                 ["search", "credentials export", "--json"], ["read", "Setup", "--set", "Notes@1"]):
        proc = subprocess.run([sys.executable, "-m", "doc4llm", *args, "--docs-dir", str(docs)],
                              env={**_env(None, None), **env_key}, capture_output=True, text=True,
                              timeout=90)
        assert proc.returncode == 0, proc.stderr
        _assert_no_key(proc.stdout, proc.stderr)
    _assert_no_key_on_disk(docs)


def test_mcp_replies_never_carry_a_key(tmp_path, fakes):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    llm, tav = fakes
    docs = make_docs(tmp_path)
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", f"Add it under hooks [1]. {ECHO}")
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=90))
    params = StdioServerParameters(command=sys.executable, env=_env(llm, tav),
                                   args=["-m", "doc4llm", "serve", "--docs-dir", str(docs)])

    async def session() -> str:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as s:
                await s.initialize()
                result = await s.call_tool("ask_docs", {"question": "how do I add a hook", "k": 2})
                return json.dumps(result.model_dump(mode="json"))

    reply = anyio.run(session)
    assert "Add it under hooks" in reply and "***" in reply
    _assert_no_key(reply)


def test_redaction_covers_every_spelling_and_every_string(monkeypatch):
    key = 'sk-"quoted"/+Key-2024'
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("TAVILY_API_KEY", "abc")  # too short to be a key: text left alone
    assert redact(f"a {key} b") == "a *** b"
    assert redact(json.dumps({"k": key})) == '{"k": "***"}'
    assert redact("https://x/?k=sk-%22quoted%22%2F%2BKey-2024") == "https://x/?k=***"
    assert redact("abc") == "abc"
    data = redact_data({key: [key, (1, f"x{key}")], "n": 3})
    assert data == {"***": ["***", (1, "x***")], "n": 3}
    out = io.StringIO()
    stream = RedactingStream(out)
    print("echo", key, file=stream)
    with pytest.raises(TypeError):
        stream.write(b"")  # click probes text streams with bytes
    assert out.getvalue() == "echo ***\n"
