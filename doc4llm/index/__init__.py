"""Index: incremental build, manifest, lexical index (SQLite FTS5), usearch vectors, embedders."""
