"""Migrations from m030 on (imported histories and their review queue).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m030_history_imports(tx: Tx) -> None:
    """Imports of exported histories (file hash, cursor, counts) and the candidates they found, waiting for review."""
    await tx.execute(
        """CREATE TABLE history_imports (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            file_hash TEXT NOT NULL,
            source TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            options TEXT NOT NULL DEFAULT '{}',
            processing_id TEXT NOT NULL,
            started_at REAL NOT NULL,
            finished_at REAL,
            undone_at REAL,
            conversations_done INTEGER NOT NULL DEFAULT 0,
            last_key TEXT NOT NULL DEFAULT '',
            messages_read INTEGER NOT NULL DEFAULT 0,
            candidates INTEGER NOT NULL DEFAULT 0,
            calls INTEGER NOT NULL DEFAULT 0,
            failed_batches INTEGER NOT NULL DEFAULT 0)"""
    )
    await tx.execute("CREATE INDEX history_imports_hash ON history_imports(scope_id, file_hash)")
    await tx.execute(
        """CREATE TABLE review_candidates (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            import_id INTEGER NOT NULL REFERENCES history_imports(id),
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            data TEXT NOT NULL DEFAULT '{}',
            quote TEXT NOT NULL DEFAULT '',
            said_at REAL NOT NULL,
            conversation_key TEXT NOT NULL,
            conversation_title TEXT NOT NULL DEFAULT '',
            norm_hash TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            duplicate_of INTEGER,
            contradicts INTEGER,
            stored_id INTEGER,
            created_at REAL NOT NULL,
            decided_at REAL)"""
    )
    await tx.execute("CREATE INDEX review_candidates_queue ON review_candidates(scope_id, status, id)")
    await tx.execute("CREATE INDEX review_candidates_hash ON review_candidates(scope_id, norm_hash)")
