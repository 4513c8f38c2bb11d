"""Databases as an older mnemo left them: every migration before a given one applied and recorded, so a test can
write rows the old way and then let the newer migration (or `MemoryStore.open`) upgrade them."""
from __future__ import annotations

from pathlib import Path

from memory.migrations import MIGRATIONS, Migration
from memory.storage.db import Database


async def migrated_before(path: Path, first_new: Migration) -> Database:
    """The database at `path`, opened with every migration before `first_new` applied and recorded."""
    db = await Database.open(path)
    async with db.transaction() as tx:
        await tx.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for migration in MIGRATIONS[:MIGRATIONS.index(first_new)]:
        async with db.transaction() as tx:
            await migration(tx)
            await tx.execute("INSERT INTO migrations(name, applied_at) VALUES (?, 0)", (migration.__name__,))
    return db
