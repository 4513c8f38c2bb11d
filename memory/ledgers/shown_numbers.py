"""Each user's own numbers for what they see (#1, #2, …), so the ids all users share never show.

A scope's notes, rules, reminders, people, open topics and profile entries are numbered from 1, oldest first.
A number is given the first time an item is shown (every older item of its kind that has none yet is numbered
with it, so the numbers follow the order the items were made) and never given again in that scope: not after
the item is gone, not after /deleteme (the counter stays, without anything else of the user), so a stale button
never hits a newer item. A number resolves only within its own scope; another scope's number finds nothing.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from memory.errors import NotFound
from memory.models import Scope
from memory.storage.db import Database, Tx

Kind = Literal["note", "rule", "reminder", "person", "profile", "candidate", "topic", "profile_entry"]
TABLES: dict[str, str] = {"note": "notes", "rule": "learned_rules", "reminder": "reminders", "person": "people",
                          "profile": "pending_profile",  # profile: facts waiting for the person's yes
                          "candidate": "review_candidates",  # imported, waiting for /review
                          "topic": "open_topics", "profile_entry": "profile_entries"}  # the web page's links


class Numbers:
    """Give and resolve the per-scope numbers of the kinds of items in TABLES."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def of(self, scope: Scope, kind: Kind, item_id: int) -> int:
        """The number of one of the scope's items (given now if it has none); NotFound for another scope's."""
        found = await self.of_many(scope, kind, [item_id])
        if item_id not in found:
            raise NotFound(f"{kind} {item_id} in scope {scope.id}")
        return found[item_id]

    async def of_many(self, scope: Scope, kind: Kind, item_ids: Iterable[int]) -> dict[int, int]:
        """Item id -> number for those of the ids that are (or were, once numbered) the scope's items."""
        wanted = sorted(set(item_ids))
        if not wanted:
            return {}
        async with self.db.transaction() as tx:
            await self._numbering(tx, scope)
            known = await _numbered(tx, scope, kind, wanted)
            if len(known) < len(wanted):
                await _number_up_to(tx, scope, kind, max(i for i in wanted if i not in known))
                known = await _numbered(tx, scope, kind, wanted)
        return known

    async def _numbering(self, tx: Tx, scope: Scope) -> None:
        """Hold the scope's numbering until the transaction ends: two workers (a chat's and the scheduler's)
        numbering the same scope's items at once would both give the next number (PostgreSQL; on SQLite one
        writer at a time does)."""
        await tx.fetchone(f"SELECT id FROM scopes WHERE id = ?{self.db.FOR_UPDATE}", (scope.id,))

    async def item(self, scope: Scope, kind: Kind, number: int) -> int:
        """The item id behind a number of this scope; NotFound when the scope has no such number.

        A number not given yet is looked up after numbering all of the scope's items of the kind, so a
        typed '/forget 3' means the third note even before any list showed it.
        """
        async with self.db.transaction() as tx:
            await self._numbering(tx, scope)
            row = await _item(tx, scope, kind, number)
            if row is None:
                await _number_up_to(tx, scope, kind, None)
                row = await _item(tx, scope, kind, number)
        if row is None:
            raise NotFound(f"{kind} #{number} in scope {scope.id}")
        return int(row[0])


async def _item(tx: Tx, scope: Scope, kind: str, number: int) -> Any:
    return await tx.fetchone("SELECT item_id FROM item_numbers WHERE scope_id = ? AND kind = ? AND number = ?",
                             (scope.id, kind, number))


async def _numbered(tx: Tx, scope: Scope, kind: str, item_ids: list[int]) -> dict[int, int]:
    marks = ", ".join("?" for _ in item_ids)
    rows = await tx.fetchall(f"SELECT item_id, number FROM item_numbers WHERE scope_id = ? AND kind = ?"
                             f" AND item_id IN ({marks})", (scope.id, kind, *item_ids))
    return {int(r[0]): int(r[1]) for r in rows}


async def _number_up_to(tx: Tx, scope: Scope, kind: str, newest: int | None) -> None:
    """Number, oldest first, every item of the kind in the scope (up to `newest`) that has no number yet."""
    table = TABLES[kind]
    rows = await tx.fetchall(
        f"SELECT id FROM {table} WHERE scope_id = ? AND (? IS NULL OR id <= ?) AND id NOT IN"
        " (SELECT item_id FROM item_numbers WHERE scope_id = ? AND kind = ?) ORDER BY id",
        (scope.id, newest, newest, scope.id, kind))
    if not rows:
        return
    counter = await tx.fetchone("SELECT last FROM item_number_counters WHERE scope_id = ? AND kind = ?",
                                (scope.id, kind))
    last = int(counter[0]) if counter else 0
    await tx.executemany("INSERT INTO item_numbers(scope_id, kind, number, item_id) VALUES (?, ?, ?, ?)",
                         [(scope.id, kind, last + n, int(row[0])) for n, row in enumerate(rows, start=1)])
    await tx.execute("INSERT INTO item_number_counters(scope_id, kind, last) VALUES (?, ?, ?)"
                     " ON CONFLICT(scope_id, kind) DO UPDATE SET last = excluded.last",
                     (scope.id, kind, last + len(rows)))
