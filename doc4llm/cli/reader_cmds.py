"""`doc4llm toc` and `doc4llm read`: the backend of /md-doc-reader."""

from __future__ import annotations

import click

from doc4llm.cli.common import docs_dir_option, echo_text, emit_json, handle_errors, json_option
from doc4llm.cli.scope import scope_options
from doc4llm.corpus.model import NO_HEADING
from doc4llm.corpus.paths import resolve_docs_dir

set_option = click.option("--set", "sets", multiple=True, help="Doc set (NAME@VER or glob); repeatable.")


def _in_scope(lookup, docs_dir, sets: tuple[str, ...], project: str | None, all_sets: bool):
    """A page looked up in the synced project's sets first (`pydantic (API)` is then the
    pinned version's), then in every set (a page only another set has is still found)."""
    from doc4llm.cli.scope import cli_scope

    return cli_scope(docs_dir, list(sets) or None, project, all_sets).lookup_first(lookup, list(sets) or None)


ALSO_SHOWN = 3  # later sections a line range runs into, named in the citation header


def _kt(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _echo_outline(data: dict) -> None:
    """One line per page (source, title, size), one line of its headings."""
    out = [f"{data['doc_set']}  {len(data['pages'])} pages ~{_kt(data['tokens'])}t"]
    for p in data["pages"]:
        src = p["source"] if p["source"] and "://" not in p["source"] else p["page"]
        title = f"  {p['title']}" if p["title"] != src else ""
        out.append(f"{src}{title}  ~{_kt(p['tokens'])}t")
        items = [("> " * (h["level"] - 1)) + f"{h['heading']} L{h['lines'][0]}-{h['lines'][1]} ~{_kt(h['tokens'])}t"
                 for h in p["headings"]]
        if items:
            out.append("  " + " · ".join(items))
    echo_text("\n".join(out))


@click.command("toc")
@click.argument("page", required=False)
@set_option
@click.option("--depth", default=1, show_default=True,
              help="Outline (no PAGE): heading levels shown under each page's title.")
@scope_options
@docs_dir_option
@json_option
@handle_errors()
def toc_cmd(page: str | None, sets: tuple[str, ...], depth: int, project: str | None, all_sets: bool,
            docs_dir: str | None, as_json: bool) -> None:
    """A page's heading tree with line ranges and token counts; without PAGE, the outline of
    one set (--set): every page's source and its top headings."""
    from doc4llm.reader import get_outline, get_toc

    if page is None:
        outline = get_outline(resolve_docs_dir(docs_dir), list(sets) or None, depth)
        if as_json:
            emit_json(outline)
        else:
            _echo_outline(outline)
        return

    root = resolve_docs_dir(docs_dir)
    data = _in_scope(lambda names: get_toc(root, page, names), root, sets, project, all_sets)
    if as_json:
        emit_json(data)
        return
    src = data.get("source")
    # the page as search results cite it (its source file), then its folder name
    name = f"{src} (page {data['page']})" if src and "://" not in src and src != data["page"] else data["page"]
    lines = [f"{data['doc_set']} / {name}  ({data['line_count']} lines, ~{data['tokens']} tok)",
             f"content: {data['content_path']}"]
    for s in data["sections"]:
        indent = "  " * max(len(s["heading_path"]) - 1, 0)
        a, b = s["lines"]
        name = NO_HEADING if s.get("no_heading") else s["address"].split(" > ")[-1]  # " (2)": a repeat
        lines.append(f"{indent}{name}  L{a}-{b} ~{s['tokens']}t")
    echo_text("\n".join(lines))


@click.command("read")
@click.argument("page")
@click.option("--section", help='Heading path, e.g. "Stages > Decoder" or just "Decoder".')
@click.option("--lines", help="Line range N:M (1-based, inclusive; N: to the end; N alone) in docContent.md.")
@click.option("--with-subsections", is_flag=True, help="Include the section's subsections.")
@set_option
@scope_options
@docs_dir_option
@json_option
@handle_errors()
def read_cmd(page: str, section: str | None, lines: str | None, with_subsections: bool,
             sets: tuple[str, ...], project: str | None, all_sets: bool, docs_dir: str | None,
             as_json: bool) -> None:
    """Print a page, one section of it, or a line range."""
    from doc4llm.reader import read_section

    root = resolve_docs_dir(docs_dir)
    data = _in_scope(lambda names: read_section(root, page, set_name=names, section=section, lines=lines,
                                                with_subsections=with_subsections),
                     root, sets, project, all_sets)
    if as_json:
        emit_json(data)
        return
    a, b = data["lines"]
    where = NO_HEADING if data.get("no_heading") else \
        " > ".join(data["heading_path"]) if data["heading_path"] else data["page"]
    more = data.get("also_sections") or []
    if more:  # the range runs into later sections: they are named with their lines
        names = ", ".join(f"{x['heading']} {x['lines'][0]}-{x['lines'][1]}" for x in more[:ALSO_SHOWN])
        where += f" (then {names}" + (f", +{len(more) - ALSO_SHOWN} more" if len(more) > ALSO_SHOWN else "") + ")"
    src = data.get("source")
    origin = f"  source {src}" if src and "://" not in src else ""
    echo_text(f"[{data['doc_set']} / {where}  {data['content_path']}:{a}-{b}  ~{data['tokens']}t{origin}]\n"
              f"{data['text']}")
