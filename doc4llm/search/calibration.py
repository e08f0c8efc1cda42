"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py --write`; do not edit by hand.
"""

BIAS = -3.5880
COEFFICIENTS = {
    "absent": -1.0932,
    "agree": -0.0085,
    "bm25": 0.1416,
    "coverage_top1": 0.7893,
    "coverage_top3": 0.7661,
    "exact_top1": 0.4575,
    "has_terms": -0.1744,
    "has_vector": 0.2499,
    "key_missing": -0.1855,
    "margin": 1.5470,
    "p_top": 2.4213,
    "top_score": 0.4523,
    "vector": 0.0870,
}
ABSTAIN_BELOW = 11
