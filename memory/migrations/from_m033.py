"""Migrations from m033 on (where a message came from: typed, or a voice note's transcript).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m033_message_origin(tx: Tx) -> None:
    """Each message's origin: 'text' (typed, and every message before), 'voice' (a voice note's transcript), …

    Free text on purpose: another kind of message (a photo's description) needs no new migration.
    """
    await tx.execute("ALTER TABLE messages ADD COLUMN origin TEXT NOT NULL DEFAULT 'text'")
