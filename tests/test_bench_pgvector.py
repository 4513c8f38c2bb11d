"""bench/pgvector.py on the test PostgreSQL: mnemo's in-process vector ranking beside pgvector's, on one store."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

from bench import pgvector
from tests import postgres_kit


def test_float16_rounding_stays_within_the_tolerance_the_bench_allows() -> None:
    """a ranks by the dot product with the float16 vector, pgvector by the cosine: they differ by the rounding."""
    rng = np.random.default_rng(5)
    docs = rng.standard_normal((2000, pgvector.DIM)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    query = docs[0] + 0.5 * docs[1]
    query /= np.linalg.norm(query)
    stored = docs.astype(np.float16).astype(np.float32)
    dots = stored @ query
    cosines = dots / np.linalg.norm(stored, axis=1)
    assert 0 < np.abs(dots - cosines).max() <= pgvector.TOLERANCE


def test_ties_within_rounding_count_as_the_same_nearest() -> None:
    score = {1: 0.9, 2: 0.8, 3: 0.7, 4: 0.7 - pgvector.TOLERANCE, 5: 0.5}
    assert pgvector.same_up_to_rounding([1, 2, 3], [2, 1, 3], score, pgvector.TOLERANCE)
    assert pgvector.same_up_to_rounding([1, 2, 3], [1, 2, 4], score, pgvector.TOLERANCE)
    assert not pgvector.same_up_to_rounding([1, 2, 3], [1, 2, 5], score, pgvector.TOLERANCE)
    assert not pgvector.same_up_to_rounding([1, 2, 5], [1, 2, 3], score, pgvector.TOLERANCE)  # missed a nearer one
    assert not pgvector.same_up_to_rounding([1, 2, 3], [1, 2], score, pgvector.TOLERANCE)
    cosines = {1: 0.9, 2: 0.8, 3: 0.7, 7: 0.7, 9: 0.75}  # 7: a copy of 3
    assert pgvector.recall([[1, 2, 3]], [[1, 2, 9]], 3, [cosines]) == round(2 / 3, 4)
    assert pgvector.recall([[1, 2, 7], [9, 2, 7]], [[1, 2, 3], [1, 2, 9]], 3, [cosines, cosines]) == round(5 / 6, 4)


def test_pgvector_bench_finds_what_mnemo_finds_in_process() -> None:
    pytest.importorskip("pgserver")
    report = asyncio.run(pgvector.run(90, 3, 60, 14, 1, postgres_kit.server()))
    ways = ["a in process (nearest)", "a search, vector alone", "b exact in scope", "c hnsw+btree, planner's",
            "c hnsw ef_search 40",
            "c hnsw ef_search 200", "c hnsw ef_search 1000", "c ivfflat probes 1"]
    assert [(w.store, w.users, w.notes, w.way) for w in report.ways] == (
        [("spread", 3, 90, way) for way in ways] + [("one", 1, 60, way) for way in ways])
    for w in report.ways:
        assert w.p50_ms > 0 and w.p95_ms >= w.p50_ms
        assert (w.recall_at_10 is None) == w.way.startswith(("b ", "a search"))
        assert w.recall_at_10 is None or 0 < w.recall_at_10 <= 1
        assert 0 < w.rows <= (10 if w.way.startswith("a search") else pgvector.K)
    # Scopes this small keep float32 copies of the float16 vectors and compare all: exact, as pgvector is.
    for w in report.ways:
        if w.way.startswith("a in process"):
            assert w.exact == 1.0 and w.recall_at_40 is not None and w.recall_at_40 >= 0.95
        if w.way.startswith("b "):
            assert w.rows == min(pgvector.K, w.notes // w.users) and "pgv" in w.plan
        if w.way.startswith("c ") and "planner" not in w.way:
            assert "pgv_vec" in w.plan
    assert [(b.store, b.index) for b in report.builds] == [
        ("spread", "hnsw"), ("spread", "ivfflat lists 1"), ("one", "hnsw"), ("one", "ivfflat lists 1")]
    assert all(b.seconds > 0 and b.mb > 0 for b in report.builds)
    assert set(report.table_mb) == {"spread", "one"} and len(report.load_average) == 2
