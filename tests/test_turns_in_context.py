"""Context around turns: a message's vectors are made of it read after the message before it; the cache keeps one
vector per message in context, a rewrite re-embeds the next message, bulk adds and `mnemo reindex` read in context
too, and the messages of an older store are caught up."""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bot.app import turns_in_context
from memory.ledgers import audit
from memory.ledgers.journal import NewMessage
from memory.migrations import migrate
from memory.models import Scope
from memory.records.kinship import PersonDraft
from memory.search.embedder import Embedder
from memory.search.reindex import reindex
from memory.search.search_text import content_hash
from memory.search.turn_context import CAUGHT_UP_KEY, CAUGHT_UP_UNTIL, CONTEXT_CHARS, context_text
from memory.search.use_signal import fill_missing, make_use_embedder
from memory.search.vectors import from_half
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder, FakeSentenceEncoder

pytestmark = pytest.mark.both_backends("docs.content_hash, the embedding cache and the neighbour's rows on both")

CONCEPTS = {"hund": "hund", "dackel": "hund", "katze": "katze", "mieze": "katze"}


@pytest.fixture
async def store(tmp_path: Path, embedder: FakeEmbedder, database_url: str | None):  # type: ignore[no-untyped-def]
    s = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url,
                               second=FakeSentenceEncoder(CONCEPTS))
    yield s
    await s.close()


async def vectors_of(store: MemoryStore, message_id: int) -> tuple[str, np.ndarray, np.ndarray]:
    """(content hash, e5 vector, USE vector) stored for a message's document."""
    async with store.db.reading() as tx:
        row = await tx.fetchone(
            "SELECT d.content_hash, e.vector, u.vector FROM messages m JOIN docs d ON d.id = m.doc_id"
            " JOIN embedding_cache e ON e.model = ? AND e.purpose = 'document' AND e.content_hash = d.content_hash"
            " JOIN use_vectors u ON u.doc_id = d.id WHERE m.id = ?", (store.index.embedder.name, message_id))
    assert row is not None, f"message {message_id} has its document, cached vector and USE vector"
    return str(row[0]), from_half(row[1]), from_half(row[2])


async def read_as(store: MemoryStore, text: str) -> np.ndarray:
    """The e5 vector of a text as a document (what the store keeps, float16)."""
    return np.asarray((await store.index.embed([text]))[0], dtype=np.float16).astype(np.float32)


def test_context_text_is_the_measured_form() -> None:
    before = "x" * 400 + " Warst du am Wochenende beim Bouldern?"
    assert context_text(before, "Ja") == before[-CONTEXT_CHARS:] + "\nJa"
    assert context_text(None, "Ja") == context_text("  ", "Ja") == "Ja"


