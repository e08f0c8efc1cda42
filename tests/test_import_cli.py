"""`doc4llm import` through the real CLI: walking, naming, idempotence, pruning."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import run_cli

from doc4llm.corpus.paths import sanitize_folder_name, unique_folder_name
from doc4llm.errors import InputError
from doc4llm.ingest.importer import import_path


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def do_import(src: Path, docs: Path, *extra: str, set_name: str = "Docs@1") -> dict:
    proc = run_cli("import", src, "--set", set_name, "--docs-dir", docs, "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def page_folders(set_dir: Path) -> set[str]:
    return {p.name for p in set_dir.iterdir() if p.is_dir()}


def test_recursive_walk_skips_vendored_hidden_symlinked_and_large(tmp_path):
    src = tmp_path / "src"
    write(src / "a.md", "# Alpha\n\ntext\n")
    write(src / "sub" / "deeper" / "b.markdown", "# Beta\n\ntext\n")
    write(src / "notes.txt", "not markdown")
    write(src / ".git" / "c.md", "# Git\n")
    write(src / "node_modules" / "pkg" / "d.md", "# Vendored\n")
    write(src / ".hidden" / "e.md", "# Hidden\n")
    write(src / ".dotfile.md", "# Dotfile\n")
    outside = write(tmp_path / "elsewhere" / "f.md", "# Linked\n")
    os.symlink(outside.parent, src / "linked")
    write(src / "big.md", "# Big\n\n" + "x" * (1024 * 1024 + 10))
    os.symlink(src / "gone.md", src / "dangling.md")
    docs = tmp_path / "md_docs"
    proc = run_cli("import", src, "--set", "Docs@1", "--docs-dir", docs, "--max-file-mb", "1")
    assert proc.returncode == 0, proc.stderr
    assert page_folders(docs / "Docs@1") == {"Alpha", "Beta"}
    assert "big.md" in proc.stderr and "larger than" in proc.stderr
    assert "linked" in proc.stderr
    data = do_import(src, docs, "--max-file-mb", "1")
    skipped = {s["path"] for s in data["skipped"]}
    assert {"big.md", "linked", "dangling.md"} <= skipped
    assert data["counts"]["unchanged"] == 2


def test_single_file_and_source_line(tmp_path):
    f = write(tmp_path / "guide" / "one.md", "Some intro.\n\n## Part\n\nx\n")
    docs = tmp_path / "md_docs"
    data = do_import(f, docs)
    assert data["created"] == ["one"]  # no H1, no front matter: the file name
    content = (docs / "Docs@1" / "one" / "docContent.md").read_text()
    assert content.startswith("# one\n\n> **Source**: one.md\n\n---\n\nSome intro.")


def test_non_markdown_file_is_a_clear_input_error(tmp_path):
    f = write(tmp_path / "data.json", "{}")
    proc = run_cli("import", f, "--set", "Docs@1", "--docs-dir", tmp_path / "md_docs")
    assert proc.returncode == 2
    assert "not a markdown file" in proc.stderr
    assert not (tmp_path / "md_docs").exists()
    missing = run_cli("import", tmp_path / "nope", "--set", "Docs@1", "--docs-dir", tmp_path / "md_docs")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = run_cli("import", empty, "--set", "Docs@1", "--docs-dir", tmp_path / "md_docs")
    assert none.returncode == 2 and "no markdown files" in none.stderr


def test_title_precedence_and_source_paths(tmp_path):
    src = tmp_path / "src"
    write(src / "fm.md", "---\ntitle: Front Matter Title\n---\n\n# Heading One\n\nbody\n")
    write(src / "h1.md", "Intro.\n\n# Heading Title\n\n## Sub\n")
    write(src / "deep" / "plain-name.md", "no headings here\n")
    docs = tmp_path / "md_docs"
    do_import(src, docs)
    set_dir = docs / "Docs@1"
    assert page_folders(set_dir) == {"Front Matter Title", "Heading Title", "plain-name"}
    fm = (set_dir / "Front Matter Title" / "docContent.md").read_text()
    assert fm.startswith("# Front Matter Title\n\n> **Source**: fm.md\n")
    assert "title: Front Matter Title" not in fm and "# Heading One" in fm
    plain = (set_dir / "plain-name" / "docContent.md").read_text()
    assert "> **Source**: deep/plain-name.md" in plain
    toc = (set_dir / "plain-name" / "docTOC.md").read_text()
    assert "> **Source**: deep/plain-name.md" in toc


def test_front_matter_description_becomes_the_intro(tmp_path):
    """npm's command pages carry their one-line summary only in front matter: it is kept
    as the first paragraph (plain text, never a heading), and not repeated when the body
    already says it."""
    src = tmp_path / "src"
    write(src / "npm-dist-tag.md", "---\ntitle: npm-dist-tag\ndescription: Modify package"
          " distribution tags\n---\n\n### Synopsis\n\nnpm dist-tag add\n")
    write(src / "hash.md", "---\ntitle: Hashy\ndescription: '# not a heading'\n---\n\nBody.\n")
    write(src / "same.md", "---\ntitle: Same\ndescription: Already said.\n---\n\nAlready said. More.\n")
    docs = tmp_path / "md_docs"
    do_import(src, docs)
    set_dir = docs / "Docs@1"
    tag = (set_dir / "npm-dist-tag" / "docContent.md").read_text()
    assert "---\n\nModify package distribution tags\n\n### Synopsis" in tag
    assert "description:" not in tag
    assert "\\# not a heading" in (set_dir / "Hashy" / "docContent.md").read_text()
    toc = run_cli("toc", "Hashy", "--docs-dir", docs, "--json")
    assert [s["heading_path"] for s in json.loads(toc.stdout)["sections"]] == [["Hashy"]]
    assert (set_dir / "Same" / "docContent.md").read_text().count("Already said.") == 1


def test_leading_h1_is_not_duplicated(tmp_path):
    f = write(tmp_path / "x.md", "# Same Title\n\nbody\n\n## A\n")
    docs = tmp_path / "md_docs"
    do_import(f, docs)
    content = (docs / "Docs@1" / "Same Title" / "docContent.md").read_text()
    assert content.count("# Same Title") == 1
    toc = run_cli("toc", "Same Title", "--docs-dir", docs, "--json")
    paths = [s["heading_path"] for s in json.loads(toc.stdout)["sections"]]
    assert paths == [["Same Title"], ["Same Title", "A"]]


def test_a_page_named_by_its_first_lower_heading(tmp_path):
    """fastify's reference pages have no H1: an HTML banner, then `## Reply` (the file is
    Reply.md). That heading is the title, written as the page writes it; it is not also a
    section that every heading path repeats ("Reply > Reply > Reply > Methods"). A first
    heading that is not the file's name (`## Factory` in Server.md) stays a section."""
    src = tmp_path / "src"
    banner = '<h1 align="center">Fastify</h1>\n\n'
    write(src / "Reply.md", banner + "## Reply\n- [Reply](#reply)\n\n### Reply\n\n#### Methods\n\nsend\n")
    write(src / "ContentTypeParser.md", banner + "## `Content-Type` Parser\n\nParsers.\n\n### Usage\n\nx\n")
    write(src / "Server.md", banner + "## Factory\n\nThe factory.\n")
    docs = tmp_path / "md_docs"
    do_import(src, docs)
    set_dir = docs / "Docs@1"
    assert page_folders(set_dir) == {"Reply", "Content-Type Parser", "Server"}

    def paths(page: str) -> list[list[str]]:
        toc = run_cli("toc", page, "--docs-dir", docs, "--json")
        return [s["heading_path"] for s in json.loads(toc.stdout)["sections"]]

    assert paths("Reply") == [["Reply"], ["Reply", "Reply"], ["Reply", "Reply", "Methods"]]
    assert paths("Content-Type Parser") == [["Content-Type Parser"], ["Content-Type Parser", "Usage"]]
    assert "Parsers." in (set_dir / "Content-Type Parser" / "docContent.md").read_text()
    assert paths("Server") == [["Server"], ["Server", "Factory"]]


