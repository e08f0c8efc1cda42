"""A small CSS-selector subset matched in one pass over the tree.

soupsieve walks the whole document once per selector; with ~70 chrome selectors a large
reference page took seconds. The presets only need `tag`, `#id`, `.class`, one
`[attr]`, `[attr=v]` / `[attr*=v i]` test and one descendant step (`main article`),
so those are compiled here into predicates checked in a single walk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_SIMPLE = re.compile(
    r"^(?P<tag>[a-zA-Z][\w-]*)?(?:#(?P<id>[\w-]+))?(?:\.(?P<cls>[\w-]+))?"
    r"(?:\[(?P<attr>[\w-]+)(?:(?P<op>\*?=)['\"]?(?P<val>[^'\"\]]*?)['\"]?(?P<flag>\s+i)?)?\])?$"
)


@dataclass(frozen=True)
class Simple:
    tag: str | None
    id: str | None
    cls: str | None
    attr: str | None
    op: str | None
    value: str | None
    nocase: bool

    def matches(self, el) -> bool:
        if self.tag and el.name != self.tag:
            return False
        attrs = el.attrs
        if self.id and attrs.get("id") != self.id:
            return False
        if self.cls:
            classes = attrs.get("class") or ()
            if self.cls not in (classes.split() if isinstance(classes, str) else classes):
                return False
        if self.attr:
            if self.attr not in attrs:
                return False
            if self.op:
                actual = attrs[self.attr]
                actual = " ".join(actual) if isinstance(actual, list) else str(actual)
                expected = self.value or ""
                if self.nocase:
                    actual, expected = actual.lower(), expected.lower()
                if self.op == "=" and actual != expected:
                    return False
                if self.op == "*=" and expected not in actual:
                    return False
        return True


@dataclass(frozen=True)
class Selector:
    """`last` must match the element; `ancestor`, when set, one of its ancestors."""

    text: str
    last: Simple
    ancestor: Simple | None = None

    def matches(self, el) -> bool:
        if not self.last.matches(el):
            return False
        if self.ancestor is None:
            return True
        parent = el.parent
        while parent is not None and parent.name != "[document]":
            if self.ancestor.matches(parent):
                return True
            parent = parent.parent
        return False


def _simple(text: str) -> Simple:
    match = _SIMPLE.match(text.strip())
    if not match:
        raise ValueError(f"unsupported selector {text!r}")
    g = match.groupdict()
    return Simple(g["tag"], g["id"], g["cls"], g["attr"], g["op"], g["val"], bool(g["flag"]))


_PART = re.compile(r"(?:\[[^\]]*\]|[^\s\[])+")


def compile_selector(text: str) -> Selector:
    parts = _PART.findall(text)
    if len(parts) == 1:
        return Selector(text, _simple(parts[0]))
    if len(parts) == 2:
        return Selector(text, _simple(parts[1]), _simple(parts[0]))
    raise ValueError(f"unsupported selector {text!r}")


def iter_tags(root):
    """Tags under `root` in document order: a plain stack walk, much cheaper than
    bs4's find_all(True) with its filter machinery."""
    from bs4 import Tag

    stack = list(reversed(root.contents))
    while stack:
        node = stack.pop()
        if isinstance(node, Tag):
            yield node
            stack.extend(reversed(node.contents))


def select_all(root, selectors: list[Selector], *, skip: tuple[str, ...] = ("pre",),
               keep: Callable | None = None) -> list:
    """Outermost elements under `root` matching any selector, in one walk; subtrees of
    `skip` tags are not searched, and a match for which `keep(el)` is true is searched
    instead of returned.

    Selectors are bucketed by tag, id and class so each element is tested only against
    the few that could match it."""
    from bs4 import Tag

    by_tag: dict[str, list[Selector]] = {}
    by_id: dict[str, list[Selector]] = {}
    by_cls: dict[str, list[Selector]] = {}
    general: list[Selector] = []
    for sel in selectors:
        last = sel.last
        if last.id:
            by_id.setdefault(last.id, []).append(sel)
        elif last.cls:
            by_cls.setdefault(last.cls, []).append(sel)
        elif last.tag:
            by_tag.setdefault(last.tag, []).append(sel)
        else:
            general.append(sel)
    found = []
    stack = list(reversed(root.contents))
    while stack:
        el = stack.pop()
        if not isinstance(el, Tag) or el.name in skip:
            continue
        candidates = by_tag.get(el.name, []) + general
        attrs = el.attrs
        if "id" in attrs:
            candidates += by_id.get(attrs["id"], [])
        classes = attrs.get("class")
        if classes:
            for cls in classes.split() if isinstance(classes, str) else classes:
                candidates += by_cls.get(cls, [])
        if any(s.matches(el) for s in candidates) and not (keep and keep(el)):
            found.append(el)
            continue
        stack.extend(reversed(el.contents))
    return found


def first_matches(root, selectors: list[Selector]) -> list:
    """For each selector, its first match in document order (or None), in one walk."""
    first: list = [None] * len(selectors)
    pending = set(range(len(selectors)))
    for el in iter_tags(root):
        for i in list(pending):
            if selectors[i].matches(el):
                first[i] = el
                pending.discard(i)
        if not pending:
            break
    return first
