"""An API reference from a package's `.d.ts` files and their JSDoc, parsed with tree-sitter.

A page per declaration file (`index.d.ts`), a section per exported name (`## pLimit`)
with its JSDoc as text and its declaration as a TypeScript block; members of exported
types, interfaces and classes that carry their own JSDoc get `### Type.member`. Parsing
is tree-sitter's (linear, no code run); files and declarations are capped in size.

Every form `tsc` and bundlers (rollup-plugin-dts) emit counts as an export:
`export declare class/abstract class/function/const/namespace/enum/type`, `export
interface`, `declare ...` then `export { A, B as C }`, `export default X`, `export = X`
(a CommonJS module: `X`'s namespace members are documented as `X.member`), and in a file
without any import or export (a global script) every declaration. Re-exports (`export *
from "./lib"`, `export { A } from "./b"`) are listed with the file that defines them
(dts_files.py orders files so the entry points and what they re-export come first).

A module augmentation (`declare module "../index" { interface LoDashStatic { clamp(...) } }`,
how @types/lodash documents every function) and `declare global { ... }` are public
whatever the file's imports say: their declarations are documented. A file that only passes
one imported name on (`import { clamp } from "./index"; export = clamp`, 300 such files in
@types/lodash) gets no page: the name is documented where it is declared.

Namespaces are walked with an explicit stack, at most MAX_NAMESPACE_DEPTH deep: a file
of 5,000 nested `export namespace A {` takes linear time and says where it stopped.
A member whose JSDoc has `@deprecated` opens with `**Deprecated:** ...`.
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

from doc4llm.ingest.packages.dts_files import DTS_SUFFIXES, dts_files, resolve_specifier
from doc4llm.ingest.packages.pages import API, DocPage

__all__ = ["DTS_SUFFIXES", "dts_files", "jsdoc_markdown", "typescript_api_pages"]

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_DECL_CHARS = 4000
MAX_NAMESPACE_DEPTH = 8
MAX_REEXPORTS = 200
DECLS = {"function_signature", "function_declaration", "class_declaration", "abstract_class_declaration",
         "interface_declaration", "type_alias_declaration", "enum_declaration", "lexical_declaration",
         "variable_declaration", "module", "internal_module", "generator_function_declaration"}
MEMBERS = {"property_signature", "method_signature", "public_field_definition", "method_definition",
           "abstract_method_signature", "call_signature", "construct_signature"}
_DEFINED_IN = re.compile(r": defined in `[^`\n]*`")
_SPECIFIER_EXT = re.compile(r"""(['"]\.{1,2}/[^'"\n]{0,300}?)(?:\.d)?\.[mc]?[jt]s(['"])""")
_TAG = re.compile(r"^@(\w+)\s*(.*)$")
# the blanks after `/**` or `*` belong to that group: two `[ \t]*` side by side split a line
# of blanks every way (100k spaces in a JSDoc line: quadratic)
_DEPRECATED_TAG = re.compile(r"^[ \t]*(?:(?:/\*\*|\*)[ \t]*)?@deprecated\b[ \t]*(.*)$", re.M)


def typescript_api_pages(root: Path, warnings: list[str], label: str = "") -> list[DocPage]:
    from tree_sitter_language_pack import get_parser

    parser = get_parser("typescript")
    pages = []
    files = dts_files(root)
    known = {p.resolve(): p for p in files}
    deep: list[str] = []
    seen: dict[str, int] = {}  # page body -> index of the page that has it
    copies: dict[int, list[str]] = {}
    for path in files:
        rel = path.relative_to(root).as_posix()
        if path.stat().st_size > MAX_FILE_BYTES:
            warnings.append(f"{rel}: larger than 2 MB, not read")
            continue
        src = path.read_bytes()
        tree = parser.parse(src)
        doc = _FileDoc(src, path, root, known)
        doc.collect(tree.root_node)
        if doc.too_deep:
            deep.append(rel)
        if not doc.sections and len(doc.reexports) <= 1:
            continue  # nothing declared here, at most one name passed on: no page of its own
        body = doc.render()
        if not body:
            continue
        same = copy_key(body)
        title = f"{label}{rel}".replace("/", " - ")  # a folder name holds no "/"
        if same in seen:  # the same declarations built for another module system or target
            i = seen[same]  # (dayjs `esm/`, react-query `build/legacy/`, jotai `esm/*.d.mts`)
            if rel.count("/") < pages[i].source.count("/"):  # the shallowest copy names the page:
                copies.setdefault(i, []).append(pages[i].source)  # `vanilla.d.ts`, not lit's
                pages[i] = DocPage(title, body, rel, f"api:{label}{rel}", API)  # `development/`
            else:
                copies.setdefault(i, []).append(rel)
            continue
        seen[same] = len(pages)
        pages.append(DocPage(title, body, rel, f"api:{label}{rel}", API))
    for i, rels in copies.items():
        shown = ", ".join(f"`{r}`" for r in rels[:5]) + (f" and {len(rels) - 5} more" if len(rels) > 5 else "")
        pages[i].body = f"*The same declarations are also in {shown}.*\n\n{pages[i].body}"
    if deep:
        warnings.append(f"namespaces nested deeper than {MAX_NAMESPACE_DEPTH} levels not documented in "
                        + ", ".join(deep[:3]) + (f" and {len(deep) - 3} more" if len(deep) > 3 else ""))
    return pages


def copy_key(body: str) -> str:
    """What two builds of the same declarations share: a copy's re-exports point into its
    own tree and name their modules for its module system (`'./atom.mjs'`, `'./atom.js'`,
    `'./atom'`)."""
    return _SPECIFIER_EXT.sub(r"\1\2", _DEFINED_IN.sub("", body))


def _text(node, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


class _FileDoc:
    """The sections of one declaration file, built in one pass over its top level and an
    explicit stack of namespace bodies."""

    def __init__(self, src: bytes, path: Path, root: Path, known: dict[Path, Path]) -> None:
        self.src = src
        self.path = path
        self.root = root
        self.known = known
        self.sections: list[tuple[int, str]] = []  # (byte offset, text)
        self.by_name: dict[str, int] = {}
        self.reexports: list[str] = []
        self.locals: dict[str, list[tuple]] = {}  # name -> [(decl, outer, jsdoc)] not exported in place
        # `export { Compiler, Knex }` inside a namespace: (prefix, local, exported) of file-level names
        self.ns_lists: list[tuple[str, str, str]] = []
        self.listed_decls: set[int] = set()  # locals already documented through an export list
        self.too_deep = False
        self.modules: list[tuple[int, int, str]] = []  # `declare module "pkg/sub" { }`: start, end, name

    # -- walking -----------------------------------------------------------------------
    def collect(self, program) -> None:
        children = program.named_children
        self.modules = _ambient_modules(children, self.src)
        is_module = any(c.type in ("export_statement", "import_statement") for c in children)
        listed: dict[str, str] = {}  # local name -> exported name (`export { a as b }`, default, =)
        defaults: set[str] = set()
        equals: set[str] = set()
        stack: list[tuple[object, str, int, bool]] = [(program, "", 0, is_module)]
        while stack:
            container, prefix, depth, module_scope = stack.pop()
            for node, this_doc in self._with_jsdoc(container):
                if node.type == "export_statement":
                    if depth == 0:
                        self._export_statement(node, this_doc, listed, defaults, equals, stack)
                    else:  # `export` inside a namespace: documented as a member
                        inner = node.child_by_field_name("declaration")
                        if inner is not None:
                            self._document(_unwrap(inner), node, this_doc, prefix, depth, stack)
                        else:
                            self._namespace_list(node, prefix)
                    continue
                block = _augmentation_body(node, self.src)
                if block is not None:  # what it declares is public (the augmented module's)
                    if depth + 1 > MAX_NAMESPACE_DEPTH:
                        self.too_deep = True
                    else:
                        stack.append((block, prefix, depth + 1, False))
                    continue
                decl = _unwrap(node)
                if decl is None or decl.type not in DECLS:
                    continue
                if module_scope and depth == 0:  # module-private unless an export list names it
                    for name in _names(decl, self.src):
                        self.locals.setdefault(name, []).append((decl, node, this_doc))
                    continue
                self._document(decl, node, this_doc, prefix, depth, stack)
        for local, exported in listed.items():
            if local not in self.locals and local in self.by_name and local == exported:
                if local in defaults or local in equals:  # `export declare const z` + `export default z`
                    self._note(local, "*Default export.*" if local in defaults else "*The module's export (`export =`).*")
                continue
            if local not in self.locals:  # an imported name exported again (`export { z }`)
                what = "default export" if local in defaults else "`export =`" if local in equals else "export"
                self.reexports.append(f"`{exported}`: {what} of a name imported from elsewhere"
                                      + (f" (`{local}`)" if exported != local else ""))
                continue
            for decl, outer, jsdoc in self.locals.get(local, []):
                note = ("*Default export.*" if local in defaults else
                        "*The module's export (`export =`).*" if local in equals else "")
                title = exported
                if exported != local and len(exported) <= 2 < len(local):
                    # a bundler's chunk (tsup, rollup: `export { QueryClient as b }`, imported back
                    # as `b as QueryClient`): the declared name is the API's
                    title = local
                    note = (note + " " if note else "") + f"*Exported by this chunk as `{exported}`.*"
                elif exported != local:
                    note = (note + " " if note else "") + f"*Declared as `{local}`.*"
                self.listed_decls.add(decl.start_byte)
                self._document(decl, outer, jsdoc, "", 0, stack, name=title, note=note)
        self._drain(stack)
        self._namespace_lists(stack)

    def _namespace_list(self, node, prefix: str) -> None:
        """`export { A, B as C }` inside a namespace (no `from`): names of the file's own
        declarations made members of the namespace (webpack's `declare namespace exports {
        export { Compiler, Configuration, ... } }`, knex's `export { Knex }`)."""
        if node.child_by_field_name("source") is not None:
            return
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        for spec in clause.named_children if clause is not None else []:
            name = spec.child_by_field_name("name") if spec.type == "export_specifier" else None
            if name is not None:
                alias = spec.child_by_field_name("alias")
                local = _text(name, self.src)
                self.ns_lists.append((prefix, local, _text(alias, self.src) if alias is not None else local))

    def _namespace_lists(self, stack) -> None:
        """Document the file-level declarations that namespaces' export lists name, under
        the namespace's prefix; a declaration documented already (`export { knex as
        default }` inside `namespace knex`) is not repeated. Each list entry is taken once,
        and a namespace reached this way may hold lists of its own (walked in turn)."""
        done = 0
        while done < len(self.ns_lists):
            prefix, local, exported = self.ns_lists[done]
            done += 1
            for decl, outer, jsdoc in self.locals.get(local, []):
                if decl.start_byte in self.listed_decls:
                    continue
                self.listed_decls.add(decl.start_byte)
                depth = prefix.count(".")
                if depth > MAX_NAMESPACE_DEPTH:
                    self.too_deep = True
                    continue
                self._document(decl, outer, jsdoc, prefix, depth, stack, name=exported)
            self._drain(stack)

    def _with_jsdoc(self, container):
        """A container's statements, each with the `/** ... */` comment right before it."""
        doc: str | None = None
        for node in container.named_children:
            if node.type == "comment":
                text = _text(node, self.src)
                doc = text if text.startswith("/**") else None
                continue
            yield node, doc
            doc = None

    def _drain(self, stack) -> None:
        """Namespace bodies pushed while documenting the export lists."""
        while stack:
            container, prefix, depth, _ = stack.pop()
            for node, this_doc in self._with_jsdoc(container):
                inner = node.child_by_field_name("declaration") if node.type == "export_statement" else None
                if node.type == "export_statement" and inner is None:
                    self._namespace_list(node, prefix)
                    continue
                decl = _unwrap(inner if inner is not None else node)
                if decl is not None and decl.type in DECLS:
                    self._document(decl, node, this_doc, prefix, depth, stack)

    def _export_statement(self, node, jsdoc, listed, defaults, equals, stack) -> None:
        inner = node.child_by_field_name("declaration")
        is_default = any(c.type == "default" for c in node.children)
        if inner is not None:
            self._document(_unwrap(inner), node, jsdoc, "", 0, stack, default=is_default)
            return
        source = node.child_by_field_name("source")
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if source is not None:
            self._reexport(node, source, clause)
            return
        if clause is not None:
            for spec in clause.named_children:
                if spec.type != "export_specifier":
                    continue
                name = spec.child_by_field_name("name")
                alias = spec.child_by_field_name("alias")
                if name is not None:
                    local = _text(name, self.src)
                    listed[local] = _text(alias, self.src) if alias is not None else local
            return
        if _text(node, self.src).startswith("export as namespace"):
            return  # the UMD global name of the module, not a declaration
        value = node.child_by_field_name("value") or next(
            (c for c in node.named_children if c.type in ("identifier", "nested_identifier")), None)
        if value is not None and value.type == "identifier":
            name = _text(value, self.src)
            listed.setdefault(name, name)
            (defaults if is_default else equals).add(name)
        elif node.named_children and node.named_children[0].type == "import_alias" or \
                _text(node, self.src).startswith("export import"):
            self.reexports.append(" ".join(_text(node, self.src).split())[:200])

    def _reexport(self, node, source, clause) -> None:
        spec = _text(source, self.src).strip("'\"")
        stmt = " ".join(_text(node, self.src).split())[:200]
        target = resolve_specifier(self.path, spec, self.known) if spec.startswith(".") else None
        if target is not None:
            rel = self.known[target].relative_to(self.root).as_posix()
            self.reexports.append(f"`{stmt}`: defined in `{rel}`")
        else:
            self.reexports.append(f"`{stmt}`")

    def _document(self, decl, outer, jsdoc, prefix, depth, stack, name: str | None = None,
                  default: bool = False, note: str = "") -> None:
        if decl is None or hidden(jsdoc):
            return
        names = [name] if name else _names(decl, self.src)
        if not names:
            return
        if decl.type in ("module", "internal_module"):
            body = decl.child_by_field_name("body")
            if body is None:
                return
            if depth + 1 > MAX_NAMESPACE_DEPTH:
                self.too_deep = True
                return
            inner_prefix = f"{prefix}{names[0]}." if decl.type == "internal_module" else prefix
            if inner_prefix == "exports.":  # CommonJS's name for the module itself (webpack): its members
                inner_prefix = ""             # are the module's own exports, imported by their names
            stack.append((body, inner_prefix, depth + 1, False))
            if jsdoc and decl.type == "internal_module":
                self._add(outer.start_byte, prefix + names[0], [jsdoc_markdown(jsdoc)], jsdoc)
            return
        title = prefix + ", ".join(names)
        members = _member_sections(decl, self.src, title)
        code = _text(outer, self.src)
        if members:  # their JSDoc is in their own sections: the declaration shows the shape
            code = without_jsdoc(code)
        if len(code) > MAX_DECL_CHARS:
            code = code[:MAX_DECL_CHARS] + "\n// ... (cut)"
        parts = []
        if default:
            parts.append("*Default export.*")
        if note:
            parts.append(note)
        text = jsdoc_markdown(jsdoc, deprecated_tag=False) if jsdoc else ""
        parts += [x for x in (text, f"```ts\n{code}\n```") if x]
        self._add(outer.start_byte, title, parts + members, jsdoc)

    def _module_of(self, offset: int) -> str:
        i = bisect.bisect_right(self.modules, (offset, float("inf"), "")) - 1
        return self.modules[i][2] if i >= 0 and offset < self.modules[i][1] else ""

    def _add(self, offset: int, title: str, parts: list[str], jsdoc: str | None) -> None:
        module = self._module_of(offset) if self.modules else ""
        key = f"{module}\0{title}" if module else title  # `Processed` of two modules: two sections
        if key in self.by_name:  # an overload, or a namespace merged with a function: one section
            i = self.by_name[key]
            pos, text = self.sections[i]
            self.sections[i] = (pos, text + "\n\n" + "\n\n".join(p for p in parts if p))
            return
        mark = deprecation_line(jsdoc) if jsdoc else None
        head = [f"## {title}"] + ([mark] if mark else [])
        self.by_name[key] = len(self.sections)
        self.sections.append((offset, "\n\n".join(head + [p for p in parts if p])))

    def _note(self, title: str, note: str) -> None:
        """A line added under a section's heading (and its deprecation line)."""
        i = self.by_name[title]
        pos, text = self.sections[i]
        head, _, rest = text.partition("\n\n")
        if rest.startswith("**Deprecated"):
            mark, _, rest = rest.partition("\n\n")
            head = f"{head}\n\n{mark}"
        self.sections[i] = (pos, f"{head}\n\n{note}\n\n{rest}" if rest else f"{head}\n\n{note}")

    def render(self) -> str:
        ordered = sorted(self.sections, key=lambda s: s[0])
        parts = [text for _, text in ordered]
        if self.modules:
            parts = self._module_lines(ordered, parts)
        if self.reexports:
            items = self.reexports[:MAX_REEXPORTS]
            parts.append("## Re-exports\n\n" + "\n".join(f"- {r}" if r.startswith("`") else f"- `{r}`"
                                                         for r in items))
        return "\n\n".join(parts)


    def _module_lines(self, sections: list[tuple[int, str]], parts: list[str]) -> list[str]:
        """In a bundle of ambient modules (svelte's `types/index.d.ts`: `declare module
        'svelte/store' { ... }`, then `'svelte/motion'`...), each section says which module
        it is imported from; a file of one module (@types/node's `fs`) is left as it is."""
        where = [self._module_of(pos) for pos, _ in sections]
        if len({m for m in where if m}) < 2:
            return parts
        out = []
        for module, text in zip(where, parts, strict=True):
            if module:
                head, _, rest = text.partition("\n\n")
                if rest.startswith("**Deprecated"):
                    mark, _, rest = rest.partition("\n\n")
                    head = f"{head}\n\n{mark}"
                text = f"{head}\n\n*From module `{module}`.*" + (f"\n\n{rest}" if rest else "")
            out.append(text)
        return out


