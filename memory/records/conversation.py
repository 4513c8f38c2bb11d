"""Per-scope conversation state: the rolling summary and the extraction cursor."""
from __future__ import annotations

import time
from dataclasses import dataclass

from memory.ledgers import audit
from memory.models import Scope
from memory.storage.db import Database


@dataclass(frozen=True)
class ConversationState:
    """What has been summarized and extracted so far (message ids, inclusive)."""

    summary: str = ""
    summary_upto: int = 0
    extracted_upto: int = 0


class Conversations:
    """Read and advance the summary and the extraction cursor of a scope."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, scope: Scope) -> ConversationState:
        """The state, empty for a new scope."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(
                "SELECT summary, summary_upto, extracted_upto FROM conversation_state WHERE scope_id = ?", (scope.id,)
            )
        return ConversationState(*row) if row else ConversationState()

    async def set_summary(self, scope: Scope, summary: str, upto: int, *, if_present: bool = False) -> bool:
        """Store a new summary that covers messages up to id `upto`; with if_present, only while that message is still
        there (a learning run's write: False, and nothing written, when it was erased meanwhile)."""
        return await self._upsert(scope, "summary = excluded.summary, summary_upto = excluded.summary_upto",
                                  summary=summary, summary_upto=upto, if_present=if_present)

    async def rewrite_summary(
        self, scope: Scope, summary: str, *, processing: str, reason: str = "", final: bool = False,
    ) -> None:
        """Replace the summary's text (what it covers stays), audited; `final` keeps no trace of the old text."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT summary FROM conversation_state WHERE scope_id = ?", (scope.id,))
            if row is None:
                return
            await tx.execute("UPDATE conversation_state SET summary = ?, updated_at = ? WHERE scope_id = ?",
                             (summary, time.time(), scope.id))
            if final:
                await audit.record(tx, scope.id, processing, audit.ERASE, "summary", scope.id, reason=reason)
            else:
                await audit.record(tx, scope.id, processing, "update", "summary", scope.id, before={"summary": row[0]},
                                   after={"summary": summary}, reason=reason)

    async def set_extracted(self, scope: Scope, upto: int, *, if_present: bool = False) -> bool:
        """Advance the extraction cursor (never backwards); with if_present, only while message `upto` is there."""
        return await self._upsert(
            scope, "extracted_upto = max(conversation_state.extracted_upto, excluded.extracted_upto)",
            extracted_upto=upto, if_present=if_present)

    async def _upsert(self, scope: Scope, update: str, *, summary: str = "", summary_upto: int = 0,
                      extracted_upto: int = 0, if_present: bool = False) -> bool:
        async with self.db.transaction() as tx:
            # checked in the write's own transaction: the learning lock keeps a run and an erasure apart, and this
            # holds when a stalled worker lost the lock to one
            if if_present and not await tx.fetchone("SELECT 1 FROM messages WHERE id = ? AND scope_id = ?",
                                                    (max(summary_upto, extracted_upto), scope.id)):
                return False
            await tx.execute(
                "INSERT INTO conversation_state(scope_id, summary, summary_upto, extracted_upto, updated_at)"
                " VALUES (?, ?, ?, ?, ?)"
                f" ON CONFLICT(scope_id) DO UPDATE SET {update}, updated_at = excluded.updated_at",
                (scope.id, summary, summary_upto, extracted_upto, time.time()),
            )
        return True