def test_folder_naming_rules(tmp_path):
    assert sanitize_folder_name('a<b>c:d"e/f\\g|h?i*j\x07k') == "abcde-f-g-hijk"
    assert sanitize_folder_name("How to monkeypatch/mock modules?") == "How to monkeypatch-mock modules"
    assert sanitize_folder_name("  many   spaces\there ") == "many spaces here"
    assert sanitize_folder_name("..") == "Untitled" and sanitize_folder_name(".") == "Untitled"
    assert sanitize_folder_name("") == "Untitled"
    long = sanitize_folder_name("é" * 300)
    assert len(long.encode()) <= 200 and long == "é" * 100
    assert unique_folder_name("A", {"a"}) == "A (2)"
    assert unique_folder_name("A", {"A", "A (2)"}) == "A (3)"
    taken = {"x" * 200}
    assert len(unique_folder_name("x" * 200, taken).encode()) <= 200

    src = tmp_path / "src"
    write(src / "one.md", "# Dup: <Title>?\n\nfirst\n")
    write(src / "two.md", "# Dup: <Title>?\n\nsecond\n")
    write(src / "three.md", "# ..\n\nthird\n")
    write(src / "four.md", "# " + "長" * 100 + "\n\nfourth\n")
    write(src / "hand.md", "# Hand Made\n\nimported\n")
    docs = tmp_path / "md_docs"
    hand = write(docs / "Docs@1" / "Hand Made" / "docContent.md", "# Hand Made\n\nmine\n")
    do_import(src, docs)
    set_dir = docs / "Docs@1"
    folders = page_folders(set_dir)
    assert {"Dup Title", "Dup Title (2)", "Untitled", "Hand Made", "Hand Made (2)"} <= folders
    assert hand.read_text() == "# Hand Made\n\nmine\n"  # never overwritten
    assert "imported" in (set_dir / "Hand Made (2)" / "docContent.md").read_text()
    long_name = next(f for f in folders if f.startswith("長"))
    assert len(long_name.encode()) <= 200
    bodies = {(set_dir / f / "docContent.md").read_text().split("---\n\n", 1)[-1] for f in folders}
    assert {"first\n", "second\n"} <= bodies


