"""Operator commands: backup restored and opened, migration dry run, export/import, doctor."""
from __future__ import annotations

import hashlib
from pathlib import Path

from bot.admin import ops
from bot.settings import Settings
from memory.search.embedder import make_embedder
from memory.storage.postgres import PostgresDatabase, ServerFacts, shown_url
from memory.store import DB_FILENAME, MemoryStore
from tests import postgres_kit
from tests.engine_kit import settings_for
from tests.fakes.llm_api import FakeLLM
from tests.fakes.telegram_api import FakeTelegram


async def seed(settings: Settings) -> None:
    async with await MemoryStore.open(settings.data_dir, make_embedder()) as store:
        scope = await store.scope(settings.companion_id, "tg:42")
        msg = await store.messages.add(scope, "user", "Ich spiele Cello im Orchester.")
        await store.notes.add(scope, "Anna spielt Cello im Orchester.", source_message_ids=[msg.id])
        await store.profile.set(scope, "facts", "name", "Anna")


async def test_a_backup_opens_and_holds_the_memory(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "data")
    await seed(settings)
    copy = await ops.make_backup(settings)
    assert copy.parent == settings.data_dir / "backups" and copy.exists()
    async with await MemoryStore.open(copy, make_embedder()) as restored:
        scope = await restored.scope(settings.companion_id, "tg:42")
        assert [h.text for h in await restored.search(scope, "Welches Instrument spielt sie?")][:1] == [
            "Anna spielt Cello im Orchester."]


