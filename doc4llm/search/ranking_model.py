"""Weights of the linear ranker (see rerank.py and features.py).

Written by `python benchmarks/search/fit_ranker.py --write`; do not edit by hand.
"""

WEIGHTS = {
    "lex": {"changes": -4.0, "err_catalog": -1.5, "version_match": 4.0, "empty": -0.0775, "exact": 0.2257, "exact_ref": 0.2595, "fused": 2.4279, "intro": -1.2041, "named_entry": 2.0, "page_best": 2.649, "page_hits": 1.2, "prefer": 0.4694, "rr_bm25": 1.3167, "slug": 2.0, "symbol": 2.1124, "wcoverage": 3.1057, "wheading": 2.2573},
    "vec": {"changes": -4.0, "err_catalog": -1.5, "version_match": 4.0, "empty": 0.9276, "exact": 0.9645, "exact_ref": 0.3031, "fused": 0.6979, "intro": -1.2828, "named_entry": 2.0, "own_head": 0.7065, "page_best": 1.9972, "page_hits": 0.5527, "prefer": 0.2463, "rr_bm25": 0.8952, "rr_head": 0.9957, "rr_vector": 1.7549, "slug": 2.0, "symbol": 2.635, "wcoverage": 3.8428, "wheading": 0.7314},
}
