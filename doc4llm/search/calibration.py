"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py --write`; do not edit by hand.
"""

BIAS = -3.9296
COEFFICIENTS = {
    "absent": -0.3806,
    "agree": -0.0033,
    "bm25": 0.1724,
    "coverage_top1": 0.8701,
    "coverage_top3": 0.6823,
    "exact_top1": 0.3505,
    "has_terms": -0.2948,
    "has_vector": 0.2129,
    "key_missing": -0.1584,
    "margin": 1.7757,
    "p_top": 2.2659,
    "top_score": 0.6121,
    "vector": 0.3259,
}
ABSTAIN_BELOW = 8
