"""Coefficients of the confidence model (see confidence.py).

Written by `python benchmarks/calibrate.py --write`; do not edit by hand.
"""

BIAS = -3.8095
COEFFICIENTS = {
    "absent": -0.5169,
    "agree": -0.0082,
    "bm25": 0.1643,
    "coverage_top1": 0.8350,
    "coverage_top3": 0.8039,
    "exact_top1": 0.4282,
    "has_terms": -0.2157,
    "has_vector": 0.2512,
    "key_missing": -0.1870,
    "margin": 1.5104,
    "p_top": 2.4400,
    "top_score": 0.5691,
    "vector": 0.1036,
}
ABSTAIN_BELOW = 10
