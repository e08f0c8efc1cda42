"""Search: query analysis, fallback levels, fusion, reranking, confidence, guidance."""
