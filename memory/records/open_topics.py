"""Open topics: things the companion means to ask about later, with a time when they are due."""
from __future__ import annotations

import time
from typing import Any

from memory.errors import NotFound
from memory.ledgers import audit
from memory.models import OpenTopic, Scope, ts
from memory.storage.db import Database


class Topics:
    """Open topics: things to ask about later."""

    _COLS = "id, text, due_at, origin, status, created_at"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(
        self, scope: Scope, text: str, *, due_at: float | None = None, origin: str = "",
        created_at: float | None = None, processing: str | None = None,
    ) -> OpenTopic:
        """Remember something to ask about."""
        now = time.time() if created_at is None else created_at
        async with self.db.transaction() as tx:
            item_id = await tx.execute(
                "INSERT INTO open_topics(scope_id, text, due_at, origin, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (scope.id, text, due_at, origin, now, now),
            )
            await audit.record(tx, scope.id, processing or audit.new_processing("topic"), "create", "topic", item_id,
                               after={"text": text, "due_at": due_at}, reason=origin)
        return OpenTopic(item_id, text, ts(due_at), origin, "open", ts(now))  # type: ignore[arg-type]

    async def all(self, scope: Scope) -> list[OpenTopic]:
        """Every topic of the scope, whatever its status, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {self._COLS} FROM open_topics WHERE scope_id = ? ORDER BY id",
                                     (scope.id,))
        return [_topic(r) for r in rows]

    async def due(self, scope: Scope, now: float, limit: int = 1) -> list[OpenTopic]:
        """Open topics whose time has come, oldest due first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {self._COLS} FROM open_topics WHERE scope_id = ? AND status = 'open'"
                " AND (due_at IS NULL OR due_at <= ?) ORDER BY COALESCE(due_at, created_at) LIMIT ?",
                (scope.id, now, limit),
            )
        return [_topic(r) for r in rows]

    async def list(self, scope: Scope, status: str = "open") -> list[OpenTopic]:
        """Topics with a status."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {self._COLS} FROM open_topics WHERE scope_id = ? AND status = ?"
                                     " ORDER BY COALESCE(due_at, created_at)", (scope.id, status))
        return [_topic(r) for r in rows]

    async def remove(
        self, scope: Scope, topic_id: int, *, processing: str | None = None, reason: str = "", final: bool = False,
        status: str = "dropped",
    ) -> None:
        """Take a topic off the list: dropped (or `status` "done") and audited (undoable), or with `final` deleted
        without its text."""
        processing = processing or audit.new_processing("topic")
        async with self.db.transaction() as tx:
            row = await tx.scoped_row("open_topics", "status", scope.id, topic_id, f"topic {topic_id}")
            if final:
                await tx.execute("DELETE FROM open_topics WHERE id = ?", (topic_id,))
                await audit.record(tx, scope.id, processing, audit.ERASE, "topic", topic_id, reason=reason)
                return
            await tx.execute("UPDATE open_topics SET status = ?, updated_at = ? WHERE id = ?",
                             (status, time.time(), topic_id))
            await audit.record(tx, scope.id, processing, "update", "topic", topic_id, before={"status": row[0]},
                               after={"status": status}, reason=reason)

    async def set_status(self, scope: Scope, topic_id: int, status: str) -> None:
        """Mark a topic raised, done or dropped."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE open_topics SET status = ?, updated_at = ? WHERE id = ? AND scope_id = ?",
                             (status, time.time(), topic_id, scope.id))
            if await tx.changes() == 0:
                raise NotFound(f"topic {topic_id}")


def _topic(r: Any) -> OpenTopic:
    return OpenTopic(r[0], r[1], ts(r[2]), r[3], r[4], ts(r[5]))  # type: ignore[arg-type]
