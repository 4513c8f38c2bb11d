"""The outbox: every message the companion sends on its own is recorded before it is sent."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from memory.models import Scope
from memory.storage.db import Database, Tx
from memory.storage.leases import CLAIMABLE, Leases

# Rows of buttons under a message, each (label, data): plain data, so the memory knows no messenger.
ButtonRows = tuple[tuple[tuple[str, str], ...], ...]


@dataclass(frozen=True)
class OutboxItem:
    """One recorded outgoing message."""

    id: int
    scope_id: int
    kind: str
    text: str
    status: str
    attempts: int
    buttons: ButtonRows = ()
    created_at: float = 0.0
    due_at: float | None = None  # when the message was meant to arrive (a reminder's due time), if it says


def _item(row: Any) -> OutboxItem:
    rows = tuple(tuple((str(label), str(data)) for label, data in row) for row in json.loads(row[6]))
    return OutboxItem(row[0], row[1], row[2], row[3], row[4], row[5], rows, row[7], row[8])


_COLS = "id, scope_id, kind, text, status, attempts, buttons, created_at, due_at"
_DUE = "status = 'pending' AND next_try <= ?"


async def recorded(tx: Tx, scope: Scope, kind: str, text: str, now: float, buttons: ButtonRows = (),
                   due_at: float | None = None, claim: tuple[str, float] | None = None) -> OutboxItem:
    """`Outbox.record` within a transaction of the caller's (a reminder fired and its message recorded together)."""
    holder, until = claim if claim is not None else (None, None)
    item_id = await tx.execute(
        "INSERT INTO outbox(scope_id, kind, text, next_try, created_at, buttons, due_at, claimed_by,"
        " claimed_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (scope.id, kind, text, now, now, json.dumps(buttons, ensure_ascii=False), due_at, holder, until),
    )
    return OutboxItem(item_id, scope.id, kind, text, "pending", 0, buttons, now, due_at)


class Outbox:
    """Record, list due, and mark outgoing messages."""

    def __init__(self, db: Database, leases: Leases | None = None) -> None:
        self.db = db
        self.leases = leases or Leases(db)  # claims are judged on the database's clock (`Leases.on_database_clock`)

    async def record(self, scope: Scope, kind: str, text: str, now: float | None = None,
                     buttons: ButtonRows = (), due_at: float | None = None,
                     claim: tuple[str, float] | None = None) -> OutboxItem:
        """Record a message (with its buttons, and when it was meant to arrive) as pending, due at once.

        `claim` (worker, until): the worker that sends it at once holds it until then (on the database's clock:
        `OutboxSender.claim`), so another worker's `claim_due` does not send it too.
        """
        now = time.time() if now is None else now
        async with self.db.transaction() as tx:
            return await recorded(tx, scope, kind, text, now, buttons, due_at, claim)

    async def due(self, now: float, limit: int = 50) -> list[OutboxItem]:
        """Pending messages whose next try has come, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM outbox WHERE {_DUE} ORDER BY id LIMIT ?", (now, limit))
        return [_item(r) for r in rows]

    async def claim_due(self, worker: str, now: float, hold: float, limit: int = 50) -> list[OutboxItem]:
        """The due messages nobody else holds, claimed by this worker for `hold` seconds, oldest first.

        On PostgreSQL the rows are locked FOR UPDATE SKIP LOCKED: two workers claiming at once get different
        messages, so each is sent by one worker only. A claim that ran out (its worker died) is taken over. Claims
        are judged on the database's clock; when a message is due, on the clock that wrote its next try (`now`).
        """
        at = await self.leases.on_database_clock(now)
        async with self.db.transaction() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLS} FROM outbox WHERE {_DUE} AND {CLAIMABLE}"
                f" ORDER BY id LIMIT ?{self.db.SKIP_LOCKED}", (now, at, worker, limit))
            await tx.executemany("UPDATE outbox SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                                 [(worker, at + hold, row[0]) for row in rows])
        return [_item(r) for r in rows]

    async def pending(self, item_id: int) -> bool:
        """Whether a message still waits to be sent: a list of due messages read a moment ago may hold one that
        another try of the same worker has sent since."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT status FROM outbox WHERE id = ?", (item_id,))
        return row is not None and row[0] == "pending"

    async def mark_sent(self, item_id: int, now: float) -> None:
        """The channel accepted the message."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE outbox SET status = 'sent', sent_at = ?, attempts = attempts + 1 WHERE id = ?",
                             (now, item_id))

    async def mark_failed(self, item_id: int, error: str, next_try: float | None) -> None:
        """A try failed: retry at next_try, or give up (None)."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_try = COALESCE(?, next_try),"
                " status = CASE WHEN ? IS NULL THEN 'failed' ELSE 'pending' END WHERE id = ?",
                (error[:500], next_try, next_try, item_id),
            )

    async def drop(self, item_id: int, reason: str) -> None:
        """Give a message up unsent on purpose (it missed its window); the reason is kept."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE outbox SET status = 'dropped', last_error = ? WHERE id = ?",
                             (f"dropped: {reason}"[:500], item_id))

    async def postpone(self, item_id: int, next_try: float, reason: str) -> None:
        """Hold a message back until next_try without counting a try (it waits for the person's hours)."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE outbox SET next_try = ?, last_error = ? WHERE id = ?",
                             (next_try, f"waiting: {reason}"[:500], item_id))

    async def reason(self, item_id: int) -> str:
        """What happened at the last try (an error, why it was dropped or held back); '' when nothing did."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT last_error FROM outbox WHERE id = ?", (item_id,))
        return str(row[0]) if row else ""

    async def items(self, scope: Scope) -> list[OutboxItem]:
        """Every recorded message of a scope, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM outbox WHERE scope_id = ? ORDER BY id", (scope.id,))
        return [_item(r) for r in rows]

    async def sent_between(self, scope: Scope, start: float, end: float) -> list[str]:
        """The kinds of the scope's messages sent in [start, end], oldest first: whatever the companion pushed there
        (a reminder, a check-in, a saved notice ...)."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT kind FROM outbox WHERE scope_id = ? AND status = 'sent' AND sent_at >= ?"
                                     " AND sent_at <= ? ORDER BY sent_at, id", (scope.id, start, end))
        return [str(r[0]) for r in rows]

    async def counts(self) -> dict[str, int]:
        """How many items of every scope are in each status ('pending', 'sent', 'failed', 'dropped'), for metrics."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT status, COUNT(*) FROM outbox GROUP BY status")
        return {str(status): int(count) for status, count in rows}
