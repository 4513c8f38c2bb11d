"""How often each kind of background failure happened, kept across restarts (names and counts, no user data)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from memory.storage.db import Database


@dataclass(frozen=True)
class FailureCount:
    """One kind of failure ('extraction.bad_json', 'scheduler.diary', …): how often, and when last."""

    name: str
    count: int
    last_at: float

    def describe(self) -> str:
        """'extraction.bad_json 3 (last 2026-11-29 23:04)', in the deployment's local time."""
        return f"{self.name} {self.count} (last {datetime.fromtimestamp(self.last_at):%Y-%m-%d %H:%M})"


class FailureCounts:
    """Count failures by name in the database, so `mnemo stats` and `mnemo doctor` show them after a restart."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, name: str, now: float | None = None) -> None:
        """Count one failure of this kind."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO failure_counts(name, count, last_at) VALUES (?, 1, ?)"
                " ON CONFLICT(name) DO UPDATE SET count = failure_counts.count + 1, last_at = excluded.last_at",
                (name, time.time() if now is None else now),
            )

    async def get(self, name: str) -> int:
        """How often this kind of failure happened (0 when never)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT count FROM failure_counts WHERE name = ?", (name,))
        return int(row[0]) if row else 0

    async def all(self) -> list[FailureCount]:
        """Every kind counted so far, by name."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT name, count, last_at FROM failure_counts ORDER BY name")
        return [FailureCount(str(r[0]), int(r[1]), float(r[2])) for r in rows]
