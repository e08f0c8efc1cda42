"""Weights of the linear ranker (see rerank.py and features.py).

Written by `python benchmarks/fit_ranker.py --write`; do not edit by hand.
"""

WEIGHTS = {
    "lex": {"changes": -4.0, "empty": -0.1324, "exact": 0.453, "fused": 1.9074, "intro": -0.9499, "page_best": 2.0398, "page_hits": 1.0923, "rr_bm25": 1.7408, "slug": 2.0, "wcoverage": 2.1825, "wheading": 1.4972},
    "vec": {"changes": -4.0, "empty": 0.3937, "exact": 1.0303, "fused": 0.787, "intro": -0.9728, "page_best": 1.5662, "page_hits": 0.4724, "rr_bm25": 1.2757, "rr_head": 0.9366, "rr_vector": 1.7682, "slug": 2.0, "wcoverage": 2.6713, "wheading": 0.5924},
}
