"""The web lookups of each person's turns (searches and pages read): what, when, how much came back.

A row is written for every lookup that was carried out, also one that failed or was refused, so the day's count
(the per-person daily limit) and the operator's view agree. A lookup refused by the limit itself is not one.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memory.models import Scope
from memory.storage.db import Database

Kind = Literal["search", "page"]
TARGET_CHARS = 2000  # a query or URL longer than this is kept clipped
_COLS = "id, kind, target, at, results, tokens, outcome"


@dataclass(frozen=True)
class WebLookup:
    """One web search or page read."""

    id: int
    kind: str  # 'search' or 'page'
    target: str  # the query or the URL asked for
    at: float  # unix time
    results: int  # results found (search) or 1 for a page read
    tokens: int  # about how many tokens of outside text the model was handed
    outcome: str  # 'ok', or what went wrong ('failed: …', 'refused: …')


def _row(row: Sequence[Any]) -> WebLookup:
    return WebLookup(int(row[0]), str(row[1]), str(row[2]), float(row[3]), int(row[4]), int(row[5]), str(row[6]))


class WebLog:
    """Record each web lookup in its scope and count a day's lookups."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, scope: Scope, kind: Kind, target: str, at: float, results: int = 0, tokens: int = 0,
                  outcome: str = "ok") -> WebLookup:
        """Record one lookup."""
        target = target[:TARGET_CHARS]
        async with self.db.transaction() as tx:
            row_id = await tx.execute(
                "INSERT INTO web_log(scope_id, kind, target, at, results, tokens, outcome)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (scope.id, kind, target, at, results, tokens, outcome))
        return WebLookup(row_id, kind, target, at, results, tokens, outcome)

    async def count(self, scope: Scope, since: float, until: float) -> int:
        """How many lookups the scope made in [since, until)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT count(*) FROM web_log WHERE scope_id = ? AND at >= ? AND at < ?",
                                    (scope.id, since, until))
        return int(row[0])

    async def latest(self, scope: Scope, limit: int = 20) -> list[WebLookup]:
        """The scope's latest lookups, newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM web_log WHERE scope_id = ? ORDER BY at DESC, id DESC"
                                     " LIMIT ?", (scope.id, limit))
        return [_row(r) for r in rows]
