"""The PostgreSQL store's own parts: the rewrite of mnemo's SQL (pure), what the store says where PostgreSQL cannot
do what SQLite's file does, and a wrong or unreachable MNEMO_DATABASE_URL."""
from __future__ import annotations

from pathlib import Path

import pytest

from memory.errors import DriverUnavailable, MemoryStoreError
from memory.migrations import MIGRATIONS
from memory.storage.backup import backup
from memory.storage.sql_dialect import insert_target, to_postgres
from memory.store import MemoryStore, open_database
from tests.fakes.embedder import FakeEmbedder

pytestmark = pytest.mark.both_backends("PostgreSQL's own parts beside SQLite's")


def test_placeholders_and_percent_signs() -> None:
    assert to_postgres("SELECT a FROM t WHERE b = ? AND c LIKE 'undo-%'") == (
        "SELECT a FROM t WHERE b = %s AND c LIKE 'undo-%%'")
    assert to_postgres("SELECT '?', \"x?\" FROM t WHERE y = ?") == "SELECT '?', \"x?\" FROM t WHERE y = %s"


def test_insert_or_ignore_and_or_replace_become_upserts() -> None:
    assert to_postgres("INSERT OR IGNORE INTO e(a, b) VALUES (?, ?)") == (
        "INSERT INTO e(a, b) VALUES (%s, %s) ON CONFLICT DO NOTHING")
    assert to_postgres("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)") == (
        "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
    with pytest.raises(KeyError):  # a table without a known key is a mistake to find in tests, not at run time
        to_postgres("INSERT OR REPLACE INTO unknown(a) VALUES (?)")


def test_what_sqlite_spells_otherwise() -> None:
    assert to_postgres("SELECT max(a, b), min(x, 1), max(c) FROM t") == (
        "SELECT GREATEST(a, b), LEAST(x, 1), max(c) FROM t")
    assert to_postgres("SELECT 1 FROM t WHERE b IS ? AND c IS NOT ?") == (
        "SELECT 1 FROM t WHERE b IS NOT DISTINCT FROM %s AND c IS DISTINCT FROM %s")
    assert to_postgres("SELECT 1 FROM t WHERE id IN () AND k NOT IN ()") == (
        "SELECT 1 FROM t WHERE id = ANY('{}') AND k <> ALL('{}')")
    assert to_postgres("SELECT instr(r, ?) FROM docs d WHERE +d.source = 'note'") == (
        "SELECT strpos(r, %s) FROM docs d WHERE d.source = 'note'")
    assert to_postgres("PRAGMA defer_foreign_keys = ON") == "SET CONSTRAINTS ALL DEFERRED"
    assert "json_array_elements_text((%s)::json)" in to_postgres("SELECT j.value FROM json_each(?) j")
    assert to_postgres("SELECT 1 FROM json_each(?) j CROSS JOIN docs d ON d.id = j.value").endswith(
        "JOIN docs d ON d.id = j.value")
    assert insert_target('INSERT INTO "outbox"(a) VALUES (?)') == "outbox" and insert_target("SELECT 1") is None


async def test_a_wrong_url_is_refused_and_an_unreachable_server_named_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="postgresql://"):
        await open_database(tmp_path, "mysql://mnemo@localhost/mnemo")
    with pytest.raises(DriverUnavailable) as refused:
        await MemoryStore.open(tmp_path, FakeEmbedder(),
                               database_url=f"postgresql://mnemo:geheim@/mnemo?host={tmp_path}&connect_timeout=2")
    assert "geheim" not in str(refused.value) and "cannot connect to PostgreSQL" in str(refused.value)
    assert list(tmp_path.iterdir()) == []  # nothing created beside it


async def test_backup_of_a_postgres_store_points_to_pg_dump_and_writes_nothing(
        store: MemoryStore, tmp_path: Path) -> None:
    target = tmp_path / "backups" / "copy.sqlite3"
    if store.db.dialect == "sqlite":
        assert await backup(store.db, target) == target
        return
    with pytest.raises(MemoryStoreError, match="pg_dump"):
        await backup(store.db, target)
    assert not target.exists()


def test_the_setting_takes_a_postgres_url_or_nothing() -> None:
    from pydantic import ValidationError

    from bot.settings import Settings

    assert Settings(_env_file=None, database_url="").database_url is None  # type: ignore[call-arg]
    url = "postgresql://mnemo:pw@127.0.0.1/mnemo"
    assert Settings(_env_file=None, database_url=url).database_url == url  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="must start with postgresql://"):
        Settings(_env_file=None, database_url="sqlite:///x.db")  # type: ignore[call-arg]


async def test_m042_drops_the_trigram_index_an_earlier_store_created(store: MemoryStore, tmp_path: Path) -> None:
    if store.db.dialect == "sqlite":
        assert "m042_no_trigram_index" in {m.__name__ for m in MIGRATIONS}  # nothing to drop: FTS5 holds word parts
        return
    url = store.db.url
    # The test server has no pg_trgm: an ordinary index of the same name stands in for gin (text gin_trgm_ops).
    async with store.db.transaction() as tx:
        await tx.execute("CREATE INDEX docs_text_trgm ON docs (text)")
        await tx.execute("DELETE FROM migrations WHERE name = 'm042_no_trigram_index'")
    await store.close()
    again = await MemoryStore.open(tmp_path / "again", FakeEmbedder(), database_url=url)
    try:
        async with again.db.reading() as tx:
            assert await tx.fetchone("SELECT 1 FROM pg_indexes WHERE indexname = 'docs_text_trgm'") is None
            assert await tx.fetchone("SELECT 1 FROM migrations WHERE name = 'm042_no_trigram_index'") is not None
    finally:
        await again.close()


async def test_sums_bools_and_the_shown_url_read_alike_on_both(store: MemoryStore) -> None:
    """The database layer's small conversions: a bool parameter as a number, a sum of integers (numeric on
    PostgreSQL) as an int, and the URL shown without a password."""
    scope = await store.scope("mnemo", "tg:7")
    for text in ("eins", "zwei", "drei"):
        await store.messages.add(scope, "user", text)
    async with store.db.reading() as tx:
        named = await tx.fetchone("SELECT count(*) FROM messages WHERE scope_id = ? AND ? = 1", (scope.id, True))
        total = await tx.fetchone("SELECT sum(length(text)) FROM messages WHERE scope_id = ?", (scope.id,))
    assert named[0] == 3
    assert total[0] == len("einszweidrei") and isinstance(total[0], int)
    shown = store.db.shown()
    assert "geheim" not in shown and (store.db.dialect == "sqlite" or shown.startswith("postgresql://"))
