"""`mnemo migrate-to-postgres`: an SQLite memory copied into PostgreSQL row for row, verified, resumable after a
row stopped it, never into a database that holds someone's memory; the command says how to switch."""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.cli import main
from memory.errors import CopyRefused
from memory.ledgers import audit
from memory.records.kinship import PersonDraft
from memory.storage.db import Database
from memory.storage.postgres import PostgresDatabase
from memory.storage.postgres_copy import PROGRESS, copy_to_postgres
from memory.store import DB_FILENAME, MemoryStore
from tests import postgres_kit
from tests.fakes.embedder import FakeEmbedder

NOTE = "Anna spielt Cello im Orchester."


@pytest.fixture
async def target() -> AsyncIterator[str]:
    url = await postgres_kit.fresh_database()
    yield url
    await asyncio.to_thread(postgres_kit.drop, url)


async def seed(data_dir: Path) -> dict[str, int]:
    """A memory with something in every kind of table the issue names; returns ids to look for."""
    async with await MemoryStore.open(data_dir, FakeEmbedder()) as store:
        scope = await store.scope("mnemo", "tg:42")
        other = await store.scope("mnemo", "tg:7")
        msg = await store.messages.add(scope, "user", "Ich spiele Cello im Orchester, früher Geige.")
        await store.messages.add(scope, "assistant", "Schön! Seit wann?")
        old = (await store.notes.add(scope, "Anna spielt Geige.", source_message_ids=[msg.id])).note
        new = (await store.notes.add(scope, NOTE, source_message_ids=[msg.id])).note
        await store.notes.close(scope, old.id, superseded_by=new.id)  # an older row points to a newer one
        processing = audit.new_processing("test")
        jana = await store.people.observe(scope, PersonDraft("Jana", relation="Freundin"), processing=processing)
        paul = await store.people.observe(scope, PersonDraft("Paul", relation="Bruder"), processing=processing)
        await store.people.merge(scope, paul.id, jana.id)
        await store.reminders.add(scope, "Zahnarzt anrufen", time.time() + 3600)
        await store.outbox.record(scope, "reminder", "Denk an den Zahnarzt")
        await store.inbox.record("telegram", [("u-1", '{"text": "hallo"}'), ("u-2", None)], time.time())
        secret = (await store.notes.add(other, "Ein Geheimnis von Tom.")).note
        await store.notes.erase(other, secret.id)  # an erasure tombstone
        return {"scope": scope.id, "note": new.id, "person": paul.id}


async def test_every_row_is_copied_and_the_postgres_store_finds_the_same_note(tmp_path: Path, target: str) -> None:
    ids = await seed(tmp_path)
    source = await Database.open(tmp_path / DB_FILENAME)
    async with source.transaction() as tx:  # a gap in the inbox's rowids, as handled events leave them
        await tx.execute("DELETE FROM inbox WHERE event_id = 'u-1'")
        inbox = await tx.fetchall("SELECT rowid, event_id FROM inbox ORDER BY rowid")
    pg = await PostgresDatabase.connect(target, tmp_path)
    try:
        report = await copy_to_postgres(source, pg, batch=2)
    finally:
        await pg.close()
        await source.close()
    assert report.verified, report
    counts = {c.table: (c.source, c.target) for c in report.counts}
    for table in ("notes", "messages", "people", "reminders", "audit_log", "outbox", "erasures", "inbox", "docs",
                  "vec_docs", "embedding_cache", "scopes", "meta"):
        assert counts[table][0] > 0 and counts[table][0] == counts[table][1], table
    async with await MemoryStore.open(tmp_path / "elsewhere", FakeEmbedder(), database_url=target) as store:
        scope = await store.scope("mnemo", "tg:42")
        assert scope.id == ids["scope"]
        hits = await store.search(scope, "Welches Instrument spielt Anna im Orchester?")
        assert hits[0].text == NOTE
        notes = {n.id: n for n in await store.notes.list(scope, include_closed=True)}
        assert [n.superseded_by for n in notes.values() if n.valid_to is not None] == [ids["note"]]
        assert (await store.people.all(scope))[0].id == ids["person"]
        later = (await store.notes.add(scope, "Anna übt jeden Dienstag.")).note  # the sequence went past the ids
        assert later.id > max(notes)
        async with store.db.reading() as tx:
            assert await tx.fetchall("SELECT rowid, event_id FROM inbox ORDER BY rowid") == inbox == [(2, "u-2")]
            merged = await tx.fetchall("SELECT merged_into FROM people WHERE merged_into IS NOT NULL")
            progress = await tx.fetchall("SELECT key FROM meta WHERE key LIKE 'migrated_from_sqlite%'")
    assert merged == [(ids["person"],)]
    assert progress == [("migrated_from_sqlite",)]  # the progress rows gave way to one "done" row


