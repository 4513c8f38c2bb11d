"""Scopes searched exactly up to 20k documents (issue 54: search p95 at 10k notes): a scope above the old limit of
3,000 keeps its float32 vectors while they take at most a quarter of the cache, whatever the chunks it is read in;
the nearest are what a brute-force cosine ranking gives; a large scope scores its candidates by its kept USE rows and
follows another process's edit."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from memory.records.notes import NewNote
from memory.search.index import SearchIndex
from memory.search.ranking import Weights
from memory.search.scope_arrays import FLOAT_SHARE, ScopeCache, highest
from memory.search.vectors import from_half, half
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder, FakeSentenceEncoder
from tests.test_vector_layout import note_texts

DIM = 64
ONLY_VECTORS = Weights(words=0.0, trigram=0.0, context=0.0, dated=0.0, recency_floor=1.0, importance=0.0)


async def test_a_scope_above_the_old_exact_limit_is_searched_exactly_as_a_brute_force_cosine_ranking(
    tmp_path: Path,
) -> None:
    embedder = FakeEmbedder(dim=DIM)
    texts = note_texts(3200)  # above the 3,000 documents that kept float vectors before
    async with await MemoryStore.open(tmp_path, embedder, weights=ONLY_VECTORS) as store:
        anna = await store.scope("mnemo", "anna")
        notes = await store.notes.add_many(anna, [NewNote(t) for t in texts])
        stored = np.stack([from_half(half(v)) for v in embedder.embed(texts)])  # as the embedding cache keeps them
        for query in ("Anna pflückt Kirsche in Bamberg Nummer3100", "Quitte Husum", "Holunder Nummer17"):
            qvec = embedder.embed([query], "query")[0]
            cosines = stored @ qvec
            hits = await store.search(anna, query, ("note",), k=10)
            assert np.allclose([h.components.cosine for h in hits], np.sort(cosines)[::-1][:10], atol=1e-5)
            best = {notes[i].id for i in np.flatnonzero(cosines > np.sort(cosines)[::-1][10] + 1e-5)}
            assert best <= {h.item_id for h in hits}  # every note strictly nearer than the 11th is found
        held = store.index.scopes.kept(anna.id)
        assert held is not None and held.vectors is not None and held.bits is None and len(held.ids) == 3200


async def test_a_scope_read_in_several_chunks_keeps_what_a_read_at_once_keeps(tmp_path: Path) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        anna = await store.scope("mnemo", "anna")
        await store.notes.add_many(anna, [NewNote(t) for t in note_texts(20)])
        async with store.db.reading() as tx:
            center = await store.index.center(tx)
            for up_to in (30, 15):  # floats kept; grown past the limit in the third chunk: bits
                whole = await ScopeCache(embedder.name, DIM, exact_up_to=up_to).get(tx, anna.id, center)
                chunked = await ScopeCache(embedder.name, DIM, exact_up_to=up_to, chunk=7).get(tx, anna.id, center)
                assert np.array_equal(whole.ids, chunked.ids) and len(chunked.ids) == 20
                if up_to == 30:
                    assert chunked.vectors is not None and whole.vectors is not None and chunked.bits is None
                    assert np.array_equal(whole.vectors, chunked.vectors)
                else:
                    assert chunked.bits is not None and whole.bits is not None and chunked.vectors is None
                    assert np.array_equal(whole.bits, chunked.bits)


async def test_floats_take_at_most_a_quarter_of_the_cache_and_a_scope_beyond_is_searched_by_its_bits(
    tmp_path: Path,
) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        scopes = [await store.scope("mnemo", user) for user in ("anna", "ben")]
        for scope in scopes:
            await store.notes.add_many(scope, [NewNote(t) for t in note_texts(40)])
        floats = 40 * DIM * 4
        budget = FLOAT_SHARE * floats - 1  # one byte short of keeping the floats
        small = SearchIndex(store.db, embedder, cache_bytes=budget)
        exact = SearchIndex(store.db, embedder)
        for scope in scopes:
            for query in ("Anna pflückt Kirsche in Bamberg", "Quitte Husum Nummer7"):
                bits_hits = await small.search(scope.id, query, ("note",), now=time.time())
                exact_hits = await exact.search(scope.id, query, ("note",), now=time.time())
                assert [h.item_id for h in bits_hits] == [h.item_id for h in exact_hits]
            assert (held := small.scopes.kept(scope.id)) is not None and held.bits is not None
        assert small.scopes.held() == [s.id for s in scopes]
        assert sum(a.nbytes for s in scopes if (a := small.scopes.kept(s.id)) is not None) <= budget
        assert not small.scopes.keeps_floats(40) and small.scopes.keeps_floats(39)


def test_highest_picks_what_a_stable_sort_of_all_picks_ties_included() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 300))
        scores = rng.integers(0, 12, n).astype(np.float32)  # many equal scores
        at = np.flatnonzero(rng.random(n) < 0.7)
        k = int(rng.integers(1, 80))
        expected = at[np.argsort(-scores[at], kind="stable")[:k]] if len(at) > k else at
        assert highest(scores, at, k).tolist() == expected.tolist()


async def test_a_large_scope_scores_its_candidates_by_its_kept_use_rows_and_follows_an_edit_elsewhere(
    tmp_path: Path,
) -> None:
    """Above `UseSignal.own_up_to` documents USE's own nearest no longer join (as in a scope above 3,000 before), and
    the candidates' USE cosines come from the scope's kept rows, which follow another process's edit."""
    embedder, use_model = FakeEmbedder(dim=512), FakeSentenceEncoder({"köter": "hund", "hund": "hund"})
    texts = [f"Paul backt Brot Nummer{i}" for i in range(69)]  # nothing of the query: the oldest 60 are e5's nearest
    async with await MemoryStore.open(tmp_path, embedder, second=use_model) as store, \
            await MemoryStore.open(tmp_path, embedder, second=use_model) as other:
        anna = await store.scope("mnemo", "anna")
        notes = await store.notes.add_many(anna, [NewNote(t) for t in texts])
        dog = (await store.notes.add(anna, "Bruno ist ein Hund")).note  # no word of the query either
        query = "Wo spielt mein Köter?"
        use_q = use_model.embed([query])[0]

        async def use_cosines() -> dict[int, float]:
            hits = await store.index.search(anna.id, query, ("note",), k=100, now=time.time())
            return {h.item_id: h.components.second for h in hits if h.components.second is not None}

        assert dog.id in await use_cosines()  # a small scope: USE's own nearest join
        assert store.index.second is not None
        store.index.second.own_up_to = 50  # the scope's 70 notes: a large scope
        found = await use_cosines()
        assert dog.id not in found and len(found) >= 60
        for note in notes:
            if note.id in found:
                assert abs(found[note.id] - float(from_half(half(use_model.embed([note.text])[0])) @ use_q)) < 1e-5
        held = store.index.scopes.kept(anna.id)
        assert held is not None and held.use is not None and held.vectors is not None
        await other.notes.edit(await other.scope("mnemo", "anna"), notes[0].id, "Paul backt Brot mit dem Hund")
        after = (await use_cosines())[notes[0].id]
        edited = float(from_half(half(use_model.embed(["Paul backt Brot mit dem Hund"])[0])) @ use_q)
        assert abs(after - edited) < 1e-5 and after > found[notes[0].id]
