"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py`; do not edit by hand.
"""

BIAS = -4.5288
COEFFICIENTS = {
    "absent": -0.1427,
    "agree": 0.1297,
    "bm25": 0.0764,
    "coverage_top1": 1.1254,
    "coverage_top3": 0.7635,
    "exact_top1": 0.2261,
    "has_terms": -0.2017,
    "has_vector": 0.2320,
    "margin": 2.6976,
    "top_score": 2.2982,
    "vector": 0.3012,
}
ABSTAIN_BELOW = 15
