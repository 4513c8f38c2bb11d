"""What the kinds of remembered text share: a row with its search document, inserted, edited or deleted with it."""
from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from memory.ledgers import audit
from memory.models import Scope, Source
from memory.search.index import SearchIndex
from memory.storage.db import Database, Tx

T = TypeVar("T")


async def insert_indexed(
    tx: Tx, index: SearchIndex, scope: Scope, table: str, source: Source, values: dict[str, Any],
    text: str, vector: Any, now: float, processing: str, reason: str,
) -> int:
    """Insert a row, index its text, link the document, and audit the creation; all in tx."""
    cols = ", ".join(["scope_id", *values])
    marks = ", ".join("?" * (len(values) + 1))
    item_id = await tx.execute(f"INSERT INTO {table}({cols}) VALUES ({marks})", (scope.id, *values.values()))
    doc_id = await index.add(tx, scope.id, source, item_id, text, vector, now)
    await tx.execute(f"UPDATE {table} SET doc_id = ? WHERE id = ?", (doc_id, item_id))
    await audit.record(tx, scope.id, processing, "create", source, item_id, after={"id": item_id, **values},
                       reason=reason)
    return item_id


class IndexedTexts(Generic[T]):
    """A table of texts the companion wrote, each with a search document: listed, edited, deleted by an edit."""

    table: ClassVar[str]
    source: ClassVar[Source]
    columns: ClassVar[str]  # what `make` turns into an item, in this order
    latest_count: ClassVar[int]

    def __init__(self, db: Database, index: SearchIndex) -> None:
        self.db, self.index = db, index

    async def insert(self, scope: Scope, text: str, values: dict[str, Any], now: float, processing: str,
                     reason: str) -> int:
        """Store and index one item (its row holds `values`), audited; its id."""
        vector = (await self.index.embed([text]))[0]
        async with self.db.transaction() as tx:
            return await insert_indexed(tx, self.index, scope, self.table, self.source, values, text, vector, now,
                                        processing, reason)

    def make(self, row: Any) -> T:
        """The item of a row of `columns`."""
        raise NotImplementedError

    async def edit(
        self, scope: Scope, item_id: int, text: str, *, processing: str | None = None, reason: str = "",
        final: bool = False,
    ) -> T | None:
        """Change an item's text (re-indexed, audited); an empty text deletes it (None).

        final: an erasure, whose audit entry says the item was rewritten, never what it said before
        (so /undo cannot bring it back).
        """
        text = text.strip()
        vector = (await self.index.embed([text]))[0] if text else None
        processing = processing or audit.new_processing("edit")
        async with self.db.transaction() as tx:
            row = await tx.scoped_row(self.table, f"{self.columns}, doc_id", scope.id, item_id,
                                      f"{self.source} {item_id}")
            before, doc_id = self.make(row[:-1]), row[-1]
            after = None
            if vector is not None:
                await tx.execute(f"UPDATE {self.table} SET text = ? WHERE id = ?", (text, item_id))
                if doc_id is not None:
                    await self.index.update(tx, doc_id, text, vector)
                after = self.make(await tx.fetchone(f"SELECT {self.columns} FROM {self.table} WHERE id = ?",
                                                    (item_id,)))
            else:
                if doc_id is not None:
                    await self.index.remove(tx, doc_id)
                await tx.execute(f"DELETE FROM {self.table} WHERE id = ?", (item_id,))
            if final:
                await audit.record(tx, scope.id, processing, audit.ERASE, self.source, item_id, reason=reason)
            else:
                await audit.record(tx, scope.id, processing, "update" if text else "delete", self.source, item_id,
                                   before=before, after=after, reason=reason)
        return after

    async def all(self, scope: Scope) -> list[T]:
        """Every item of the scope, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {self.columns} FROM {self.table} WHERE scope_id = ? ORDER BY id",
                                     (scope.id,))
        return [self.make(r) for r in rows]

    async def latest(self, scope: Scope, limit: int | None = None, offset: int = 0) -> list[T]:
        """The newest items, newest first (skipping the `offset` newest)."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {self.columns} FROM {self.table} WHERE scope_id = ?"
                                     " ORDER BY id DESC LIMIT ? OFFSET ?",
                                     (scope.id, limit or self.latest_count, offset))
        return [self.make(r) for r in rows]
