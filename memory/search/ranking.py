"""How search candidates are scored: a pure fusion of meaning, words, trigrams, context, dates, recency, importance."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Weights:
    """Fusion weights, chosen by cross-validation over LoCoMo 0-4 and the German development folds (bench/fusion.py,
    docs/benchmarks.md "Fusion that never loses to its best part")."""

    vector: float = 1.0
    words: float = 0.25
    trigram: float = 0.1
    context: float = 0.15  # share of its best related candidate's relevance a document borrows
    dated: float = 0.2  # bonus for a document from a date the query names
    recency_half_life_days: float = 180.0
    recency_floor: float = 0.95  # recency only breaks near-ties: an old memory must stay as findable as a new one
    importance: float = 0.05  # share of the score that importance 1..10 may move
    use: float = 0.75  # the second signal (USE), on German queries only (`memory.search.use_signal`)
    agree: float = 1.0  # how far a retriever's agreement with the others moves its weight (`sure_weights`)
    # each retriever's mean agreement over the development questions (bench/fusion.py `centres_of`)
    centres: tuple[tuple[str, float], ...] = (("trigram", 0.475), ("use", 0.378), ("vector", 0.318), ("words", 0.419))


AGREE_TOP = 10  # a retriever's best this many are compared with the others' (`agreement`)


@dataclass(frozen=True)
class Candidate:
    """Raw signals for one document."""

    doc_id: int
    cosine: float
    words: float  # bm25 as FTS5 reports it, negated: higher is better, 0 = no match
    trigram: float  # bm25 of the query stems as substrings, from the scope's own statistics (text.bm25)
    age_days: float
    importance: int
    related: tuple[int, ...] = ()  # doc ids of its context: adjacent messages, linked notes and messages
    dated: bool = False  # created on a date the query names
    use: float = 0.0  # USE's cosine, where the second signal joins (a German query); 0 for a document without one


def recency_factor(age_days: float, half_life_days: float, floor: float) -> float:
    """Exponential decay by age, never below floor: 1.0 now, 0.5 + floor/2 after one half-life."""
    decay = math.pow(0.5, max(age_days, 0.0) / half_life_days)
    return floor + (1.0 - floor) * decay


def scaled_by_best(values: np.ndarray) -> np.ndarray:
    """Scale non-negative scores into 0..1 by the best of them."""
    top = float(values.max()) if len(values) else 0.0
    return values / top if top > 0 else np.zeros_like(values)


def min_max(values: np.ndarray) -> np.ndarray:
    """Min-max scale cosines so models with compressed similarity ranges weigh the same."""
    if not len(values):
        return values
    low, high = float(values.min()), float(values.max())
    return np.ones_like(values) if high - low < 1e-9 else (values - low) / (high - low)


def columns(candidates: list[Candidate], weights: Weights, second: bool = False) -> tuple[dict[str, np.ndarray],
                                                                                          dict[str, float]]:
    """Each retriever's scores over the candidates, scaled into 0..1 (cosines min-max, bm25 by the best), and its
    weight; USE joins with `second` (a German query)."""
    scaled = {"vector": min_max(np.array([c.cosine for c in candidates], np.float64)),
              "words": scaled_by_best(np.array([c.words for c in candidates], np.float64)),
              "trigram": scaled_by_best(np.array([c.trigram for c in candidates], np.float64))}
    weight = {"vector": weights.vector, "words": weights.words, "trigram": weights.trigram}
    if second and weights.use > 0:
        scaled["use"] = min_max(np.array([c.use for c in candidates], np.float64))
        weight["use"] = weights.use
    return scaled, weight


def best_of(scores: np.ndarray, ids: np.ndarray, k: int = AGREE_TOP) -> set[int]:
    """Positions of the k best scores that are above 0; of equals, the lower doc id first."""
    order = np.lexsort((ids, -scores))
    return {int(i) for i in order[:k] if scores[i] > 0}


def agreement(scaled: dict[str, np.ndarray], weight: dict[str, float], name: str, ids: np.ndarray) -> float:
    """How sure a retriever is for this query: the share of its `AGREE_TOP` best that the other retrievers, fused by
    their weights, also rank among their `AGREE_TOP` best (0..1; 0 when it found nothing)."""
    mine = best_of(scaled[name], ids)
    if not mine:
        return 0.0
    others = sum((weight[o] * scaled[o] for o in scaled if o != name and weight[o] > 0),
                 np.zeros(len(ids)))
    return len(mine & best_of(others, ids)) / len(mine)


def sure_weights(scaled: dict[str, np.ndarray], weight: dict[str, float], ids: np.ndarray,
                 weights: Weights) -> dict[str, float]:
    """Each retriever's weight for this query: its base weight moved by how much it agrees with the others, against
    the agreement it has on a typical query (`Weights.centres`): exp(agree * (agreement - centre))."""
    if weights.agree <= 0:
        return weight
    centre = dict(weights.centres)
    return {name: w * math.exp(weights.agree * (agreement(scaled, weight, name, ids) - centre.get(name, 0.0)))
            if w > 0 else w for name, w in weight.items()}


def relevance(candidates: list[Candidate], weights: Weights, second: bool = False) -> dict[int, float]:
    """Weighted sum of the normalized retriever scores, 0..1, by doc id; each retriever weighted for this query by
    `sure_weights`; with `second`, USE's cosine joins (min-max scaled like e5's, weighted `weights.use`)."""
    if not candidates:
        return {}
    ids = np.array([c.doc_id for c in candidates], np.int64)
    scaled, weight = columns(candidates, weights, second)
    weight = sure_weights(scaled, weight, ids, weights)
    total = sum(weight.values())
    if total <= 0:
        return {c.doc_id: 0.0 for c in candidates}
    base = np.zeros(len(ids))
    for name, w in weight.items():
        base += w * scaled[name]
    return dict(zip(ids.tolist(), (base / total).tolist()))


def fuse(candidates: list[Candidate], weights: Weights, second: bool = False) -> list[tuple[int, float]]:
    """Score every candidate and return (doc_id, score) best first; `second`: USE's cosine joins (`relevance`)."""
    base = relevance(candidates, weights, second)
    scored = []
    for c in candidates:
        context = max((base[r] for r in c.related if r in base), default=0.0)
        score = base[c.doc_id] + weights.context * context + (weights.dated if c.dated else 0.0)
        score *= recency_factor(c.age_days, weights.recency_half_life_days, weights.recency_floor)
        score *= 1.0 + weights.importance * (c.importance - 5) / 5
        scored.append((c.doc_id, score))
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored


FADED = 0.1  # below this strength a note leaves the default search (it stays findable by recall)
FADE_HALF_LIFE_DAYS = 90.0


def note_strength(days_unused: float, importance: int, half_life_days: float = FADE_HALF_LIFE_DAYS) -> float:
    """How present a note still is after `days_unused`: important notes fade slower (half-life x4 at 10, /3 at 1)."""
    half_life = half_life_days * 2.0 ** ((importance - 5) / 2.5)
    return 0.5 ** (max(days_unused, 0.0) / half_life)


def faded(days_unused: float, importance: int) -> bool:
    """True when a note has not been used for so long, for its importance, that it leaves the default search."""
    return note_strength(days_unused, importance) < FADED
