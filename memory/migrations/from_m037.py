"""Migrations from m037 on (incognito: the stretches a person talked without being remembered).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m037_incognito_stretches(tx: Tx) -> None:
    """One row per incognito stretch: when it began and ended and how many messages it had, never their words."""
    await tx.execute(
        """CREATE TABLE incognito_stretches (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            started_at REAL NOT NULL,
            ended_at REAL NOT NULL,
            messages INTEGER NOT NULL,
            ended_by TEXT NOT NULL)"""
    )
    await tx.execute("CREATE INDEX incognito_stretches_scope ON incognito_stretches(scope_id, started_at)")
