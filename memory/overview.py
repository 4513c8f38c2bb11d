"""What a scope's memory holds, in numbers, for the web page's overview (live items only)."""
from __future__ import annotations

from memory.db import Database
from memory.models import Scope

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


async def counts(db: Database, scope: Scope) -> dict[str, int]:
    """How many of each kind of item the scope holds now."""
    async with db.reading() as tx:
        return {name: int((await tx.fetchone(sql, (scope.id,)))[0]) for name, sql in COUNTS.items()}
