"""The companion's diary: one entry a night, never deduplicated."""
from __future__ import annotations

import time
from typing import Any

from memory.ledgers import audit
from memory.models import DiaryEntry, Scope, ts
from memory.search.indexed_texts import IndexedTexts


class Diary(IndexedTexts[DiaryEntry]):
    """The companion's diary; entries are never deduplicated."""

    table, source, columns, latest_count = "diary_entries", "diary", "id, day, text, created_at", 1

    def make(self, row: Any) -> DiaryEntry:
        """The entry of a row."""
        return DiaryEntry(row[0], row[1], row[2], ts(row[3]))  # type: ignore[arg-type]

    async def add(
        self, scope: Scope, day: str, text: str, *, processing: str | None = None, created_at: float | None = None,
    ) -> DiaryEntry:
        """Store and index one entry."""
        now = time.time() if created_at is None else created_at
        item_id = await self.insert(scope, text, {"day": day, "text": text, "created_at": now}, now,
                                    processing or audit.new_processing("diary"), "diary")
        return DiaryEntry(item_id, day, text, ts(now))  # type: ignore[arg-type]

    async def count(self, scope: Scope) -> int:
        """How many entries exist."""
        async with self.db.reading() as tx:
            return int((await tx.fetchone("SELECT count(*) FROM diary_entries WHERE scope_id = ?", (scope.id,)))[0])
