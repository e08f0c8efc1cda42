"""The one audited place where user-supplied names become filesystem paths.

Every set, page or file path that comes from a user goes through here, so nothing is
ever read or written outside the docs dir.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from doc4llm.errors import InputError

DOCS_DIR_ENV = "DOC4LLM_DOCS_DIR"
INDEX_DIRNAME = ".doc4llm"
SET_META_FILE = "doc4llm-set.yaml"
CONTENT_FILE = "docContent.md"
TOC_FILE = "docTOC.md"
MAX_FOLDER_BYTES = 200

_FORBIDDEN_CHARS = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
# separators keep their meaning as a dash: "How to monkeypatch/mock modules" ->
# "How to monkeypatch-mock modules", not "monkeypatchmock"
_SEPARATOR_CHARS = re.compile(r"[/\\|]")
_SET_NAME = re.compile(r"^[^@/\\\x00]+@[^@/\\\x00]+$")
_SET_NAME_FORBIDDEN = frozenset('<>:"|?*[]')


def resolve_docs_dir(option: str | os.PathLike | None = None) -> Path:
    """Flag, then DOC4LLM_DOCS_DIR, then doc4llm.yaml `docs_dir`, then ./md_docs."""
    raw = option or os.environ.get(DOCS_DIR_ENV)
    if not raw:
        from doc4llm.config import setting

        raw = setting("docs_dir") or "md_docs"
    return Path(raw).expanduser().resolve()


def _check_component(value: str, what: str) -> str:
    if value is None or not str(value).strip():
        raise InputError(f"{what} name is empty")
    value = str(value)
    if "\x00" in value:
        raise InputError(f"{what} name contains a NUL byte: refused")
    if value in (".", "..") or value.startswith("../") or "/.." in value or "..\\" in value:
        raise InputError(f"{what} name {value!r} contains '..': refused (paths must stay inside the docs dir)")
    if os.path.isabs(value):
        raise InputError(f"{what} name {value!r} is an absolute path: refused")
    if "/" in value or "\\" in value:
        scoped = what == "set" and value.startswith("@") and value.count("/") == 1
        hint = f"a scoped npm package's set is named `{value[1:].replace('/', '__', 1)}`" if scoped else None
        raise InputError(f"{what} name {value!r} contains a path separator: refused", hint=hint)
    return value


def validate_set_name(name: str) -> str:
    """A set name is `Name@version`, one path component, no traversal."""
    name = _check_component(name, "set")
    if len(name.encode("utf-8")) > MAX_FOLDER_BYTES:
        raise InputError(f"set name is longer than {MAX_FOLDER_BYTES} bytes")
    if not _SET_NAME.match(name):
        raise InputError(
            f"set name {name!r} must look like NAME@VERSION (for example Acme_Docs@latest)"
        )
    if name != name.strip():
        raise InputError(f"set name {name!r} starts or ends with whitespace", hint="remove it")
    if name.startswith("."):
        raise InputError(f"set name {name!r} starts with '.': such folders are hidden, never a doc set",
                         hint="for example Acme_Docs@latest")
    bad = sorted({c for c in name if c in _SET_NAME_FORBIDDEN or unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")})
    if bad:
        shown = " ".join(repr(c) for c in bad)
        raise InputError(f"set name {name!r} contains {shown}: control characters and <>:\"|?*[] "
                         "are not allowed (--set reads * ? [ ] as wildcards)",
                         hint="letters, digits, '_', '-', '.', spaces inside: Acme_Docs@1.2")
    return name


def validate_set_pattern(pattern: str) -> str:
    """A `--set` value (a name or a glob such as `OpenCode*`): one path component."""
    return _check_component(pattern, "set")


def validate_page_name(name: str) -> str:
    return _check_component(name, "page")


def safe_join(root: Path, *parts: str) -> Path:
    """Join and verify the result stays inside `root` (after resolving symlinks)."""
    root = Path(root).resolve()
    path = root.joinpath(*parts).resolve()
    if path != root and root not in path.parents:
        raise InputError(f"path {'/'.join(parts)!r} escapes the docs dir: refused")
    return path


def sanitize_folder_name(title: str) -> str:
    """Page title -> folder name, per DESIGN.md: `/`, `\\` and `|` become `-`, <>:"?* and
    control chars are stripped, whitespace collapsed, at most 200 bytes, never '.' or '..'."""
    from doc4llm.secrets import redact

    text = unicodedata.normalize("NFC", redact(title or ""))  # a key in a title: never a folder
    text = _FORBIDDEN_CHARS.sub("", _SEPARATOR_CHARS.sub("-", re.sub(r"\s+", " ", text)))  # tabs/newlines: spaces
    text = re.sub(r"\s+", " ", text).strip().strip(".").strip()
    encoded = text.encode("utf-8")
    if len(encoded) > MAX_FOLDER_BYTES:
        text = encoded[:MAX_FOLDER_BYTES].decode("utf-8", errors="ignore").rstrip()
    if not text or text in (".", ".."):
        text = "Untitled"
    return text


def unique_folder_name(base: str, taken: set[str], *, folded: bool = False) -> str:
    """`base`, else `base (2)`, `base (3)`... never one already in `taken` (case-insensitive).

    `folded=True` says `taken` is already casefolded (saves re-folding a large set per call).
    """
    lowered = taken if folded else {t.casefold() for t in taken}
    if base.casefold() not in lowered:
        return base
    n = 2
    while True:
        suffix = f" ({n})"
        stem = base
        while len((stem + suffix).encode("utf-8")) > MAX_FOLDER_BYTES:
            stem = stem[:-1]
        candidate = stem.rstrip() + suffix
        if candidate.casefold() not in lowered:
            return candidate
        n += 1


def is_set_dir(path: Path) -> bool:
    return path.is_dir() and "@" in path.name and not path.name.startswith(".")
