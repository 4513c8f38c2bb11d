"""Emoji reactions, both ways: the person's on the companion's messages (feedback for the reflection) and the
companion's own on the person's (a few a day); and which messenger message shows which companion message.

A messenger names a message by its own id ('chat:message' on Telegram, an event id on Matrix), and a reaction
arrives naming only that. So every message the companion shows is recorded in `sent_messages` when it is sent: a
reply with the logged message it shows, a push (logged only after it was sent) with the hash of its text, by which
its logged message is found later. A reaction on a message not recorded there is on no message of the companion's
that mnemo knows, and is not kept. Everything is scoped: /deleteme erases it, /export carries it.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.models import Scope
from memory.storage.db import Database, Tx

KEEP_SENT_SECONDS = 90 * 24 * 3600.0  # a message older than this takes no more reactions as feedback
EMOJI_CHARS = 32  # a reaction key longer than this is no emoji
_FOUND_WITHIN = 600.0  # a push is logged about when it was sent (the outbox's clock): searched this long around it
_SCANNED = 50  # how many of the companion's messages after a push are compared with its text


@dataclass(frozen=True)
class SentMessage:
    """A message the companion showed on a messenger, and the logged message it shows (None: a push not found yet)."""

    scope_id: int
    channel: str
    message_ref: str
    message_id: int | None
    at: float


@dataclass(frozen=True)
class Feedback:
    """A person's reaction on one of the companion's messages, with the words of that message when known."""

    emoji: str
    sender: str
    at: float
    text: str | None  # the companion's message as logged; None when it is not found


def text_hash(text: str) -> str:
    """How a pushed text is recognised among the logged messages."""
    return hashlib.sha256(text.strip().encode("utf-8", errors="surrogatepass")).hexdigest()


class Reactions:
    """Record what the companion showed where, the reactions on it, and its own reactions."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- what the companion showed --------------------------------------------------------------

    async def sent(self, scope: Scope, channel: str, refs: Sequence[str], at: float, *, message_id: int | None = None,
                   text: str | None = None) -> None:
        """Record that these messenger messages show one companion message: a logged one, or a pushed text."""
        hashed = text_hash(text) if text is not None and message_id is None else None
        async with self.db.transaction() as tx:
            await tx.executemany(
                "INSERT INTO sent_messages(scope_id, channel, message_ref, message_id, text_hash, at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(channel, message_ref) DO UPDATE SET"
                " scope_id = excluded.scope_id, message_id = excluded.message_id, text_hash = excluded.text_hash,"
                " at = excluded.at", [(scope.id, channel, ref, message_id, hashed, at) for ref in refs])

    async def find_sent(self, channel: str, message_ref: str) -> SentMessage | None:
        """The companion's message shown as this messenger message, or None when mnemo did not record one."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT scope_id, channel, message_ref, message_id, at FROM sent_messages"
                                    " WHERE channel = ? AND message_ref = ?", (channel, message_ref))
        return SentMessage(int(row[0]), row[1], row[2], row[3], float(row[4])) if row else None

    async def knows(self, channel: str, ref: str) -> bool:
        """Whether this id names a message the companion sent, or a reaction kept from someone (Matrix routing)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(
                "SELECT 1 FROM sent_messages WHERE channel = ? AND message_ref = ? UNION ALL"
                " SELECT 1 FROM reactions WHERE channel = ? AND ref = ? AND ref != '' LIMIT 1",
                (channel, ref, channel, ref))
        return row is not None

    async def prune(self, now: float, keep: float = KEEP_SENT_SECONDS) -> int:
        """Forget which messenger message showed what, for messages older than `keep` seconds; returns how many."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM sent_messages WHERE at < ?", (now - keep,))
            return await tx.changes()

    # --- the person's reactions -------------------------------------------------------------------

    async def add_feedback(self, scope: Scope, channel: str, message_ref: str, emoji: str, sender: str, at: float,
                           ref: str = "") -> bool:
        """Keep a reaction on one of the companion's messages (once per sender and emoji); False when the message
        is not known as the companion's in this scope."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT id, message_id, text_hash, at FROM sent_messages"
                                    " WHERE scope_id = ? AND channel = ? AND message_ref = ?",
                                    (scope.id, channel, message_ref))
            if row is None:
                return False
            message_id = row[1] if row[1] is not None else await _pushed(tx, scope, row)
            await tx.execute(
                "INSERT INTO reactions(scope_id, channel, message_ref, message_id, emoji, sender, by_companion, ref,"
                " at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)"
                " ON CONFLICT(scope_id, channel, message_ref, sender, emoji, by_companion)"
                " DO UPDATE SET ref = excluded.ref, at = excluded.at",
                (scope.id, channel, message_ref, message_id, emoji[:EMOJI_CHARS], sender, ref, at))
        return True

    async def remove(self, scope: Scope, channel: str, *, message_ref: str = "", emoji: str = "", sender: str = "",
                     ref: str = "") -> int:
        """Drop a reaction the person took back: named by its own id (`ref`), or by message, emoji and sender."""
        async with self.db.transaction() as tx:
            if ref:
                await tx.execute("DELETE FROM reactions WHERE scope_id = ? AND channel = ? AND ref = ?"
                                 " AND by_companion = 0", (scope.id, channel, ref))
            else:
                await tx.execute("DELETE FROM reactions WHERE scope_id = ? AND channel = ? AND message_ref = ?"
                                 " AND emoji = ? AND sender = ? AND by_companion = 0",
                                 (scope.id, channel, message_ref, emoji, sender))
            return await tx.changes()

    async def feedback(self, scope: Scope, since: float, limit: int = 12) -> list[Feedback]:
        """The person's reactions since a time, oldest first (the newest `limit`), with the messages they are on."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT r.emoji, r.sender, r.at, m.text FROM reactions r LEFT JOIN messages m"
                " ON m.id = r.message_id AND m.scope_id = r.scope_id"
                " WHERE r.scope_id = ? AND r.by_companion = 0 AND r.at >= ? ORDER BY r.at DESC, r.id DESC LIMIT ?",
                (scope.id, since, limit))
        return [Feedback(r[0], r[1], float(r[2]), r[3]) for r in reversed(rows)]

    # --- the companion's own ----------------------------------------------------------------------

    async def give(self, scope: Scope, channel: str, message_ref: str, message_id: int, emoji: str, at: float) -> None:
        """Record the companion's reaction on a person's message (once per message and emoji)."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT OR IGNORE INTO reactions(scope_id, channel, message_ref, message_id, emoji, sender,"
                " by_companion, at) VALUES (?, ?, ?, ?, ?, '', 1, ?)",
                (scope.id, channel, message_ref, message_id, emoji, at))

    async def given(self, scope: Scope, since: float, until: float) -> int:
        """How many reactions the companion put on the scope's messages in [since, until)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT count(*) FROM reactions WHERE scope_id = ? AND by_companion = 1"
                                    " AND at >= ? AND at < ?", (scope.id, since, until))
        return int(row[0])

    async def restore(self, scope: Scope, rows: Sequence[dict[str, Any]], message_ids: dict[int, int]) -> int:
        """Bring in the reactions of an export (`message_ids`: the exported messages' ids to the new ones); a
        reaction whose message did not come along keeps no message. Returns how many are new."""
        added = 0
        async with self.db.transaction() as tx:
            for r in rows:
                old = r.get("message_id")
                await tx.execute(
                    "INSERT OR IGNORE INTO reactions(scope_id, channel, message_ref, message_id, emoji, sender,"
                    " by_companion, ref, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (scope.id, str(r["channel"]), str(r["message_ref"]), message_ids.get(old) if old else None,
                     str(r["emoji"])[:EMOJI_CHARS], str(r.get("sender") or ""), int(bool(r.get("by_companion"))),
                     str(r.get("ref") or ""), float(r["at"])))
                added += await tx.changes()
        return added


async def _pushed(tx: Tx, scope: Scope, sent: Sequence[Any]) -> int | None:
    """The logged message of a push, found by its text among the companion's messages logged about when it was sent."""
    row_id, _, hashed, at = sent
    if hashed is None:
        return None
    rows = await tx.fetchall("SELECT id, text FROM messages WHERE scope_id = ? AND role = 'assistant'"
                             " AND created_at >= ? AND created_at < ? ORDER BY id LIMIT ?",
                             (scope.id, at - _FOUND_WITHIN, at + _FOUND_WITHIN, _SCANNED))
    found = next((int(r[0]) for r in rows if text_hash(r[1]) == hashed), None)
    if found is not None:
        await tx.execute("UPDATE sent_messages SET message_id = ?, text_hash = NULL WHERE id = ?", (found, row_id))
    return found
