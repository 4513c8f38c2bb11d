"""The inbox: every incoming update is stored before the messenger is told it arrived, and marked once handled.

A channel records a batch, confirms it to the messenger only afterwards, and marks each update handled after
its reply was recorded and sent. After a crash the unhandled rows are processed again; an update that is
delivered a second time is recognised by its id, across restarts.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory.storage.db import Database, Tx
from memory.storage.leases import CLAIMABLE, Leases

KEEP_SECONDS = 7 * 24 * 3600.0  # handled ids are kept this long to recognise redeliveries
# meta key: the newest update that was unhandled when something was erased (memory.account.erasure)
_HELD = "erasure_waits_for_inbox"
# An update with content not yet handled, of one channel (the first parameter); nobody else's live claim on it.
_OPEN = "channel = ? AND handled_at IS NULL AND payload IS NOT NULL"
# The order updates are handed out in: the messenger's (`sent_order`), which within a chat is the order the person
# sent them, whichever worker recorded one first; rows without it (recorded before m048) first, by recording.
_SENT = "sent_order NULLS FIRST, rowid"


@dataclass(frozen=True)
class InboxEntry:
    """One received update: its id on the channel, the raw payload (None when not kept), when it came."""

    channel: str
    event_id: str
    payload: str | None
    received_at: float


class Inbox:
    """Record incoming updates once, list those not yet handled, mark them handled."""

    def __init__(self, db: Database, leases: Leases | None = None) -> None:
        self.db = db
        self.leases = leases or Leases(db)  # claims are judged on the database's clock (`Leases.on_database_clock`)

    async def record(self, channel: str, items: Sequence[tuple[str, str | None]], now: float,
                     threads: Mapping[str, str] | None = None, sent_order: Mapping[str, int] | None = None
                     ) -> list[str]:
        """Store (event id, payload) pairs in one transaction; return the ids that were new.

        A None payload records only the id (for updates of unknown users, whose content is not kept);
        such rows count as handled at once. `threads` says which conversation (chat, room) an event id belongs
        to, for workers that `claim` (without it, all of a channel's updates count as one conversation).
        `sent_order` gives an event id its place in the messenger's order (Telegram's update id, Matrix's server
        time): updates are handed out in it, whichever worker recorded them first; without it, in recording order.
        """
        new: list[str] = []
        threads, sent_order = threads or {}, sent_order or {}
        async with self.db.transaction() as tx:
            for event_id, payload in items:
                await tx.execute(
                    "INSERT OR IGNORE INTO inbox(channel, event_id, payload, received_at, handled_at, thread,"
                    " sent_order) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (channel, event_id, payload, now, None if payload is not None else now, threads.get(event_id),
                     sent_order.get(event_id)),
                )
                if await tx.changes():
                    new.append(event_id)
        return new

    async def done(self, channel: str, event_id: str, now: float) -> None:
        """Mark an update handled and drop its payload (the id stays to recognise a redelivery).

        When something was erased while updates were unhandled (their payloads may quote it, like the
        message under a pressed /forget button), the last of them empties the write-ahead log, so the
        payload's old bytes leave the database file too.
        """
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE inbox SET handled_at = ?, payload = NULL, shown = '[]', shown_texts = '[]'"
                             " WHERE channel = ?"
                             " AND event_id = ? AND handled_at IS NULL", (now, channel, event_id))
            released = await _released(tx)
        if released:
            await self.db.checkpoint()

    async def empty_log_when_handled(self) -> None:
        """Empty the write-ahead log once the updates now unhandled are handled (an incognito message's payload,
        dropped by `done`, then leaves the database's files too)."""
        async with self.db.transaction() as tx:
            await hold_for_erasure(tx)

    async def show(self, channel: str, event_id: str, message_ids: Sequence[str],
                   texts: Sequence[str] | None = None) -> None:
        """Record the messages an update has shown so far (its reply's parts, in order), right after each is sent.

        A replay after a crash edits these messages instead of sending them again. `texts`, when given, says
        what each of them displays now (a preview's words so far), so a replay knows what is on the screen.
        """
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE inbox SET shown = ? WHERE channel = ? AND event_id = ?",
                             (json.dumps(list(message_ids)), channel, event_id))
            if texts is not None:
                await tx.execute("UPDATE inbox SET shown_texts = ? WHERE channel = ? AND event_id = ?",
                                 (json.dumps(list(texts), ensure_ascii=False), channel, event_id))

    async def shown(self, channel: str, event_id: str) -> list[str]:
        """The messages an unhandled update had shown when the last run stopped, in order."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT shown FROM inbox WHERE channel = ? AND event_id = ?", (channel, event_id))
        return [str(i) for i in json.loads(row[0])] if row else []

    async def shown_texts(self, channel: str, event_id: str) -> list[str]:
        """What each message an unhandled update had shown displayed when the last run stopped, in order."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT shown_texts FROM inbox WHERE channel = ? AND event_id = ?",
                                    (channel, event_id))
        return [str(text) for text in json.loads(row[0])] if row else []

    async def unhandled(self, channel: str) -> list[InboxEntry]:
        """Updates received but not handled (the process stopped or crashed), in the messenger's order."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT channel, event_id, payload, received_at FROM inbox WHERE channel = ? AND handled_at IS NULL"
                f" AND payload IS NOT NULL ORDER BY {_SENT}", (channel,),
            )
        return [_entry(r) for r in rows]

    async def claim(self, channel: str, worker: str, now: float, hold: float, conversations: int = 10
                    ) -> list[InboxEntry]:
        """Claim the unhandled updates of up to `conversations` conversations nobody else holds, for `hold` seconds;
        return every unhandled update this worker holds now, in the messenger's order (`record`'s `sent_order`).

        A conversation is claimed whole (all its unhandled updates), so its messages are answered in order by one
        worker. On PostgreSQL the oldest update of each conversation is locked FOR UPDATE SKIP LOCKED: two workers
        claiming at once never take the same conversation, neither waits for the other. A claim that ran out (its
        worker died) is taken over. SQLite's one process takes everything (its transactions are serial anyway).
        Claims are held and judged on the database's clock, so workers whose clocks differ agree on them.
        """
        now = await self.leases.on_database_clock(now)
        until = now + hold
        async with self.db.transaction() as tx:
            heads = await tx.fetchall(
                f"SELECT rowid, coalesce(thread, '') FROM inbox i WHERE {_OPEN} AND {CLAIMABLE}"
                f" AND rowid IN (SELECT min(rowid) FROM inbox WHERE {_OPEN} GROUP BY thread)"
                " AND NOT EXISTS (SELECT 1 FROM inbox o WHERE o.channel = i.channel AND o.handled_at IS NULL"
                " AND coalesce(o.thread, '') = coalesce(i.thread, '') AND o.claimed_by <> ? AND o.claimed_until > ?)"
                f" ORDER BY rowid LIMIT ?{self.db.SKIP_LOCKED}",
                (channel, now, worker, channel, worker, now, conversations))
            for _, thread in heads:
                await tx.execute(f"UPDATE inbox SET claimed_by = ?, claimed_until = ? WHERE {_OPEN} AND {CLAIMABLE}"
                                 " AND coalesce(thread, '') = ?", (worker, until, channel, now, worker, thread))
            rows = await tx.fetchall(f"SELECT channel, event_id, payload, received_at FROM inbox WHERE {_OPEN}"
                                     f" AND claimed_by = ? ORDER BY {_SENT}", (channel, worker))
        return [_entry(r) for r in rows]

    async def extend(self, channel: str, worker: str, now: float, hold: float) -> int:
        """Hold this worker's unhandled updates `hold` seconds from now (a long turn); returns how many."""
        now = await self.leases.on_database_clock(now)
        async with self.db.transaction() as tx:
            await tx.execute(f"UPDATE inbox SET claimed_until = ? WHERE {_OPEN} AND claimed_by = ?",
                             (now + hold, channel, worker))
            return await tx.changes()

    async def keep(self, channel: str, event_id: str, worker: str, now: float, hold: float) -> bool:
        """Renew this worker's claim on one unhandled update before it is answered; False when the update was handled
        meanwhile or another worker holds it now (this worker's claim ran out while it stalled): it is left alone."""
        now = await self.leases.on_database_clock(now)
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE inbox SET claimed_until = ? WHERE channel = ? AND event_id = ?"
                             " AND handled_at IS NULL AND claimed_by = ?", (now + hold, channel, event_id, worker))
            return await tx.changes() > 0

    async def handled(self, channel: str, event_id: str) -> bool:
        """Whether this update was handled already."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT handled_at FROM inbox WHERE channel = ? AND event_id = ?",
                                    (channel, event_id))
        return row is not None and row[0] is not None

    async def prune(self, now: float, keep: float = KEEP_SECONDS) -> int:
        """Forget handled updates older than `keep` seconds; returns how many."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM inbox WHERE handled_at IS NOT NULL AND handled_at < ?", (now - keep,))
            return await tx.changes()


async def hold_for_erasure(tx: Tx) -> None:
    """Note the newest unhandled update with a payload: once it and those before it are handled, `done` empties
    the write-ahead log (inside the erasure's transaction).
    """
    row = await tx.fetchone("SELECT max(rowid) FROM inbox WHERE handled_at IS NULL AND payload IS NOT NULL")
    if row[0] is not None:
        await tx.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_HELD, str(row[0])))


async def _released(tx: Tx) -> bool:
    """Whether every update held by an erasure is handled now (the mark is then removed)."""
    mark = await tx.fetchone("SELECT value FROM meta WHERE key = ?", (_HELD,))
    if mark is None:
        return False
    left = await tx.fetchone("SELECT 1 FROM inbox WHERE handled_at IS NULL AND payload IS NOT NULL AND rowid <= ?"
                             " LIMIT 1", (int(mark[0]),))
    if left is not None:
        return False
    await tx.execute("DELETE FROM meta WHERE key = ?", (_HELD,))
    return True


def _entry(row: Any) -> InboxEntry:
    return InboxEntry(row[0], str(row[1]), row[2], float(row[3]))
