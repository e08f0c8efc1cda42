"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py --write`; do not edit by hand.
"""

BIAS = -3.0489
COEFFICIENTS = {
    "absent": -1.3665,
    "agree": 0.0030,
    "bm25": 0.0996,
    "coverage_top1": 0.5527,
    "coverage_top3": 0.4412,
    "exact_top1": 0.4737,
    "has_terms": -0.0347,
    "has_vector": 0.2170,
    "key_missing": -0.3027,
    "margin": 1.5584,
    "p_top": 2.3580,
    "top_score": 0.6516,
    "vector": 0.0133,
}
ABSTAIN_BELOW = 12