def test_set_metadata_yaml(tmp_path):
    src = tmp_path / "src"
    write(src / "a.md", "# A\n")
    docs = tmp_path / "md_docs"
    do_import(src, docs)
    meta = yaml.safe_load((docs / "Docs@1" / "doc4llm-set.yaml").read_text())
    assert meta["name"] == "Docs@1" and meta["page_count"] == 1 and meta["tool_version"]
    origin = next(iter(meta["origins"].values()))
    assert origin["root"] == str(src.resolve()) and origin["files"] == 1 and origin["imported"]
    rec = next(iter(meta["pages"].values()))
    assert rec["folder"] == "A" and rec["source"] == "a.md"
    sets = json.loads(run_cli("sets", "--docs-dir", docs, "--json").stdout)
    assert sets["sets"] == [{"name": "Docs@1", "path": str((docs / "Docs@1").resolve()),
                             "pages": 1, "source": str(src.resolve()),
                             "updated": meta["updated"], "index": sets["sets"][0]["index"]}]


def test_reimport_is_idempotent_and_updates_only_changes(tmp_path):
    src = tmp_path / "src"
    write(src / "a.md", "# A\n\none\n")
    write(src / "b.md", "# B\n\ntwo\n")
    docs = tmp_path / "md_docs"
    first = do_import(src, docs)
    assert sorted(first["created"]) == ["A", "B"]
    files = [docs / "Docs@1" / p / f for p in ("A", "B") for f in ("docContent.md", "docTOC.md")]
    before = {f: (f.stat().st_ino, f.stat().st_mtime_ns) for f in files}
    second = do_import(src, docs)
    assert sorted(second["unchanged"]) == ["A", "B"] and not second["created"] and not second["updated"]
    assert {f: (f.stat().st_ino, f.stat().st_mtime_ns) for f in files} == before
    write(src / "b.md", "# B\n\ntwo, changed\n")
    third = do_import(src, docs)
    assert third["updated"] == ["B"] and third["unchanged"] == ["A"]
    a_files = [f for f in files if f.parent.name == "A"]
    assert all((f.stat().st_ino, f.stat().st_mtime_ns) == before[f] for f in a_files)
    assert "two, changed" in (docs / "Docs@1" / "B" / "docContent.md").read_text()
    # a title change keeps the page's folder: its identity is the source path
    write(src / "a.md", "# A renamed\n\none\n")
    fourth = do_import(src, docs)
    assert fourth["updated"] == ["A"] and page_folders(docs / "Docs@1") == {"A", "B"}


