"""Each retriever weighted for the query by how much it agrees with the others (`memory.search.ranking`)."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.search.ranking import Candidate, Weights, agreement, columns, fuse, relevance, sure_weights


def cand(doc_id: int, cosine: float, words: float = 0.0, trigram: float = 0.0, use: float = 0.0) -> Candidate:
    return Candidate(doc_id, cosine, words, trigram, age_days=1.0, importance=5, use=use)


def test_without_agreement_the_weights_are_the_base_weights() -> None:
    cands = [cand(i, 0.8 + i / 100, words=float(i % 3)) for i in range(20)]
    weights = Weights(agree=0.0)
    scaled, weight = columns(cands, weights)
    assert sure_weights(scaled, weight, np.arange(20), weights) == weight


def test_a_retriever_whose_best_the_others_share_gains_weight_and_one_alone_loses() -> None:
    # e5 and the trigram index both put docs 0-9 first; the word index finds only docs 25-29, which they rank last
    cands = [cand(i, 0.95 - i / 100, words=5.0 if i >= 25 else 0.0, trigram=3.0 - i / 10 if i < 10 else 0.0)
             for i in range(30)]
    weights = Weights(agree=1.0, centres=(("vector", 0.5), ("words", 0.5), ("trigram", 0.5)))
    scaled, weight = columns(cands, weights)
    ids = np.array([c.doc_id for c in cands])
    assert agreement(scaled, weight, "trigram", ids) == 1.0
    assert agreement(scaled, weight, "words", ids) == 0.0
    moved = sure_weights(scaled, weight, ids, weights)
    assert math.isclose(moved["trigram"], weight["trigram"] * math.exp(0.5))
    assert math.isclose(moved["words"], weight["words"] * math.exp(-0.5))
    # so the word index's lone matches fall behind what the two others agree on
    ranked = [doc for doc, _ in fuse(cands, weights)]
    plain = [doc for doc, _ in fuse(cands, replace(weights, agree=0.0))]
    assert ranked.index(25) > plain.index(25)


def test_a_retriever_that_found_nothing_has_no_agreement() -> None:
    cands = [cand(i, 0.9 - i / 100) for i in range(12)]
    weights = Weights(agree=0.5)
    scaled, weight = columns(cands, weights)
    assert agreement(scaled, weight, "words", np.arange(12)) == 0.0


def test_the_second_signal_joins_the_agreement_on_a_german_query_only() -> None:
    cands = [cand(i, 0.9 - i / 100, use=0.5 - i / 50) for i in range(12)]
    weights = Weights(agree=0.5, centres=(("use", 0.4),))
    assert "use" not in columns(cands, weights)[1]
    scaled, weight = columns(cands, weights, second=True)
    assert agreement(scaled, weight, "use", np.array([c.doc_id for c in cands])) == 1.0
    assert relevance(cands, weights, second=True) != relevance(cands, weights)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.floats(0.6, 1.0), st.sampled_from([0.0, 0.0, 1.0, 2.5]), st.sampled_from([0.0, 0.7]),
                          st.floats(0.0, 0.6)), min_size=1, max_size=40),
       st.randoms(use_true_random=False), st.booleans())
def test_the_ranking_does_not_depend_on_the_order_candidates_come_in(
        rows: list[tuple[float, float, float, float]], rnd: object, second: bool) -> None:
    """Equal scores (many documents hold no query word) are broken by doc id, so agreement, and with it the order,
    is the same however the database listed the candidates."""
    cands = [cand(i + 1, c, w, t, u) for i, (c, w, t, u) in enumerate(rows)]
    shuffled = list(cands)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    weights = Weights(agree=1.0, centres=(("vector", 0.6), ("words", 0.3), ("trigram", 0.3), ("use", 0.5)))
    first, again = relevance(cands, weights, second), relevance(shuffled, weights, second)
    assert first.keys() == again.keys()
    assert all(math.isclose(first[d], again[d], abs_tol=1e-12) for d in first)
