"""Shapes of real npm packages whose sets were silently incomplete or wrong: each test is a
small tree reproducing one shape (the package it was found in is named)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from conftest import run_cli
from conftest import write_tree as write
from fake_registries import FakeRegistries, npm_tgz, tar_gz

from doc4llm.ingest.packages.api_typescript import typescript_api_pages
from doc4llm.ingest.packages.collect import Converter, changelog_pages, readme_page


def heads(body: str, level: str = "## ") -> list[str]:
    return [ln[len(level):] for ln in body.split("\n") if ln.startswith(level)]


# webpack 5's types.d.ts: every class declared at file level, none exported in place; the
# `export =` namespace lists them (`export { Compiler, ... }`), nested namespaces too
WEBPACK_STYLE = {
    "package.json": '{"name": "packer", "version": "5.0.0", "types": "types.d.ts"}',
    "types.d.ts": (
        "/** The compiler. */\ndeclare class Compiler {\n    /** Run it. */\n    run(cb: () => void): void;\n}\n"
        "/** Options object as provided by the user. */\ndeclare interface Configuration {\n"
        "    /** The entry point(s) of the compilation. */\n    entry?: string;\n}\n"
        "declare class MemoryCachePlugin {}\n"
        "declare class Hidden {}\n"
        "declare function exports(options: Configuration): Compiler;\n"
        "declare namespace exports {\n    export const version: string;\n"
        "    export namespace cache {\n        export { MemoryCachePlugin };\n    }\n"
        "    export { Compiler, Configuration as Options };\n}\nexport = exports;\n"),
}

# knex's types/index.d.ts: `export = knex`, whose namespace lists itself (`knex as default`)
# and another file-level namespace holding the whole API (`Knex`)
KNEX_STYLE = {
    "package.json": '{"name": "qb", "version": "3.0.0", "types": "types/index.d.ts"}',
    "types/index.d.ts": (
        "declare function knex(config: Knex.Config): Knex;\n"
        "interface Knex { /** Run a raw query. */ raw(sql: string): unknown }\n"
        "declare namespace knex {\n    export { knex, knex as default, Knex };\n"
        "    export class QueryBuilder {}\n}\n"
        "declare namespace Knex {\n    /** How to connect. */\n    interface Config { client: string }\n"
        "    interface QueryBuilder { /** Filter rows. */ where(col: string): QueryBuilder }\n}\n"
        "export = knex;\n"),
}


def test_declarations_a_namespace_export_list_names_are_documented(tmp_path):
    """webpack 5.94's 400 KB types.d.ts gave 20 sections (the `const`s of its `export =`
    namespace) and none of Compiler, Configuration...; knex 3.1 gave 10 of its 2,800 lines."""
    body = typescript_api_pages(write(tmp_path / "w", WEBPACK_STYLE), [])[0].body
    top = heads(body)
    for name in ("Compiler", "Options", "cache.MemoryCachePlugin", "version", "exports"):
        assert name in top, (name, top)
    assert "Hidden" not in top  # declared, never listed: module-private
    assert "exports.version" not in top  # `exports` is the module itself: members go by their names
    assert "Options object as provided by the user." in body and "*Declared as `Configuration`.*" not in body
    assert {"Compiler.run", "Options.entry"} <= set(heads(body, "### "))

    body = typescript_api_pages(write(tmp_path / "k", KNEX_STYLE), [])[0].body
    top = heads(body)
    for name in ("knex", "knex.Knex", "knex.QueryBuilder", "knex.Knex.Config", "knex.Knex.QueryBuilder"):
        assert name in top, (name, top)
    assert not any(h.startswith(("knex.knex", "knex.default")) for h in top)  # itself, not again
    assert "### knex.Knex.QueryBuilder.where" in body and "How to connect." in body


# dayjs ships its declarations twice (`plugin/utc.d.ts` and `esm/plugin/utc/index.d.ts`,
# differing only in the module names they augment); react-query 5 once per build target
# (`build/modern/`, `build/legacy/`), whose re-exports point into their own tree
COPIES = {
    "package.json": '{"name": "when", "version": "1.0.0", "types": "index.d.ts"}',
    "index.d.ts": "/** Parse a date. */\ndeclare function when(d?: string): when.When;\n"
                  "declare namespace when {\n    interface When { format(t?: string): string }\n}\nexport = when;\n",
    "esm/index.d.ts": "/** Parse a date. */\ndeclare function when(d?: string): when.When;\n"
                      "declare namespace when {\n    interface When { format(t?: string): string }\n}\nexport = when;\n",
    "plugin/utc.d.ts": "import { Plugin } from 'when'\ndeclare const plugin: Plugin\nexport = plugin\n"
                       "declare module 'when' {\n    interface When {\n        /** To UTC. */\n        utc(): When\n    }\n}\n",
    "esm/plugin/utc/index.d.ts": "import { Plugin } from 'when/esm'\ndeclare const plugin: Plugin\nexport = plugin\n"
                                 "declare module 'when/esm' {\n    interface When {\n        /** To UTC. */\n"
                                 "        utc(): When\n    }\n}\n",
    "build/modern/index.d.ts": "export { useQuery } from './useQuery';\nexport { other } from './other';\n",
    "build/modern/useQuery.d.ts": "/** Fetch and cache. */\nexport declare function useQuery(): void;\n",
    "build/legacy/index.d.ts": "export { useQuery } from './useQuery';\nexport { other } from './other';\n",
    "build/legacy/useQuery.d.ts": "/** Fetch and cache. */\nexport declare function useQuery(): void;\n",
    "locale/de.d.ts": "/** German. */\ndeclare const de: { name: 'de' }\nexport = de\n",
    "locale/fr.d.ts": "/** French. */\ndeclare const fr: { name: 'fr' }\nexport = fr\n",
}


def test_copies_of_the_same_declarations_make_one_page(tmp_path):
    """dayjs 1.11.13: 80 API pages, 40 of them `esm/` copies; react-query 5.52: 44, half
    `build/legacy/` copies of `build/modern/`. One page each, which says where the copies are."""
    pages = {p.source: p.body for p in typescript_api_pages(write(tmp_path, COPIES), [])}
    assert set(pages) == {"index.d.ts", "plugin/utc.d.ts", "build/modern/index.d.ts", "build/modern/useQuery.d.ts",
                          "locale/de.d.ts", "locale/fr.d.ts"} or set(pages) == {
        "index.d.ts", "plugin/utc.d.ts", "build/legacy/index.d.ts", "build/legacy/useQuery.d.ts",
        "locale/de.d.ts", "locale/fr.d.ts"}
    assert pages["index.d.ts"].startswith("*The same declarations are also in `esm/index.d.ts`.*")
    assert "`esm/plugin/utc/index.d.ts`" in pages["plugin/utc.d.ts"]


def test_jsdoc_inline_links_block_tags_and_internal_members_read_as_text(tmp_path):
    """@types/three 0.168 left 2,140 raw `{@link X | text}` in its pages, @types/node 286;
    `@example` blocks that bring their own fence were fenced twice; `@internal` members
    (redux toolkit, prisma) were documented as API."""
    write(tmp_path, {"index.d.ts": (
        "/**\n * Used by {@link SpotLight | SpotLights}; see {@link readFileSync} and\n"
        " * {@link https://threejs.org/docs | the manual}.\n * @remarks The cone's angle.\n"
        " * @defaultValue `Math.PI / 3`\n * @since v0.1.29\n * @public\n * @example\n * ```js\n"
        " * # not a heading\n * const s = new SpotLightShadow();\n * ```\n */\n"
        "export declare class SpotLightShadow {\n    /** @internal */\n    _cache: unknown;\n"
        "    /** Read-only flag. */\n    isSpotLightShadow: true;\n}\n"
        "/** @internal */\nexport declare function _reset(): void;\n")})
    body = typescript_api_pages(tmp_path, [])[0].body
    assert "{@link" not in body and "@public" not in body and "@remarks" not in body
    assert "Used by SpotLights; see `readFileSync` and\n[the manual](https://threejs.org/docs)." in body
    assert "- Default: `Math.PI / 3`\n- Since: v0.1.29" in body
    assert "Example:\n\n```js\n# not a heading\n" in body and "```ts\n```js" not in body
    assert "### SpotLightShadow.isSpotLightShadow" in body
    assert "SpotLightShadow._cache" not in body and "## _reset" not in body


README_SHAPES = {
    # koa: the only H1 is the last section
    "koa": {"Readme.md": "<img src='logo.png'/>\n\nExpressive middleware.\n\n## Installation\n\nnpm i\n\n"
                          "# License\n\nMIT\n",
            "History.md": "\n2.15.3 / 2024-04-11\n==================\n\n* fix\n\n2.15.2 / 2024-03-01\n"
                          "==================\n\n* fix\n"},
    # @types/node: H1s are the sections
    "types-node": {"README.md": "# Installation\n> `npm install --save @types/node`\n\n# Summary\nType definitions.\n"},
    # redux: the H1 is a logo
    "redux": {"README.md": "# <a href='https://redux.js.org'><img src='logo.png' alt='Redux Logo'/></a>\n\n"
                           "Redux is a predictable state container.\n"},
    # prisma: the H1 ends in a separator before its badges
    "prisma": {"README.md": "# Prisma Client &middot; [![npm](https://img.shields.io/x.svg)](https://npm.im/x)\n\nQuery.\n"},
    # dotenv: the Spanish translation sorts first; knex: the changelog opens with its newest release
    "dotenv": {"README-es.md": "# dotenv\n\nCarga variables de entorno.\n", "README.md": "# dotenv\n\nLoads env.\n",
               "CHANGELOG.md": "# Master (Unreleased)\n\n# 3.1.0 - 8 December, 2023\n\n### Bug fixes\n"},
    "ws": {"README.md": "# ws: a Node.js WebSocket library\n\nSimple to use.\n\n## Installing\n",
           "CHANGELOG.md": "# Changelog\n\n## 8.18.0\n\n- x\n"},
}


def test_readme_and_changelog_are_titled_by_what_names_them(tmp_path):
    """koa 2.15.3's README was titled `License`, @types/node's `Installation`, redux's
    `(untitled h1)`, prisma's `Prisma Client ·`; dotenv's set held README-es.md; dayjs',
    koa's and knex's changelogs were titled by their newest release."""
    got = {}
    for name, files in README_SHAPES.items():
        root = write(tmp_path / name, files)
        conv = Converter(root)
        readme = readme_page(root, {}, "npm", name, conv)
        got[name] = (readme, changelog_pages(root, name, conv))
    koa, (log,) = got["koa"]
    assert koa.title == "koa README" and "# License" in koa.body and log.title == "koa changelog"
    assert "2.15.3 / 2024-04-11" in log.body
    node = got["types-node"][0]
    assert node.title == "types-node README" and node.body.startswith("# Installation\n") and "# Summary" in node.body
    assert got["redux"][0].title == "redux README" and "predictable state container" in got["redux"][0].body
    assert got["prisma"][0].title == "Prisma Client"
    dotenv, (log,) = got["dotenv"]
    assert dotenv.source == "README.md" and "Loads env." in dotenv.body
    assert log.title == "dotenv changelog" and log.body.startswith("# Master (Unreleased)")
    ws, (log,) = got["ws"]
    assert ws.title == "ws: a Node.js WebSocket library" and log.title == "Changelog"


def umbrella_tgz() -> bytes:
    pkg = {"name": "umbrella", "version": "1.0.0", "types": "index.d.ts",
           "dependencies": {"@types/parts": "^2.0.0", "core-lib": "^1.0.0", "other": "~1.0.0", "local": "file:../x",
                            "gone": "^1.0.0"},
           "devDependencies": {"dev-only": "^1.0.0"}}
    index = ("export * from 'parts';\nexport { useThing as useIt } from 'core-lib';\nexport * from './own';\n"
             "export * from 'dev-only';\nexport * from 'local';\nexport * from 'gone';\n")
    own = "import { helper } from 'other';\nexport { helper };\n/** Its own. */\nexport declare const own: 1;\n"
    return tar_gz({"package/package.json": json.dumps(pkg), "package/index.d.ts": index, "package/own.d.ts": own,
                   "package/README.md": "# umbrella\n\nAll parts in one.\n"})


def test_an_umbrella_package_documents_what_it_re_exports_from_its_dependencies(tmp_path):
    """@types/d3 7.4.3 is thirty `export * from 'd3-xxx'` (2 API sections: d3's set had no
    API), @reduxjs/toolkit re-exports redux, vitest `describe`/`it`/`expect` from
    @vitest/runner and @vitest/expect, jest `runCLI` imported from @jest/core then exported:
    those dependencies are fetched (newest match of the range, `@types/` for a bare name)
    and documented in the set; named re-exports keep only their sections."""
    reg = FakeRegistries()
    try:
        reg.add_npm("umbrella", "1.0.0", umbrella_tgz())
        reg.add_npm("@types/parts", "2.0.0", npm_tgz("@types/parts", "2.0.0", {"index.d.ts": "export declare const old: 1;\n"}),
                    tag_latest=False)
        reg.add_npm("@types/parts", "2.3.0", npm_tgz("@types/parts", "2.3.0", {
            "index.d.ts": "/** Bin values. */\nexport declare function bin(): void;\n"}))
        reg.add_npm("core-lib", "1.2.0", npm_tgz("core-lib", "1.2.0", {"index.d.ts": (
            "/** Use the thing. */\nexport declare function useThing(): void;\n"
            "/** Not re-exported. */\nexport declare function internalThing(): void;\n")}))
        reg.add_npm("other", "1.0.4", npm_tgz("other", "1.0.4", {"index.d.ts": "/** Helps. */\nexport declare function helper(): void;\n"}))
        reg.add_npm("dev-only", "1.0.0", npm_tgz("dev-only", "1.0.0", {"index.d.ts": "export declare const dev: 1;\n"}))
        env = {"npm_config_registry": reg.npm_url, "NPM_CONFIG_REGISTRY": None, "HOME": str(tmp_path)}
        r = run_cli("add", "npm:umbrella@1.0.0", "--docs-dir", tmp_path / "md", "--offline", env=env)
        assert r.returncode == 0, r.stderr
        assert "re-exported dependencies not documented: gone (no npm package named 'gone'" in r.stderr
    finally:
        reg.close()
    set_dir = tmp_path / "md" / "umbrella@1.0.0"
    meta = yaml.safe_load((set_dir / "doc4llm-set.yaml").read_text())
    by_dep = {rec["extra"].get("package"): (set_dir / rec["folder"] / "docContent.md").read_text()
              for rec in meta["pages"].values() if rec["extra"].get("origin") == "dependency"}
    assert set(by_dep) == {"@types/parts@2.3.0", "core-lib@1.2.0", "other@1.0.4"}
    assert "## bin\n\nBin values." in by_dep["@types/parts@2.3.0"]
    assert "*`umbrella` re-exports this package from `parts`.*" in by_dep["@types/parts@2.3.0"]
    core = by_dep["core-lib@1.2.0"]
    assert "## useThing\n\nUse the thing." in core and "internalThing" not in core
    assert "## helper\n\nHelps." in by_dep["other@1.0.4"]
    titles = [rec["title"] for rec in meta["pages"].values()]
    assert "index.d.ts (@types/parts@2.3.0 API)" in titles


FIXTURES = Path(__file__).parent / "fixtures" / "npm_readmes"


def test_a_readme_loses_its_badges_and_html_layout_not_its_content(tmp_path):
    """webpack 5.94's README page held 649 HTML tags and 361 images (badges, sponsor logos)
    and its title in an `<h1>` inside a `<div>`; koa's, debug's, socket.io's rows of
    reference-style badges. The fixture has each shape (and HTML inside a code block)."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "README.md").write_text((FIXTURES / "README.md").read_text())
    page = readme_page(root, {}, "npm", "packer", Converter(root))
    body = page.body
    assert page.title == "packer"
    assert "Packer bundles **modules**. See [the docs](https://demo.dev/docs)." in body
    for gone in ("shields.io", "badge", "<div", "<img width", "logo.svg", "[npm-url]", "[node]:", "packagephobia"):
        assert gone not in body, gone
    assert '<p align="center"><img src="kept-in-code.png"></p>' in body  # code is code
    assert "| [](https://github.com/demo/json-loader)" not in body and "Loads a JSON file" in body
    assert "![Architecture diagram](docs/architecture.png)" in body  # not a badge: kept
    assert "Line one line two, see [the guide][guide]." in body and "[guide]: https://demo.dev/guide" in body
    assert "\n\n\n" not in body