def test_prune_removes_only_vanished_pages_of_this_import(tmp_path):
    src, other = tmp_path / "src", tmp_path / "other"
    write(src / "a.md", "# A\n")
    write(src / "b.md", "# B\n")
    write(other / "c.md", "# C\n")
    docs = tmp_path / "md_docs"
    do_import(src, docs)
    do_import(other, docs)
    write(docs / "Docs@1" / "Hand" / "docContent.md", "# Hand\n")
    (src / "b.md").unlink()
    kept = do_import(src, docs)  # without --prune nothing is removed
    assert kept["pruned"] == [] and "B" in page_folders(docs / "Docs@1")
    write(src / "a.md", "# A\n\n" + "x" * (1024 * 1024))  # found but skipped: not pruned
    write(src / "d.md", "# D\n")
    pruned = do_import(src, docs, "--prune", "--max-file-mb", "1")
    assert pruned["pruned"] == ["B"] and pruned["skipped"][0]["path"] == "a.md"
    assert page_folders(docs / "Docs@1") == {"A", "C", "D", "Hand"}
    meta = yaml.safe_load((docs / "Docs@1" / "doc4llm-set.yaml").read_text())
    assert {r["folder"] for r in meta["pages"].values()} == {"A", "C", "D"}


def test_non_utf8_file_is_decoded_with_a_warning(tmp_path):
    f = write(tmp_path / "latin.md", "# Café\n\nna\xefve\n".encode("latin-1"))
    docs = tmp_path / "md_docs"
    proc = run_cli("import", f, "--set", "Docs@1", "--docs-dir", docs)
    assert proc.returncode == 0
    assert "not valid UTF-8" in proc.stderr
    content = (docs / "Docs@1" / "Caf\ufffd" / "docContent.md").read_text(encoding="utf-8")
    assert "na\ufffdve" in content


def test_import_refuses_unsafe_set_names(tmp_path):
    f = write(tmp_path / "a.md", "# A\n")
    docs = tmp_path / "md_docs"
    for bad in ("../Evil@1", "NoVersion"):
        proc = run_cli("import", f, "--set", bad, "--docs-dir", docs)
        assert proc.returncode == 2, bad
        assert "refused" in proc.stderr or "NAME@VERSION" in proc.stderr
    for bad in ("a/b@1", "/abs@1", "..", "x@1/../../y", "nul\x00@1", "@1", "a@", "x" * 300 + "@1"):
        with pytest.raises(InputError):
            import_path(f, docs, bad)
    assert not any(tmp_path.glob("**/Evil@1")) and not (tmp_path / "y").exists()
    assert not docs.exists() or not any(docs.iterdir())


def test_import_from_inside_the_docs_dir_is_refused(tmp_path):
    docs = tmp_path / "md_docs"
    write(docs / "notes" / "a.md", "# A\n")
    with pytest.raises(InputError, match="inside the docs dir"):
        import_path(docs / "notes", docs, "Docs@1")


def test_bom_and_crlf_files(tmp_path):
    src = tmp_path / "src"
    write(src / "bom.md", "\ufeff# With BOM\r\n\r\nbody\r\n\r\n## Part\r\n\r\ntext\r\n".encode())
    docs = tmp_path / "md_docs"
    data = do_import(src, docs)
    assert data["created"] == ["With BOM"]
    content = (docs / "Docs@1" / "With BOM" / "docContent.md").read_bytes().decode()
    assert "\ufeff" not in content and "\r" not in content and content.count("# With BOM") == 1
    rc = run_cli("read", "With BOM", "--section", "Part", "--docs-dir", docs)
    assert rc.returncode == 0 and rc.stdout.endswith("## Part\n\ntext\n")