def _ambient_modules(children, src: bytes) -> list[tuple[int, int, str]]:
    """The file-level `declare module "name" { ... }` blocks naming a package or one of its
    subpaths (not a relative augmentation like `declare module "../index"`), in order."""
    out = []
    for node in children:
        if node.type != "ambient_declaration":
            continue
        mod = next((c for c in node.named_children if c.type == "module"), None)
        name = mod.child_by_field_name("name") if mod is not None else None
        if name is not None and name.type == "string":
            text = _text(name, src).strip("'\"")
            if text and not text.startswith("."):
                out.append((node.start_byte, node.end_byte, text))
    return out


def _unwrap(node):
    """`declare class X` -> the class declaration (tsc writes `export declare ...`); a bare
    `namespace X { }` statement (tree-sitter reads it as an expression) -> the namespace:
    inside `declare module 'stripe' { namespace Stripe { ... } }` it is the whole API."""
    if node is None:
        return node
    if node.type == "expression_statement":
        inner = node.named_children[0] if node.named_child_count == 1 else None
        return inner if inner is not None and inner.type == "internal_module" else node
    if node.type != "ambient_declaration":
        return node
    return next((c for c in node.named_children if c.type in DECLS), None)


def _augmentation_body(node, src: bytes):
    """The body of `declare module "name" { ... }` (a module augmentation, or an ambient
    module) or of `declare global { ... }`; None for anything else (`declare module Foo`
    is a namespace)."""
    if node.type != "ambient_declaration":
        return None
    for child in node.named_children:
        if child.type == "statement_block" and _text(node, src).lstrip().startswith("declare global"):
            return child
        if child.type == "module":
            name = child.child_by_field_name("name")
            if name is not None and name.type == "string":
                return child.child_by_field_name("body")
    return None