def test_a_bundler_chunk_documents_its_declarations_by_their_names(tmp_path):
    """@tanstack/query-core 5.52 declares QueryClient in `build/legacy/hydration-CocLapol.d.ts`
    and exports it as `b` (index.d.ts imports `b as QueryClient`): its sections were `## b`,
    `## g`, `## ae`."""
    write(tmp_path, {
        "package.json": '{"name": "core", "version": "5.0.0", "types": "index.d.ts"}',
        "index.d.ts": "export { b as QueryClient, g as Mutation } from './chunk-AB12.js';\n",
        "chunk-AB12.d.ts": ("/** The cache's client. */\ndeclare class QueryClient {\n"
                            "    /** Mark queries stale. */\n    invalidateQueries(): Promise<void>;\n}\n"
                            "declare class Mutation {}\ndeclare const ok: number;\n"
                            "export { QueryClient as b, Mutation as g, ok as go };\n")})
    pages = {p.source: p.body for p in typescript_api_pages(tmp_path, [])}
    chunk = pages["chunk-AB12.d.ts"]
    assert {"QueryClient", "Mutation", "go"} <= set(heads(chunk)) and "b" not in heads(chunk)
    assert "### QueryClient.invalidateQueries" in chunk and "*Exported by this chunk as `b`.*" in chunk


