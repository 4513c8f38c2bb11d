"""Choices shown under the bot's messages (buttons, reactions, numbered lines), kept across restarts.

A choice row says which message shows options, whose scope it acts in, who may answer it (the person
who asked; None: anyone the channel lets in), what each option does (button data), and which yes/no
question it belongs to ('rule:12'), so the options of a decided question can be taken away everywhere.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from memory.models import Scope
from memory.storage.db import Database

KEEP_SECONDS = 30 * 24 * 3600.0  # choices older than this are forgotten (their buttons answer "no longer valid")


@dataclass(frozen=True)
class Choice:
    """Options under one message of a channel."""

    id: int
    scope_id: int
    channel: str
    message_ref: str  # the channel's id of the message ('chat:message' on Telegram, an event id on Matrix)
    owner: str | None  # who may choose; None: anyone let into the chat
    options: dict[str, str]  # what the person picks (a reaction, a number, a button's data) -> button data
    question: str = ""  # the yes/no question these options answer ('rule:12', 'profile:3'), if any
    extra: dict[str, Any] = field(default_factory=dict)  # what the channel needs to take the options away


def _choice(row: Any) -> Choice:
    return Choice(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6], json.loads(row[7]))


_COLS = "id, scope_id, channel, message_ref, owner, options, question, extra"


class Choices:
    """Record, find and close the choices under messages."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, scope: Scope, channel: str, message_ref: str, options: dict[str, str], *,
                     owner: str | None = None, question: str = "", extra: dict[str, Any] | None = None,
                     now: float | None = None) -> Choice:
        """Remember the options shown under a message (replacing what was recorded for it)."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO choices(scope_id, channel, message_ref, owner, options, question, extra, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(channel, message_ref) DO UPDATE SET"
                " scope_id = excluded.scope_id, owner = excluded.owner, options = excluded.options,"
                " question = excluded.question, extra = excluded.extra, created_at = excluded.created_at",
                (scope.id, channel, message_ref, owner, json.dumps(options, ensure_ascii=False), question,
                 json.dumps(extra or {}, ensure_ascii=False), time.time() if now is None else now),
            )
            row = await tx.fetchone(f"SELECT {_COLS} FROM choices WHERE channel = ? AND message_ref = ?",
                                    (channel, message_ref))
        return _choice(row)

    async def find(self, channel: str, message_ref: str) -> Choice | None:
        """The choice under a message, or None."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(f"SELECT {_COLS} FROM choices WHERE channel = ? AND message_ref = ?",
                                    (channel, message_ref))
        return _choice(row) if row else None

    async def latest(self, scope: Scope, channel: str) -> Choice | None:
        """The newest choice of a scope on a channel (the terminal answers it by number)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(f"SELECT {_COLS} FROM choices WHERE scope_id = ? AND channel = ?"
                                    " ORDER BY id DESC LIMIT 1", (scope.id, channel))
        return _choice(row) if row else None

    async def close(self, channel: str, message_ref: str) -> None:
        """Forget the choice under a message (it was answered, or its options were taken away)."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM choices WHERE channel = ? AND message_ref = ?", (channel, message_ref))

    async def of_question(self, scope: Scope, question: str) -> list[Choice]:
        """Every choice of a scope that answers this question, on any channel, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM choices WHERE scope_id = ? AND question = ? ORDER BY id",
                                     (scope.id, question))
        return [_choice(r) for r in rows]

    async def prune(self, now: float, keep: float = KEEP_SECONDS) -> int:
        """Forget choices older than `keep` seconds; returns how many."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM choices WHERE created_at < ?", (now - keep,))
            return await tx.changes()
