"""Which absent query words count as names (the absent-name abstention rule) and which as
everyday English (never the anchor of the single-anchor rule)."""

import pytest

from doc4llm.search.confidence import written_as_name
from doc4llm.search.english import is_common_word


@pytest.mark.parametrize(("word", "query"), [
    ("okta", "how do I set up single sign-on with Okta"),
    ("PyInstaller", "bundle my project with PyInstaller"),
    ("PyInstaller", "PyInstaller bundles: how?"),  # inner capitals count at the start too
    ("environment.yml", "install packages using an environment.yml with uv"),
    ("proto", "generate models from a protobuf .proto file"),
    ("chinese", "change the interface language to Chinese."),
    ("devops", "run it in an Azure DevOps pipeline"),
    ("ldap", "set up a private registry with LDAP authentication"),  # acronyms: 3-6 letters
    ("sla", "what uptime SLA does it guarantee"),
    ("socks5", "route downloads through a SOCKS5 proxy"),  # an acronym with its version
])
def test_names(word, query):
    assert written_as_name(word, query)


@pytest.mark.parametrize(("word", "query"), [
    ("how", "How do I pin a version"),  # capitalised only because it starts the sentence
    ("camelcase", "generate camelCase keys for every field"),  # an identifier, not a name
    ("ci", "run the tests in CI"),  # two letters: too short to be sure it is a name
    ("uv_http_timeout", "raise UV_HTTP_TIMEOUT for slow mirrors"),  # code: the identifier rule
    ("./mytool", "launch it as ./mytool without the runner"),  # a path
    ("virtual_env=venv", "warning: `VIRTUAL_ENV=venv` does not match"),
    ("okta", "sign-on with okta"),  # written in lower case: no claim that it is a name
    ("missing", "Okta is configured"),  # the word is not in the query at all
])
def test_not_names(word, query):
    assert not written_as_name(word, query)


def test_everyday_words_from_the_shipped_vocabulary():
    for w in ("launched", "air", "editor", "Frozen"):
        assert is_common_word(w), w
    for w in ("telemetry", "pyinstaller", "autovacuum", "okta", "x"):
        assert not is_common_word(w), w


def test_hostile_query_is_linear():
    from growth import assert_linear

    assert_linear(lambda q: written_as_name("aa", q),
                  lambda n: ("Aa." * n) + " " + ("( " * n), 5000, what="written_as_name")


def test_common_word_list_matches_the_shipped_tokenizer():
    import json

    from doc4llm.index.embed_onnx import TOKENIZER_PATH
    from doc4llm.search.english import WORDS_PATH, derive_common_words

    vocab = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
    assert WORDS_PATH.read_text(encoding="utf-8").split() == derive_common_words(vocab)


def test_a_versioned_acronym_is_absent_only_when_its_letters_are(tmp_path):
    """SOCKS5 in docs that never say SOCKS: not found. HTTP2 in docs that write HTTP/2:
    answered."""
    import json

    from conftest import run_cli

    docs = tmp_path / "md_docs"
    src = tmp_path / "src"
    src.mkdir()
    (src / "http.md").write_text("# HTTP/2\n\nFastify serves HTTP/2 over TLS with the `http2` option.\n\n"
                                 "## Proxies\n\nSet the proxy for every download in the config file.\n")
    (src / "install.md").write_text("# Install\n\nDownload packages and install them from the index.\n")
    assert run_cli("import", src, "--set", "web@1", "--docs-dir", docs).returncode == 0
    out = {}
    for q in ("route downloads through a SOCKS5 proxy", "serve HTTP2 over TLS"):
        r = run_cli("search", q, "--docs-dir", docs, "--embedder", "none", "--json")
        out[q] = json.loads(r.stdout)
    assert out["route downloads through a SOCKS5 proxy"]["abstained"]
    assert "socks5" in [w.casefold() for w in out["route downloads through a SOCKS5 proxy"]["coverage"]["absent_names"]]
    assert out["serve HTTP2 over TLS"]["coverage"]["absent_names"] == []


def test_english_words_in_any_inflection_and_lower_case_names():
    """A word no English dictionary holds, in any inflection or as two words run
    together, is a name written in lower case: docs that never mention it cannot cover it."""
    from doc4llm.search.english import is_english

    for w in ("downsides", "atomically", "garbled", "allowlist", "endpoint", "copyable", "Refund", "x"):
        assert is_english(w), w
    for w in ("protobuf", "zstd", "loguru", "kubernetes", "nuitka", "pyenv"):
        assert not is_english(w), w
    assert is_english("v2") and is_english("cu124")  # not words at all: other rules' business



def test_a_dotted_name_is_absent_even_when_its_words_are_not(tmp_path):
    """`[tool.griffe]` appears nowhere: the words "tool" and "griffe" side by side ("the
    tool. Griffe ...") are not it, and its last part is the product's own name."""
    import json

    from conftest import run_cli

    src = tmp_path / "src"
    src.mkdir()
    (src / "config.md").write_text("# Configuration\n\nConfigure the tool. Griffe reads options from the command "
                                   "line and from `pyproject.toml`.\n\n## Options\n\nEvery option has a default.\n")
    docs = tmp_path / "md_docs"
    assert run_cli("import", src, "--set", "griffe@2", "--docs-dir", docs).returncode == 0
    r = run_cli("search", "set griffe options under [tool.griffe] in pyproject.toml", "--docs-dir", docs,
                "--embedder", "none", "--json")
    assert "tool.griffe" in json.loads(r.stdout)["coverage"]["absent_from_docs"]


def test_a_missing_or_damaged_word_list_names_nothing(tmp_path, monkeypatch):
    """No list (or a truncated one) must not turn every absent word into a "name": the
    rule simply stays off."""
    import gzip

    from doc4llm.search import english

    full = gzip.compress(b"protobuf\n" * 1000)
    for content in (None, full[: len(full) // 2], b"not gzip at all"):
        path = tmp_path / "stems.txt.gz"
        path.unlink(missing_ok=True)
        if content is not None:
            path.write_bytes(content)
        monkeypatch.setattr(english, "STEMS_PATH", path)
        english._stems.cache_clear()
        assert english.is_english("zstd")
    english._stems.cache_clear()
