"""Incognito per scope: whether it is on (in `scope_state`, so a restart keeps it) and the stretches it had.

A stretch is logged only as when it began and ended, how it ended and how many messages it had: never their words.
For the check-in planner, `incognito_activity` keeps per scope how many messages came in incognito, when the last did,
and the newest check-in one answered (`Activity`): times and a number, nothing said.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from memory.models import Scope
from memory.storage.db import Database

STATE_KEY = "incognito"  # the scope_state key while incognito is on: {"since", "until" (or null), "messages"}


@dataclass(frozen=True)
class Incognito:
    """Incognito while it is on: since when, until when (None: until switched off), messages answered so far."""

    since: float
    until: float | None
    messages: int = 0

    def over(self, now: float) -> bool:
        """Whether its time ran out."""
        return self.until is not None and now >= self.until


@dataclass(frozen=True)
class Stretch:
    """One incognito stretch as the log keeps it."""

    started_at: float
    ended_at: float
    messages: int
    ended_by: str  # 'command' (/incognito aus), 'time' (its duration ran out)


@dataclass(frozen=True)
class Activity:
    """Incognito chatting as the planner sees it: messages so far, when the last came, the newest check-in (its send
    time) that a message in incognito answered in time (None: none)."""

    messages: int
    last_at: float
    answered_checkin: float | None


class IncognitoLog:
    """Switch incognito on and off per scope, count its messages, and keep the stretches it had."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def current(self, scope: Scope) -> Incognito | None:
        """Incognito as it is on for the scope, or None when it is off."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT value FROM scope_state WHERE scope_id = ? AND key = ?",
                                    (scope.id, STATE_KEY))
        if row is None:
            return None
        raw = json.loads(row[0])
        until = raw.get("until")
        return Incognito(float(raw["since"]), None if until is None else float(until), int(raw.get("messages", 0)))

    async def start(self, scope: Scope, now: float, until: float | None) -> Incognito:
        """Switch incognito on until `until` (None: until switched off); when it is on already, only its end moves."""
        on = await self.current(scope)
        state = Incognito(now, until) if on is None else Incognito(on.since, until, on.messages)
        await self._put(scope, state, now)
        return state

    async def count(self, scope: Scope, now: float) -> None:
        """Count one more message answered in incognito (the number only)."""
        on = await self.current(scope)
        if on is not None:
            await self._put(scope, Incognito(on.since, on.until, on.messages + 1), now)

    async def note(self, scope: Scope, now: float, answered_checkin: float | None = None) -> None:
        """Note one message in incognito at `now` for the planner (a number and a time), and the check-in it answered
        in time, when it did."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO incognito_activity(scope_id, messages, last_at, answered_checkin) VALUES (?, 1, ?, ?)"
                " ON CONFLICT(scope_id) DO UPDATE SET messages = incognito_activity.messages + 1,"
                " last_at = excluded.last_at,"
                " answered_checkin = COALESCE(excluded.answered_checkin, incognito_activity.answered_checkin)",
                (scope.id, now, answered_checkin))

    async def activity(self, scope: Scope) -> Activity | None:
        """The scope's incognito chatting as the planner sees it; None when it never chatted in incognito."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT messages, last_at, answered_checkin FROM incognito_activity"
                                    " WHERE scope_id = ?", (scope.id,))
        if row is None:
            return None
        return Activity(int(row[0]), float(row[1]), None if row[2] is None else float(row[2]))

    async def end(self, scope: Scope, now: float, ended_by: str) -> Stretch | None:
        """Switch incognito off and log the stretch (ended at its own end when its time ran out); None when off."""
        on = await self.current(scope)
        if on is None:
            return None
        ended = min(now, on.until) if ended_by == "time" and on.until is not None else now
        stretch = Stretch(on.since, ended, on.messages, ended_by)
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM scope_state WHERE scope_id = ? AND key = ?", (scope.id, STATE_KEY))
            await tx.execute(
                "INSERT INTO incognito_stretches(scope_id, started_at, ended_at, messages, ended_by)"
                " VALUES (?, ?, ?, ?, ?)", (scope.id, stretch.started_at, stretch.ended_at, stretch.messages, ended_by))
        return stretch

    async def stretches(self, scope: Scope, limit: int = 20, start: float | None = None,
                        end: float | None = None) -> list[Stretch]:
        """The scope's logged stretches, newest first (only those reaching into [start, end) where given)."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT started_at, ended_at, messages, ended_by FROM incognito_stretches WHERE scope_id = ?"
                " AND (? IS NULL OR ended_at >= ?) AND (? IS NULL OR started_at < ?)"
                " ORDER BY started_at DESC, id DESC LIMIT ?", (scope.id, start, start, end, end, limit))
        return [Stretch(float(r[0]), float(r[1]), int(r[2]), str(r[3])) for r in rows]

    async def _put(self, scope: Scope, state: Incognito, now: float) -> None:
        value = json.dumps({"since": state.since, "until": state.until, "messages": state.messages})
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO scope_state(scope_id, key, value, updated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(scope_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (scope.id, STATE_KEY, value, now))
