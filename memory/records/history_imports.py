"""Imported histories and their review queue: which file was read how far, and the candidates waiting for a yes.

An import is one row per file (by content hash) and scope, with a cursor of the conversations done; the
candidates it found are stored together with the cursor, so an interrupted import goes on where it stopped
and never queues a conversation twice. Nothing here is a memory: a candidate becomes one only when the person
approves it (bot/history/approval.py), under the import's one processing id, so /undo takes the import back.
"""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from memory.errors import NotFound
from memory.ledgers import audit
from memory.models import AuditEntry, Scope, ts
from memory.search.search_text import content_hash, normalize
from memory.storage.db import Database

CandidateKind = Literal["fact", "profile", "person"]
Status = Literal["pending", "approved", "rejected", "undone"]

_IMPORT_COLUMNS = ("id, file_hash, source, name, options, processing_id, started_at, finished_at, undone_at,"
                   " conversations_done, last_key, messages_read, candidates, calls, failed_batches")
_CANDIDATE_COLUMNS = ("c.id, c.import_id, c.kind, c.text, c.data, c.quote, c.said_at, c.conversation_key,"
                      " c.conversation_title, c.status, c.duplicate_of, c.contradicts, c.stored_id, i.source")


@dataclass(frozen=True)
class HistoryImport:
    """One file being imported (or imported) into a scope, and how far it got."""

    id: int
    file_hash: str
    source: str
    name: str
    options: dict[str, Any]
    processing_id: str  # every change its approvals make is audited under it
    started_at: datetime
    finished_at: datetime | None
    undone_at: datetime | None
    conversations_done: int  # the cursor: conversations of the file's stream whose candidates are stored
    last_key: str
    messages_read: int
    candidates: int
    calls: int
    failed_batches: int


@dataclass(frozen=True)
class NewCandidate:
    """Something the background model found in an imported conversation, before it is queued."""

    kind: CandidateKind
    text: str  # what the person reads in /review
    said_at: float  # when the person said it (the original time)
    conversation_key: str
    conversation_title: str = ""
    quote: str = ""  # the person's own words it came from
    data: dict[str, Any] = field(default_factory=dict)  # profile: category/key/value; person: the draft
    duplicate_of: int | None = None  # a note that already says this
    contradicts: int | None = None  # a note it contradicts


@dataclass(frozen=True)
class Candidate:
    """A queued candidate, with its marks and, once approved, the id of what it became."""

    id: int
    import_id: int
    kind: CandidateKind
    text: str
    data: dict[str, Any]
    quote: str
    said_at: datetime
    conversation_key: str
    conversation_title: str
    status: Status
    duplicate_of: int | None
    contradicts: int | None
    stored_id: int | None
    source: str  # "chatgpt", "claude", "telegram"


def _import(row: Any) -> HistoryImport:
    (id_, file_hash, source, name, options, processing, started, finished, undone, done, last_key, messages,
     candidates, calls, failed) = row
    return HistoryImport(int(id_), file_hash, source, name, json.loads(options), processing,
                         ts(started), ts(finished), ts(undone), done, last_key,  # type: ignore[arg-type]
                         messages, candidates, calls, failed)


def _candidate(row: Any) -> Candidate:
    (id_, import_id, kind, text, data, quote, said_at, key, title, status, duplicate, contradicts, stored,
     source) = row
    return Candidate(int(id_), import_id, kind, text, json.loads(data), quote, ts(said_at),  # type: ignore[arg-type]
                     key, title, status, duplicate, contradicts, stored, source)