async def test_a_copy_stopped_by_a_row_goes_on_where_it_stopped_without_duplicates(tmp_path: Path, target: str) -> None:
    await seed(tmp_path)
    source = await Database.open(tmp_path / DB_FILENAME)
    async with source.transaction() as tx:  # SQLite takes text in an integer column; PostgreSQL does not
        await tx.execute("UPDATE messages SET proactive = 'nein' WHERE role = 'assistant'")
    pg = await PostgresDatabase.connect(target, tmp_path)
    try:
        with pytest.raises(CopyRefused, match="PostgreSQL refused a row of messages"):
            await copy_to_postgres(source, pg, batch=1)
        async with pg.reading() as tx:
            copied_before = dict(await tx.fetchall("SELECT key, value FROM meta WHERE key LIKE ?", (PROGRESS + "%",)))
            messages_before = (await tx.fetchone("SELECT count(*) FROM messages"))[0]
        assert copied_before[PROGRESS + "messages"] == "1" and messages_before == 1  # the first message, not the second
        assert PROGRESS + "scopes" in copied_before and PROGRESS + "notes" not in copied_before
        async with source.transaction() as tx:
            await tx.execute("UPDATE messages SET proactive = 0 WHERE role = 'assistant'")
        report = await copy_to_postgres(source, pg, batch=1)
    finally:
        await pg.close()
        await source.close()
    assert report.resumed and report.verified, report
    assert report.copied["scopes"] == 0 and report.copied["messages"] == 1 and report.copied["notes"] == 2
    assert all(c.equal for c in report.counts)


async def test_a_database_holding_a_memory_is_refused_and_left_as_it_was(tmp_path: Path, target: str) -> None:
    await seed(tmp_path / "a")
    async with await MemoryStore.open(tmp_path / "b", FakeEmbedder(), database_url=target) as store:
        await store.notes.add(await store.scope("mnemo", "tg:99"), "Bertas Notiz.")
    source = await Database.open(tmp_path / "a" / DB_FILENAME)
    pg = await PostgresDatabase.connect(target, tmp_path)
    try:
        with pytest.raises(CopyRefused, match="already holds a memory"):
            await copy_to_postgres(source, pg)
        async with pg.reading() as tx:
            assert await tx.fetchall("SELECT user_id FROM scopes") == [("tg:99",)]
            assert await tx.fetchall("SELECT text FROM notes") == [("Bertas Notiz.",)]
    finally:
        await pg.close()
        await source.close()


async def test_a_source_not_fully_migrated_is_refused(tmp_path: Path, target: str) -> None:
    await seed(tmp_path)
    source = await Database.open(tmp_path / DB_FILENAME)
    async with source.transaction() as tx:
        await tx.execute("DELETE FROM migrations WHERE name = 'm040_scope_changes'")
    pg = await PostgresDatabase.connect(target, tmp_path)
    try:
        with pytest.raises(CopyRefused, match="not fully migrated .* m040_scope_changes"):
            await copy_to_postgres(source, pg)
        async with pg.reading() as tx:
            assert (await tx.fetchone("SELECT count(*) FROM scopes"))[0] == 0
    finally:
        await pg.close()
        await source.close()


def test_the_command_copies_and_says_how_to_switch(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(seed(tmp_path))
    url = asyncio.run(postgres_kit.fresh_database())
    try:
        monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))
        monkeypatch.delenv("MNEMO_DATABASE_URL", raising=False)
        assert main(["--env-file", str(tmp_path / "none.env"), "migrate-to-postgres", "--to", url]) == 0
        out = capsys.readouterr().out
        assert f"from {tmp_path / DB_FILENAME} to" in out
        assert "verified. To switch:" in out and "MNEMO_DATABASE_URL=postgresql://" in out
        assert f"keep {tmp_path / DB_FILENAME} as a backup" in out
        notes_line = next(line.split() for line in out.splitlines() if line.strip().startswith("notes "))
        assert notes_line == ["notes", "2", "2"]
        assert main(["--env-file", str(tmp_path / "none.env"), "migrate-to-postgres", "--to", url]) == 0
        assert "was copied to" in capsys.readouterr().out  # a second run only checks again
    finally:
        postgres_kit.drop(url)


def test_the_command_without_a_database_says_what_to_give(monkeypatch: pytest.MonkeyPatch, capsys,  # type: ignore[no-untyped-def]
                                                          tmp_path: Path) -> None:
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("MNEMO_DATABASE_URL", raising=False)
    assert main(["--env-file", str(tmp_path / "none.env"), "migrate-to-postgres"]) == 2
    assert "--to postgresql://" in capsys.readouterr().err
    assert not (tmp_path / DB_FILENAME).exists()
