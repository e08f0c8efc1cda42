"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py --write`; do not edit by hand.
"""

BIAS = -3.8559
COEFFICIENTS = {
    "absent": -0.3796,
    "agree": 0.0007,
    "bm25": 0.1830,
    "coverage_top1": 0.8353,
    "coverage_top3": 0.7387,
    "exact_top1": 0.3258,
    "has_terms": -0.3235,
    "has_vector": 0.2080,
    "key_missing": -0.1970,
    "margin": 1.7563,
    "p_top": 2.4309,
    "top_score": 0.4464,
    "vector": 0.2459,
}
ABSTAIN_BELOW = 8
