"""Suggestions the companion leaves its operator about mnemo itself: kept with their context, deduplicated, a few a day.

A suggestion belongs to the scope whose conversation it came from, so /deleteme erases it with the rest (it holds
an excerpt of the person's words). The same or nearly the same text again in that scope counts up the row it
matches (a dismissed one stays dismissed) instead of adding one; only new rows count against the daily limits,
which are a rolling 24 hours, per scope and across the deployment. The person never sees a suggestion: it is not
in their export either.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memory.models import Scope
from memory.search.search_text import content_words, normalize, stem
from memory.storage.db import Database, Tx

DAY = 86400.0  # the daily limits count the suggestions first noted in the last 24 hours
TEXT_CHARS = 500  # a suggestion is one or two sentences; more is clipped
CONTEXT_CHARS = 200  # the excerpt of the message it reacted to
KINDS = ("feature", "misunderstanding", "bug", "other")
NEAR = 0.75  # share of common word stems from which two texts say the same
_SCANNED = 500  # a scope's newest suggestions compared with a new one
_COLS = ("s.id, c.companion_id, c.user_id, s.kind, s.text, s.context, s.message_id, s.count, s.first_at, s.last_at,"
         " s.dismissed_at")

Outcome = Literal["new", "repeat", "seen", "limit"]


@dataclass(frozen=True)
class Suggestion:
    """One suggestion: what the companion noted, where and how often, and whether the operator dismissed it."""

    id: int
    companion_id: str
    user_id: str
    kind: str  # one of KINDS
    text: str
    context: str  # the start of the person's message it reacted to
    message_id: int | None  # the message it first came from
    count: int
    first_at: float
    last_at: float
    dismissed_at: float | None = None


@dataclass(frozen=True)
class Limits:
    """How many new suggestions a day: from one scope, and from all of them together."""

    per_user: int = 3
    total: int = 10


@dataclass(frozen=True)
class Noted:
    """What became of a suggestion: a new row, a repeat counted up, seen already in this message, or over a limit."""

    outcome: Outcome
    suggestion: Suggestion | None  # the row it went into; None over the limit


def tidy(text: str, limit: int) -> str:
    """One line without runs of space, clipped to limit characters (the cut marked)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def kind_of(value: Any) -> str:
    """The kind as stored: one of KINDS, 'other' for anything else."""
    kind = str(value or "").strip().casefold()
    return kind if kind in KINDS else "other"


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(word) for word in content_words(text))


def same_suggestion(a: str, b: str) -> bool:
    """Whether two suggestions say the same: equal but for case, punctuation and spacing, or nearly the same words."""
    if normalize(a) == normalize(b):
        return True
    first, second = _stems(a), _stems(b)
    if len(first) < 2 or len(second) < 2:
        return False
    return len(first & second) / len(first | second) >= NEAR


def room_for_one(scope_today: int, all_today: int, limits: Limits) -> bool:
    """Whether one more new suggestion fits today's limits."""
    return scope_today < limits.per_user and all_today < limits.total


def _suggestion(row: Sequence[Any]) -> Suggestion:
    return Suggestion(int(row[0]), row[1], row[2], row[3], row[4], row[5], row[6], int(row[7]), float(row[8]),
                      float(row[9]), None if row[10] is None else float(row[10]))


async def _get(tx: Tx, suggestion_id: int) -> Suggestion | None:
    row = await tx.fetchone(f"SELECT {_COLS} FROM suggestions s JOIN scopes c ON c.id = s.scope_id WHERE s.id = ?",
                            (suggestion_id,))
    return _suggestion(row) if row else None


class Suggestions:
    """The suggestions table: note one, list them for the operator, dismiss one."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def note(self, scope: Scope, text: str, *, now: float, limits: Limits, kind: str = "other",
                   context: str = "", message_id: int | None = None) -> Noted:
        """Keep a suggestion, or count up the one it repeats (once per message); over a limit nothing is stored."""
        text = tidy(text, TEXT_CHARS)
        if not text:
            raise ValueError("the suggestion is empty")
        async with self.db.transaction() as tx:
            rows = await tx.fetchall("SELECT id, text, last_message_id FROM suggestions WHERE scope_id = ?"
                                     " ORDER BY id DESC LIMIT ?", (scope.id, _SCANNED))
            match = next((r for r in rows if same_suggestion(text, r[1])), None)
            if match is not None:
                if message_id is not None and match[2] == message_id:
                    return Noted("seen", await _get(tx, int(match[0])))
                await tx.execute("UPDATE suggestions SET count = count + 1, last_at = ?, last_message_id = ?"
                                 " WHERE id = ?", (now, message_id, match[0]))
                return Noted("repeat", await _get(tx, int(match[0])))
            mine, everyone = await tx.fetchone(
                "SELECT (SELECT count(*) FROM suggestions WHERE scope_id = ? AND first_at > ?),"
                " (SELECT count(*) FROM suggestions WHERE first_at > ?)", (scope.id, now - DAY, now - DAY))
            if not room_for_one(int(mine), int(everyone), limits):
                return Noted("limit", None)
            new_id = await tx.execute(
                "INSERT INTO suggestions(scope_id, kind, text, norm, context, message_id, last_message_id, count,"
                " first_at, last_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
                (scope.id, kind_of(kind), text, normalize(text), tidy(context, CONTEXT_CHARS), message_id,
                 message_id, now, now))
            return Noted("new", await _get(tx, new_id))

    async def list(self, *, dismissed: bool = False, scope: Scope | None = None) -> list[Suggestion]:
        """The open suggestions (with `dismissed`, every one), the last seen first; of one scope, or of all."""
        where = [] if dismissed else ["s.dismissed_at IS NULL"]
        params: list[Any] = []
        if scope is not None:
            where.append("s.scope_id = ?")
            params.append(scope.id)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM suggestions s JOIN scopes c ON c.id = s.scope_id{clause}"
                                     " ORDER BY s.last_at DESC, s.id DESC", params)
        return [_suggestion(r) for r in rows]

    async def dismiss(self, suggestion_id: int, now: float) -> Suggestion | None:
        """Dismiss one suggestion; returns it as it was before (None when there is no such suggestion)."""
        async with self.db.transaction() as tx:
            found = await _get(tx, suggestion_id)
            if found is not None and found.dismissed_at is None:
                await tx.execute("UPDATE suggestions SET dismissed_at = ? WHERE id = ?", (now, suggestion_id))
        return found
