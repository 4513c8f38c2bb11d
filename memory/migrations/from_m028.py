"""Migrations from m028 on: the learned rhythm."""
from __future__ import annotations

from memory.storage.db import Tx


async def m028_rhythm(tx: Tx) -> None:
    """When a person writes and answers, per local weekday (0 = Monday) and hour: a decaying histogram.

    `wrote` counts every message of the person, `answered` those that answered a check-in; both as they
    stood at `updated_at` (they halve every few weeks from then on, memory.records.rhythm_weights).
    """
    await tx.execute(
        """CREATE TABLE rhythm (
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            weekday INTEGER NOT NULL CHECK (weekday BETWEEN 0 AND 6),
            hour INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23),
            wrote REAL NOT NULL DEFAULT 0,
            answered REAL NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL,
            PRIMARY KEY (scope_id, weekday, hour))"""
    )
