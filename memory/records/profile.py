"""The person's profile: structured facts that always go into the prompt, and facts waiting for their yes."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from memory.ledgers import audit
from memory.models import ProfileEntry, Scope, ts
from memory.search.index import SearchIndex
from memory.search.indexed_texts import insert_indexed
from memory.storage.db import Database

_PENDING_COLS = "id, category, key, value"


class Profile:
    """Structured facts that always go into the prompt."""

    _COLS = "id, category, key, value, importance, updated_at"

    def __init__(self, db: Database, index: SearchIndex) -> None:
        self.db, self.index = db, index

    async def set(
        self, scope: Scope, category: str, key: str, value: str, *, importance: int = 5,
        processing: str | None = None, reason: str = "",
    ) -> ProfileEntry:
        """Create or replace the entry category/key."""
        text = f"{key}: {value}"
        vector = (await self.index.embed([text]))[0]
        processing = processing or audit.new_processing("profile")
        now = time.time()
        async with self.db.transaction() as tx:
            old = await tx.fetchone(
                f"SELECT {self._COLS}, doc_id FROM profile_entries WHERE scope_id = ? AND category = ? AND key = ?",
                (scope.id, category, key),
            )
            if old is None:
                values = {"category": category, "key": key, "value": value, "importance": importance,
                          "created_at": now, "updated_at": now}
                item_id = await insert_indexed(tx, self.index, scope, "profile_entries", "profile", values,
                                               text, vector, now, processing, reason)
            else:
                item_id = old[0]
                await tx.execute("UPDATE profile_entries SET value = ?, importance = ?, updated_at = ? WHERE id = ?",
                                 (value, importance, now, item_id))
                await self.index.update(tx, old[-1], text, vector, importance)
                await audit.record(tx, scope.id, processing, "update", "profile", item_id,
                                   before=_profile(old[:-1]), after={"value": value}, reason=reason)
            row = await tx.fetchone(f"SELECT {self._COLS} FROM profile_entries WHERE id = ?", (item_id,))
        return _profile(row)

    async def list(self, scope: Scope) -> list[ProfileEntry]:
        """All entries, most important and newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {self._COLS} FROM profile_entries WHERE scope_id = ?"
                " ORDER BY importance DESC, updated_at DESC",
                (scope.id,),
            )
        return [_profile(r) for r in rows]

    async def propose(self, scope: Scope, category: str, key: str, value: str) -> PendingProfile:
        """Hold a new profile fact until the user says yes (once per category/key)."""
        now = time.time()
        async with self.db.transaction() as tx:
            same = await tx.fetchone("SELECT id FROM pending_profile WHERE scope_id = ? AND category = ? AND key = ?",
                                     (scope.id, category, key))
            if same:
                await tx.execute("UPDATE pending_profile SET value = ? WHERE id = ?", (value, same[0]))
                return PendingProfile(same[0], category, key, value)
            item_id = await tx.execute(
                "INSERT INTO pending_profile(scope_id, category, key, value, created_at) VALUES (?, ?, ?, ?, ?)",
                (scope.id, category, key, value, now),
            )
        return PendingProfile(item_id, category, key, value)

    async def pending(self, scope: Scope) -> PendingProfile | None:
        """The oldest profile fact waiting for a yes, if any."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(f"SELECT {_PENDING_COLS} FROM pending_profile WHERE scope_id = ?"
                                    " ORDER BY id LIMIT 1", (scope.id,))
        return PendingProfile(*row) if row else None

    async def pending_fact(self, scope: Scope, pending_id: int) -> PendingProfile:
        """One profile fact waiting for a yes, or NotFound."""
        async with self.db.reading() as tx:
            row = await tx.scoped_row("pending_profile", _PENDING_COLS, scope.id, pending_id,
                                      f"pending profile fact {pending_id}")
        return PendingProfile(*row)

    async def is_pending(self, scope: Scope, pending_id: int) -> bool:
        """Whether this profile fact still waits for a yes or no."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT 1 FROM pending_profile WHERE id = ? AND scope_id = ?",
                                    (pending_id, scope.id))
        return row is not None

    async def decide(self, scope: Scope, pending_id: int, accept: bool) -> PendingProfile:
        """Store the pending fact (yes) or drop it (no); NotFound when it is not waiting any more."""
        async with self.db.transaction() as tx:
            row = await tx.scoped_row("pending_profile", _PENDING_COLS, scope.id, pending_id,
                                      f"pending profile fact {pending_id}")
            await tx.execute("DELETE FROM pending_profile WHERE id = ?", (pending_id,))
        fact = PendingProfile(*row)
        if accept:
            await self.set(scope, fact.category, fact.key, fact.value, reason="consent")
        return fact

    async def delete(self, scope: Scope, entry_id: int, *, processing: str | None = None,
                     reason: str = "") -> ProfileEntry:
        """Delete an entry with its index entries."""
        async with self.db.transaction() as tx:
            row = await tx.scoped_row("profile_entries", f"{self._COLS}, doc_id", scope.id, entry_id,
                                      f"profile entry {entry_id}")
            if row[-1] is not None:
                await self.index.remove(tx, row[-1])
            await tx.execute("DELETE FROM profile_entries WHERE id = ?", (entry_id,))
            entry = _profile(row[:-1])
            await audit.record(tx, scope.id, processing or audit.new_processing("forget"), "delete", "profile",
                               entry_id, before=entry, reason=reason)
        return entry


@dataclass(frozen=True)
class PendingProfile:
    """A profile fact waiting for the user's yes."""

    id: int
    category: str
    key: str
    value: str


def _profile(row: Any) -> ProfileEntry:
    return ProfileEntry(row[0], row[1], row[2], row[3], row[4], ts(row[5]))  # type: ignore[arg-type]
