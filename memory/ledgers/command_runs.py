"""Commands and button presses by their channel id, so a message replayed after a crash never runs one twice.

A run is recorded as started before the command does anything, answered with its reply (kept only until the
channel delivered it, since a reply may quote notes that are forgotten later), then delivered. A replay finds
the run: an answered one delivers the same reply again, a delivered one nothing, and one that was only
started (the process died while it ran) tells the channel that it must not run again blindly.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from memory.models import Scope
from memory.storage.db import Database

KEEP_SECONDS = 7 * 24 * 3600.0  # as long as the inbox keeps handled ids to recognise a redelivery


@dataclass(frozen=True)
class Run:
    """What is known of an earlier run of the same command or press."""

    state: str  # 'started' (cut off before it answered), 'answered' (not yet delivered) or 'delivered'
    reply: dict[str, Any] | None  # the recorded answer while it waits to be delivered


class Runs:
    """Record when a command or press starts, what it answered, and that the answer was delivered."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def begin(self, scope: Scope, channel: str, event_id: str, now: float | None = None) -> Run | None:
        """Record that this command or press starts now; the earlier run instead when it was recorded before."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT OR IGNORE INTO command_runs(scope_id, channel, event_id, state, created_at)"
                " VALUES (?, ?, ?, 'started', ?)", (scope.id, channel, event_id, time.time() if now is None else now))
            if await tx.changes():
                return None
            row = await tx.fetchone("SELECT state, reply FROM command_runs WHERE scope_id = ? AND channel = ?"
                                    " AND event_id = ?", (scope.id, channel, event_id))
        return Run(row[0], json.loads(row[1]) if row[1] is not None else None)

    async def answer(self, scope: Scope, channel: str, event_id: str, reply: dict[str, Any]) -> None:
        """Record the answer of a run, to deliver it again if the process dies before it was delivered."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE command_runs SET state = 'answered', reply = ? WHERE scope_id = ? AND channel = ?"
                             " AND event_id = ?", (json.dumps(reply, ensure_ascii=False), scope.id, channel, event_id))

    async def delivered(self, scope: Scope, channel: str, event_id: str) -> None:
        """Mark a run delivered and drop its answer (the id stays, so a redelivery runs nothing)."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE command_runs SET state = 'delivered', reply = NULL WHERE scope_id = ?"
                             " AND channel = ? AND event_id = ?", (scope.id, channel, event_id))

    async def between(self, scope: Scope, start: float, end: float) -> int:
        """How many commands and presses of the scope came in [start, end] (each answered by the companion; one at
        the very moment of `start` counts too: the safe side)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT COUNT(*) FROM command_runs WHERE scope_id = ? AND created_at >= ?"
                                    " AND created_at <= ?", (scope.id, start, end))
        return int(row[0]) if row else 0

    async def prune(self, now: float, keep: float = KEEP_SECONDS) -> int:
        """Forget runs older than `keep` seconds; returns how many."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM command_runs WHERE created_at < ?", (now - keep,))
            return await tx.changes()
