"""Numbered schema migrations, registered in MIGRATIONS and recorded in the `migrations` table; running them
twice is a no-op. The migrations themselves live in from_m001.py, from_m013.py, from_m028.py, from_m029.py,
from_m030.py, from_m031.py, from_m032.py, from_m033.py, from_m035.py, from_m037.py, from_m038.py, from_m039.py and
from_m040.py; a PostgreSQL database starts from the baseline in postgres_baseline.py (its tables in
postgres_m001.py and postgres_m013.py)."""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from memory.migrations import (
    from_m001,
    from_m013,
    from_m028,
    from_m029,
    from_m030,
    from_m031,
    from_m032,
    from_m033,
    from_m035,
    from_m037,
    from_m038,
    from_m039,
    from_m040,
    postgres_baseline,
)
from memory.storage.db import Database, Tx

log = logging.getLogger(__name__)

Migration = Callable[[Tx], Awaitable[None]]
KEEP_MIGRATION_BACKUPS = 3  # copies made before migrations that are kept: each upgrade's, the newest three


# The one place a migration is registered, in the order they run; a function's name is what databases record.
MIGRATIONS: list[Migration] = [
    from_m001.m001_scopes_and_meta,
    from_m001.m002_messages,
    from_m001.m003_memory_items,
    from_m001.m004_search_index,
    from_m001.m005_conversation_state,
    from_m001.m006_audit_undo,
    from_m001.m007_pending_profile,
    from_m001.m008_preferences,
    from_m001.m009_outbox,
    from_m001.m010_access,
    from_m001.m011_inbox,
    from_m001.m012_companions_and_relationships,
    from_m013.m013_people,
    from_m013.m014_reminders,
    from_m013.m015_admission_counts,
    from_m013.m016_inbox_shown,
    from_m013.m017_fts_scope,
    from_m013.m018_docs_last_used,
    from_m013.m019_token_usage,
    from_m013.m020_fts_scope_rowids,
    from_m013.m021_pending_state_and_choices,
    from_m013.m022_erasure,
    from_m013.m024_reflections_failures_and_late_pushes,
    from_m013.m026_command_runs_and_shown_texts,
    from_m013.m027_item_numbers_and_welcomes,
    from_m028.m028_rhythm,
    from_m029.m029_person_dates,
    from_m030.m030_history_imports,
    from_m031.m031_web_log,
    from_m032.m032_suggestions,
    from_m033.m033_message_origin,
    from_m035.m035_reactions,
    from_m037.m037_incognito_stretches,
    from_m038.m038_web_sessions,
    from_m039.m039_bit_vectors,
    from_m040.m040_scope_changes,
    from_m040.m041_worker_leases,
    from_m040.m042_no_trigram_index,
    from_m040.m043_job_slots,
    from_m040.m044_incognito_activity,
    from_m040.m045_person_slots,
    from_m040.m046_docs_entered_at,
    from_m040.m047_voice_recordings,
    from_m040.m048_inbox_sent_order,
    from_m040.m049_use_vectors,
    from_m040.m050_message_kinds,
    from_m040.m051_preference_changes,
    from_m040.m052_embedding_calibrations,
    from_m040.m053_turns_in_context,
]


async def applied_migrations(db: Database) -> set[str]:
    """Names of the migrations recorded in the database (none for a new file)."""
    async with db.reading() as tx:
        if not await tx.has_table("migrations"):
            return set()
        return {row[0] for row in await tx.fetchall("SELECT name FROM migrations")}


async def migrate(db: Database, backup_dir: Path | None = None) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction; return their names.

    With backup_dir, an existing database is copied there first whenever something is to be applied.
    """
    done = await applied_migrations(db)
    baseline = await _baseline(db) if db.dialect == "postgres" and not done else []
    done |= set(baseline)
    todo = pending(done)
    if todo and done and backup_dir is not None and db.dialect == "sqlite":
        from memory.storage.backup import backup, backup_name, prune

        copy = await backup(db, backup_name(backup_dir, "before-migration"))
        log.warning("backed up the database to %s before applying %s", copy, ", ".join(todo))
        for gone in prune(backup_dir, "before-migration", KEEP_MIGRATION_BACKUPS):
            log.info("deleted the older backup %s (the newest %d before migrations are kept)", gone,
                     KEEP_MIGRATION_BACKUPS)
    async with db.transaction() as tx:
        await tx.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
        )
    applied = list(baseline)
    for migration in MIGRATIONS:
        name = migration.__name__
        if name in done:
            continue
        async with db.transaction() as tx:
            await migration(tx)
            await tx.execute("INSERT INTO migrations(name, applied_at) VALUES (?, ?)", (name, time.time()))
        log.info("applied migration %s", name)
        applied.append(name)
    return applied


async def _baseline(db: Database) -> list[str]:
    """Create an empty PostgreSQL database's schema as of m040 in one transaction; the names it stands for."""
    names = [m.__name__ for m in MIGRATIONS]
    upto = names[:names.index(postgres_baseline.BASELINE_UPTO) + 1]
    async with db.transaction() as tx:
        await tx.script(postgres_baseline.SCHEMA)
        await tx.executemany("INSERT INTO migrations(name, applied_at) VALUES (?, ?)",
                             [(name, time.time()) for name in upto])
    log.info("created the PostgreSQL schema (migrations up to %s)", postgres_baseline.BASELINE_UPTO)
    return upto


def pending(applied: set[str]) -> list[str]:
    """Names of the migrations not in applied, in order."""
    return [m.__name__ for m in MIGRATIONS if m.__name__ not in applied]
