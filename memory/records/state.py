"""Per-scope state that must survive a restart: one JSON value per key (the open question, /why's notes, …)."""
from __future__ import annotations

import json
import time
from typing import Any

from memory.models import Scope
from memory.storage.db import Database


class ScopeState:
    """Read, write and clear small JSON values of a scope, each under a key."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, scope: Scope, key: str) -> Any:
        """The value stored under key, or None."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT value FROM scope_state WHERE scope_id = ? AND key = ?", (scope.id, key))
        return json.loads(row[0]) if row else None

    async def put(self, scope: Scope, key: str, value: Any, now: float | None = None) -> None:
        """Store value under key (replacing what was there)."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO scope_state(scope_id, key, value, updated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(scope_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (scope.id, key, json.dumps(value, ensure_ascii=False), time.time() if now is None else now),
            )

    async def pop(self, scope: Scope, key: str) -> Any:
        """Remove the value under key and return it (None when there was none)."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT value FROM scope_state WHERE scope_id = ? AND key = ?", (scope.id, key))
            if row is None:
                return None
            await tx.execute("DELETE FROM scope_state WHERE scope_id = ? AND key = ?", (scope.id, key))
        return json.loads(row[0])

    async def swap(self, scope: Scope, key: str, old: Any, new: Any, now: float | None = None) -> bool:
        """Store `new` under key only while `old` is what is stored there (a value changed or removed meanwhile, by a
        press handled at the same time, stays as it is); whether it was stored."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "UPDATE scope_state SET value = ?, updated_at = ? WHERE scope_id = ? AND key = ? AND value = ?",
                (json.dumps(new, ensure_ascii=False), time.time() if now is None else now, scope.id, key,
                 json.dumps(old, ensure_ascii=False)),
            )
            return await tx.changes() == 1
