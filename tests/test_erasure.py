"""Erasure at the store: backups follow the tombstones, an old database is cleaned once, undo and the cache cope."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memory.ledgers import audit
from memory.ledgers.journal import Journal, NewMessage
from memory.ledgers.undo import is_final, undo_latest
from memory.migrations.from_m013 import m022_erasure
from memory.models import Scope
from memory.records.kinship import PersonDraft
from memory.records.notes import Notes
from memory.search.index import SearchIndex
from memory.search.search_text import content_hash
from memory.storage.backup import backup, backup_name
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.old_layouts import migrated_before
from tests.scenarios.traces import files, spellings, traces

pytestmark = pytest.mark.both_backends("erasure's statements and tombstones")


async def open_store(data: Path) -> MemoryStore:
    return await MemoryStore.open(data, FakeEmbedder(), semantic_dedupe=0.97)


async def cached(store: MemoryStore, text: str) -> bool:
    async with store.db.reading() as tx:
        return await tx.fetchone("SELECT 1 FROM embedding_cache WHERE content_hash = ?",
                                 (content_hash(text),)) is not None


async def test_a_backup_loses_what_is_erased_later_and_keeps_what_came_after(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with await open_store(data) as store:
        anna = await store.scope("mnemo", "anna")
        await store.messages.add(anna, "user", "Ich heiße Anna Quastenflosser.")
        older = await backup(store.db, backup_name(store.db.backup_dir, "older"))
        await store.delete_scope(anna)
        await store.messages.add(anna, "user", "Ich bin wieder da, diesmal als Anna Pfauenauge.")
        newer = await backup(store.db, backup_name(store.db.backup_dir, "newer"))
    async with await open_store(data) as store:  # a start applies the tombstones again: nothing changes
        anna = await store.scope("mnemo", "anna")
        assert [m.text for m in await store.messages.recent(anna)] == [
            "Ich bin wieder da, diesmal als Anna Pfauenauge."]
    assert traces(data, {"Quastenflosser"}) == {}
    found = traces(data, {"Pfauenauge"})["Pfauenauge"]
    assert f"backups/{newer.name}" in found and f"backups/{older.name}" not in found, (
        "the tombstone of the first /deleteme is not applied to a backup made after it")


async def test_a_small_scope_among_many_documents_leaves_one_document_at_a_time(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with await open_store(data) as store:
        anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
        await store.messages.add_many(ben, [NewMessage("user", f"Ben notiert Zahl {i} im Heft.", float(i))
                                            for i in range(400)])
        await store.messages.add(anna, "user", "Ich heiße Anna Schlehdornhecke.")
        await store.delete_scope(anna)  # 1 document of 401: deleted in secure-delete mode, not merged
    assert traces(data, spellings("Schlehdornhecke")) == {}
    assert set(traces(data, spellings("notiert"))) == spellings("notiert")


async def test_people_forget_erases_the_person_their_notes_and_their_names_from_every_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with await open_store(data) as store:
        scope = await store.scope("mnemo", "anna")
        processing = audit.new_processing("test")
        ottilie = await store.people.observe(scope, PersonDraft("Ottilie", relation="Tante"), processing=processing)
        ottilie = await store.people.rename(scope, ottilie.id, "Ottilie Kranichfeld")
        fact = (await store.notes.add(scope, "Ottilie züchtet Kakteen auf dem Balkon.")).note
        keep = (await store.notes.add(scope, "Anna fährt gern Rad.")).note
        await store.people.link_notes(scope, ottilie.id, [fact.id], processing=processing)
        await backup(store.db, backup_name(store.db.backup_dir))
        needles = spellings("Ottilie") | spellings("Kranichfeld") | {fact.text, content_hash(fact.text)}
        assert set(traces(data, needles)) == needles

        person, count = await store.people.forget(scope, ottilie.id)

        assert (person.name, count) == ("Ottilie Kranichfeld", 1)
        assert traces(data, needles) == {}, files(data)
        assert [n.id for n in await store.notes.list(scope, include_closed=True)] == [keep.id]
        newest = next(e for e in await store.audit_log(scope) if e.item_type == "person")
        assert (newest.action, newest.item_id, newest.before) == ("erase", ottilie.id, None)


async def test_undo_of_an_extraction_skips_the_note_that_was_forgotten_since(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    processing = audit.new_processing("extract")
    tea = (await store.notes.add(scope, "Anna trinkt Tee.", processing=processing)).note
    cello = (await store.notes.add(scope, "Anna spielt Cello.", processing=processing)).note
    await store.notes.erase(scope, cello.id)
    assert all(is_final(e) for e in await undo_latest(store, scope)), (
        "right after /forget, /undo takes nothing else back")
    await store.notes.add(scope, "Anna mag Regen.")
    await undo_latest(store, scope)  # the newest change: the rain note
    undone = await undo_latest(store, scope)  # then the extraction, without the erased note
    assert [(e.action, e.item_id) for e in undone] == [("create", tea.id)]
    assert await store.notes.list(scope) == []


async def test_the_cache_keeps_a_text_another_user_still_has(store: MemoryStore) -> None:
    anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
    mine = (await store.notes.add(anna, "Mag Kaffee schwarz.")).note
    await store.notes.add(ben, "Mag Kaffee schwarz.")
    only = (await store.notes.add(anna, "Anna sammelt Briefmarken aus Tuvalu.")).note
    await store.notes.erase(anna, mine.id)
    await store.notes.erase(anna, only.id)
    assert await cached(store, "Mag Kaffee schwarz.") and not await cached(store, only.text)
    await store.delete_scope(ben)
    assert not await cached(store, "Mag Kaffee schwarz.")


async def test_a_backup_that_cannot_be_read_is_logged_and_the_others_are_scrubbed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    data = tmp_path / "data"
    async with await open_store(data) as store:
        scope = await store.scope("mnemo", "anna")
        note = (await store.notes.add(scope, "Anna hütet Alpakas im Allgäu.")).note
        await backup(store.db, backup_name(store.db.backup_dir))
        (store.db.backup_dir / "broken.sqlite3").write_bytes(b"not a database, Alpakas" * 100)
        with caplog.at_level(logging.WARNING, logger="memory.account.erasure"):
            await store.notes.erase(scope, note.id)
    assert traces(data, {"hütet Alpakas"}) == {}
    assert any("broken.sqlite3" in r.getMessage() for r in caplog.records)


async def legacy_database(path: Path) -> None:
    """A database as mnemo before erasure wrote it: migrations up to m021, no secure delete anywhere, and
    Ben's data deleted the old way (rows only), Anna's kept.
    """
    db = await migrated_before(path, m022_erasure)
    async with db.reading() as tx:
        await tx.execute("PRAGMA secure_delete=OFF")
    index = SearchIndex(db, FakeEmbedder())
    await index.ensure_model()
    notes, journal = Notes(db, index), Journal(db, index)
    for user in ("anna", "ben"):
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO scopes(companion_id, user_id, created_at) VALUES ('mnemo', ?, 0)", (user,))
    anna, ben = Scope(1, "mnemo", "anna"), Scope(2, "mnemo", "ben")
    for i in range(30):
        await journal.add(ben, "user", f"Mein Kanarienvogel Pumuckelchen pfeift Lied {i}.")
        await journal.add(anna, "user", f"Ich gieße meine Orchideen, Tag {i}.")
    await notes.add(ben, "Ben hat einen Kanarienvogel namens Pumuckelchen.")
    await notes.add(anna, "Anna hat Orchideen.")
    async with db.transaction() as tx:  # what /deleteme did before
        await tx.execute("DELETE FROM vec_docs WHERE doc_id IN (SELECT id FROM docs WHERE scope_id = 2)")
        for table in ("docs", "notes", "messages", "audit_log"):
            await tx.execute(f"DELETE FROM {table} WHERE scope_id = 2")
    await db.close()


async def test_a_database_from_before_erasure_is_cleaned_once_with_its_backups(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    await legacy_database(data / "mnemo.sqlite3")
    ben = spellings("Pumuckelchen") | spellings("Kanarienvogel")
    assert set(traces(data, ben)) == ben, "the old way left Ben's words in the file"

    with caplog.at_level(logging.WARNING):
        async with await open_store(data) as store:
            anna = await store.scope("mnemo", "anna")
            assert [h.text for h in await store.search(anna, "Orchideen", ("note",))] == ["Anna hat Orchideen."]
    assert any("before-migration" in name for name in files(data))
    assert traces(data, ben) == {}, files(data)
    assert set(traces(data, spellings("Orchideen"))) == spellings("Orchideen")
    rewrites = [r for r in caplog.records if "rewrote" in r.getMessage()]
    assert len(rewrites) == 1

    with caplog.at_level(logging.WARNING):
        async with await open_store(data):
            pass
    assert len([r for r in caplog.records if "rewrote" in r.getMessage()]) == 1, "once"


async def test_deleteme_takes_the_learned_rhythm_and_leaves_the_others(store: MemoryStore) -> None:
    from zoneinfo import ZoneInfo

    from memory.account.erasure import scoped_tables

    anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
    berlin, evening = ZoneInfo("Europe/Berlin"), 1_795_000_000.0
    for scope in (anna, ben):
        await store.rhythm.observe(scope, evening, berlin, answered=True)
    async with store.db.reading() as tx:
        assert "rhythm" in await scoped_tables(tx), "every table with a scope id is erased by /deleteme"
    await store.delete_scope(anna)
    assert (await store.rhythm.histogram(anna, evening)).total() == 0
    assert (await store.rhythm.histogram(ben, evening)).total() == 1