def _names(decl, src: bytes) -> list[str]:
    if decl.type in ("lexical_declaration", "variable_declaration"):
        return [_text(d.child_by_field_name("name"), src) for d in decl.named_children
                if d.type == "variable_declarator" and d.child_by_field_name("name") is not None]
    name = decl.child_by_field_name("name")
    return [_text(name, src).strip("'\"")] if name is not None else []


def _member_sections(decl, src: bytes, owner: str) -> list[str]:
    body = decl.child_by_field_name("body") or decl.child_by_field_name("value")
    if body is None or body.type not in ("object_type", "interface_body", "class_body"):
        return []
    out: list[str] = []
    last = None
    doc: str | None = None
    for node in body.named_children:
        if node.type == "comment":
            text = _text(node, src)
            doc = text if text.startswith("/**") else None
            continue
        this_doc, doc = doc, None
        if node.type not in MEMBERS or not this_doc or hidden(this_doc):
            continue
        name_node = node.child_by_field_name("name")
        name = _text(name_node, src) if name_node is not None else "(call)"
        code = _text(node, src)
        if len(code) > MAX_DECL_CHARS:
            code = code[:MAX_DECL_CHARS] + "\n// ... (cut)"
        text = jsdoc_markdown(this_doc, deprecated_tag=False)
        if name == last and out:  # an overload: under the same heading, its own doc and signature
            out[-1] += (f"\n\n{text}" if text and text not in out[-1] else "") + f"\n\n```ts\n{code}\n```"
            continue
        mark = deprecation_line(this_doc)
        head = f"### {owner}.{name}" + (f"\n\n{mark}" if mark else "")
        out.append(f"{head}\n\n{text}\n\n```ts\n{code}\n```")
        last = name
    return out


