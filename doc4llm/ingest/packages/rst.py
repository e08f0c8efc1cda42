"""reStructuredText -> markdown through pandoc, shipped by pypandoc-binary.

Why pandoc: its RST reader is complete (grid and list tables, field lists, footnotes,
nested directives) and it writes GitHub markdown with pipe tables and fenced code. The
alternatives fall short: docutils alone has no markdown writer and raises on every Sphinx
directive or role it does not know; rst-to-myst has been unmaintained since 2023; a
Sphinx markdown builder would execute the package's conf.py. Sphinx specifics (admonitions,
versionadded, roles such as :func:`~a.b`, object descriptions, toctree) are rewritten by
rst_filter.lua inside pandoc. `--sandbox` forbids pandoc any file or network access, so
`.. include::` is resolved here, inside the extracted archive only.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from doc4llm.errors import ExternalError

FILTER = Path(__file__).with_name("rst_filter.lua")
TIMEOUT = 60
_INCLUDE = re.compile(r"^\.\. include:: *(\S[^\n]*)$")
MAX_INCLUDE_BYTES = 2 * 1024 * 1024
# directives whose body is code, unknown to pandoc (Sphinx extensions, project-specific
# ones such as click's): read as code blocks instead of as reStructuredText prose
CODE_DIRECTIVES = {"click:example", "click:run", "testcode", "testoutput", "doctest", "ipython",
                   "jupyter-execute", "code-cell", "runblock", "sourcecode", "tab-code", "exec_code"}
_DIRECTIVE = re.compile(r"^([ \t]*)\.\. ([\w:-]+)::[ \t]*(\S*)[ \t]*$")


def code_directives(text: str) -> str:
    """`.. click:example::` and friends -> `.. code-block:: python` (a line-for-line pass)."""
    if ".. " not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "::" not in line:
            continue
        m = _DIRECTIVE.match(line)
        if m and m.group(2).lower() in CODE_DIRECTIVES:
            lang = m.group(3) if m.group(2).lower() in ("sourcecode", "code-cell") and m.group(3) else \
                "text" if m.group(2).lower() == "testoutput" else "python"
            lines[i] = f"{m.group(1)}.. code-block:: {lang}"
    return "\n".join(lines)


def pandoc_path() -> str:
    try:
        import pypandoc
    except ImportError as exc:
        raise ExternalError("converting reStructuredText needs pypandoc-binary",
                            hint="pip install pypandoc-binary") from exc
    try:
        return pypandoc.get_pandoc_path()
    except OSError as exc:
        raise ExternalError("pandoc was not found (pypandoc-binary ships it)",
                            hint="pip install pypandoc-binary") from exc


def rst_to_markdown(text: str) -> str:
    """Convert one RST document; a document pandoc rejects raises ExternalError."""
    try:
        done = subprocess.run(
            [pandoc_path(), "--sandbox", "-f", "rst", "-t", "gfm-raw_html+pipe_tables", "--wrap=none",
             "--lua-filter", str(FILTER)],
            input=code_directives(text).encode("utf-8"), capture_output=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ExternalError(f"pandoc took more than {TIMEOUT}s on one document") from exc
    if done.returncode != 0:
        raise ExternalError("pandoc could not convert the document: "
                            + done.stderr.decode("utf-8", "replace").strip()[:300])
    return done.stdout.decode("utf-8", errors="replace")


def resolve_includes(text: str, here: Path, root: Path, depth: int = 0, *,
                     seen: set[Path] | None = None) -> str:
    """Inline `.. include:: path` (relative to the file, or to `root` when absolute as
    Sphinx reads it) when the target lies inside `root`; otherwise drop the line."""
    if depth > 3 or ".. include::" not in text:
        return text
    out = []
    for line in text.split("\n"):
        m = _INCLUDE.match(line.rstrip())
        if not m:
            out.append(line)
            continue
        target = m.group(1).strip()
        if target.startswith("<"):  # a docutils standard include (<isonum.txt>): no content
            continue
        path = (root / target.lstrip("/")) if target.startswith("/") else (here.parent / target)
        try:
            path = path.resolve()
            if not path.is_relative_to(root.resolve()) or not path.is_file() \
                    or path.stat().st_size > MAX_INCLUDE_BYTES:
                continue
            included = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if seen is not None:
            seen.add(path)
        out.append(resolve_includes(included, path, root, depth + 1, seen=seen))
    return "\n".join(out)
