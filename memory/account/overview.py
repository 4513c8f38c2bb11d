"""What a scope's memory holds, in numbers, for the web page's overview (live items only)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from memory.models import Scope
from memory.search.admission import OUTCOMES
from memory.storage.db import Database

# What is counted: a name for each count and the query counting the scope's live items.
COUNTS: dict[str, str] = {
    "messages": "SELECT count(*) FROM messages WHERE scope_id = ?",
    "notes": "SELECT count(*) FROM notes WHERE scope_id = ? AND valid_to IS NULL",
    "people": "SELECT count(*) FROM people WHERE scope_id = ? AND valid_to IS NULL AND merged_into IS NULL",
    "rules": "SELECT count(*) FROM learned_rules WHERE scope_id = ? AND status = 'active'",
    "reminders": "SELECT count(*) FROM reminders WHERE scope_id = ? AND status = 'active'",
    "diary": "SELECT count(*) FROM diary_entries WHERE scope_id = ?",
    "thoughts": "SELECT count(*) FROM thoughts WHERE scope_id = ?",
    "topics": "SELECT count(*) FROM open_topics WHERE scope_id = ? AND status IN ('open', 'raised')",
}


@dataclass(frozen=True)
class Week:
    """One week of the chart: the Monday it starts on (in the deployment's zone) and the notes created in it."""

    start: dt.date
    notes: int


async def counts(db: Database, scope: Scope) -> dict[str, int]:
    """How many of each kind of item the scope holds now."""
    async with db.reading() as tx:
        return {name: int((await tx.fetchone(sql, (scope.id,)))[0]) for name, sql in COUNTS.items()}


async def notes_per_week(db: Database, scope: Scope, now: float, zone: tzinfo, weeks: int = 12) -> list[Week]:
    """How many notes were created in each of the last `weeks` weeks (Monday to Sunday in `zone`), oldest first."""
    today = dt.datetime.fromtimestamp(now, zone).date()
    monday = today - dt.timedelta(days=today.weekday())
    starts = [monday - dt.timedelta(weeks=weeks - 1 - i) for i in range(weeks)]
    first = dt.datetime.combine(starts[0], dt.time(), zone).timestamp()
    async with db.reading() as tx:
        rows = await tx.fetchall("SELECT created_at FROM notes WHERE scope_id = ? AND created_at >= ?",
                                 (scope.id, first))
    counts = dict.fromkeys(starts, 0)
    for (created,) in rows:
        day = dt.datetime.fromtimestamp(float(created), zone).date()
        start = day - dt.timedelta(days=day.weekday())
        if start in counts:
            counts[start] += 1
    return [Week(start, count) for start, count in counts.items()]


STATS_TABLES = ("messages", "notes", "profile_entries", "thoughts", "diary_entries", "open_topics", "learned_rules")


async def stats(db: Database) -> list[dict[str, Any]]:
    """The operator's `mnemo stats`: per scope its companion, user, rows per kind (live people, active reminders)
    and the admission outcomes of its notes. A person who asked /deleteme and has not written since is not listed:
    their scope's row stays only for the tombstones (`memory.account.erasure`), and their id is nothing to show."""
    async with db.reading() as tx:
        scopes = await tx.fetchall("SELECT id, companion_id, user_id FROM scopes ORDER BY id")
        erased = {r[0] for r in await tx.fetchall("SELECT DISTINCT scope_id FROM erasures WHERE kind = 'scope'")}
        rows = []
        for scope_id, companion, user in scopes:
            counted: dict[str, Any] = {"companion": companion, "user": user}
            for table in STATS_TABLES:
                counted[table] = (await tx.fetchone(f"SELECT count(*) FROM {table} WHERE scope_id = ?",
                                                    (scope_id,)))[0]
            counted["people"] = (await tx.fetchone("SELECT count(*) FROM people WHERE scope_id = ?"
                                                   " AND valid_to IS NULL", (scope_id,)))[0]
            counted["reminders"] = (await tx.fetchone("SELECT count(*) FROM reminders WHERE scope_id = ?"
                                                      " AND status = 'active'", (scope_id,)))[0]
            admission = dict(await tx.fetchall("SELECT outcome, count FROM admission_counts WHERE scope_id = ?",
                                               (scope_id,)))
            for outcome in OUTCOMES.values():
                counted[outcome] = admission.get(outcome, 0)
            if scope_id in erased and not any(v for k, v in counted.items() if k not in ("companion", "user")):
                continue
            rows.append(counted)
    return rows
