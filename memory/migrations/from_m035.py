"""Migrations from m035 on (reactions: the person's on the companion's messages, the companion's on theirs).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m035_reactions(tx: Tx) -> None:
    """Which messenger message shows which companion message; the emoji reactions on messages, both ways."""
    await tx.execute(
        """CREATE TABLE sent_messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            channel TEXT NOT NULL,
            message_ref TEXT NOT NULL,
            message_id INTEGER,
            text_hash TEXT,
            at REAL NOT NULL,
            UNIQUE(channel, message_ref))"""
    )
    await tx.execute("CREATE INDEX sent_messages_at ON sent_messages(at)")
    await tx.execute(
        """CREATE TABLE reactions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            channel TEXT NOT NULL,
            message_ref TEXT NOT NULL,
            message_id INTEGER,
            emoji TEXT NOT NULL,
            sender TEXT NOT NULL DEFAULT '',
            by_companion INTEGER NOT NULL DEFAULT 0,
            ref TEXT NOT NULL DEFAULT '',
            at REAL NOT NULL,
            UNIQUE(scope_id, channel, message_ref, sender, emoji, by_companion))"""
    )
    await tx.execute("CREATE INDEX reactions_scope_time ON reactions(scope_id, by_companion, at)")
