"""Weights of the linear ranker (see rerank.py and features.py).

Written by `python benchmarks/fit_ranker.py --write`; do not edit by hand.
"""

WEIGHTS = {
    "lex": {"changes": -4.0, "empty": -0.082, "exact": 0.2533, "exact_ref": 0.2581, "fused": 2.3576, "intro": -1.204, "page_best": 2.6773, "page_hits": 1.2632, "prefer": 0.4719, "rr_bm25": 1.3189, "slug": 2.0, "symbol": 2.1158, "wcoverage": 3.0916, "wheading": 2.3276},
    "vec": {"changes": -4.0, "empty": 0.9344, "exact": 1.0032, "exact_ref": 0.2864, "fused": 0.747, "intro": -1.2725, "page_best": 1.9805, "page_hits": 0.5482, "prefer": 0.2583, "rr_bm25": 0.9258, "rr_head": 1.0195, "rr_vector": 1.7593, "slug": 2.0, "symbol": 2.6177, "wcoverage": 3.7966, "wheading": 1.0494},
}
