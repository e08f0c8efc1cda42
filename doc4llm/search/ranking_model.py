"""Weights of the linear ranker (see rerank.py and features.py).

Written by `python benchmarks/fit_ranker.py --write`; do not edit by hand.
"""

WEIGHTS = {
    "lex": {"changes": -4.0, "empty": -0.082, "exact": 0.2533, "exact_ref": 0.2581, "fused": 2.3576, "intro": -1.204, "page_best": 2.6773, "page_hits": 1.2632, "prefer": 0.4719, "rr_bm25": 1.3189, "slug": 2.0, "symbol": 2.1158, "wcoverage": 3.0916, "wheading": 2.3276},
    "vec": {"changes": -4.0, "empty": 0.9273, "exact": 0.9658, "exact_ref": 0.305, "fused": 0.6972, "intro": -1.2829, "own_head": 0.7256, "page_best": 1.9956, "page_hits": 0.5519, "prefer": 0.2493, "rr_bm25": 0.8952, "rr_head": 0.9913, "rr_vector": 1.7568, "slug": 2.0, "symbol": 2.6382, "wcoverage": 3.8421, "wheading": 0.7528},
}
