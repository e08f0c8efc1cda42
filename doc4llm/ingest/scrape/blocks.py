"""Rewrites of documentation blocks in the HTML tree, before markdown conversion.

Each generator marks code languages, heading anchors, admonitions, tabs and API entries
its own way; these functions bring them to one shape that the converter renders well:
`<pre data-lang>`, headings with `data-anchor`, `<blockquote>` with a bold title, every
tab panel visible under its label, API entries as headings.
"""

from __future__ import annotations

import re

_ANCHOR_OK = re.compile(r"^[\w:.\-]+$")  # what a `{#id}` attribute list can carry
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight|brush|hljs-lang)-([A-Za-z0-9_+#.\-]+)$")
_NO_LANG = {"none", "default", "plain", "plaintext", "nohighlight", "text-plain", "notranslate"}
_ADMONITION_CLASS = re.compile(
    r"^(admonition|theme-admonition|callout|custom-block|hint|alert|note|warning|starlight-aside)$"
)
_ADMONITION_KINDS = (
    "note", "tip", "info", "warning", "danger", "caution", "important", "success", "error",
    "attention", "hint", "seealso", "todo", "example", "question", "bug", "abstract", "check",
)
_LINE_NUMBER = re.compile(r"^(linenos?|line-?numbers?(-rows)?|codeLineNumber.*|gutter)$", re.IGNORECASE)
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def classes(el) -> list[str]:
    value = el.get("class") or []
    return value.split() if isinstance(value, str) else list(value)


def code_language(pre) -> str:
    """Language of a code block from classes or data attributes on it, its <code>, or up to
    three ancestors (Sphinx puts `highlight-python` two levels up)."""
    candidates = [pre]
    code = pre.find("code")
    if code is not None:
        candidates.insert(0, code)
    parent = pre.parent
    for _ in range(3):
        if parent is None or parent.name in ("body", "article", "main"):
            break
        candidates.append(parent)
        parent = parent.parent
    for el in candidates:
        for attr in ("data-language", "data-lang", "lang"):
            value = (el.get(attr) or "").strip().lower()
            if value and value not in _NO_LANG:
                return value
        for cls in classes(el):
            match = _LANG_CLASS.match(cls)
            if match and match.group(1).lower() not in _NO_LANG:
                return match.group(1).lower()
        if "sourceCode" in classes(el):  # pandoc: class="sourceCode python"
            others = [c for c in classes(el) if c != "sourceCode"]
            if others:
                return others[0].lower()
    return ""


def _is_self_link(a) -> bool:
    """`<a href="#x">¶</a>`: a permalink glyph, not a cross-reference with words."""
    return (a.get("href") or "").startswith("#") and not a.get_text(strip=True).strip(_LINK_GLYPHS)


_LINK_GLYPHS = "¶#§🔗\u200b"


def _heading_anchor(h, anchors: list) -> str | None:
    """The id a heading is linked by: its own, an anchor child's, its section's (Sphinx
    puts empty `<span id>` label targets before the heading), or its permalink's. A link
    inside the heading text (`Using the <a href="#module-x">x</a> module`) is not it."""
    if h.get("id"):
        return h["id"]
    for a in anchors:
        if a.get("id") or a.get("name"):
            return a.get("id") or a.get("name")
    parent = h.parent
    if parent is not None and parent.get("id") and parent.name in ("section", "div"):
        first = next((c for c in parent.children if getattr(c, "name", None)
                      and not (c.name == "span" and not c.get_text(strip=True))), None)
        if first is h:
            return parent["id"]
    for a in anchors:
        if _is_self_link(a) and len(a["href"]) > 1:
            return a["href"][1:]
    return None


def absolutize(tags: list, base: str) -> None:
    from urllib.parse import urljoin

    for el in tags:
        attr = "href" if el.name == "a" else "src"
        if el.decomposed or not el.get(attr):
            continue
        value = el[attr].strip()
        if value.startswith(("javascript:", "data:")):
            del el[attr]
            continue
        el[attr] = urljoin(base, value)


def prepare_code(tables: list, pres: list) -> None:
    for table in tables:
        cell = table.find("td", class_="code")
        pre = cell.find("pre") if cell else None
        if pre is not None:
            table.replace_with(pre.parent if pre.parent.name == "div" else pre)
    for pre in pres:
        if pre.decomposed:
            continue
        pre["data-lang"] = code_language(pre)
        for el in pre.find_all(True):
            if el.decomposed:
                continue
            if el.name == "br":
                el.replace_with("\n")
            elif any(_LINE_NUMBER.match(c) for c in classes(el)) or el.name == "button":
                el.decompose()  # gutters and copy buttons are not code


def prepare_math(formulas: list) -> None:
    """KaTeX renders a formula twice (MathML and HTML); keep its TeX source once: `$x^2$`."""
    for el in formulas:
        if el.decomposed:
            continue
        tex = el.find("annotation", attrs={"encoding": "application/x-tex"})
        if tex is None:
            continue
        source = tex.get_text().strip()
        display = el.parent is not None and "katex-display" in classes(el.parent)
        el.replace_with(f"$${source}$$" if display else f"${source}$")


def prepare_headings(headings: list) -> None:
    for h in headings:
        anchors = h.find_all("a")
        anchor = _heading_anchor(h, anchors)
        for a in anchors:
            if _is_self_link(a):
                a.decompose()  # the self-link glyph next to a heading
        if anchor and _ANCHOR_OK.match(anchor):
            h["data-anchor"] = anchor


def _admonition_kind(el) -> str:
    declared = el.get("data-callout-type") or el.get("data-type")
    if declared:
        return declared.lower()
    for cls in classes(el):
        for kind in _ADMONITION_KINDS:
            if cls.lower() == kind or cls.lower().endswith(("-" + kind, "_" + kind)):
                return kind
    return "note"


def is_admonition(el) -> bool:
    if el.name == "details":  # collapsible boxes: the <summary> is the title
        return True
    return (el.name in ("div", "aside", "section")
            and (any(_ADMONITION_CLASS.match(c) for c in classes(el))
                 or el.get("data-callout-type") is not None))


def prepare_admonitions(soup, boxes: list) -> None:
    """Admonitions (note/warning boxes of every generator) become `> **Title**` quotes."""
    for box in boxes:
        if box.find_parent("pre") is not None or box.name is None:
            continue
        title_el = box.find("summary") or box.find(
            lambda t: t.name in ("p", "div", "span", "strong")
            and any("title" in c.lower() or "heading" in c.lower() for c in classes(t)))
        title = title_el.get_text(" ", strip=True) if title_el is not None else ""
        if title_el is not None:
            title_el.decompose()
        quote = soup.new_tag("blockquote")
        label = soup.new_tag("p")
        strong = soup.new_tag("strong")
        strong.string = title or _admonition_kind(box).capitalize()
        label.append(strong)
        quote.append(label)
        for child in list(box.contents):
            quote.append(child.extract())
        box.replace_with(quote)


def _label_panels(soup, labels: list[str], panels: list) -> None:
    for i, panel in enumerate(panels):
        if panel.has_attr("hidden"):
            del panel["hidden"]
        if i < len(labels) and labels[i]:
            para = soup.new_tag("p")
            strong = soup.new_tag("strong")
            strong.string = labels[i]
            para.append(strong)
            panel.insert_before(para)


def _near_tabpanels(tablist) -> list:
    scope = tablist.parent
    for _ in range(3):
        if scope is None:
            break
        panels = scope.find_all(attrs={"role": "tabpanel"})
        if panels:
            return panels
        scope = scope.parent
    return []


def unfold_tabs(soup, tab_sets: list) -> None:
    """Tabs (npm / yarn, Python / JS) show one panel and hide the others; every panel is
    content. Each becomes a `**Label**` line followed by its panel, hidden ones included."""
    for el in tab_sets:
        if el.decomposed:
            continue
        kinds = set(classes(el))
        if kinds & {"tabbed-set", "vp-code-group"}:  # Material / VitePress
            labels = [lab.get_text(" ", strip=True) for lab in el.find_all("label")]
            if "tabbed-set" in kinds:
                panels = el.find_all("div", class_="tabbed-block")
            else:
                blocks = el.find("div", class_="blocks")
                panels = [c for c in blocks.children if getattr(c, "name", None)] if blocks else []
            for chrome in el.find_all(["label", "input"]):
                chrome.decompose()
        else:  # ARIA: role=tablist with role=tab, panels near it with role=tabpanel
            labels = [t.get_text(" ", strip=True) for t in el.find_all(attrs={"role": "tab"})]
            panels = _near_tabpanels(el)
            el.decompose()
        _label_panels(soup, labels, panels)


_API_DOMAINS = {"py", "c", "cpp", "js", "rst", "http", "std"}
_SIGNATURE_CHROME = ("headerlink", "viewcode-link", "viewcode-back", "sig-paren-placeholder")


# Sphinx 1.x wrote the object type alone (`<dl class="function">`), without the domain
_API_KINDS = {"function", "class", "method", "attribute", "exception", "data", "classmethod",
              "staticmethod", "decorator", "property", "envvar", "option", "cmdoption"}


def _is_api_entry(el) -> bool:
    if el.name != "dl":
        return False
    kinds = set(classes(el))
    if _API_DOMAINS & kinds:
        return True
    return bool(_API_KINDS & kinds) and el.find("dt", id=True, recursive=False) is not None


def _section_level(dl) -> int:
    """Level of the heading of the section a Sphinx entry sits in: the heading that is a
    direct child of its nearest `<section>` (or `div.section`) holding one, else the
    nearest heading before it, else 1."""
    for parent in dl.parents:
        if parent.name == "section" or (parent.name == "div" and "section" in classes(parent)):
            heading = parent.find(HEADINGS, recursive=False)
            if heading is not None:
                return int(heading.name[1])
    previous = dl.find_previous(HEADINGS)
    return int(previous.name[1]) if previous is not None else 1


def signature_text(dt) -> str:
    """The text of an entry's `<dt>`: `json.dump(obj, fp, *, skipkeys=False, **kw)`,
    without the permalink glyph or `[source]` link."""
    for el in dt.find_all(True):
        if not el.decomposed and set(_SIGNATURE_CHROME) & set(classes(el)):
            parent = el.parent
            (parent if parent is not None and parent.name == "a" and parent is not dt else el).decompose()
    return " ".join(dt.get_text().replace("\u00b6", "").split())


MAX_SIGNATURE_HEADING = 200


def short_signature(text: str, limit: int = MAX_SIGNATURE_HEADING) -> str:
    """A heading for a very long signature (Jinja's `class jinja2.Template(...)` runs to 600
    characters): whole parameters up to `limit`, then `...`, then a closing `**kwargs` if
    there is one, so docTOC.md lines stay readable and the name leads. The full signature
    is kept in the body."""
    if len(text) <= limit:
        return text
    open_at = text.find("(")
    if open_at < 0 or open_at > limit - 5 or not text.endswith(")"):
        return text[: limit - 3].rstrip() + "..."
    head, params = text[: open_at + 1], text[open_at + 1:-1].split(", ")
    tail = f", {params[-1]}" if params[-1].startswith("**") and len(params[-1]) < 40 else ""
    kept = ""
    for part in params:
        if len(head) + len(kept) + len(part) + len(tail) + 7 > limit:
            break
        kept = f"{kept}, {part}" if kept else part
    return f"{head}{kept}, ...{tail})" if kept else f"{head}...{tail})"


def unlink_type_annotations(main) -> None:
    """Sphinx field lists write a parameter's type as links and emphasis per token
    (`<a><em>Optional</em></a><em>[</em><a><em>str</em></a><em>]</em>`), which markdownify
    turns into `[*Optional*](...)*[*[*str*](...)*]*`. Each such run after a parameter name
    (`<strong>x</strong> (...)`), and a `Return type` / `Type` field's value, becomes one
    code span: `Optional[str]`."""
    for field_list in main.find_all("dl", class_="field-list"):
        for strong in field_list.find_all("strong"):
            _type_run_after(strong)
        for dt in field_list.find_all("dt"):
            label = " ".join(dt.get_text(" ", strip=True).rstrip(":").split()).lower()
            dd = dt.find_next_sibling("dd")
            if dd is None or label not in ("return type", "type", "rtype"):
                continue
            target = dd.find("p") or dd
            if target.find(["a", "em"]) is not None and target.find(["strong", "code", "ul"]) is None:
                text = " ".join(target.get_text().split())
                target.clear()
                tag = _new_tag(target, "code")
                tag.string = text
                target.append(tag)


def _new_tag(anchor, name: str):
    soup = anchor
    while soup.parent is not None:
        soup = soup.parent
    return soup.new_tag(name)


def _type_run_after(strong) -> None:
    from bs4 import NavigableString

    opening = strong.next_sibling
    if not isinstance(opening, NavigableString) or not str(opening).rstrip().endswith("("):
        return
    run = []
    node = opening.next_sibling
    while node is not None and not isinstance(node, NavigableString) and node.name in ("a", "em", "span", "code"):
        run.append(node)
        node = node.next_sibling
    if not run or not isinstance(node, NavigableString) or not str(node).lstrip().startswith(")"):
        return
    if not any(el.name == "a" or el.find("a") is not None or el.name == "em" for el in run):
        return
    text = "".join(el.get_text() for el in run)
    code = _new_tag(strong, "code")
    code.string = " ".join(text.split())
    run[0].replace_with(code)
    for el in run[1:]:
        el.decompose()


def api_entries_to_headings(soup, main) -> None:
    """Sphinx API entries (`<dl class="py method"><dt id="acme.Client.get">`) become headings
    so every class, function and option is in docTOC.md with its own url#anchor, the way API
    reference questions look things up.

    Consecutive entries are siblings: one level under the section heading they sit in (a
    class's members one level under the class), levels taken from the tree as written,
    before any entry is rewritten. The first `<dt>` is the heading (the signature, anchored
    at the id it carries, or the id of another `<dt>` of the entry, or none); further
    signatures of the same entry (`range(stop)` / `range(start, stop[, step])`) are body
    lines under it."""
    plan = []
    for dl in main.find_all(_is_api_entry):
        depth = sum(1 for p in dl.parents if _is_api_entry(p))
        plan.append((dl, min(6, _section_level(dl) + 1 + depth)))
    for dl, level in plan:
        dts = dl.find_all("dt", recursive=False)
        ids = [dt.get("id") for dt in dts if dt.get("id")]
        for k, dt in enumerate(dts):
            text = signature_text(dt)
            if k == 0:
                node = soup.new_tag(f"h{level}")
                node.string = short_signature(text)
                if ids:
                    node["id"] = ids[0]
                if node.string != text:  # the full signature stays, as the entry's first line
                    full = soup.new_tag("pre")
                    full["data-lang"] = "python"
                    full.string = text
                    dt.insert_after(full)
            else:
                node = soup.new_tag("p")
                code = soup.new_tag("code")
                code.string = text
                node.append(code)
            dt.replace_with(node)
        for dd in dl.find_all("dd", recursive=False):
            dd.name = "div"
        dl.name = "div"
