"""MDX (Docusaurus, Nextra, Mintlify, Starlight pages) -> plain markdown, on import,
keeping every line where it was.

An .mdx page is markdown plus JavaScript: `import`/`export` statements, JSX components
wrapping prose (`<Tabs>`, `<TabItem label="pip">`, `<Callout type="warning">`) and
`{/* comments */}`. Read as markdown, the statements and tags become stray text in
sections and search snippets. On import, outside fenced code: ESM statements and
comment-only lines are blanked, a line holding only a component tag is blanked, or
becomes `**Label**` when the tag carries a `label`/`title` (a tab or a titled callout),
and everything between the tags stays as the prose it is. One line in, one line out, so
line numbers and section ranges point at the same text. Lower-case tags are HTML, which
markdown already renders, and are left alone.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ *(`{3,}|~{3,})")
_ESM = re.compile(r"^(?:import\s+[\w{*'\"]|import\s*$|export\s+(?:default\s+|const\s+|let\s+|var\s+|function\s+|\{))")
# a line that is only a component tag: <Tabs>, </TabItem>, <Note title="x" />; capitalised
# names are components (JSX), lower-case ones HTML. [^<>]* cannot backtrack across tags.
_TAG_LINE = re.compile(r"^\s*<(/?)([A-Z][\w.]*)((?:\s[^<>]*)?)>\s*$")
_LABEL = re.compile(r"""\b(?:label|title)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{\s*["']([^"']*)["']\s*\})""")
_COMMENT_LINE = re.compile(r"^\s*\{/\*.*\*/\}\s*$")


def rewrite_mdx(text: str) -> str:
    """ESM statements, component tags and JSX comments out; their prose kept (module doc)."""
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    in_export = False  # inside a multi-line `export const x = {` ... `}` block
    for line in lines:
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        if in_export:
            out.append("")
            if line[:1] in ("}", "]", ")") or line.strip() in ("};", "});", "];"):
                in_export = False
            continue
        if _ESM.match(line):
            out.append("")
            opened = line.count("{") + line.count("[") + line.count("(")
            closed = line.count("}") + line.count("]") + line.count(")")
            in_export = line.startswith("export") and opened > closed
            continue
        if _COMMENT_LINE.match(line):
            out.append("")
            continue
        tag = _TAG_LINE.match(line)
        if tag:
            label = _LABEL.search(tag.group(3)) if not tag.group(1) else None
            text_label = next((g for g in label.groups() if g), "") if label else ""
            out.append(f"**{text_label.strip()}**" if text_label.strip() else "")
            continue
        out.append(line)
    return "\n".join(out)
