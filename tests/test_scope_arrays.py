"""What the search keeps of a scope in memory (`memory.search.scope_arrays`): it follows every writer, forgets what was
deleted, switches to bits as a scope grows, stays within its budget, and m040 counts an older database's documents."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from memory.migrations.from_m040 import m040_scope_changes
from memory.records.notes import NewNote
from memory.search.index import SearchIndex
from memory.search.scope_arrays import DENSE_FROM, ScopeArrays
from memory.search.vectors import from_half, half
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.old_layouts import migrated_before
from tests.test_vector_layout import note_texts

pytestmark = pytest.mark.both_backends("the search's scope arrays, read from each database")

DIM = 64


async def found(index: SearchIndex, scope_id: int, query: str, k: int = 10) -> list[int]:
    return [h.item_id for h in await index.search(scope_id, query, ("note",), k=k, now=time.time())]


async def test_bits_and_exact_vectors_rank_alike_when_the_rescoring_covers_the_scope(tmp_path: Path) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        anna = await store.scope("mnemo", "anna")
        notes = await store.notes.add_many(anna, [NewNote(t) for t in note_texts(80)])
        exact = SearchIndex(store.db, embedder)
        bits = SearchIndex(store.db, embedder, exact_up_to=0)  # every scope by its bits; 120 rescored >= 80 notes
        for query in ("Anna pflückt Kirsche in Bamberg", "Quitte Husum", "Nummer17", "Holunder"):
            assert await found(exact, anna.id, query) == await found(bits, anna.id, query)
        held = exact.scopes.kept(anna.id), bits.scopes.kept(anna.id)
        assert held[0] is not None and held[0].vectors is not None and held[0].bits is None
        assert held[1] is not None and held[1].bits is not None and held[1].vectors is None
        qvec = embedder.embed(["Quitte Husum"], "query")[0]
        kept = {n.id: float(from_half(half(embedder.embed([n.text])[0])) @ qvec) for n in notes}
        for index in (exact, bits):  # nearest() by the full vectors, the way the cache keeps them
            nearest = await index.nearest(anna.id, qvec, "note", k=5)
            assert np.allclose([c for *_, c in nearest], sorted(kept.values(), reverse=True)[:5], atol=1e-5)
            assert all(abs(kept[item] - cosine) < 1e-5 for _, item, cosine in nearest)


async def test_another_connections_additions_and_deletions_reach_a_kept_scope(tmp_path: Path) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store, \
            await MemoryStore.open(tmp_path, embedder) as other:  # another process's writes, as far as SQLite knows
        anna = await store.scope("mnemo", "anna")
        await store.notes.add_many(anna, [NewNote(t) for t in note_texts(20)])
        assert await found(store.index, anna.id, "Anna isst Quittengelee in Zwickau") != []  # the scope is now kept
        added = (await other.notes.add(await other.scope("mnemo", "anna"), "Anna isst Quittengelee in Zwickau.")).note
        assert (await found(store.index, anna.id, "Quittengelee Zwickau", k=1)) == [added.id]
        await other.notes.erase(await other.scope("mnemo", "anna"), added.id)
        assert added.id not in await found(store.index, anna.id, "Quittengelee Zwickau")
        held = store.index.scopes.kept(anna.id)
        assert held is not None and len(held.ids) == 20


async def test_a_scope_that_grows_past_the_exact_limit_keeps_its_bits_and_still_finds_everything(
    tmp_path: Path,
) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        anna = await store.scope("mnemo", "anna")
        index = SearchIndex(store.db, embedder, exact_up_to=30)
        texts = note_texts(50)
        first = await store.notes.add_many(anna, [NewNote(t) for t in texts[:25]])
        assert await found(index, anna.id, texts[3], k=1) == [first[3].id]
        assert (held := index.scopes.kept(anna.id)) is not None and held.vectors is not None
        later = await store.notes.add_many(anna, [NewNote(t) for t in texts[25:]])
        for i in (3, 30, 49):
            assert await found(index, anna.id, texts[i], k=1) == [(first + later)[i].id]
        held = index.scopes.kept(anna.id)
        assert held is not None and held.bits is not None and held.vectors is None and len(held.ids) == 50
        assert np.all(np.diff(held.ids) > 0)


async def test_the_cache_stays_within_its_budget_and_a_scope_larger_than_it_is_searched_uncached(
    tmp_path: Path,
) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        scopes = [await store.scope("mnemo", user) for user in ("anna", "ben", "cleo")]
        for scope in scopes:
            await store.notes.add_many(scope, [NewNote(t) for t in note_texts(30)])
        # By their bits: floats may take only a quarter of a budget (`ScopeCache.keeps_floats`)
        bits = SearchIndex(store.db, embedder, exact_up_to=0)
        await found(bits, scopes[0].id, "Kirsche")
        assert (first := bits.scopes.kept(scopes[0].id)) is not None and first.bits is not None
        one_scope = first.nbytes
        index = SearchIndex(store.db, embedder, cache_bytes=2 * one_scope + 10)
        for scope in scopes:
            assert len(await found(index, scope.id, "Anna pflückt Kirsche")) == 10
        assert index.scopes.held() == [scopes[1].id, scopes[2].id]  # the least recently used went
        tiny = SearchIndex(store.db, embedder, cache_bytes=one_scope // 2)
        assert await found(tiny, scopes[0].id, "Kirsche Bamberg") == await found(index, scopes[0].id, "Kirsche Bamberg")
        assert tiny.scopes.held() == []


async def test_m040_counts_the_documents_an_older_mnemo_wrote_and_the_triggers_follow(tmp_path: Path) -> None:
    db = await migrated_before(tmp_path / "mnemo.sqlite3", m040_scope_changes)
    async with db.transaction() as tx:
        for user in ("anna", "ben"):
            await tx.execute("INSERT INTO scopes(companion_id, user_id, created_at) VALUES ('mnemo', ?, 0)", (user,))
        for i in range(5):
            await tx.execute("INSERT INTO docs(scope_id, source, item_id, text, content_hash, created_at)"
                             " VALUES (?, 'note', ?, ?, ?, 0)", (1 if i < 3 else 2, i, f"Text {i}", f"h{i}"))
    await db.close()
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        async with store.db.reading() as tx:
            assert await tx.fetchall("SELECT scope_id, added, changed FROM scope_changes ORDER BY scope_id") \
                == [(1, 3, 0), (2, 2, 0)]
        async with store.db.transaction() as tx:
            await tx.execute("UPDATE docs SET last_used_at = 1 WHERE scope_id = 1")  # using a note changes nothing
            await tx.execute("UPDATE docs SET text = 'Text neu' WHERE id = 1")
            await tx.execute("DELETE FROM docs WHERE id = 4")
        async with store.db.reading() as tx:
            after = await tx.fetchall("SELECT scope_id, added, changed FROM scope_changes ORDER BY scope_id")
        assert [(scope, added, changed > 0) for scope, added, changed in after] == [(1, 3, True), (2, 2, True)]


async def test_after_deleteme_elsewhere_a_kept_scope_shows_neither_the_old_notes_nor_misses_the_new(
    tmp_path: Path,
) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store, await MemoryStore.open(tmp_path, embedder) as other:
        anna = await store.scope("mnemo", "anna")
        old = (await store.notes.add(anna, "Anna hütet Alpakas in Wismar.")).note
        assert await found(store.index, anna.id, "Alpakas Wismar") == [old.id]  # kept: one note, one addition
        await other.delete_scope(anna)
        assert other.index.scopes.kept(anna.id) is None
        new = (await other.notes.add(anna, "Anna hütet Alpakas in Husum.")).note  # one note, one addition again
        assert await found(store.index, anna.id, "Alpakas Wismar") == [new.id]
        held = store.index.scopes.kept(anna.id)
        assert held is not None and len(held.ids) == 1


async def test_a_scope_searched_by_its_bits_keeps_to_the_kinds_and_the_window_asked_for(tmp_path: Path) -> None:
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        anna = await store.scope("mnemo", "anna")
        index = SearchIndex(store.db, embedder, exact_up_to=0)
        now, day = time.time(), 86400.0
        old = await store.messages.add(anna, "user", "Ich war im Kino in Husum", created_at=now - 3 * day)
        new = await store.messages.add(anna, "user", "Ich war wieder im Kino in Husum", created_at=now - 0.5 * day)
        note = (await store.notes.add(anna, "Anna geht gern ins Kino in Husum.")).note
        hits = await index.search(anna.id, "Kino Husum", ("message",), window=(now - day, now), now=now)
        assert [(h.source, h.item_id) for h in hits] == [("message", new.id)]
        hits = await index.search(anna.id, "Kino Husum", ("note",), now=now)
        assert [(h.source, h.item_id) for h in hits] == [("note", note.id)]
        every = await index.search(anna.id, "Kino Husum", ("message", "note"), now=now)
        assert {(h.source, h.item_id) for h in every} == {("message", old.id), ("message", new.id), ("note", note.id)}
        assert (held := index.scopes.kept(anna.id)) is not None and held.bits is not None


def test_locate_finds_the_same_positions_by_table_and_by_binary_search() -> None:
    rng = np.random.default_rng(5)
    close = np.sort(rng.choice(np.arange(1000, 1000 + 15_000), size=DENSE_FROM, replace=False)).astype(np.int64)
    far = close * 7  # spread over seven times their number: no table
    for ids, tabled in ((close, True), (far, False)):
        n = len(ids)
        arrays = ScopeArrays(0, 0, ids, np.zeros(n, np.uint8), np.zeros(n), np.ones(n), None, None)
        assert (arrays.dense is not None) == tabled
        asked = np.concatenate([ids[rng.choice(n, 500)], np.array([0, 999, ids[-1] + 1, ids[0] - 1, 10**9])])
        held = set(ids.tolist())
        expected = [int(np.searchsorted(ids, a)) for a in asked.tolist() if a in held]  # one per id asked and held
        assert sorted(arrays.locate(asked).tolist()) == sorted(expected) and len(expected) == 500


async def test_a_write_cut_off_before_its_commit_leaves_the_counts_and_the_kept_scope_as_they_were(
    tmp_path: Path,
) -> None:
    """A process killed mid-write leaves a rolled-back transaction: its documents and their counts go together."""
    embedder = FakeEmbedder(dim=DIM)
    async with await MemoryStore.open(tmp_path, embedder) as store:
        anna = await store.scope("mnemo", "anna")
        kept = (await store.notes.add(anna, "Anna hütet Alpakas in Wismar.")).note
        assert await found(store.index, anna.id, "Alpakas") == [kept.id]
        async with store.db.reading() as tx:
            before = await tx.fetchall("SELECT added, changed FROM scope_changes WHERE scope_id = ?", (anna.id,))
        vector = embedder.embed(["Anna hütet Lamas in Husum."])[0]
        try:
            async with store.db.transaction() as tx:
                await store.index.add(tx, anna.id, "note", 999, "Anna hütet Lamas in Husum.", vector, time.time())
                raise RuntimeError("cut off")
        except RuntimeError:
            pass
        async with store.db.reading() as tx:
            assert await tx.fetchall("SELECT added, changed FROM scope_changes WHERE scope_id = ?",
                                     (anna.id,)) == before
        assert await found(store.index, anna.id, "Lamas Husum") == [kept.id]
        held = store.index.scopes.kept(anna.id)
        assert held is not None and len(held.ids) == 1


async def test_word_parts_follow_additions_and_deletions_on_both_backends(store: MemoryStore) -> None:
    """SQLite finds word parts in its trigram table; PostgreSQL in the lower-cased texts the scope keeps, which
    must follow an addition (read incrementally) and a deletion (read again) like the vectors do."""
    anna = await store.scope("mnemo", "anna")

    async def parts(query: str) -> list[str]:
        return [h.text for h in await store.search(anna, query) if h.components.trigram > 0]

    cinema = await store.notes.add(anna, "Anna war beim Kinoabend mit Lea.")
    await store.notes.add(anna, "Anna hat Ärger mit dem Vermieter.")
    assert await parts("kino") == ["Anna war beim Kinoabend mit Lea."]
    await store.notes.add(anna, "Der ÄRGERLICHE Bus kam zu spät.")  # read incrementally on PostgreSQL
    assert sorted(await parts("Ärger")) == ["Anna hat Ärger mit dem Vermieter.", "Der ÄRGERLICHE Bus kam zu spät."]
    kept = store.index.scopes.kept(anna.id)
    assert kept is not None
    if store.db.dialect == "postgres":
        assert kept.texts is not None and kept.texts[-1] == "der ärgerliche bus kam zu spät."
        assert kept.holding("ärger").tolist() == kept.ids[1:].tolist()
    else:
        assert kept.texts is None  # FTS5's trigram table holds them
    await store.notes.delete(anna, cinema.note.id)  # the scope is read again
    assert await parts("kino") == []
    assert len(await parts("ärger")) == 2


def test_holding_finds_a_part_once_per_document_and_never_across_two() -> None:
    texts = ["kinoabend im kino", "ab", "end", ""]
    arrays = ScopeArrays(0, 0, np.array([4, 7, 9, 12]), np.zeros(4, np.uint8), np.zeros(4), np.zeros(4), None, None,
                         texts)
    assert arrays.holding("kino").tolist() == [4]
    assert arrays.holding("bend").tolist() == [4]
    assert arrays.holding("aben").tolist() == [4]  # not "ab" + "end" of the next two
    assert arrays.holding("ende").tolist() == []
    assert arrays.holding("end").tolist() == [4, 9]
    without = ScopeArrays(0, 0, np.array([4]), np.zeros(1, np.uint8), np.zeros(1), np.zeros(1), None, None)
    try:
        without.holding("kino")
    except ValueError:
        pass
    else:
        raise AssertionError("holding without kept texts must refuse")
