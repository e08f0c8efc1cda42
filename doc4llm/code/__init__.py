"""Code-aware docs: code blocks found, language-detected, chunked at symbol boundaries,
verified with tree-sitter; sections classified as prose, code or api-reference.

The indexer calls `chunks_for_section` and `content_type`; the CLI commands `verify`,
`example` and `explain-error` live in doc4llm/cli/code_cmds.py.
"""

from doc4llm.code.chunker import CodeChunk, chunks_for_section
from doc4llm.code.content_type import content_type

__all__ = ["CodeChunk", "chunks_for_section", "content_type"]
