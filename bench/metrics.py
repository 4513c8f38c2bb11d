"""Retrieval metrics and the per-retriever weights shared by the benchmarks."""
from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

from memory.search.ranking import Weights

T = TypeVar("T", bound=Hashable)


def retrievers(base: Weights | None = None) -> dict[str, Weights]:
    """The store's weights, and the same with every other retriever switched off.

    The single-retriever figures so go through the very same search code (a retriever weighted 0
    is not even queried).
    """
    base = base or Weights()
    return {  # USE (the second signal, `use`) off in the single ones: a store opened with it would mix it in
        "hybrid": base,
        "vector": dataclasses.replace(base, words=0.0, trigram=0.0, use=0.0),
        "words": dataclasses.replace(base, vector=0.0, trigram=0.0, use=0.0),
        "trigram": dataclasses.replace(base, vector=0.0, words=0.0, use=0.0),
    }


def parse_weights(spec: str) -> Weights:
    """The default Weights with overrides such as "context=0,dated=0" (for ablations)."""
    overrides = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, value = part.partition("=")
        overrides[name.strip()] = float(value)
    return dataclasses.replace(Weights(), **overrides)


def dedupe(items: Iterable[T]) -> list[T]:
    """Keep the first occurrence of each item, in order."""
    return list(dict.fromkeys(items))


def any_at(ranked: Sequence[T], gold: set[T], k: int) -> float:
    """1.0 when one of the gold items is in the top k."""
    return 1.0 if gold & set(ranked[:k]) else 0.0


def frac_at(ranked: Sequence[T], gold: set[T], k: int) -> float:
    """Share of the gold items found in the top k."""
    return len(gold & set(ranked[:k])) / len(gold)


def reciprocal_rank(ranked: Sequence[T], gold: set[T], k: int = 10) -> float:
    """1 / rank of the first gold item within the top k, else 0."""
    for rank, item in enumerate(ranked[:k], start=1):
        if item in gold:
            return 1.0 / rank
    return 0.0


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for no values."""
    return sum(values) / len(values) if values else 0.0
