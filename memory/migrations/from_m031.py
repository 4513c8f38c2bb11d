"""Migrations from m031 on (the web lookups each person's turns made).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m031_web_log(tx: Tx) -> None:
    """Every web search and page read of a person's turns: what was looked up, when, what came back."""
    await tx.execute(
        """CREATE TABLE web_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            kind TEXT NOT NULL,
            target TEXT NOT NULL,
            at REAL NOT NULL,
            results INTEGER NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL DEFAULT 0,
            outcome TEXT NOT NULL DEFAULT 'ok')"""
    )
    await tx.execute("CREATE INDEX web_log_day ON web_log(scope_id, at)")
