"""What a tree-sitter node is, for chunking: an import, a function, a class, a method.

One table per role, shared by all grammars (node type names are mostly distinct across
languages), plus the unwrapping of the wrappers that hide a definition: Python
decorators, `export` statements and `const f = () => ...` in JS/TS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

IMPORT_TYPES = frozenset({
    "import_statement", "import_from_statement", "future_import_statement",  # python, js/ts
    "import_declaration", "package_clause",  # go, java
    "use_declaration", "extern_crate_declaration",  # rust
    "package_declaration", "using_directive", "preproc_include", "import_header",
})
# Nodes that belong to the definition that follows them.
PREFIX_TYPES = frozenset({"comment", "line_comment", "block_comment", "attribute_item", "decorator"})

FUNCTION_TYPES = frozenset({
    "function_definition", "function_declaration", "generator_function_declaration",
    "function_item", "method_declaration", "method_definition", "function_signature_item",
    "method_signature", "abstract_method_signature", "constructor_declaration", "method",
})
CLASS_TYPES = frozenset({
    "class_definition", "class_declaration", "abstract_class_declaration",
    "interface_declaration", "enum_declaration", "type_alias_declaration",
    "struct_item", "enum_item", "trait_item", "impl_item", "mod_item", "union_item",
    "type_declaration", "class_specifier", "struct_specifier", "class", "module",
    "object_declaration", "record_declaration",
})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_CLASS_VALUES = frozenset({"class", "class_expression"})


@dataclass(frozen=True)
class Definition:
    """A function or class-like node; `node` is the unwrapped definition."""

    kind: str  # 'function' | 'class' | 'method' (a Go method declared outside its type)
    name: str | None
    node: Node


def _text(node: Node | None) -> str | None:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else None


def _name(node: Node) -> str | None:
    name = node.child_by_field_name("name")
    if name is not None:
        return _text(name)
    if node.type == "type_declaration":  # go: type X struct {...}
        for child in node.named_children:
            if child.type in ("type_spec", "type_alias"):
                return _text(child.child_by_field_name("name"))
    if node.type == "impl_item":  # rust: impl [Trait for] Type
        return _bare_type(_text(node.child_by_field_name("type")))
    return None


def _bare_type(text: str | None) -> str | None:
    """`*Server` / `Cache<K, V>` / `&mut Foo` -> the type's name."""
    if not text:
        return None
    text = text.replace("&", "").replace("*", "").replace("mut ", "").strip()
    return text.split("<", 1)[0].split("[", 1)[0].strip() or None


def _go_receiver(node: Node) -> str | None:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    for param in receiver.named_children:
        return _bare_type(_text(param.child_by_field_name("type")))
    return None


def _unwrap(node: Node) -> Node:
    """decorated_definition / export_statement -> the definition inside."""
    for _ in range(3):
        if node.type == "decorated_definition":
            inner = node.child_by_field_name("definition")
        elif node.type == "export_statement":
            inner = node.child_by_field_name("declaration") or node.child_by_field_name("value")
        else:
            return node
        if inner is None:
            return node
        node = inner
    return node


def definition(node: Node) -> Definition | None:
    """The function/class this top-level node defines, or None for any other statement."""
    core = _unwrap(node)
    if core.type in FUNCTION_TYPES:
        name = _name(core)
        if core.type == "method_declaration" and (recv := _go_receiver(core)):
            return Definition("method", f"{recv}.{name}", core)  # go: func (p *Pool) Submit
        return Definition("function", name, core)
    if core.type in CLASS_TYPES:
        return Definition("class", _name(core), core)
    if core.type in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in core.named_children if c.type == "variable_declarator"]
        if len(declarators) == 1:
            value = declarators[0].child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                return Definition("function", _name(declarators[0]), core)
            if value is not None and value.type in _CLASS_VALUES:
                return Definition("class", _name(declarators[0]), core)
    return None


def is_import(node: Node) -> bool:
    return node.type in IMPORT_TYPES


def members(cls: Node) -> list[tuple[Node, str | None]]:
    """The methods of a class-like node: (outermost node incl. decorators, name)."""
    body = cls.child_by_field_name("body")
    if body is None:
        body = next((c for c in cls.named_children if c.type in ("class_body", "declaration_list", "block")), None)
    if body is None:
        return []
    found = []
    for child in body.named_children:
        core = _unwrap(child)
        if core.type in FUNCTION_TYPES:
            found.append((child, _name(core)))
    return found


def imported_names(node: Node) -> list[str]:
    """Names an import statement brings into scope (used to complete examples)."""
    names: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "type_identifier", "package_identifier"):
            names.append(_text(n) or "")
        elif n.type == "dotted_name" and n.parent is not None and n.parent.type == "import_statement":
            names.append((_text(n) or "").split(".")[0])
        elif n.type == "interpreted_string_literal":  # go: "net/http" -> http
            names.append((_text(n) or "").strip('"').rsplit("/", 1)[-1])
        else:
            stack.extend(n.named_children)
    return [n for n in names if n]
