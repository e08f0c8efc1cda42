"""Weights of the linear ranker (see rerank.py and features.py).

Written by `python benchmarks/fit_ranker.py --write`; do not edit by hand.
"""

WEIGHTS = {
    "lex": {"changes": -4.0, "empty": -0.1362, "exact": 0.4026, "exact_ref": 0.4623, "fused": 1.8983, "intro": -0.9534, "page_best": 2.0542, "page_hits": 1.0793, "prefer": 0.3118, "rr_bm25": 1.7667, "slug": 2.0, "wcoverage": 2.1353, "wheading": 1.4643},
    "vec": {"changes": -4.0, "empty": 0.3957, "exact": 0.9638, "exact_ref": 0.5037, "fused": 0.7975, "intro": -0.9607, "page_best": 1.5733, "page_hits": 0.4667, "prefer": 0.0493, "rr_bm25": 1.2973, "rr_head": 0.9451, "rr_vector": 1.7588, "slug": 2.0, "wcoverage": 2.621, "wheading": 0.5773},
}
