"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py --write`; do not edit by hand.
"""

BIAS = -3.6194
COEFFICIENTS = {
    "absent": -1.0712,
    "agree": -0.0060,
    "bm25": 0.1479,
    "coverage_top1": 0.7968,
    "coverage_top3": 0.7870,
    "exact_top1": 0.4547,
    "has_terms": -0.1700,
    "has_vector": 0.2537,
    "key_missing": -0.1808,
    "margin": 1.4896,
    "p_top": 2.4126,
    "top_score": 0.4656,
    "vector": 0.0812,
}
ABSTAIN_BELOW = 11
