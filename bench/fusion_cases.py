"""Every question of the retrieval sets with every retriever's raw signal for its candidates, for bench/fusion.py.

Each set is written through the real store with the bundled e5 (second signal off: this file computes USE itself),
and each question's candidates are what the store's own retrievers find (e5's nearest, the word and trigram
indexes) joined by the nearest documents of three more dense retrievers: USE, and e5 and USE on a turn read with
the turn before it ("in context", `context_text`). Every candidate gets every signal, so a way of fusing is a pure
function of the cached arrays. Sets: LoCoMo 0-4 (turns and notes, one fold per conversation), mnemo's own German
set (four dev folds and the held-out split) and the shared German set (33 questions, one fold).
"""
from __future__ import annotations

import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import german as shared_german
from bench import locomo
from bench.german import day
from bench.german_set import load as load_own
from bench.second_signal import UseModel
from memory.records.notes import NewNote
from memory.search import search_text
from memory.search.embedder import make_embedder
from memory.search.language import is_german
from memory.search.ranking import faded
from memory.search.retrievers import CANDIDATES, documents, related_of
from memory.search.turn_context import context_text
from memory.store import MemoryStore

DENSE = ("e5", "use", "e5ctx", "usectx")


@dataclass(frozen=True)
class Case:
    """One question and its candidates' signals (arrays in candidate order)."""

    corpus: str
    fold: str
    kind: str
    text: str
    german: bool
    ids: np.ndarray
    signals: dict[str, np.ndarray]  # e5, use, e5ctx, usectx (cosines), words, trigram (bm25, higher better)
    age_days: np.ndarray
    importance: np.ndarray
    dated: np.ndarray
    related: tuple[tuple[int, ...], ...]  # candidate positions of each candidate's context
    labels: tuple[tuple[str, ...], ...]
    gold: frozenset[str]


async def _scope_docs(store: MemoryStore, scope_id: int, sources: tuple[str, ...]) -> tuple[np.ndarray, list[str],
                                                                                              list[str]]:
    """The scope's documents in time order: ids, texts, texts in context (a message after the message before it)."""
    marks = ",".join("?" * len(sources))
    async with store.db.reading() as tx:
        rows = await tx.fetchall(f"SELECT id, source, text, created_at FROM docs WHERE scope_id = ? AND source IN"
                                 f" ({marks}) ORDER BY created_at, id", (scope_id, *sources))
    before: str | None = None
    ids, texts, contexts = [], [], []
    for doc_id, source, text, _ in rows:
        ids.append(doc_id)
        texts.append(text)
        contexts.append(context_text(before, text) if source == "message" else text)
        if source == "message":
            before = text
    return np.array(ids), texts, contexts


