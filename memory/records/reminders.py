"""Reminders the user asked for: what, when (unix time), how it repeats, and whether it is still active."""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.errors import NotFound
from memory.ledgers import audit
from memory.ledgers.outbox import ButtonRows, OutboxItem, recorded
from memory.models import AuditEntry, Scope, ts
from memory.storage.db import Database, Tx

REPEATS = ("", "daily", "weekly")
_COLS = "id, text, due_at, repeat, status, created_at"


@dataclass(frozen=True)
class StoredReminder:
    """A reminder as stored; `due_at` is the next time it fires."""

    id: int
    text: str
    due_at: datetime
    repeat: str
    status: str  # active | done | cancelled
    created_at: datetime


def _reminder(row: Any) -> StoredReminder:
    return StoredReminder(row[0], row[1], ts(row[2]), row[3], row[4], ts(row[5]))  # type: ignore[arg-type]


async def reminder_edited(tx: Tx, scope: Scope, before: StoredReminder, text: str, due_at: float, now: float,
                          reason: str) -> None:
    """`Reminders.edit` within a transaction of the caller's (a zone change moving repeating reminders with it)."""
    await tx.execute("UPDATE reminders SET text = ?, due_at = ?, updated_at = ? WHERE id = ? AND scope_id = ?",
                     (text, due_at, now, before.id, scope.id))
    await audit.record(tx, scope.id, audit.new_processing("reminder"), "update", "reminder", before.id,
                       before=before, after={"text": text, "due_at": due_at}, reason=reason)


