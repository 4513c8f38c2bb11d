"""The learned rhythm: when a person writes and answers, per local weekday and hour, as weights that fade."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from memory.models import Scope
from memory.storage.db import Database, Tx

HALF_LIFE = 21 * 86400.0  # seconds after which a message weighs half: three weeks ago counts half as much as today

Grid = tuple[tuple[float, ...], ...]  # [weekday 0-6, Monday first][hour 0-23]


def decayed(weight: float, since: float, now: float, half_life: float = HALF_LIFE) -> float:
    """A weight as it stood at `since`, faded to `now` (grown back, when `now` lies before `since`)."""
    return weight * 0.5 ** ((now - since) / half_life)


def bucket(at: float, zone: ZoneInfo) -> tuple[int, int]:
    """The person's local weekday (0 = Monday) and hour of a moment."""
    local = datetime.fromtimestamp(at, zone)
    return local.weekday(), local.hour


def _empty() -> list[list[float]]:
    return [[0.0] * 24 for _ in range(7)]


@dataclass(frozen=True)
class Histogram:
    """The decayed weights at one moment: every message the person wrote, and those that answered a check-in."""

    wrote: Grid
    answered: Grid

    @classmethod
    def empty(cls) -> Histogram:
        """No data at all (a newcomer, or after /deleteme)."""
        grid = tuple(tuple(row) for row in _empty())
        return cls(grid, grid)

    @classmethod
    def of(cls, weights: Mapping[tuple[int, int], tuple[float, float]]) -> Histogram:
        """A histogram from {(weekday, hour): (wrote, answered)}; the hours not named weigh nothing."""
        wrote, answered = _empty(), _empty()
        for (day, hour), (w, a) in weights.items():
            wrote[day][hour], answered[day][hour] = w, a
        return cls(tuple(map(tuple, wrote)), tuple(map(tuple, answered)))

    def total(self) -> float:
        """All the weight written, every weekday and hour."""
        return sum(map(sum, self.wrote))


def shifted(hist: Histogram, hours: float) -> Histogram:
    """The weights moved `hours` later around the week (earlier when negative); a weight moved by a part of an hour
    (India's +5:30) is shared between the two hours it now overlaps, so the total stays."""
    whole, part = divmod(hours, 1.0)
    week = 7 * 24

    def move(grid: Grid) -> Grid:
        flat = [grid[d][h] for d in range(7) for h in range(24)]
        out = [0.0] * week
        for i, weight in enumerate(flat):
            start = (i + int(whole)) % week
            out[start] += weight * (1.0 - part)
            out[(start + 1) % week] += weight * part
        return tuple(tuple(out[d * 24:(d + 1) * 24]) for d in range(7))

    return Histogram(move(hist.wrote), move(hist.answered))


class RhythmStore:
    """Observe each message of a person and read the histogram back, faded to a given moment."""

    def __init__(self, db: Database, half_life: float = HALF_LIFE) -> None:
        self.db = db
        self.half_life = half_life

    async def observe(self, scope: Scope, at: float, zone: ZoneInfo, answered: bool) -> None:
        """Count one message at `at` in the person's zone: the weights fade to `at`, then 1 is added.

        Each row keeps its weights as of its `updated_at`; since every weight fades alike, fading one row
        at a time is the same as fading all. A message older than the row (an import) adds less than 1.
        """
        day, hour = bucket(at, zone)
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT wrote, answered, updated_at FROM rhythm WHERE scope_id = ? AND weekday = ?"
                                    " AND hour = ?", (scope.id, day, hour))
            wrote, answers, since = row if row else (0.0, 0.0, at)
            when = max(at, since)
            add = decayed(1.0, at, when, self.half_life)
            wrote = decayed(wrote, since, when, self.half_life) + add
            answers = decayed(answers, since, when, self.half_life) + (add if answered else 0.0)
            await tx.execute(
                "INSERT INTO rhythm(scope_id, weekday, hour, wrote, answered, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(scope_id, weekday, hour) DO UPDATE SET wrote = excluded.wrote,"
                " answered = excluded.answered, updated_at = excluded.updated_at",
                (scope.id, day, hour, wrote, answers, when),
            )

    async def histogram(self, scope: Scope, now: float) -> Histogram:
        """The person's weights, faded to `now`."""
        async with self.db.reading() as tx:
            return await self._read(tx, scope, now)

    async def _read(self, tx: Tx, scope: Scope, now: float) -> Histogram:
        rows = await tx.fetchall("SELECT weekday, hour, wrote, answered, updated_at FROM rhythm WHERE scope_id = ?",
                                 (scope.id,))
        return Histogram.of({
            (day, hour): (decayed(w, since, now, self.half_life), decayed(a, since, now, self.half_life))
            for day, hour, w, a, since in rows
        })

    async def shift(self, scope: Scope, hours: float, now: float) -> None:
        """Move the person's weights `hours` later on their clock (their zone was not the one they were counted in);
        the weights are faded to `now` and kept as of then."""
        async with self.db.transaction() as tx:
            await self.shift_in(tx, scope, hours, now)

    async def shift_in(self, tx: Tx, scope: Scope, hours: float, now: float) -> None:
        """`shift` within a transaction of the caller's (a zone change and what moves with it, together)."""
        hist = shifted(await self._read(tx, scope, now), hours)
        rows = [(scope.id, day, hour, hist.wrote[day][hour], hist.answered[day][hour], now)
                for day in range(7) for hour in range(24) if hist.wrote[day][hour] or hist.answered[day][hour]]
        await tx.execute("DELETE FROM rhythm WHERE scope_id = ?", (scope.id,))
        await tx.executemany("INSERT INTO rhythm(scope_id, weekday, hour, wrote, answered, updated_at)"
                             " VALUES (?, ?, ?, ?, ?, ?)", rows)

    async def restore(self, scope: Scope, rows: Iterable[Mapping[str, Any]]) -> int:
        """Load the rows of an export (weekday, hour, wrote, answered, updated_at); bad rows are skipped."""
        good = []
        for r in rows:
            try:
                row = (scope.id, int(r["weekday"]), int(r["hour"]), float(r["wrote"]), float(r["answered"]),
                       float(r["updated_at"]))
            except (KeyError, TypeError, ValueError):
                continue
            if 0 <= row[1] <= 6 and 0 <= row[2] <= 23:
                good.append(row)
        async with self.db.transaction() as tx:
            await tx.executemany(
                "INSERT OR REPLACE INTO rhythm(scope_id, weekday, hour, wrote, answered, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)", good)
        return len(good)