async def test_migration_dry_run_changes_nothing_and_a_real_start_backs_up_first(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "data")
    await seed(settings)
    path = settings.data_dir / DB_FILENAME
    # pretend m008 is new
    async with await MemoryStore.open(path, make_embedder()) as store, store.db.transaction() as tx:
        await tx.execute("DROP TABLE preferences")
        await tx.execute("DELETE FROM migrations WHERE name = 'm008_preferences'")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert await ops.migration_plan(settings) == ["m008_preferences"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    async with await MemoryStore.open(path, make_embedder()):
        pass
    assert await ops.migration_plan(settings) == []
    assert [p.name.startswith("mnemo-before-migration-") for p in (settings.data_dir / "backups").iterdir()] == [True]


async def test_only_the_newest_three_backups_before_migrations_are_kept(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "data")
    await seed(settings)
    path, backups = settings.data_dir / DB_FILENAME, settings.data_dir / "backups"
    by_hand = await ops.make_backup(settings)  # `mnemo backup`: never pruned
    made_at: list[int] = []  # when each upgrade's backup was made (ns)
    for _upgrade in range(5):  # five upgrades, each applying one migration
        async with await MemoryStore.open(path, make_embedder()) as store, store.db.transaction() as tx:
            await tx.execute("DROP TABLE preferences")
            await tx.execute("DELETE FROM migrations WHERE name = 'm008_preferences'")
        async with await MemoryStore.open(path, make_embedder()):
            pass
        kept = sorted(p.stat().st_mtime_ns for p in backups.iterdir() if p.name.startswith("mnemo-before-migration-"))
        made_at.append(kept[-1])
        assert kept == made_at[-3:]  # this upgrade's backup and the two before it; older ones are gone
    assert by_hand.exists() and len(set(made_at)) == 5


async def test_export_and_import_move_one_user(tmp_path: Path) -> None:
    source = settings_for(tmp_path / "a" / "data")
    await seed(source)
    data = await ops.export_user(source, "tg:42")
    target = settings_for(tmp_path / "b" / "data")
    counts = await ops.import_user(target, data, "tg:99")
    assert counts["messages"] == 1 and counts["notes"] == 1 and counts["profile"] == 1
    async with await MemoryStore.open(target.data_dir, make_embedder()) as store:
        scope = await store.scope(target.companion_id, "tg:99")
        note = (await store.notes.list(scope))[0]
        source_msg = await store.messages.get(scope, note.source_message_ids[0])
        assert source_msg is not None and source_msg.text == "Ich spiele Cello im Orchester."
    rows = await ops.stats(target)
    assert [(r["user"], r["messages"], r["notes"]) for r in rows] == [("tg:99", 1, 1)]


async def test_doctor_checks_model_and_telegram(tmp_path: Path) -> None:
    async with FakeLLM() as llm, FakeTelegram(token="123:ABC", bot_username="mnemo_bot") as tg:
        settings = settings_for(tmp_path / "data", chat_base_url=llm.openai_base_url, telegram_token="123:ABC",
                                telegram_base_url=tg.base_url)
        checks = await ops.doctor(settings)
    assert all(c.ok for c in checks), ops.format_checks(checks)
    assert {c.name for c in checks} >= {"sqlite driver", "embedding model", "database", "chat model", "telegram",
                                        "clock"}
    assert next(c for c in checks if c.name == "telegram").detail == "@mnemo_bot"
    assert next(c for c in checks if c.name == "voice recordings").detail == "not kept (only the transcript is stored)"
    kept = await ops.doctor(settings_for(tmp_path / "data", chat_base_url=llm.openai_base_url, voice_keep=True),
                            check_model=False)
    assert next(c for c in kept if c.name == "voice recordings").detail == \
        "kept (MNEMO_VOICE_KEEP) in the database, with their messages; deleted with the person's /deleteme"


async def test_doctor_fails_when_nothing_answers(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "data", chat_base_url="http://127.0.0.1:9/v1")
    checks = await ops.doctor(settings)
    assert not next(c for c in checks if c.name == "chat model").ok


async def test_doctor_checks_the_postgres_server_its_extensions_schema_and_index(tmp_path: Path) -> None:
    url = await postgres_kit.fresh_database()
    try:
        with_password = url.replace("postgres:@", "postgres:geheim@")  # the test server trusts its socket
        settings = settings_for(tmp_path / "data", database_url=with_password)
        async with await MemoryStore.open(settings.data_dir, make_embedder(), database_url=url) as store:
            scope = await store.scope(settings.companion_id, "tg:42")
            await store.notes.add(scope, "Anna spielt Cello im Orchester.")
        checks = {c.name: c for c in await ops.doctor(settings, check_model=False)}
        assert all(c.ok for c in checks.values()), ops.format_checks(list(checks.values()))
        assert "geheim" not in ops.format_checks(list(checks.values()))
        assert checks["postgresql"].detail.startswith(f"{shown_url(with_password)}, PostgreSQL 16.")
        assert checks["pgvector"].detail.startswith("available, not installed; not needed")
        assert checks["pg_trgm"].detail.startswith("not on this server; not needed: word parts ('Kino' in 'Kinoabend')")
        assert checks["database"].detail.endswith("schema up to date")
        assert checks["search index"].detail == "every item has its document, vector and full-text entries"
        assert "sqlite driver" in checks  # the scheduler's job store stays an SQLite file
        db = await PostgresDatabase.connect(url, tmp_path)
        async with db.transaction() as tx:  # a document whose note is gone, and a migration still to come
            await tx.execute("DELETE FROM notes")
            await tx.execute("DELETE FROM migrations WHERE name = 'm040_scope_changes'")
        await db.close()
        assert next(c for c in await ops.doctor(settings, check_model=False) if c.name == "database").detail == \
            f"{shown_url(with_password)}; the next start applies m040_scope_changes"
        db = await PostgresDatabase.connect(url, tmp_path)
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO migrations(name, applied_at) VALUES ('m040_scope_changes', 0)")
        await db.close()
        broken = next(c for c in await ops.doctor(settings, check_model=False) if c.name == "search index")
        assert not broken.ok and broken.detail.startswith("1 problems, e.g. document 1: its note 1 is gone")
    finally:
        postgres_kit.drop(url)


async def test_doctor_names_an_unreachable_postgres_without_its_password(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "data", database_url="postgresql://mnemo:geheim@127.0.0.1:9/mnemo")
    check = next(c for c in await ops.doctor(settings, check_model=False) if c.name == "postgresql")
    assert not check.ok
    assert check.detail.startswith("cannot connect to PostgreSQL at postgresql://mnemo@127.0.0.1:9/mnemo")
    assert "geheim" not in check.detail


def test_doctor_says_neither_extension_is_needed_whether_the_server_has_it_or_not() -> None:
    installed = ops.extension_checks(ServerFacts("16.2", {"vector": "0.6.2", "pg_trgm": "1.6"}))
    assert [c.detail.split(";")[0] for c in installed] == ["0.6.2 installed", "1.6"]
    offered = ops.extension_checks(ServerFacts("16.2", {"vector": None, "pg_trgm": None}))
    assert [c.detail.split(";")[0] for c in offered] == ["available, not installed"] * 2
    missing = ops.extension_checks(ServerFacts("16.2", {}))
    assert [c.detail.split(";")[0] for c in missing] == ["not on this server"] * 2
    assert all(c.ok and "; not needed: " in c.detail for c in installed + offered + missing)
