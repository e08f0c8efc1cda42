"""Dependencies flow one way: no import cycle between doc4llm's modules (lazy,
function-level and TYPE_CHECKING imports count too: a cycle hidden in a function is still
a cycle), and nothing in doc4llm/index imports doc4llm/search (search sits above index).

The graph is read from the source with `ast`, so the test sees every import whether or not
it runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "doc4llm"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, known: set[str], root: Path = PACKAGE) -> set[str]:
    """The doc4llm modules a file imports anywhere in it (`from a import b` counts as a.b
    when a.b is a module, else as a)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import doc4llm.index.x.y`: the module part
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    files = sorted(root.rglob("*.py"))
    known = {module_name(p, root) for p in files}
    return {module_name(p, root): imported_modules(p, known, root) for p in files}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def index_graph() -> dict[str, set[str]]:
    graph = import_graph()
    return {m: deps for m, deps in graph.items() if m.startswith("doc4llm.index")}


def test_the_package_has_no_import_cycle():
    """doc4llm as a whole (index/ included: build -> vectors, embedders -> embed_onnx)."""
    graph = import_graph()
    assert "doc4llm.index.vectors" in graph["doc4llm.index.build"]  # the graph is read at all
    assert cycles(graph) == []


def test_nothing_in_index_imports_search():
    arrows = sorted(f"{m} -> {d}" for m, deps in index_graph().items() for d in deps
                    if d == "doc4llm.search" or d.startswith("doc4llm.search."))
    assert arrows == []


def test_the_checker_sees_lazy_typing_and_relative_imports(tmp_path):
    """The checker itself: a cycle made only of a function-level import, a TYPE_CHECKING
    import and a relative import is found; a one-way chain is not."""
    pkg = tmp_path / "doc4llm"
    (pkg / "index").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "index" / "__init__.py").write_text("")
    (pkg / "index" / "a.py").write_text("def f():\n    from doc4llm.index import b\n")
    (pkg / "index" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import X\n")
    (pkg / "index" / "c.py").write_text("import doc4llm.index.a\nX = 1\n")
    (pkg / "index" / "d.py").write_text("from doc4llm.index.a import f\n")
    graph = import_graph(pkg)
    assert graph["doc4llm.index.a"] == {"doc4llm.index.b"}
    assert graph["doc4llm.index.b"] == {"doc4llm.index.c"}
    assert cycles(graph) == [["doc4llm.index.a", "doc4llm.index.b", "doc4llm.index.c"]]
    (pkg / "index" / "c.py").write_text("X = 1\n")
    assert cycles(import_graph(pkg)) == []


@pytest.mark.parametrize("line, expected", [
    ("from doc4llm.index import store", {"doc4llm.index.store"}),
    ("from doc4llm.index.store import open_store", {"doc4llm.index.store"}),
    ("from . import store", {"doc4llm.index.store"}),
    ("from ..search.engine import Searcher", {"doc4llm.search.engine"}),
])
def test_import_forms_resolve_to_modules(tmp_path, line, expected):
    pkg = tmp_path / "doc4llm"
    for sub in ("index", "search"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "index" / "store.py").write_text("")
    (pkg / "search" / "engine.py").write_text("")
    (pkg / "index" / "x.py").write_text(line + "\n")
    assert import_graph(pkg)["doc4llm.index.x"] == expected
