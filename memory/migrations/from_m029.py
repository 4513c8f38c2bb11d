"""Migrations from m029 on (yearly dates of people).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m029_person_dates(tx: Tx) -> None:
    """Yearly dates of the people in a user's life: a birthday, an anniversary or another day, the year if known."""
    await tx.execute(
        """CREATE TABLE person_dates (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            person_id INTEGER NOT NULL REFERENCES people(id),
            kind TEXT NOT NULL,
            month INTEGER NOT NULL,
            day INTEGER NOT NULL,
            year INTEGER,
            created_at REAL NOT NULL)"""
    )
    await tx.execute("CREATE INDEX person_dates_scope ON person_dates(scope_id, person_id)")
