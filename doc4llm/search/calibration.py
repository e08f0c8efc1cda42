"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/search/calibrate.py --write`; do not edit by hand.
"""

BIAS = -2.7740
COEFFICIENTS = {
    "absent": -1.3631,
    "agree": 0.0087,
    "bm25": 0.0319,
    "coverage_top1": 0.5663,
    "coverage_top3": 0.4394,
    "exact_top1": 0.4909,
    "has_terms": -0.0207,
    "has_vector": 0.2431,
    "key_missing": -0.2992,
    "margin": 1.6350,
    "p_top": 2.3356,
    "top_score": 0.4093,
    "vector": 0.0617,
}
ABSTAIN_BELOW = 10
