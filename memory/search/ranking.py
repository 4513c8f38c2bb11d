"""How search candidates are scored: a pure fusion of meaning, words, trigrams, context, dates, recency, importance."""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Weights:
    """Fusion weights; tuned on the LoCoMo and German development sets (docs/benchmarks.md)."""

    vector: float = 1.0
    words: float = 0.5
    trigram: float = 0.15
    context: float = 0.2  # share of its best related candidate's relevance a document borrows
    dated: float = 0.2  # bonus for a document from a date the query names
    recency_half_life_days: float = 180.0
    recency_floor: float = 0.95  # recency only breaks near-ties: an old memory must stay as findable as a new one
    importance: float = 0.05  # share of the score that importance 1..10 may move
    use: float = 0.75  # the second signal (USE), on German queries only (`memory.search.use_signal`)


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


def _scaled(values: list[float]) -> list[float]:
    """Scale non-negative scores into 0..1 by the best of them."""
    top = max(values, default=0.0)
    return [v / top if top > 0 else 0.0 for v in values]


def _spread(values: list[float]) -> list[float]:
    """Min-max scale cosines so models with compressed similarity ranges weigh the same."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low < 1e-9:
        return [1.0 for _ in values]
    return [(v - low) / (high - low) for v in values]


def relevance(candidates: list[Candidate], weights: Weights, second: bool = False) -> dict[int, float]:
    """Weighted sum of the normalized retriever scores, 0..1, by doc id; with `second`, USE's cosine too (min-max
    scaled like e5's, weighted `weights.use`)."""
    if second and candidates and weights.use > 0:
        return _with_second(candidates, weights)
    total = weights.vector + weights.words + weights.trigram
    if not candidates or total <= 0:
        return {c.doc_id: 0.0 for c in candidates}
    cos = _spread([c.cosine for c in candidates])
    words = _scaled([c.words for c in candidates])
    tri = _scaled([c.trigram for c in candidates])
    return {
        c.doc_id: (weights.vector * v + weights.words * w + weights.trigram * t) / total
        for c, v, w, t in zip(candidates, cos, words, tri)
    }


def _with_second(candidates: list[Candidate], weights: Weights) -> dict[int, float]:
    """`relevance` with USE as a fourth retriever."""
    total = weights.vector + weights.words + weights.trigram + weights.use
    base = relevance(candidates, weights)
    share = (total - weights.use) / total  # the three retrievers' part of the four
    use = _spread([c.use for c in candidates])
    return {c.doc_id: base[c.doc_id] * share + weights.use * u / total for c, u in zip(candidates, use)}


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
