"""Notes: facts about the user and the content of conversations, deduplicated and searchable."""
from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.account import erasure
from memory.ledgers import audit
from memory.models import Note, NoteWrite, Scope, ts
from memory.search.index import SearchIndex
from memory.search.search_text import content_hash, normalize
from memory.storage.db import Database, Tx

# The kinds of note: what the person said about themselves and their life, and what a conversation was about.
NOTE_KINDS = ("fact", "content")

_COLUMNS = ("id, kind, text, importance, created_at, updated_at, valid_from, valid_to,"
            " superseded_by, source_message_ids, doc_id")


def _note(row: Any) -> Note:
    (id_, kind, text, importance, created, updated, valid_from, valid_to, superseded, sources, _doc) = row
    return Note(
        id=id_, kind=kind, text=text, importance=importance, created_at=ts(created),  # type: ignore[arg-type]
        updated_at=ts(updated), valid_from=ts(valid_from), valid_to=ts(valid_to),  # type: ignore[arg-type]
        superseded_by=superseded, source_message_ids=tuple(json.loads(sources)),
    )


@dataclass(frozen=True)
class NewNote:
    """A note to store in bulk."""

    text: str
    kind: str = "fact"
    importance: int = 5
    source_message_ids: tuple[int, ...] = ()
    created_at: float | None = None  # now, when not given
    valid_from: float | None = None
    entered_at: float | None = None  # when it entered the memory, if later than created_at (an imported note)


@dataclass(frozen=True)
class NoteFilter:
    """Which live notes to list: of a kind, about a person, created in [since, until), among given ids."""

    kind: str | None = None
    person_id: int | None = None
    since: float | None = None
    until: float | None = None
    ids: tuple[int, ...] | None = None  # only these (the hits of a search); None: any

    def where(self, scope: Scope) -> tuple[str, list[Any]]:
        """The SQL condition and its arguments."""
        sql = "scope_id = ? AND valid_to IS NULL"
        args: list[Any] = [scope.id]
        for column, value in (("kind = ?", self.kind), ("person_id = ?", self.person_id),
                              ("created_at >= ?", self.since), ("created_at < ?", self.until)):
            if value is not None:
                sql += f" AND {column}"
                args.append(value)
        if self.ids is not None:
            sql += f" AND id IN ({','.join('?' * len(self.ids))})" if self.ids else " AND 1 = 0"
            args.extend(self.ids)
        return sql, args


