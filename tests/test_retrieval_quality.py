"""Retrieval quality: the German development set through the real store and the real default embedder.

Also the pure pieces the ranking relies on: context and date bonuses, dates named in a query,
and words too common in a scope to search for.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory.records.notes import NewNote
from memory.search.embedder import Embedder
from memory.search.ranking import Candidate, Weights, fuse
from memory.search.search_text import distinctive, named_periods
from memory.store import MemoryStore
from tests.evaluation_data import SHARED, shared_data

GERMAN_SET = SHARED / "data" / "german" / "memories_de_dev.json"


def _utc(value: str) -> float:
    return datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp()


def _figures(ranked: list[list[str]], golds: list[set[str]]) -> dict[str, float]:
    """any@1, any@5 and MRR (1 / rank of the first answering note, 0 if none is returned)."""
    rr = [next((1 / r for r, note in enumerate(ids, 1) if note in gold), 0.0) for ids, gold in zip(ranked, golds)]
    return {
        "any@1": sum(bool(gold & set(ids[:1])) for ids, gold in zip(ranked, golds)) / len(golds),
        "any@5": sum(bool(gold & set(ids[:5])) for ids, gold in zip(ranked, golds)) / len(golds),
        "mrr": sum(rr) / len(rr),
    }


@pytest.fixture(scope="module")
def german_set() -> dict[str, Any]:
    path = shared_data(GERMAN_SET, "the German development set")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.asyncio
async def test_german_questions_find_their_notes(tmp_path: Path, real_embedder: Embedder,
                                                 german_set: dict[str, Any]) -> None:
    notes = german_set["notes"]
    store = await MemoryStore.open(tmp_path, real_embedder)
    try:
        scope = await store.scope("mnemo", "anna")
        stored = await store.notes.add_many(scope, [
            NewNote(n["text"], kind="fact", created_at=_utc(n["date"] + "T12:00:00")) for n in notes
        ])
        label = {note.id: n["id"] for note, n in zip(stored, notes)}
        now = max(_utc(n["date"] + "T12:00:00") for n in notes) + 86400
        ranked = []
        for q in german_set["questions"]:
            hits = await store.search(scope, q["q"], sources=("note",), k=len(notes), now=now)
            ranked.append([label[h.item_id] for h in hits])
    finally:
        await store.close()
    figures = _figures(ranked, [set(q["gold"]) for q in german_set["questions"]])
    assert figures["any@5"] >= 0.95, figures
    assert figures["any@1"] >= 0.75, figures
    assert figures["mrr"] >= 0.85, figures


def _candidate(doc_id: int, cosine: float, **kw: Any) -> Candidate:
    return Candidate(doc_id=doc_id, cosine=cosine, words=0.0, trigram=0.0, age_days=0.0, importance=5, **kw)


def test_a_message_borrows_relevance_from_its_context() -> None:
    question = _candidate(1, 0.9, related=(2,))  # "What did you make for the church?"
    answer = _candidate(2, 0.6, related=(1, 3))  # "A stained glass window."
    unrelated = _candidate(3, 0.62)
    other = _candidate(4, 0.61)
    order = [doc for doc, _ in fuse([question, answer, unrelated, other], Weights())]
    assert order.index(2) < order.index(4), "the reply to the best match outranks an equally weak stranger"
    alone = [doc for doc, _ in fuse([question, answer, unrelated, other], Weights(context=0.0))]
    assert alone.index(2) > alone.index(4)


def test_a_document_from_the_named_date_is_preferred() -> None:
    dated = _candidate(1, 0.80, dated=True)
    undated = _candidate(2, 0.82)
    floor = _candidate(3, 0.50)
    assert [doc for doc, _ in fuse([undated, dated, floor], Weights())][0] == 1
    assert [doc for doc, _ in fuse([undated, dated, floor], Weights(dated=0.0))][0] == 2


def test_dates_named_in_a_query() -> None:
    day = 86400.0
    may8 = _utc("2023-05-08T00:00:00")
    for query in ("What happened on 8 May, 2023?", "What happened on May 8th, 2023?", "Was war am 8. Mai 2023?",
                  "Notizen vom 2023-05-08"):
        [(start, end)] = named_periods(query)
        assert start < may8 < may8 + day < end <= may8 + 5 * day, query
    [(start, end)] = named_periods("Was habe ich im Juli 2023 gemacht?")
    assert start < _utc("2023-07-01T00:00:00") and _utc("2023-07-31T23:00:00") < end
    assert named_periods("Wovor bin ich im Februar aufgeregt?") == []  # no year: the caller's time window decides
    assert named_periods("What did I do last week?") == []


def test_words_common_in_a_scope_are_left_out() -> None:
    counts = {"anna": 900, "cello": 3, "spielt": 40}
    assert distinctive(["anna", "spielt", "cello"], counts, total_docs=1000) == ["spielt", "cello"]
    assert distinctive(["anna"], counts, total_docs=1000) == ["anna"], "never an empty query"
    assert distinctive(["anna", "cello"], {"anna": 3, "cello": 1}, total_docs=4) == ["anna", "cello"], (
        "small scopes keep all")
