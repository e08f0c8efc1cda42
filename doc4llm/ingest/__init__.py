"""Ingest: turn documentation sources (local folders, sites, llms.txt) into md_docs sets."""