def test_filesystem_errors_are_messages_not_tracebacks(tmp_path):
    f = write(tmp_path / "a.md", "# A\n")
    (tmp_path / "afile").write_text("")
    proc = run_cli("import", f, "--set", "Docs@1", "--docs-dir", tmp_path / "afile" / "sub", "--json")
    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr and "Not a directory" in proc.stderr
    assert json.loads(proc.stdout)["error"] == "ExternalError"


def test_unlistable_folder_is_reported_and_its_pages_survive_prune(tmp_path, monkeypatch):
    src = tmp_path / "src"
    write(src / "a.md", "# A\n")
    write(src / "sub" / "b.md", "# B\n")
    docs = tmp_path / "md_docs"
    import_path(src, docs, "Docs@1")
    real_scandir = os.scandir

    def scandir(path="."):
        if Path(path).name == "sub":  # as if permissions changed (tests may run as root)
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    summary = import_path(src, docs, "Docs@1", prune=True)
    assert summary.pruned == []
    assert {"path": "sub", "reason": "cannot list folder: Permission denied", "folder": True} in summary.skipped
    assert page_folders(docs / "Docs@1") == {"A", "B"}


def _bytes_name(folder: Path, name: bytes) -> Path:
    """A file whose name is not UTF-8 (Linux allows any bytes; some file systems refuse)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with open(os.fsencode(folder) + b"/" + name, "wb") as fh:
            fh.write(b"")
    except OSError:
        pytest.skip("this file system refuses file names that are not UTF-8")
    return Path(os.fsdecode(os.fsencode(folder) + b"/" + name))


def test_a_file_name_that_is_not_utf8_is_escaped_with_a_warning(tmp_path):
    """Issue 29 item 4: `bad\\xff.md` crashed `import` (traceback, exit 1, an empty page
    folder left behind)."""
    src, docs = tmp_path / "src", tmp_path / "docs"
    write(src / "good.md", "# Good\n\nfine text\n")
    _bytes_name(src, b"bad\xff.md").write_text("Text of the page whose name has a stray byte.\n")
    inner = _bytes_name(src, b"dir\xfe")
    inner.unlink()
    inner.mkdir()
    write(inner / "inner.md", "# Inner\n\ninner text\n")

    proc = run_cli("import", src, "--set", "Bytes@1", "--docs-dir", docs, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "bad\\xff.md: file name is not valid UTF-8" in proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["counts"]["created"] == 3 and not summary["skipped"]
    set_dir = docs / "Bytes@1"
    pages = {p.name: (p / "docContent.md").read_text(encoding="utf-8") for p in set_dir.iterdir() if p.is_dir()}
    assert all((set_dir / name / "docTOC.md").is_file() for name in pages)  # nothing half-written
    by_source = {text.split("> **Source**: ", 1)[1].split("\n", 1)[0]: text for text in pages.values()}
    assert "stray byte" in by_source["bad\\xff.md"] and "inner text" in by_source["dir\\xfe/inner.md"]

    again = do_import(src, docs, set_name="Bytes@1")  # the escaped name is a stable key
    assert again["counts"]["unchanged"] == 3 and again["counts"]["created"] == 0
    text = run_cli("import", src, "--set", "Bytes@1", "--docs-dir", docs)
    assert text.returncode == 0 and "Traceback" not in text.stderr


def test_a_page_that_fails_to_write_leaves_no_folder(tmp_path, monkeypatch):
    import doc4llm.corpus.writer as writer_mod
    from doc4llm.corpus.writer import SetWriter

    real = writer_mod.atomic_write_text

    def fail_on_toc(path, text):
        if path.name == "docTOC.md":
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(writer_mod, "atomic_write_text", fail_on_toc)
    w = SetWriter(tmp_path / "docs", "Full@1", origin="test")
    with pytest.raises(OSError):
        w.write_page("Some Page", "body text\n", source="p.md", key="p.md")
    assert page_folders(tmp_path / "docs" / "Full@1") == set()
