"""Migrations from m038 on (the private web page: one-time login links and the sessions they start).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m038_web_sessions(tx: Tx) -> None:
    """Login links and sessions of the web page, per scope; only a hash of each secret is kept."""
    await tx.execute(
        """CREATE TABLE web_links (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            token_hash TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            used_at REAL)"""
    )
    await tx.execute(
        """CREATE TABLE web_sessions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            token_hash TEXT NOT NULL UNIQUE,
            csrf TEXT NOT NULL,
            lang TEXT,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL)"""
    )
    await tx.execute("CREATE INDEX web_links_scope ON web_links(scope_id)")
    await tx.execute("CREATE INDEX web_sessions_scope ON web_sessions(scope_id)")