class Reminders:
    """Add, list, fire, snooze and cancel reminders; `on_change` (the running scheduler) hears of every change."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.on_change: Callable[[], Awaitable[None]] | None = None

    async def changed(self) -> None:
        """Tell the running scheduler (where this worker runs one) that reminders changed."""
        if self.on_change is not None:
            await self.on_change()

    async def add(self, scope: Scope, text: str, due_at: float, repeat: str = "", *, now: float | None = None,
                  reason: str = "") -> StoredReminder:
        """Store an active reminder."""
        if repeat not in REPEATS:
            raise ValueError(f"unknown repeat {repeat!r}")
        now = time.time() if now is None else now
        async with self.db.transaction() as tx:
            item_id = await tx.execute(
                "INSERT INTO reminders(scope_id, text, due_at, repeat, status, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, 'active', ?, ?)", (scope.id, text, due_at, repeat, now, now))
            await audit.record(tx, scope.id, audit.new_processing("reminder"), "create", "reminder", item_id,
                               after={"text": text, "due_at": due_at, "repeat": repeat}, reason=reason)
        await self.changed()
        return await self.get(scope, item_id)

    async def get(self, scope: Scope, reminder_id: int) -> StoredReminder:
        """One reminder of this scope, or NotFound."""
        async with self.db.reading() as tx:
            row = await tx.scoped_row("reminders", _COLS, scope.id, reminder_id, f"reminder {reminder_id}")
        return _reminder(row)

    async def version(self) -> tuple[int, float, float]:
        """A fingerprint of every scope's active reminders: it moves when any process adds, moves or ends one."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT count(*), coalesce(sum(due_at), 0), coalesce(max(updated_at), 0)"
                                    " FROM reminders WHERE status = 'active'")
        return int(row[0]), float(row[1]), float(row[2])

    async def active(self, scope: Scope) -> list[StoredReminder]:
        """Active reminders, soonest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM reminders WHERE scope_id = ? AND status = 'active'"
                                     " ORDER BY due_at, id", (scope.id,))
        return [_reminder(r) for r in rows]

    async def due(self, scope: Scope, now: float) -> list[StoredReminder]:
        """Active reminders whose time has come, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM reminders WHERE scope_id = ? AND status = 'active'"
                                     " AND due_at <= ? ORDER BY due_at, id", (scope.id, now))
        return [_reminder(r) for r in rows]

    async def all_active(self) -> list[tuple[int, StoredReminder]]:
        """(scope id, reminder) of every active reminder, for the scheduler's jobs."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT scope_id, {_COLS} FROM reminders WHERE status = 'active' ORDER BY id")
        return [(r[0], _reminder(r[1:])) for r in rows]

    async def fire(self, scope: Scope, reminder: StoredReminder, next_due: float | None, now: float, message: str,
                   buttons: ButtonRows, claim: tuple[str, float] | None) -> OutboxItem | None:
        """Fire a due reminder: move it on (as `fired`) and record its message in the outbox (meant for its due
        time), in one transaction. None when it was no longer due: another worker (or an earlier run) fired it,
        or it was cancelled.

        One transaction, so a process killed in between neither loses the message nor sends it twice; the
        condition on its state, so two workers' schedulers (one that lost the lead and does not know it yet) fire
        it once."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE reminders SET status = CASE WHEN ? IS NULL THEN 'done' ELSE status END,"
                             " due_at = coalesce(?, due_at), fired_at = ?, updated_at = ?"
                             " WHERE id = ? AND scope_id = ? AND status = 'active' AND due_at <= ?",
                             (next_due, next_due, now, now, reminder.id, scope.id, now))
            if not await tx.changes():
                return None
            item = await recorded(tx, scope, "reminder", message, now, buttons, reminder.due_at.timestamp(), claim)
        await self.changed()
        return item

    async def snooze(self, scope: Scope, reminder_id: int, until: float, *, now: float | None = None) -> StoredReminder:
        """Remind again at `until`: a one-time reminder comes back; a repeating one gets a one-time copy."""
        reminder = await self.get(scope, reminder_id)
        if reminder.status == "cancelled":
            raise NotFound(f"reminder {reminder_id} (cancelled)")
        if reminder.repeat:
            return await self.add(scope, reminder.text, until, now=now, reason=f"snoozed #{reminder_id}")
        now = time.time() if now is None else now
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE reminders SET due_at = ?, status = 'active', updated_at = ? WHERE id = ?",
                             (until, now, reminder_id))
        await self.changed()
        return await self.get(scope, reminder_id)

    async def edit(self, scope: Scope, reminder_id: int, text: str, due_at: float, *, now: float | None = None,
                   reason: str = "") -> StoredReminder:
        """Give an active reminder a new text and next time (audited; the scheduler moves its job)."""
        before = await self.get(scope, reminder_id)
        if before.status != "active":
            raise NotFound(f"reminder {reminder_id} ({before.status})")
        now = time.time() if now is None else now
        async with self.db.transaction() as tx:
            await reminder_edited(tx, scope, before, text, due_at, now, reason)
        await self.changed()
        return await self.get(scope, reminder_id)

    async def revert(self, scope: Scope, entry: AuditEntry) -> None:
        """Undo: a created reminder is cancelled, a cancelled one comes back, an edited one gets its text and time."""
        before = entry.before or {}
        status = "cancelled" if entry.action == "create" else str(before.get("status", "active"))
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE reminders SET status = ?, updated_at = ? WHERE id = ? AND scope_id = ?",
                             (status, time.time(), entry.item_id, scope.id))
            if "due_at" in (entry.after or {}) and "due_at" in before:
                await tx.execute("UPDATE reminders SET text = ?, due_at = ? WHERE id = ? AND scope_id = ?",
                                 (before["text"], before["due_at"], entry.item_id, scope.id))
        await self.changed()

    async def cancel(self, scope: Scope, reminder_id: int) -> StoredReminder:
        """Stop a reminder; NotFound when it is not active (any more)."""
        reminder = await self.get(scope, reminder_id)
        if reminder.status != "active":
            raise NotFound(f"reminder {reminder_id} ({reminder.status})")
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE reminders SET status = 'cancelled', updated_at = ? WHERE id = ?",
                             (time.time(), reminder_id))
            await audit.record(tx, scope.id, audit.new_processing("reminder"), "update", "reminder", reminder_id,
                               before=reminder, after={"status": "cancelled"}, reason="cancelled")
        await self.changed()
        return reminder
