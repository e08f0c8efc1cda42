"""The md_docs model: safe names and paths, markdown sections, docTOC read/write."""
