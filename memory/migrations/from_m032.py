"""Migrations from m032 on (the companion's suggestions for its operator).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m032_suggestions(tx: Tx) -> None:
    """Suggestions the companion left its operator about mnemo itself: text, context, how often, until dismissed."""
    await tx.execute(
        """CREATE TABLE suggestions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            kind TEXT NOT NULL DEFAULT 'other',
            text TEXT NOT NULL,
            norm TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT '',
            message_id INTEGER,
            last_message_id INTEGER,
            count INTEGER NOT NULL DEFAULT 1,
            first_at REAL NOT NULL,
            last_at REAL NOT NULL,
            dismissed_at REAL)"""
    )
    await tx.execute("CREATE INDEX suggestions_scope ON suggestions(scope_id, id)")
    await tx.execute("CREATE INDEX suggestions_first_at ON suggestions(first_at)")
