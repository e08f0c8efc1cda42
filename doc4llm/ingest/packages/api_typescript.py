"""An API reference from a package's `.d.ts` files and their JSDoc, parsed with tree-sitter.

A page per declaration file (`index.d.ts`), a section per exported name (`## pLimit`)
with its JSDoc as text and its declaration as a TypeScript block; members of exported
types, interfaces and classes that carry their own JSDoc get `### Type.member`. Parsing
is tree-sitter's (linear, no code run); files and declarations are capped in size.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from doc4llm.ingest.packages.pages import API, DocPage

DTS_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
MAX_FILES = 300
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_DECL_CHARS = 4000
SKIP_DIRS = {"node_modules", ".git", "test", "tests", "__tests__", "fixtures", "examples"}
DECLS = {"function_signature", "function_declaration", "class_declaration", "abstract_class_declaration",
         "interface_declaration", "type_alias_declaration", "enum_declaration", "lexical_declaration",
         "variable_declaration", "module", "internal_module"}
MEMBERS = {"property_signature", "method_signature", "public_field_definition", "method_definition",
           "abstract_method_signature", "call_signature", "construct_signature"}
_TAG = re.compile(r"^@(\w+)\s*(.*)$")


def dts_files(root: Path) -> list[Path]:
    """Declaration files, the package's `types`/`typings` entry first."""
    entry: Path | None = None
    try:
        pkg = json.loads((root / "package.json").read_text(encoding="utf-8", errors="replace"))
        types = pkg.get("types") or pkg.get("typings") if isinstance(pkg, dict) else None
        if isinstance(types, str):
            cand = (root / types).resolve()
            if cand.is_relative_to(root.resolve()) and cand.is_file():
                entry = cand
    except (OSError, ValueError, RecursionError):  # [ x 200,000: RecursionError (issue 33)
        pass
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(DTS_SUFFIXES):
                found.append(Path(dirpath) / name)
    found.sort(key=lambda p: (p.resolve() != entry, len(p.relative_to(root).parts), str(p)))
    return found[:MAX_FILES]


def typescript_api_pages(root: Path, warnings: list[str], label: str = "") -> list[DocPage]:
    from tree_sitter_language_pack import get_parser

    parser = get_parser("typescript")
    pages = []
    files = dts_files(root)
    for path in files:
        if path.stat().st_size > MAX_FILE_BYTES:
            warnings.append(f"{path.relative_to(root).as_posix()}: larger than 2 MB, not read")
            continue
        src = path.read_bytes()
        tree = parser.parse(src)
        sections: list[str] = []
        reexports: list[str] = []
        _collect(tree.root_node, src, sections, reexports, prefix="")
        rel = path.relative_to(root).as_posix()
        if reexports:
            sections.append("## Re-exports\n\n" + "\n".join(f"- `{r}`" for r in reexports[:200]))
        if not sections:
            continue
        title = f"{label}{rel}".replace("/", " - ")  # a folder name holds no "/"
        pages.append(DocPage(title, "\n\n".join(sections), rel, f"api:{label}{rel}", API))
    return pages