def without_jsdoc(code: str) -> str:
    """`code` without its `/** ... */` comments and the blank lines they leave (one pass
    of `str.find`: linear on any input, an unclosed comment runs to the end)."""
    out: list[str] = []
    pos = 0
    while True:
        start = code.find("/**", pos)
        if start < 0:
            out.append(code[pos:])
            break
        out.append(code[pos:start])
        end = code.find("*/", start + 3)
        pos = len(code) if end < 0 else end + 2
    return "\n".join(ln for ln in "".join(out).split("\n") if ln.strip())


def deprecation_line(comment: str) -> str | None:
    """`**Deprecated:** <text>` for a JSDoc comment with `@deprecated`, else None."""
    m = _DEPRECATED_TAG.search(comment)
    if m is None:
        return None
    text = " ".join(m.group(1).replace("*/", "").split())
    return f"**Deprecated:** {text}" if text else "**Deprecated.**"


def jsdoc_markdown(comment: str, deprecated_tag: bool = True) -> str:
    """`/** ... */` -> text: the leading `*` gone, @param/@returns/@see/@default... as a list,
    @example as code (kept as written when it has its own fence), @remarks as prose,
    `{@link Target | text}` as its text (`` `Target` `` without one, a markdown link for a
    URL); `@deprecated` in bold unless the caller shows it as the section's first line."""
    body = comment[3:-2] if comment.endswith("*/") else comment[3:]
    body = _INLINE_LINK.sub(_link_text, body) if "{@" in body else body
    lines = [re.sub(r"^\s*\* ?", "", ln) if ln.lstrip().startswith("*") else ln.strip() for ln in body.split("\n")]
    out: list[str] = []
    example = ""  # "" | "open" (inside a ```ts block of ours) | "start" (first line to come) | "own"

    def close() -> None:
        while out and not out[-1].strip():
            out.pop()
        if example == "open":
            out.append("```")

    for line in lines:
        m = _TAG.match(line.strip())
        if m:
            close()
            example = ""
            tag, rest = m.group(1), m.group(2)
            if tag == "example":
                out += ["", "Example:", ""]
                example = "start"
                if rest:
                    out += ["```ts", rest]
                    example = "open"
            elif tag == "param":
                pm = re.match(r"^(\{[^}]*\}\s*)?(\[?[\w.$]+\]?)\s*-?\s*(.*)$", rest)
                out.append(f"- `{pm.group(2)}`: {pm.group(3)}" if pm else f"- {rest}")
            elif tag in ("returns", "return"):
                out.append(f"- Returns: {rest}")
            elif tag == "deprecated":
                if deprecated_tag:
                    out.append(f"**Deprecated.** {rest}".rstrip())
            elif tag in ("remarks", "remark", "description"):
                out += ["", rest] if rest else [""]
            elif tag in ("typeParam", "template"):
                tm = re.match(r"^(\{[^}]*\}\s*)?([\w$]+)\s*-?\s*(.*)$", rest)
                out.append(f"- Type parameter `{tm.group(2)}`: {tm.group(3)}".rstrip(": ") if tm else f"- {rest}")
            elif tag in _TAG_LABELS:
                out.append(f"- {_TAG_LABELS[tag]}: {rest}".rstrip(": "))
            elif tag not in _SILENT_TAGS:
                out.append(f"- @{tag} {rest}".rstrip())
            continue
        if example == "start" and line.strip():
            if line.lstrip().startswith(("```", "~~~")):
                example = "own"  # the example brings its own fence: kept as written
            else:
                out.append("```ts")
                example = "open"
        if not example and line.lstrip().startswith("#"):
            line = "\\" + line.lstrip()
        out.append(line)
    close()
    return "\n".join(out).strip()


