"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py --write`; do not edit by hand.
"""

BIAS = -3.6816
COEFFICIENTS = {
    "absent": -1.0950,
    "agree": -0.0104,
    "bm25": 0.1555,
    "coverage_top1": 0.7577,
    "coverage_top3": 0.7510,
    "exact_top1": 0.3896,
    "has_terms": -0.1441,
    "has_vector": 0.2567,
    "key_missing": -0.1802,
    "margin": 1.5699,
    "p_top": 2.4393,
    "top_score": 0.5498,
    "vector": 0.1173,
}
ABSTAIN_BELOW = 11