def _text(node, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _collect(container, src: bytes, sections: list[str], reexports: list[str], prefix: str,
             exported_only: bool = False) -> None:
    by_name: dict[str, int] = {}
    doc: str | None = None
    for node in container.named_children:
        if node.type == "comment":
            text = _text(node, src)
            doc = text if text.startswith("/**") else None
            continue
        this_doc, doc = doc, None
        decl, default = node, False
        if node.type == "export_statement":
            inner = node.child_by_field_name("declaration")
            if inner is None:
                if node.child_by_field_name("source") is not None or any(c.type == "export_clause" for c in node.named_children):
                    reexports.append(" ".join(_text(node, src).split())[:200])
                continue
            decl, default = inner, any(c.type == "default" for c in node.children)
        elif node.type == "ambient_declaration":
            inner = next((c for c in node.named_children if c.type in DECLS), None)
            if inner is None:
                continue
            decl = inner
        elif exported_only or node.type not in DECLS:
            continue
        _declaration(decl, node, src, this_doc, sections, reexports, prefix, by_name, default)


def _names(decl, src: bytes) -> list[str]:
    if decl.type in ("lexical_declaration", "variable_declaration"):
        return [_text(d.child_by_field_name("name"), src) for d in decl.named_children
                if d.type == "variable_declarator" and d.child_by_field_name("name") is not None]
    name = decl.child_by_field_name("name")
    return [_text(name, src).strip("'\"")] if name is not None else []


def _declaration(decl, outer, src: bytes, jsdoc: str | None, sections: list[str], reexports: list[str],
                 prefix: str, by_name: dict[str, int], default: bool) -> None:
    names = _names(decl, src)
    if not names:
        return
    if decl.type in ("module", "internal_module"):
        body = decl.child_by_field_name("body")
        if body is not None:
            name = names[0]
            _collect(body, src, sections, reexports, prefix=f"{prefix}{name}." if decl.type == "internal_module" else prefix)
        return
    code = _text(outer, src)
    if len(code) > MAX_DECL_CHARS:
        code = code[:MAX_DECL_CHARS] + "\n// ... (cut)"
    title = prefix + ", ".join(names)
    text = jsdoc_markdown(jsdoc) if jsdoc else ""
    block = f"```ts\n{code}\n```"
    if title in by_name:  # an overload: one section, every signature
        sections[by_name[title]] += "\n\n" + "\n\n".join(x for x in (text, block) if x)
        return
    parts = [f"## {title}"]
    if default:
        parts.append("*Default export.*")
    parts += [x for x in (text, block) if x]
    members = _member_sections(decl, src, title)
    by_name[title] = len(sections)
    sections.append("\n\n".join(parts + members))


def _member_sections(decl, src: bytes, owner: str) -> list[str]:
    body = decl.child_by_field_name("body") or decl.child_by_field_name("value")
    if body is None or body.type not in ("object_type", "interface_body", "class_body"):
        return []
    out = []
    doc: str | None = None
    for node in body.named_children:
        if node.type == "comment":
            text = _text(node, src)
            doc = text if text.startswith("/**") else None
            continue
        this_doc, doc = doc, None
        if node.type not in MEMBERS or not this_doc:
            continue
        name_node = node.child_by_field_name("name")
        name = _text(name_node, src) if name_node is not None else "(call)"
        code = _text(node, src)
        if len(code) > MAX_DECL_CHARS:
            code = code[:MAX_DECL_CHARS] + "\n// ... (cut)"
        out.append(f"### {owner}.{name}\n\n{jsdoc_markdown(this_doc)}\n\n```ts\n{code}\n```")
    return out


def jsdoc_markdown(comment: str) -> str:
    """`/** ... */` -> text: the leading `*` gone, @param/@returns as a list, @example as code."""
    body = comment[3:-2] if comment.endswith("*/") else comment[3:]
    lines = [re.sub(r"^\s*\* ?", "", ln) if ln.lstrip().startswith("*") else ln.strip() for ln in body.split("\n")]
    out: list[str] = []
    in_example = False
    for line in lines:
        m = _TAG.match(line.strip())
        if m:
            if in_example:
                while out and not out[-1].strip():
                    out.pop()
                out.append("```")
                in_example = False
            tag, rest = m.group(1), m.group(2)
            if tag == "example":
                out += ["", "Example:", "", "```ts"] + ([rest] if rest else [])
                in_example = True
            elif tag == "param":
                pm = re.match(r"^(\{[^}]*\}\s*)?(\[?[\w.$]+\]?)\s*-?\s*(.*)$", rest)
                out.append(f"- `{pm.group(2)}`: {pm.group(3)}" if pm else f"- {rest}")
            elif tag in ("returns", "return"):
                out.append(f"- Returns: {rest}")
            elif tag == "deprecated":
                out.append(f"**Deprecated.** {rest}".rstrip())
            else:
                out.append(f"- @{tag} {rest}".rstrip())
            continue
        if not in_example and line.lstrip().startswith("#"):
            line = "\\" + line.lstrip()
        out.append(line)
    if in_example:
        while out and not out[-1].strip():
            out.pop()
        out.append("```")
    return "\n".join(out).strip()