_TAG_LABELS = {"see": "See", "since": "Since", "default": "Default", "defaultValue": "Default", "throws": "Throws",
               "throw": "Throws", "exception": "Throws", "version": "Version", "experimental": "Experimental",
               "beta": "Beta", "alpha": "Alpha", "category": "Category"}
_SILENT_TAGS = {"public", "override", "virtual", "readonly", "inheritDoc", "inheritdoc", "module", "packageDocumentation",
                "type", "kind", "function", "method", "memberof", "static", "class", "interface", "enum",
                "internal", "hidden", "ignore", "private", "protected", "sealed", "eventProperty", "name"}
# `{@link Target}`, `{@link Target | text}`, `{@link Target text}`, `{@linkcode ...}`, `{@inheritDoc X}`
_INLINE_LINK = re.compile(r"\{@(link|linkcode|linkplain|inheritDoc|inheritdoc)[ \t\n*]+([^}\s|]{1,300})"
                          r"[ \t]*\|?[ \t]*([^}\n]{0,300})\}")
# the JSDoc of what TypeScript's `stripInternal` and API tools leave out
_HIDDEN_TAG = re.compile(r"^[ \t]*(?:/\*\*|\*)?[ \t]*@(?:internal|hidden|ignore|private)\b", re.M)


def _link_text(m: re.Match) -> str:
    kind, target, text = m.group(1), m.group(2), m.group(3).strip()
    if kind.lower() == "inheritdoc":
        return f"(see `{target}`)"
    if target.startswith(("http://", "https://")):
        return f"[{text or target}]({target})"
    return text if text and kind != "linkcode" else f"`{text or target}`"


def hidden(comment: str | None) -> bool:
    """A JSDoc tagged `@internal`, `@hidden`, `@ignore` or `@private`: not public API."""
    return bool(comment) and _HIDDEN_TAG.search(comment) is not None