class Notes:
    """Store, edit, close and delete notes; each change moves row, vector and full text together."""

    def __init__(self, db: Database, index: SearchIndex, semantic_threshold: float = 0.82) -> None:
        self.db = db
        self.index = index
        self.semantic_threshold = semantic_threshold

    async def add(
        self, scope: Scope, text: str, *, kind: str = "fact", importance: int = 5,
        source_message_ids: Sequence[int] = (), created_at: float | None = None,
        valid_from: float | None = None, dedupe: bool = True, processing: str | None = None,
        reason: str = "", entered_at: float | None = None,
    ) -> NoteWrite:
        """Store a note unless the scope already holds the same (exact) or nearly the same (semantic) one.

        entered_at: when it entered the memory, where that is later than created_at (a note approved from a
        history import): its ranking and fading count from then.
        """
        text = text.strip()
        norm = content_hash(normalize(text))
        if dedupe:
            async with self.db.reading() as tx:
                row = await tx.fetchone(
                    f"SELECT {_COLUMNS} FROM notes WHERE scope_id = ? AND kind = ? AND norm_hash = ?"
                    " AND valid_to IS NULL", (scope.id, kind, norm),
                )
            if row:
                return NoteWrite(_note(row), created=False, duplicate="exact")
        vector = (await self.index.embed([text]))[0]
        if dedupe:
            for _doc, item_id, cosine in await self.index.nearest(scope.id, vector, "note", k=3):
                if cosine >= self.semantic_threshold:
                    existing = await self.get(scope, item_id)
                    if existing.kind == kind:
                        return NoteWrite(existing, created=False, duplicate="semantic")
        item = NewNote(text, kind, importance, tuple(source_message_ids), created_at, valid_from, entered_at)
        async with self.db.transaction() as tx:
            note = await self._insert(tx, scope, item, vector, processing or audit.new_processing("note"), reason)
        return NoteWrite(note, created=True)

    async def add_many(
        self, scope: Scope, items: Sequence[NewNote], *, processing: str | None = None, reason: str = "",
    ) -> list[Note]:
        """Store many notes without dedupe, with one batched embedding and one transaction."""
        items = [dataclasses.replace(item, text=item.text.strip()) for item in items]
        vectors = await self.index.embed([item.text for item in items])
        processing = processing or audit.new_processing("note")
        async with self.db.transaction() as tx:
            written = [await self._write(tx, scope, item, vector, second=False) for item, vector in zip(items, vectors)]
            await self.index.add_second(tx, [(doc, note.text) for note, doc in written])
            # One statement for all rows where the rows' own ids are not needed back: an import of thousands of
            # notes spends its time on round trips to the database, most of all on PostgreSQL.
            await tx.executemany("UPDATE notes SET doc_id = ? WHERE id = ?", [(doc, n.id) for n, doc in written])
            await audit.record_many(tx, scope.id, processing, "create", "note",
                                    [(n.id, None, n) for n, _doc in written], reason)
        return [note for note, _doc in written]

    async def _insert(self, tx: Tx, scope: Scope, item: NewNote, vector: np.ndarray, processing: str,
                      reason: str) -> Note:
        """Write a note row and its index entry, and audit the creation; all in tx."""
        note, doc_id = await self._write(tx, scope, item, vector)
        await tx.execute("UPDATE notes SET doc_id = ? WHERE id = ?", (doc_id, note.id))
        await audit.record(tx, scope.id, processing, "create", "note", note.id, after=note, reason=reason)
        return note

    async def _write(self, tx: Tx, scope: Scope, item: NewNote, vector: np.ndarray,
                     second: bool = True) -> tuple[Note, int]:
        """Write a note row (its doc_id still to set) and its index entry in tx; the note as stored, its doc id.
        second: False where the caller stores the batch's USE vectors itself (`SearchIndex.add_second`)."""
        importance = _clamp(item.importance)
        created = time.time() if item.created_at is None else item.created_at
        sources = json.dumps(list(item.source_message_ids))
        note_id = await tx.execute(
            "INSERT INTO notes(scope_id, kind, text, importance, created_at, updated_at, valid_from,"
            " source_message_ids, norm_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (scope.id, item.kind, item.text, importance, created, created, item.valid_from,
             sources, content_hash(normalize(item.text))),
        )
        doc_id = await self.index.add(tx, scope.id, "note", note_id, item.text, vector, created, importance,
                                      item.entered_at, second=second)
        row = (note_id, item.kind, item.text, importance, created, created, item.valid_from, None, None, sources,
               doc_id)
        return _note(row), doc_id

    async def get(self, scope: Scope, note_id: int) -> Note:
        """One note of this scope, or NotFound."""
        async with self.db.reading() as tx:
            row = await tx.scoped_row("notes", _COLUMNS, scope.id, note_id, f"note {note_id}")
        return _note(row)

    async def list(
        self, scope: Scope, kind: str | None = None, *, include_closed: bool = False,
        limit: int = 50, offset: int = 0,
    ) -> list[Note]:
        """Notes of the scope, newest first."""
        sql = f"SELECT {_COLUMNS} FROM notes WHERE scope_id = ?"
        args: list[Any] = [scope.id]
        if kind:
            sql += " AND kind = ?"
            args.append(kind)
        if not include_closed:
            sql += " AND valid_to IS NULL"
        sql += " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
        async with self.db.reading() as tx:
            return [_note(r) for r in await tx.fetchall(sql, (*args, limit, offset))]

    async def count(self, scope: Scope, *, include_closed: bool = False) -> int:
        """How many notes the scope holds."""
        sql = "SELECT count(*) FROM notes WHERE scope_id = ?" + ("" if include_closed else " AND valid_to IS NULL")
        async with self.db.reading() as tx:
            return int((await tx.fetchone(sql, (scope.id,)))[0])

    async def find(self, scope: Scope, which: NoteFilter, *, limit: int = 50, offset: int = 0) -> Sequence[Note]:
        """The live notes `which` names, newest first."""
        sql, args = which.where(scope)
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLUMNS} FROM notes WHERE {sql}"
                                     " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?", (*args, limit, offset))
        return [_note(r) for r in rows]

    async def count_found(self, scope: Scope, which: NoteFilter) -> int:
        """How many live notes `which` names."""
        sql, args = which.where(scope)
        async with self.db.reading() as tx:
            return int((await tx.fetchone(f"SELECT count(*) FROM notes WHERE {sql}", args))[0])

    async def edit(
        self, scope: Scope, note_id: int, text: str, *, importance: int | None = None,
        processing: str | None = None, reason: str = "",
    ) -> Note:
        """Change a note's text and optionally its importance; row, vector and full text change in one transaction
        (NotFound when the note is not the scope's, or went meanwhile)."""
        await self.get(scope, note_id)  # NotFound before embedding anything
        text = text.strip()
        vector = (await self.index.embed([text]))[0]
        processing = processing or audit.new_processing("edit")
        imp = _clamp(importance) if importance is not None else None
        async with self.db.transaction() as tx:
            before = _note(await tx.scoped_row("notes", _COLUMNS, scope.id, note_id, f"note {note_id}"))
            await tx.execute(
                "UPDATE notes SET text = ?, norm_hash = ?, importance = COALESCE(?, importance), updated_at = ?"
                " WHERE id = ? AND scope_id = ?",
                (text, content_hash(normalize(text)), imp, time.time(), note_id, scope.id),
            )
            row = await tx.fetchone(f"SELECT {_COLUMNS} FROM notes WHERE id = ?", (note_id,))
            if row[-1] is not None:
                await self.index.update(tx, row[-1], text, vector, imp)
            after = _note(row)
            await audit.record(tx, scope.id, processing, "update", "note", note_id, before, after, reason)
        return after

    async def close(
        self, scope: Scope, note_id: int, *, superseded_by: int | None = None,
        processing: str | None = None, reason: str = "", at: float | None = None,
    ) -> Note:
        """End a note's validity (kept for history, gone from search)."""
        before = await self.get(scope, note_id)
        processing = processing or audit.new_processing("close")
        async with self.db.transaction() as tx:
            await self.index.remove_doc_of(tx, "notes", note_id)
            await tx.execute(
                "UPDATE notes SET valid_to = ?, superseded_by = ?, doc_id = NULL, updated_at = ? WHERE id = ?",
                (time.time() if at is None else at, superseded_by, time.time(), note_id),
            )
            after = _note(await tx.fetchone(f"SELECT {_COLUMNS} FROM notes WHERE id = ?", (note_id,)))
            await audit.record(tx, scope.id, processing, "close", "note", note_id, before, after, reason)
        return after

    async def delete(self, scope: Scope, note_id: int, *, processing: str | None = None, reason: str = "") -> Note:
        """Delete a note with its vector and full-text entries, in one transaction."""
        before = await self.get(scope, note_id)
        processing = processing or audit.new_processing("forget")
        async with self.db.transaction() as tx:
            await self.index.remove_doc_of(tx, "notes", note_id)
            await tx.execute("UPDATE notes SET superseded_by = NULL WHERE superseded_by = ?", (note_id,))
            await tx.execute("DELETE FROM notes WHERE id = ? AND scope_id = ?", (note_id, scope.id))
            await audit.record(tx, scope.id, processing, "delete", "note", note_id, before=before, reason=reason)
        return before

    async def erase(self, scope: Scope, note_id: int, *, reason: str = "/forget") -> Note:
        """Delete a note for good (/forget): no byte of its text stays in the data folder, and /undo cannot
        bring it back; its audit entries keep only that it was there (`memory.account.erasure`).
        """
        before = await self.get(scope, note_id)
        async with self.db.transaction() as tx:
            await erasure.erase_note(tx, scope.id, note_id)
            await erasure.record(tx, scope.id, [("note", note_id)], reason)
        await erasure.settle(self.db)
        return before


def _clamp(importance: int) -> int:
    return max(1, min(10, int(importance)))
