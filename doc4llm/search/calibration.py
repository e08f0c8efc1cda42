"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py`; do not edit by hand.
"""

BIAS = -3.0
COEFFICIENTS = {
    "top_score": 3.0,
    "vector": 2.0,
    "has_vector": -1.5,
    "bm25": 0.2,
    "margin": 1.0,
    "coverage_top1": 2.0,
    "coverage_top3": 1.5,
    "absent": -4.0,
    "exact_top1": 1.0,
    "has_terms": 0.0,
    "agree": 0.3,
}
ABSTAIN_BELOW = 40