class HistoryImports:
    """Start, advance, finish and undo imports; queue, list and decide their candidates."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def find(self, scope: Scope, file_hash: str) -> HistoryImport | None:
        """The scope's import of this file that was not undone, if any (the newest)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(f"SELECT {_IMPORT_COLUMNS} FROM history_imports WHERE scope_id = ?"
                                    " AND file_hash = ? AND undone_at IS NULL ORDER BY id DESC LIMIT 1",
                                    (scope.id, file_hash))
        return _import(row) if row else None

    async def get(self, scope: Scope, import_id: int) -> HistoryImport:
        """One import of the scope, or NotFound."""
        async with self.db.reading() as tx:
            row = await tx.scoped_row("history_imports", _IMPORT_COLUMNS, scope.id, import_id, f"import {import_id}")
        return _import(row)

    async def start(self, scope: Scope, file_hash: str, source: str, name: str, options: dict[str, Any],
                    now: float | None = None) -> HistoryImport:
        """Record a new import with its own processing id; its audit entry lets /undo take the whole import back."""
        now = time.time() if now is None else now
        processing = audit.new_processing("import")
        async with self.db.transaction() as tx:
            import_id = await tx.execute(
                "INSERT INTO history_imports(scope_id, file_hash, source, name, options, processing_id, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (scope.id, file_hash, source, name, json.dumps(options, sort_keys=True), processing, now))
            await audit.record(tx, scope.id, processing, "create", "import", import_id,
                               after={"name": name, "source": source}, reason="import-history")
        return await self.get(scope, import_id)

    async def advance(self, scope: Scope, import_id: int, found: Sequence[NewCandidate], *, conversations: int,
                      last_key: str, messages: int, calls: int, failed: int = 0, now: float | None = None) -> int:
        """Queue the candidates of the conversations just read and move the cursor past them, in one transaction.

        A candidate whose text is already queued or approved in the scope is left out. Returns how many were queued.
        """
        now = time.time() if now is None else now
        queued = 0
        async with self.db.transaction() as tx:
            for c in found:
                norm = content_hash(normalize(c.text))
                if await tx.fetchone("SELECT 1 FROM review_candidates WHERE scope_id = ? AND norm_hash = ?"
                                     " AND status IN ('pending', 'approved')", (scope.id, norm)):
                    continue
                await tx.execute(
                    "INSERT INTO review_candidates(scope_id, import_id, kind, text, data, quote, said_at,"
                    " conversation_key, conversation_title, norm_hash, duplicate_of, contradicts, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (scope.id, import_id, c.kind, c.text, json.dumps(c.data, ensure_ascii=False), c.quote,
                     c.said_at, c.conversation_key, c.conversation_title, norm, c.duplicate_of, c.contradicts, now))
                queued += 1
            await tx.execute(
                "UPDATE history_imports SET conversations_done = conversations_done + ?, last_key = ?,"
                " messages_read = messages_read + ?, candidates = candidates + ?, calls = calls + ?,"
                " failed_batches = failed_batches + ? WHERE id = ? AND scope_id = ?",
                (conversations, last_key, messages, queued, calls, failed, import_id, scope.id))
        return queued

    async def finish(self, scope: Scope, import_id: int, now: float | None = None) -> HistoryImport:
        """Mark an import as read to the end."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE history_imports SET finished_at = ? WHERE id = ? AND scope_id = ?",
                             (time.time() if now is None else now, import_id, scope.id))
        return await self.get(scope, import_id)

    async def revert(self, scope: Scope, entry: AuditEntry) -> None:
        """Undo of an import's start: the import counts as undone and its candidates leave the queue."""
        now = time.time()
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE history_imports SET undone_at = ? WHERE id = ? AND scope_id = ?",
                             (now, entry.item_id, scope.id))
            await tx.execute("UPDATE review_candidates SET status = 'undone', decided_at = ? WHERE import_id = ?"
                             " AND scope_id = ? AND status IN ('pending', 'approved')", (now, entry.item_id, scope.id))

    # --- the review queue ---------------------------------------------------------------------------------

    async def candidate(self, scope: Scope, candidate_id: int) -> Candidate:
        """One candidate of the scope, or NotFound (another scope's id finds nothing)."""
        rows = await self._candidates(tx_sql="c.scope_id = ? AND c.id = ?", args=(scope.id, candidate_id))
        if not rows:
            raise NotFound(f"candidate {candidate_id} in scope {scope.id}")
        return rows[0]

    async def pending_count(self, scope: Scope) -> int:
        """How many candidates wait for a decision."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT count(*) FROM review_candidates WHERE scope_id = ? AND status = 'pending'",
                                    (scope.id,))
        return int(row[0])

    async def next_group(self, scope: Scope, limit: int) -> list[Candidate]:
        """The oldest pending candidates of one conversation (the one of the oldest pending candidate)."""
        async with self.db.reading() as tx:
            first = await tx.fetchone("SELECT import_id, conversation_key FROM review_candidates WHERE scope_id = ?"
                                      " AND status = 'pending' ORDER BY id LIMIT 1", (scope.id,))
        if first is None:
            return []
        return await self.group(scope, int(first[0]), first[1], limit)

    async def group(self, scope: Scope, import_id: int, key: str, limit: int = 1000) -> list[Candidate]:
        """The pending candidates of one imported conversation, oldest first."""
        return await self._candidates("c.scope_id = ? AND c.import_id = ? AND c.conversation_key = ?"
                                      " AND c.status = 'pending'", (scope.id, import_id, key), limit)

    async def decide(self, scope: Scope, candidate_id: int, status: Status, stored_id: int | None = None,
                     now: float | None = None) -> bool:
        """Set a pending candidate's decision; False when it was decided already (a stale button)."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE review_candidates SET status = ?, stored_id = ?, decided_at = ?"
                             " WHERE id = ? AND scope_id = ? AND status = 'pending'",
                             (status, stored_id, time.time() if now is None else now, candidate_id, scope.id))
            return await tx.changes() == 1

    async def settle(self, scope: Scope, candidate_id: int, status: Status, stored_id: int | None) -> None:
        """Record what a claimed candidate became (or put it back: status 'pending' after a failure)."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE review_candidates SET status = ?, stored_id = ? WHERE id = ? AND scope_id = ?",
                             (status, stored_id, candidate_id, scope.id))

    async def provenance(self, scope: Scope, note_ids: Sequence[int]) -> dict[int, Candidate]:
        """Note id -> the approved candidate it came from, for the notes that were imported."""
        if not note_ids:
            return {}
        marks = ", ".join("?" for _ in note_ids)
        found = await self._candidates(f"c.scope_id = ? AND c.kind = 'fact' AND c.status = 'approved'"
                                       f" AND c.stored_id IN ({marks})", (scope.id, *note_ids))
        return {c.stored_id: c for c in found if c.stored_id is not None}

    async def _candidates(self, tx_sql: str, args: tuple[Any, ...], limit: int = 1000) -> list[Candidate]:
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_CANDIDATE_COLUMNS} FROM review_candidates c JOIN history_imports i"
                                     f" ON i.id = c.import_id WHERE {tx_sql} ORDER BY c.id LIMIT ?", (*args, limit))
        return [_candidate(r) for r in rows]

