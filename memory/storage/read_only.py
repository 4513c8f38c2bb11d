"""Reading a store's transcripts without opening it for writing: the SQLite file opened read-only, or a read-only
PostgreSQL session, for the outside view (`mnemo analyze`), which must change nothing it reads."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory.errors import MemoryStoreError
from memory.models import Message, ts
from memory.storage.db import sqlite_module
from memory.storage.postgres import shown_url
from memory.storage.sql_dialect import to_postgres


def _query(path: Path | str, sql: str, params: Sequence[Any]) -> list[Any]:
    """Run one query on the database file opened read-only (or in a read-only PostgreSQL session at that URL)."""
    if isinstance(path, str):
        return _query_postgres(path, sql, params)
    if not path.is_file():
        raise MemoryStoreError(f"there is no database at {path}")
    module = sqlite_module()
    try:
        conn = module.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            return list(conn.execute(sql, params).fetchall())
        finally:
            conn.close()
    except module.Error as exc:
        raise MemoryStoreError(f"cannot read {path}: {exc}") from exc


def _query_postgres(url: str, sql: str, params: Sequence[Any]) -> list[Any]:
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.read_only = True
            return list(conn.execute(to_postgres(sql), list(params)).fetchall())
    except psycopg.Error as exc:
        raise MemoryStoreError(f"cannot read {shown_url(url)}: {exc}") from exc


def read_users(path: Path | str, companion_id: str) -> list[str]:
    """The users of a companion who have messages."""
    rows = _query(path, "SELECT DISTINCT s.user_id FROM scopes s JOIN messages m ON m.scope_id = s.id"
                        " WHERE s.companion_id = ? ORDER BY s.user_id", (companion_id,))
    return [r[0] for r in rows]


def read_messages(path: Path | str, companion_id: str, user_id: str, start: float, end: float) -> list[Message]:
    """The messages of one user in [start, end), oldest first, read without writing anything."""
    rows = _query(path, "SELECT m.id, m.role, m.text, m.created_at, m.channel, m.channel_message_id, m.proactive"
                        " FROM messages m JOIN scopes s ON s.id = m.scope_id WHERE s.companion_id = ?"
                        " AND s.user_id = ? AND m.created_at >= ? AND m.created_at < ? ORDER BY m.created_at, m.id",
                  (companion_id, user_id, start, end))
    return [Message(r[0], r[1], r[2], ts(r[3]), r[4], r[5], bool(r[6])) for r in rows]  # type: ignore[arg-type]