async def _cases(store: MemoryStore, use: UseModel, scope_id: int, questions: list[tuple[str, str, str, frozenset[str],
                 float]], sources: tuple[Any, ...], labels_of: dict[int, tuple[str, ...]], corpus: str,
                 keep_faded: bool) -> list[Case]:
    ids, texts, contexts = await _scope_docs(store, scope_id, sources)
    dense_docs = {"e5": await store.index.embed(texts, "document"), "use": use.vectors(texts),
                  "e5ctx": await store.index.embed(contexts, "document"), "usectx": use.vectors(contexts)}
    position = {int(d): i for i, d in enumerate(ids)}
    out = []
    for fold, kind, text, gold, now in questions:
        qvec = (await store.index.embed([text], "query"))[0]
        uvec = use.vectors([text])[0]
        every = {name: m @ (qvec if name.startswith("e5") else uvec) for name, m in dense_docs.items()}
        found = await store.index.candidates(scope_id, qvec, text, sources, now=now)
        pool = set(found.docs)
        for name in DENSE:
            pool |= {int(ids[i]) for i in np.argsort(-every[name])[:CANDIDATES]}
        async with store.db.reading() as tx:
            docs = found.docs | await documents(tx, pool - set(found.docs))
            related = await related_of(tx, {d: doc.source for d, doc in docs.items()})
        kept = [d for d in sorted(docs) if keep_faded or docs[d].source != "note"
                or not faded(docs[d].days_unused(now), docs[d].importance)]
        at = {d: i for i, d in enumerate(kept)}
        lexical = {c.doc_id: c for c in found.candidates}
        periods = search_text.named_periods(text)
        rows = [position[d] for d in kept]
        signals = {name: every[name][rows].astype(np.float32) for name in DENSE}
        signals["words"] = np.array([lexical[d].words if d in lexical else 0.0 for d in kept], np.float32)
        signals["trigram"] = np.array([lexical[d].trigram if d in lexical else 0.0 for d in kept], np.float32)
        out.append(Case(
            corpus, fold, kind, text, is_german(text), np.array(kept), signals,
            np.array([(now - docs[d].fresh_from) / 86400.0 for d in kept]),
            np.array([docs[d].importance for d in kept]),
            np.array([any(a <= docs[d].created_at < b for a, b in periods) for d in kept]),
            tuple(tuple(sorted(at[r] for r in related.get(d, ()) if r in at)) for d in kept),
            tuple(labels_of[docs[d].item_id * 2 + (docs[d].source == "note")] for d in kept),
            gold))
    return out


async def collect(locomo_path: Path, own_path: Path, shared_path: Path, cache: str = "") -> list[Case]:
    """Every question of the three sets with its signals (kept in `cache` between runs)."""
    if cache and Path(cache).exists():
        cached: list[Case] = pickle.loads(Path(cache).read_bytes())
        return cached
    e5, use, cases = make_embedder(), UseModel(), []
    with tempfile.TemporaryDirectory(prefix="mnemo-fusion-") as tmp:
        store = await MemoryStore.open(Path(tmp) / "locomo.sqlite3", e5)
        for conv in locomo.load(locomo_path):
            indexed = await locomo.index(store, conv, with_notes=True)
            labels = {m * 2: (dia,) for m, dia in indexed.message_dia.items()}
            labels |= {n * 2 + 1: dias for n, dias in indexed.note_dia.items()}
            questions = [(conv.sample_id, str(q.category), q.text, q.gold, conv.last_time) for q in conv.questions]
            cases += await _cases(store, use, indexed.scope.id, questions, ("message", "note"), labels, "locomo",
                                  False)
            print(f"{conv.sample_id}: {len(questions)} questions", flush=True)
        await store.close()
        store = await MemoryStore.open(Path(tmp) / "own.sqlite3", e5)
        own = load_own(own_path)
        scope = await store.scope("mnemo", "tobias")
        stored = await store.notes.add_many(scope, [NewNote(n.text, kind="fact", created_at=day(n.date))
                                                    for n in own.notes])
        labels = {s.id * 2 + 1: (n.id,) for s, n in zip(stored, own.notes)}
        latest = max(day(n.date) for n in own.notes) + 86400.0
        questions = [(q.split, q.kind, q.q, frozenset(q.gold), day(q.asked) if q.asked else latest)
                     for q in own.questions]
        cases += await _cases(store, use, scope.id, questions, ("note",), labels, "german", True)
        await store.close()
        store = await MemoryStore.open(Path(tmp) / "shared.sqlite3", e5)
        data = shared_german.load(shared_path)
        scope, ids = await shared_german.index(store, data)
        labels = {item * 2 + 1: (set_id,) for item, set_id in ids.items()}
        questions = [("shared", "-", q["q"], frozenset(q["gold"]), shared_german.now_of(data))
                     for q in data["questions"]]
        cases += await _cases(store, use, scope.id, questions, ("note",), labels, "shared_de", False)
        await store.close()
    if cache:
        Path(cache).write_bytes(pickle.dumps(cases))
    return cases
