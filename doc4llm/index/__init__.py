"""The search index: incremental build and manifest, lexical index, vectors, embedders."""
