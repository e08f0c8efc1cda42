"""Docs of a project's dependencies at their exact versions, built from package archives.

Pipeline, one module per step, data flowing down:

  spec.py          SOURCE strings (`pypi:click==8.1.7`, `npm:p-limit@5`) -> PackageRef
  registry_config  index / registry URLs from the user's pip and npm configuration
  http.py          bounded GETs (size caps, retries, clear errors) over httpx
  pypi.py, npm.py  registry APIs -> a version and its archive (URL + expected hash)
  archive.py       download + safe extraction (no absolute paths, no `..`, no links, caps)
  collect.py       docs folder, README / long description, changelog -> markdown pages
  rst.py           reStructuredText -> markdown through pandoc (pypandoc-binary)
  api_python.py    API reference from Python source via griffe (static; nothing imported)
  api_typescript   API reference from `.d.ts` files + JSDoc via tree-sitter
  build.py         pages -> a set built in a temp folder, swapped in atomically
  lockfiles.py     uv.lock, poetry.lock, requirements, pyproject, package-lock, pnpm, yarn
  sync.py          one set per dependency: plan, bounded parallel builds, prune

Nothing from a package ever runs: archives come from the registries' package APIs, never
from a build step, and no package code is imported.
"""