async def test_the_same_text_in_two_contexts_gets_two_vectors(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.messages.add(scope, "assistant", "Hast du heute den Dackel gesehen?")
    dog = await store.messages.add(scope, "user", "Ja, gerade eben.")
    await store.messages.add(scope, "assistant", "Und die Mieze vom Nachbarn?")
    cat = await store.messages.add(scope, "user", "Ja, gerade eben.")
    dog_hash, dog_e5, dog_use = await vectors_of(store, dog.id)
    cat_hash, cat_e5, cat_use = await vectors_of(store, cat.id)
    assert dog_hash != cat_hash and not np.allclose(dog_e5, cat_e5) and not np.allclose(dog_use, cat_use)
    assert dog_hash == content_hash("Hast du heute den Dackel gesehen?\nJa, gerade eben.")
    assert np.allclose(dog_e5, await read_as(store, "Hast du heute den Dackel gesehen?\nJa, gerade eben."))
    async with store.db.reading() as tx:  # what is shown and found by its words stays its own text
        texts = {r[0] for r in await tx.fetchall("SELECT text FROM docs WHERE source = 'message'")}
    assert "Ja, gerade eben." in texts and not any("\n" in t for t in texts)
    hits = await store.search(scope, "Dackel", ("message",), k=4)
    assert [h.item_id for h in hits[:2]] == [dog.id - 1, dog.id]  # the answer beside its question, not the cat's


async def test_an_edit_re_embeds_the_next_message(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    first = await store.messages.add(scope, "user", "Schau mal, ein Foto.")
    after = await store.messages.add(scope, "assistant", "Wie schön, wer ist das?")
    old_hash, old_e5, _ = await vectors_of(store, after.id)
    assert await store.messages.rewrite(scope, first.id, "Schau mal, ein Foto. [Foto: ein Dackel im Schnee]")
    new_hash, new_e5, new_use = await vectors_of(store, after.id)
    read = context_text("Schau mal, ein Foto. [Foto: ein Dackel im Schnee]", "Wie schön, wer ist das?")
    assert new_hash == content_hash(read) != old_hash
    assert np.allclose(new_e5, await read_as(store, read)) and not np.allclose(new_e5, old_e5)
    assert np.allclose(new_use, store.index.second.embedder.embed([read])[0], atol=1e-3)  # type: ignore[union-attr]
    hits = await store.search(scope, "Dackel", ("message",), k=2)
    assert {h.item_id for h in hits} == {first.id, after.id}


async def test_a_batch_is_read_in_context_within_itself_and_after_the_last_message(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.messages.add(scope, "user", "Mein Dackel heißt Bruno.")
    added = await store.messages.add_many(scope, [NewMessage("assistant", "Wie alt ist er?", 1.7e9),
                                                  NewMessage("user", "Sieben.", 1.7e9 + 1)])
    assert (await vectors_of(store, added[0].id))[0] == content_hash("Mein Dackel heißt Bruno.\nWie alt ist er?")
    assert (await vectors_of(store, added[1].id))[0] == content_hash("Wie alt ist er?\nSieben.")


async def test_messages_logged_unindexed_are_indexed_in_context(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.messages.add(scope, "assistant", "Gehst du morgen klettern?", index=False)
    answer = await store.messages.add(scope, "user", "Ja, mit Lea.", index=False)
    assert await store.messages.index_unindexed(scope.id) == 2
    assert (await vectors_of(store, answer.id))[0] == content_hash("Gehst du morgen klettern?\nJa, mit Lea.")


class GatedEmbedder(FakeEmbedder):
    """Holds the embedding of texts holding `word` until `gate` is set (`entered` says it began)."""

    def __init__(self, word: str) -> None:
        super().__init__()
        self.word, self.gate, self.entered = word, threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        if any(self.word in t for t in texts):
            self.entered.set()
            self.gate.wait(10)
        return super().embed(texts, purpose)


async def test_a_message_logged_while_another_was_embedded_is_read_after_it(tmp_path: Path,
                                                                             database_url: str | None) -> None:
    embedder = GatedEmbedder("Lea")
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url) as store:
        scope = await store.scope("mnemo", "anna")
        await store.messages.add(scope, "assistant", "Gehst du morgen klettern?")
        answer = asyncio.create_task(store.messages.add(scope, "user", "Ja, mit Lea."))
        while not embedder.entered.is_set():
            await asyncio.sleep(0.01)
        await store.messages.add(scope, "assistant", "Schön, grüß sie!", index=False)  # logged meanwhile, before it
        embedder.gate.set()
        logged = await answer
        assert (await vectors_of_plain(store, logged.id))[0] == content_hash("Schön, grüß sie!\nJa, mit Lea.")


async def test_reindex_gives_messages_the_vectors_live_ingest_gives_them(tmp_path: Path,
                                                                        database_url: str | None) -> None:
    lines = ["Warst du am Wochenende beim Bouldern?", "Ja, genau das hab ich gemacht", "", "Mit wem?", "Mit Lea."]
    target = FakeEmbedder(dim=48, name="target-model")
    async with await MemoryStore.open(tmp_path / "live", target) as live:  # the target model, live
        scope = await live.scope("mnemo", "anna")
        for i, line in enumerate(lines):
            await live.messages.add(scope, "user" if i % 2 else "assistant", line)
        expected = {m.text: await vectors_of_plain(live, m.id) for m in await live.messages.recent(scope, 10)
                    if m.text}
    async with await MemoryStore.open(tmp_path / "moved", FakeEmbedder(), database_url=database_url) as old:
        scope = await old.scope("mnemo", "anna")
        for i, line in enumerate(lines):
            await old.messages.add(scope, "user" if i % 2 else "assistant", line)
        result = await reindex(old.db, target)
    assert result.switched
    async with await MemoryStore.open(tmp_path / "moved", target, database_url=database_url) as moved:
        scope = await moved.scope("mnemo", "anna")
        got = {m.text: await vectors_of_plain(moved, m.id) for m in await moved.messages.recent(scope, 10) if m.text}
    assert got.keys() == expected.keys() and len(got) == 4
    for text, (hash_, vector) in expected.items():
        assert got[text][0] == hash_ and np.allclose(got[text][1], vector), text


async def vectors_of_plain(store: MemoryStore, message_id: int) -> tuple[str, np.ndarray]:
    """(content hash, e5 vector) of a message's document, without the second signal."""
    async with store.db.reading() as tx:
        row = await tx.fetchone(
            "SELECT d.content_hash, e.vector FROM messages m JOIN docs d ON d.id = m.doc_id JOIN embedding_cache e"
            " ON e.model = ? AND e.purpose = 'document' AND e.content_hash = d.content_hash WHERE m.id = ?",
            (store.index.embedder.name, message_id))
    assert row is not None
    return str(row[0]), from_half(row[1])


async def own_words_only(store: MemoryStore, scope: Scope) -> None:
    """Make the scope's message documents as a store before m053 kept them: vectors of their own words."""
    for message in await store.messages.recent(scope, 50):
        vector = (await store.index.embed([message.text]))[0]
        async with store.db.transaction() as tx:
            doc = (await tx.fetchone("SELECT doc_id FROM messages WHERE id = ?", (message.id,)))[0]
            await store.index.update(tx, doc, message.text, vector)


async def test_an_older_store_is_caught_up_after_the_migration(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    question = await store.messages.add(scope, "assistant", "Hast du heute den Dackel gesehen?")
    answer = await store.messages.add(scope, "user", "Ja, gerade eben.")
    live = await vectors_of(store, answer.id)
    await own_words_only(store, scope)
    async with store.db.transaction() as tx:  # as before m053: the migration runs again on this store
        await tx.execute("DELETE FROM migrations WHERE name = 'm053_turns_in_context'")
        await tx.execute("DROP INDEX messages_scope_order")
    assert await migrate(store.db) == ["m053_turns_in_context"]
    assert (await vectors_of(store, answer.id))[0] == content_hash("Ja, gerade eben.")
    assert await store.messages.catch_up_context(batch=1, max_batches=1) == (0, False)  # the first reads nothing
    assert await store.messages.catch_up_context(batch=1) == (1, True)
    caught = await vectors_of(store, answer.id)
    assert caught[0] == live[0] and np.allclose(caught[1], live[1]) and np.allclose(caught[2], live[2])
    assert (await vectors_of(store, question.id))[0] == content_hash("Hast du heute den Dackel gesehen?")
    async with store.db.reading() as tx:
        marks = await tx.fetchall("SELECT key FROM meta WHERE key IN (?, ?)", (CAUGHT_UP_KEY, CAUGHT_UP_UNTIL))
    assert marks == []
    assert await store.messages.catch_up_context() == (0, True)


async def test_the_start_catches_up_older_messages_in_the_background(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    for n in range(5):
        await store.messages.add(scope, "user", f"Heute war Probe Nummer {n} mit dem Orchester.")
    live = {m.id: (await vectors_of(store, m.id))[0] for m in await store.messages.recent(scope)}
    await own_words_only(store, scope)
    async with store.db.transaction() as tx:  # as m053 leaves an older store
        await tx.execute("INSERT INTO meta(key, value) VALUES (?, '0'), (?, '999')", (CAUGHT_UP_KEY, CAUGHT_UP_UNTIL))
    await turns_in_context(store, pause=0.0)
    assert {m.id: (await vectors_of(store, m.id))[0] for m in await store.messages.recent(scope)} == live
    assert await store.messages.catch_up_context() == (0, True)


async def test_a_model_switch_before_the_catch_up_reads_the_older_messages_in_context(
        tmp_path: Path, database_url: str | None) -> None:
    use = FakeSentenceEncoder(CONCEPTS)
    target = FakeEmbedder(dim=48, name="target-model")
    async with await MemoryStore.open(tmp_path / "data", FakeEmbedder(), database_url=database_url, second=use) as old:
        scope = await old.scope("mnemo", "anna")
        await old.messages.add(scope, "assistant", "Hast du heute den Dackel gesehen?")
        answer = await old.messages.add(scope, "user", "Ja, gerade eben.")
        await own_words_only(old, scope)
        async with old.db.transaction() as tx:  # as m053 leaves an older store
            await tx.execute("INSERT INTO meta(key, value) VALUES (?, '0'), (?, '999')",
                             (CAUGHT_UP_KEY, CAUGHT_UP_UNTIL))
        assert (await reindex(old.db, target)).switched
        await fill_missing(old.db, use)
    read = "Hast du heute den Dackel gesehen?\nJa, gerade eben."
    async with await MemoryStore.open(tmp_path / "data", target, database_url=database_url, second=use) as moved:
        hash_, e5, use_vector = await vectors_of(moved, answer.id)
        assert await moved.messages.catch_up_context() == (0, True)
    assert hash_ == content_hash(read) and np.allclose(e5, target.embed([read])[0], atol=1e-3)
    assert np.allclose(use_vector, use.embed([read])[0], atol=1e-3)


async def test_an_erased_person_leaves_no_cached_vector(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.messages.add(scope, "user", "Meine Schwester Berta hat einen Dackel.")
    processing = audit.new_processing("test")
    berta = await store.people.observe(scope, PersonDraft("Berta", relation="Schwester"), processing=processing)
    fact = (await store.notes.add(scope, "Berta hat einen Dackel namens Bruno")).note
    await store.people.link_notes(scope, berta.id, [fact.id], processing=processing)
    await store.people.forget(scope, berta.id)
    async with store.db.reading() as tx:
        orphans = await tx.fetchone("SELECT count(*) FROM embedding_cache WHERE content_hash NOT IN"
                                    " (SELECT content_hash FROM docs)")
        kept = await tx.fetchall("SELECT text FROM docs")
    assert orphans[0] == 0 and [r[0] for r in kept] == ["Meine Schwester Berta hat einen Dackel."]


@pytest.mark.sqlite_only("the real models; the storage is tested on both above")
async def test_a_short_answer_is_found_by_the_question_it_answers(tmp_path: Path, real_embedder: Embedder) -> None:
    turns = [("assistant", "Wie war dein Tag heute?"), ("user", "Ganz okay, viel Arbeit im Büro."),
             ("assistant", "Warst du am Wochenende beim Bouldern?"), ("user", "Ja, genau das hab ich gemacht"),
             ("assistant", "Hast du deine Mutter angerufen?"), ("user", "Nein, das mache ich morgen."),
             ("assistant", "Hast du das Buch schon fertig gelesen?"), ("user", "Ja, gestern Abend."),
             ("assistant", "Kochst du heute selbst?"), ("user", "Ja, Nudeln mit Tomatensoße."),
             ("assistant", "Bist du mit dem Rad zur Arbeit gefahren?"), ("user", "Nein, es hat geregnet."),
             ("user", "Ich habe gerade Lust auf einen Film."), ("assistant", "Welchen denn?"),
             ("user", "Irgendwas Lustiges."), ("assistant", "Wie geht es deinem Knie?"), ("user", "Viel besser.")]
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", real_embedder, second=make_use_embedder()) as store:
        scope = await store.scope("mnemo", "anna")
        for role, text in turns:
            await store.messages.add(scope, role, text)
        hits = await store.search(scope, "Bouldern am Wochenende", ("message",), k=3)
    assert "Ja, genau das hab ich gemacht" in [h.text for h in hits[:2]], [h.text for h in hits]
