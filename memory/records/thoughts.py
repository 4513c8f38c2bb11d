"""The companion's thoughts: what it concluded while reflecting or noted in a conversation."""
from __future__ import annotations

import time
from typing import Any

from memory.ledgers import audit
from memory.models import Scope, Thought, ts
from memory.search.indexed_texts import IndexedTexts


class Thoughts(IndexedTexts[Thought]):
    """What the companion concluded while reflecting."""

    table, source, columns, latest_count = "thoughts", "thought", "id, text, origin, created_at", 3

    def make(self, row: Any) -> Thought:
        """The thought of a row."""
        return Thought(row[0], row[1], row[2], ts(row[3]))  # type: ignore[arg-type]

    async def add(
        self, scope: Scope, text: str, *, origin: str = "", processing: str | None = None,
        created_at: float | None = None,
    ) -> Thought:
        """Store and index a thought."""
        now = time.time() if created_at is None else created_at
        item_id = await self.insert(scope, text, {"text": text, "origin": origin, "created_at": now}, now,
                                    processing or audit.new_processing("thought"), origin)
        return Thought(item_id, text, origin, ts(now))  # type: ignore[arg-type]

    async def delete(self, scope: Scope, thought_id: int, *, processing: str | None = None,
                     reason: str = "") -> Thought:
        """Delete a thought with its index entries."""
        async with self.db.transaction() as tx:
            row = await tx.scoped_row("thoughts", f"{self.columns}, doc_id", scope.id, thought_id,
                                      f"thought {thought_id}")
            if row[4] is not None:
                await self.index.remove(tx, row[4])
            await tx.execute("DELETE FROM thoughts WHERE id = ?", (thought_id,))
            thought = self.make(row[:4])
            await audit.record(tx, scope.id, processing or audit.new_processing("forget"), "delete", "thought",
                               thought_id, before=thought, reason=reason)
        return thought