def test_a_readme_titled_below_its_logo_keeps_its_title(tmp_path):
    """immer 10.1.1: a logo `<img>` above `# Immer`; the page was titled `immer README`."""
    write(tmp_path, {"readme.md": "<img src=\"images/logo.svg\" height=\"200px\" align=\"right\"/>\n\n# Immer\n\n"
                                  "_Create the next immutable state_\n\n## API\n\n`produce`\n"})
    page = readme_page(tmp_path, {}, "npm", "immer", Converter(tmp_path))
    assert page.title == "Immer" and "# Immer" not in page.body and "logo.svg" not in page.body


def test_readme_cleaning_takes_linear_time_on_hostile_lines(tmp_path):
    from growth import assert_linear

    from doc4llm.ingest.packages.readme_markup import clean_readme

    def run(n: int) -> str:
        return ("[![" * 300 + "<a href='x" + "<img " * 300 + "\n") * (n // 300) + "<div>\n" + "<p>x</p>\n" * n

    assert_linear(clean_readme, run, 3000, what="README cleaning")


# zustand 4.5: `typesVersions` sends TypeScript < 4.0 to `ts3.4/` (down-levelled copies);
# jotai 2.9: its first range (`>=4.8`) maps to the package itself, a later one (`>=3.8`)
# to `ts3.8/`, the catch-all to a stub; its `esm/*.d.mts` name their modules `./x.mjs`;
# lit 3.2's `exports` point at `development/`, a copy of its root files
DOWNLEVEL = {
    "package.json": json.dumps({
        "name": "store", "version": "4.0.0", "types": "./index.d.ts",
        "exports": {".": {"import": {"types": "./esm/index.d.mts"}, "default": {"types": "./index.d.ts"}},
                    "./vanilla": {"types": "./dev/vanilla.d.ts", "default": "./vanilla.js"}},
        "typesVersions": {">=4.8": {"esm/*": ["esm/*"], "*": ["*"]}, ">=3.8": {"*": ["ts3.8/*"]},
                          "<3.8": {"*": ["ts_version_3.8_required.d.ts"]}}}),
    "index.d.ts": "export { create } from './vanilla';\nexport * from './react';\n",
    "esm/index.d.mts": "export { create } from './vanilla.mjs';\nexport * from './react.mjs';\n",
    "vanilla.d.ts": "/** Make a store. */\nexport declare function create<T>(init: T): T;\n",
    "dev/vanilla.d.ts": "/** Make a store. */\nexport declare function create<T>(init: T): T;\n",
    "esm/vanilla.d.mts": "/** Make a store. */\nexport declare function create<T>(init: T): T;\n",
    "react.d.ts": "/** Use it. */\nexport declare function useStore(): void;\n",
    "esm/react.d.mts": "/** Use it. */\nexport declare function useStore(): void;\n",
    "ts3.8/vanilla.d.ts": "/** Make a store. */\nexport declare function create<T>(init: T): T | undefined;\n",
    "ts3.8/react.d.ts": "/** Use it. */\nexport declare function useStore(): void | undefined;\n",
    "ts_version_3.8_required.d.ts": "/** Upgrade TypeScript. */\nexport declare const error: 'ts>=3.8';\n",
}


def test_typesversions_copies_and_module_system_twins_make_no_pages(tmp_path):
    """zustand 4.5.5 had 24 API pages, 9 of them `ts3.4/` copies for old compilers; jotai
    2.9.3 56, with 17 `ts3.8/` and 4 `esm/*.d.mts` pages that differ from the root ones
    only in `from './x.mjs'`; lit's and zustand's pages were named `development - ...`,
    `esm - ...` after the copy the `exports` map reaches first."""
    pages = {p.source: p for p in typescript_api_pages(write(tmp_path, DOWNLEVEL), [])}
    assert set(pages) == {"index.d.ts", "vanilla.d.ts", "react.d.ts"}, sorted(pages)
    assert pages["vanilla.d.ts"].title == "vanilla.d.ts"
    assert "`dev/vanilla.d.ts`" in pages["vanilla.d.ts"].body and "`esm/vanilla.d.mts`" in pages["vanilla.d.ts"].body
    assert "`esm/index.d.mts`" in pages["index.d.ts"].body


def test_typesversions_that_maps_every_compiler_keeps_its_tree(tmp_path):
    """`"*": {"*": ["dist/types/*"]}` is how a package names its one tree: it is the API."""
    write(tmp_path, {
        "package.json": json.dumps({"name": "one", "version": "1.0.0",
                                    "typesVersions": {"*": {"*": ["dist/types/*"]}, "<4": {"*": ["old/*"]}}}),
        "dist/types/index.d.ts": "/** Go. */\nexport declare function go(): void;\n",
        "old/index.d.ts": "/** Go. */\nexport declare function go(): void | undefined;\n"})
    assert [p.source for p in typescript_api_pages(tmp_path, [])] == ["dist/types/index.d.ts"]
    # when the old compilers' copies are all there is, they are read
    write(tmp_path / "only", {"package.json": '{"name": "o", "typesVersions": {"<4": {"*": ["ts3/*"]}}}',
                              "ts3/index.d.ts": "export declare const x: 1;\n"})
    assert [p.source for p in typescript_api_pages(tmp_path / "only", [])] == ["ts3/index.d.ts"]


# svelte 4's `types/index.d.ts` (dts-buddy): one `declare module 'svelte/xxx' { }` per subpath
AMBIENT_BUNDLE = (
    "declare module 'kit' {\n    /** Mount a component. */\n    export function onMount(fn: () => void): void;\n"
    "    export interface Processed { code: string }\n}\n\n"
    "declare module 'kit/store' {\n    /** A store you can set. */\n    export function writable<T>(v: T): Writable<T>;\n"
    "    export interface Writable<T> {\n        /** Set the value. */\n        set(v: T): void;\n    }\n}\n\n"
    "declare module 'kit/compiler' {\n    /** @deprecated use the new one */\n"
    "    export interface Processed { map?: string }\n}\n")


def test_a_bundle_of_ambient_modules_says_which_module_each_name_comes_from(tmp_path):
    """svelte 4.2.19: `writable` (svelte/store), `onMount` (svelte), `compile`
    (svelte/compiler) were sections of one page that never said where to import them from;
    `Processed` of two modules was merged into one section."""
    write(tmp_path, {"package.json": '{"name": "kit", "types": "types/index.d.ts"}', "types/index.d.ts": AMBIENT_BUNDLE})
    body = typescript_api_pages(tmp_path, [])[0].body
    assert "## writable\n\n*From module `kit/store`.*\n\nA store you can set." in body
    assert "## onMount\n\n*From module `kit`.*" in body
    assert "### Writable.set" in body
    assert heads(body).count("Processed") == 2
    assert "## Processed\n\n**Deprecated:** use the new one\n\n*From module `kit/compiler`.*" in body
    # one module in a file (@types/node's `fs.d.ts` and its `node:fs` alias) needs no such line
    write(tmp_path / "n", {"package.json": '{"name": "n", "types": "fs.d.ts"}', "fs.d.ts": (
        "declare module 'fs' {\n    /** Read a file. */\n    export function readFileSync(p: string): string;\n}\n"
        "declare module 'node:fs' {\n    export * from 'fs';\n}\n")})
    body = typescript_api_pages(tmp_path / "n", [])[0].body
    assert "## readFileSync\n\nRead a file." in body and "From module" not in body


def test_a_bare_namespace_inside_an_ambient_module_is_documented(tmp_path):
    """stripe 16.8.0: 263 files of `declare module 'stripe' { namespace Stripe { interface
    CustomerCreateParams ... } }` (no `export`: inside an ambient module every declaration
    is exported) gave 2 API sections; tree-sitter reads a bare `namespace X { }` as an
    expression statement, and it was skipped."""
    write(tmp_path, {
        "package.json": '{"name": "pay", "types": "types/index.d.ts"}',
        "types/index.d.ts": "///<reference path='./Customers.d.ts' />\n"
                            "declare module 'pay' {\n  export namespace Pay {}\n  export class Pay {\n"
                            "    customers: Pay.CustomersResource;\n  }\n  export default Pay;\n}\n",
        "types/Customers.d.ts": (
            "declare module 'pay' {\n  namespace Pay {\n    interface CustomerCreateParams {\n"
            "      /** Customer's email address. */\n      email?: string;\n    }\n"
            "    namespace CustomerCreateParams {\n      /** Where to ship. */\n      interface Shipping { name: string }\n    }\n"
            "    class CustomersResource {\n      /** Creates a new customer object. */\n"
            "      create(params?: CustomerCreateParams): Promise<unknown>;\n    }\n  }\n}\n"),
        "global.d.ts": "namespace Legacy {\n  /** Kept. */\n  interface Old { x: 1 }\n}\n"})
    pages = {p.source: p.body for p in typescript_api_pages(tmp_path, [])}
    body = pages["types/Customers.d.ts"]
    assert {"Pay.CustomerCreateParams", "Pay.CustomerCreateParams.Shipping", "Pay.CustomersResource"} <= set(heads(body))
    assert "### Pay.CustomerCreateParams.email\n\nCustomer's email address." in body
    assert "### Pay.CustomersResource.create\n\nCreates a new customer object." in body
    assert "## Legacy.Old\n\nKept." in pages["global.d.ts"]


def test_a_scoped_package_name_as_set_name_is_refused_with_the_set_name_to_use(tmp_path):
    """`--set @angular/core@18.2.0` (the name an agent knows) was refused as holding a path
    separator, without saying that the set is `angular__core@18.2.0`."""
    write(tmp_path / "notes", {"a.md": "# Notes\n\nInject a service.\n"})
    env = {"DOC4LLM_EMBEDDER": "none"}
    assert run_cli("add", tmp_path / "notes", "--set", "notes@1", "--docs-dir", tmp_path / "md", env=env).returncode == 0
    r = run_cli("search", "inject", "--set", "@angular/core@18.2.0", "--docs-dir", tmp_path / "md", env=env)
    assert r.returncode == 2, r.stderr
    assert "`angular__core@18.2.0`" in r.stderr


def test_vendored_copies_of_other_projects_make_no_pages(tmp_path):
    """openai 4.56.0: 38 of its 109 API pages were `_vendor/zod-to-json-schema/...`;
    puppeteer-core 23.1 documented `lib/cjs/third_party/rxjs`."""
    write(tmp_path, {
        "package.json": '{"name": "client", "types": "index.d.ts"}',
        "index.d.ts": "import { parse } from './_vendor/json/parser';\n/** The client. */\n"
                      "export declare class Client { parse: typeof parse }\n",
        "_vendor/json/parser.d.ts": "/** Parse JSON. */\nexport declare function parse(s: string): unknown;\n",
        "lib/third_party/mitt/mitt.d.ts": "export declare function mitt(): void;\n"})
    assert [p.source for p in typescript_api_pages(tmp_path, [])] == ["index.d.ts"]
