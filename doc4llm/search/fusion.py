"""Put the signals on one scale and combine them.

BM25 is divided by the best BM25 of the query (it has no absolute scale); cosine
similarities are mapped from e5's narrow band ([VEC_FLOOR, VEC_CEIL]) to 0..1; the
grep levels are already shares of matched keywords (0..1). The fused score is a
weighted sum; the weights were chosen on the mdmem dev split and the upstream query
file (see README, "How search ranks").
"""

from __future__ import annotations

from dataclasses import dataclass, field

VEC_FLOOR = 0.74
VEC_CEIL = 0.90

WEIGHTS = {
    "bm25": 0.30,
    "vector": 0.45,
    "head": 0.06,
    "L1": 0.06,
    "L2": 0.04,
    "L3.2": 0.05,
}
# a signal "found" a candidate when its normalized score reaches this
FOUND_AT = {"bm25": 0.35, "vector": 0.45, "head": 0.5, "L1": 0.7, "L2": 0.5, "L3.1": 0.5, "L3.2": 0.5}


Band = tuple[float, float]


def vec_scale(cos: float, band: Band = (VEC_FLOOR, VEC_CEIL)) -> float:
    """Cosine -> 0..1 over the embedder's band (each model spreads similarities
    differently: e5 in [0.74, 0.90], MiniLM in [0.20, 0.70])."""
    lo, hi = band
    return min(1.0, max(0.0, (cos - lo) / (hi - lo)))


def band_of(embedder) -> Band:
    return (getattr(embedder, "vec_floor", VEC_FLOOR), getattr(embedder, "vec_ceil", VEC_CEIL))


@dataclass
class Candidate:
    sid: int
    parts: dict[str, float] = field(default_factory=dict)  # normalized signal scores
    raw: dict[str, float] = field(default_factory=dict)  # raw signal scores
    score: float = 0.0
    found_by: list[str] = field(default_factory=list)
    feats: dict[str, float] = field(default_factory=dict)  # ranking features (features.py)


def normalize(signals: dict[str, dict[int, float]], band: Band = (VEC_FLOOR, VEC_CEIL)) -> dict[int, Candidate]:
    cands: dict[int, Candidate] = {}
    for name, scores in signals.items():
        if not scores:
            continue
        top = max(scores.values()) or 1.0
        for sid, raw in scores.items():
            if name == "bm25":
                norm = raw / top if top > 0 else 0.0
            elif name in ("vector", "head"):
                norm = vec_scale(raw, band)
            else:
                norm = max(0.0, min(1.0, raw))
            c = cands.setdefault(sid, Candidate(sid))
            c.parts[name] = norm
            c.raw[name] = raw
    return cands


def fuse(cands: dict[int, Candidate], weights: dict[str, float] | None = None) -> list[Candidate]:
    w = weights or WEIGHTS
    active = {name for c in cands.values() for name in c.parts}
    total = sum(v for k, v in w.items() if k in active) or 1.0
    for c in cands.values():
        c.score = sum(w.get(name, 0.0) * v for name, v in c.parts.items()) / total
        c.found_by = [n for n, v in c.parts.items() if v >= FOUND_AT.get(n, 0.5)] or \
            [max(c.parts, key=lambda n: c.parts[n])]
    return sorted(cands.values(), key=lambda c: -c.score)
