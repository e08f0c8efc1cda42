"""YAML from outside (lockfiles, mkdocs.yml, set metadata) read within a budget.

`yaml.safe_load` runs no code, but an alias is a reference: nine anchors of nine aliases
("billion laughs") load in a millisecond as a shared graph and then expand to 387 million
nodes the moment anything walks, prints or copies the result. Here the composer counts every
node as it would be after expanding the aliases (an alias costs its anchor's whole subtree)
and stops at `max_nodes`; nesting stops at `max_depth`; an alias to an anchor still being
built (a recursive structure) is refused. libyaml still scans and parses (speed); only the
composing step runs in Python, in one pass, in time linear in the file. A text without
`&` holds no anchor, so nothing can expand: libyaml composes it alone (about a third
faster) and one iterative walk of the result checks the same budget.

Every failure is a `YamlError` (an InputError, exit 2) with one sentence that names the file.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent
from yaml.resolver import Resolver

from doc4llm.errors import InputError

MAX_NODES = 2_000_000  # a 100k-line pnpm-lock.yaml has ~300k nodes
MAX_DEPTH = 100  # real files nest < 20 levels


class YamlError(InputError):
    """A YAML file that does not parse or exceeds the budget (exit 2)."""


class _Budget(Exception):
    pass


try:  # libyaml's scanner and parser (C); PyYAML's pure-Python ones otherwise
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)

        def dispose(self) -> None:
            pass


class _BudgetComposer(Composer):
    """PyYAML's composer, counting expanded nodes and depth."""

    def _init_budget(self, max_nodes: int, max_depth: int) -> None:
        self._max_nodes, self._max_depth = max_nodes, max_depth
        self._nodes = 0
        self._depth = 0
        self._sizes: dict[str, int] = {}  # anchor -> expanded node count of its subtree

    def _spend(self, n: int) -> None:
        self._nodes += n
        if self._nodes > self._max_nodes:
            raise _Budget(f"expands to more than {self._max_nodes:,} nodes (aliases counted as copies)")

    def compose_document(self):  # noqa: ANN201 - PyYAML's signature
        self._sizes = {}
        return super().compose_document()

    def compose_node(self, parent, index):  # noqa: ANN001, ANN201 - PyYAML's signature
        if self.check_event(AliasEvent):
            event = self.peek_event()
            anchor = event.anchor
            if anchor in self.anchors and anchor not in self._sizes:
                raise _Budget(f"has an alias *{anchor[:40]} inside its own anchor (a recursive structure)")
            self._spend(self._sizes.get(anchor, 1))
            return super().compose_node(parent, index)
        start = self._nodes
        self._spend(1)
        anchor = None
        if self.check_event(ScalarEvent, SequenceStartEvent, MappingStartEvent):
            anchor = self.peek_event().anchor
        self._depth += 1
        if self._depth > self._max_depth:
            raise _Budget(f"nests deeper than {self._max_depth} levels")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if anchor is not None:
            self._sizes[anchor] = self._nodes - start
        return node


class _Loader(_BudgetComposer, _Parser, SafeConstructor, Resolver):
    def __init__(self, stream: str, max_nodes: int, max_depth: int, ignore_unknown_tags: bool) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._init_budget(max_nodes, max_depth)
        if ignore_unknown_tags:  # `!!python/name:...` in mkdocs.yml: read as None, never run
            self.yaml_constructors = {**self.yaml_constructors, None: _none}

    # CParser defines its own (C) composer entry points; these route to the Python one
    get_node = Composer.get_node
    get_single_node = Composer.get_single_node
    check_node = Composer.check_node


def _none(loader: SafeConstructor, node: yaml.Node) -> None:
    return None


_CLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastLoader(_CLoader):  # type: ignore[misc,valid-type]
    pass


class _FastLoaderIgnoringTags(_CLoader):  # type: ignore[misc,valid-type]
    pass


_FastLoaderIgnoringTags.add_constructor(None, _none)


def _within(data: Any, max_nodes: int, max_depth: int) -> str | None:
    """Why the loaded `data` is over budget (None when it is not); iterative."""
    stack, nodes = [(data, 1)], 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            return f"has more than {max_nodes:,} nodes"
        if isinstance(node, dict):
            children = [*node.keys(), *node.values()]
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            return f"nests deeper than {max_depth} levels"
        stack.extend((c, depth + 1) for c in children)
    return None


def load_yaml(text: str, source: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH,
              ignore_unknown_tags: bool = False) -> Any:
    """The first YAML document of `text` (None when empty); `source` names the file in errors.

    `ignore_unknown_tags=True` reads a tag no safe constructor knows (mkdocs.yml's
    `!!python/name:` or `!ENV`) as None instead of failing."""
    if "&" not in text:
        # no anchor, so no alias and no merge of one: libyaml composes (fast, its own depth
        # cap of 1000), then one iterative walk checks nodes and depth
        try:
            data = yaml.load(text, Loader=_FastLoaderIgnoringTags if ignore_unknown_tags else _FastLoader)
        except yaml.MarkedYAMLError as exc:
            raise _error(source, exc) from None
        except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
            raise YamlError(f"{source} does not parse as YAML: {' '.join(str(exc).split())[:200]}") from None
        problem = _within(data, max_nodes, max_depth)
        if problem:
            raise YamlError(f"{source} {problem}: not read")
        return data
    loader = _Loader(text, max_nodes, max_depth, ignore_unknown_tags)
    try:
        return loader.get_single_data()
    except _Budget as exc:
        raise YamlError(f"{source} {exc}: not read") from None
    except yaml.MarkedYAMLError as exc:
        raise _error(source, exc) from None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise YamlError(f"{source} does not parse as YAML: {' '.join(str(exc).split())[:200]}") from None
    finally:
        loader.dispose()


def _error(source: str, exc: yaml.MarkedYAMLError) -> YamlError:
    where = f" (line {exc.problem_mark.line + 1})" if exc.problem_mark is not None else ""
    reason = " ".join(str(exc.problem or exc.context or "invalid").split())
    return YamlError(f"{source} does not parse as YAML{where}: {reason}")
