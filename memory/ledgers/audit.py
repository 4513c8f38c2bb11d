"""The audit log: every memory change is an entry with the item before and after, grouped by processing."""
from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.models import AuditEntry, ts
from memory.storage.db import Database, Tx

# An item rewritten or removed for good (`/forget`, `/people forget`): the entry records that it happened,
# never what the item said, and /undo has nothing to restore from it.
ERASE = "erase"
ERASED: dict[str, Any] = {"erased": True}  # what an erased item's audit entries keep of it (memory.account.erasure)


def new_processing(prefix: str = "p") -> str:
    """A fresh processing id that groups the changes of one extraction, correction or command."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _jsonable(item: Any) -> Any:
    if item is None:
        return None
    is_record = dataclasses.is_dataclass(item) and not isinstance(item, type)
    data = dataclasses.asdict(item) if is_record else dict(item)
    return {k: v.timestamp() if isinstance(v, datetime) else v for k, v in data.items()}


async def record(
    tx: Tx, scope_id: int, processing_id: str, action: str, item_type: str, item_id: int | None,
    before: Any = None, after: Any = None, reason: str = "",
) -> None:
    """Write one audit entry inside the caller's transaction."""
    await record_many(tx, scope_id, processing_id, action, item_type, [(item_id, before, after)], reason)


async def record_many(
    tx: Tx, scope_id: int, processing_id: str, action: str, item_type: str,
    items: Sequence[tuple[int | None, Any, Any]], reason: str = "",
) -> None:
    """Write one audit entry per (item_id, before, after) inside the caller's transaction, in one statement."""
    now = time.time()
    await tx.executemany(
        "INSERT INTO audit_log(scope_id, processing_id, action, item_type, item_id, before, after, reason, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(scope_id, processing_id, action, item_type, item_id, _dumped(before), _dumped(after), reason, now)
         for item_id, before, after in items],
    )


def _dumped(item: Any) -> str | None:
    return json.dumps(_jsonable(item), ensure_ascii=False) if item is not None else None


def entry_from_row(row: Any) -> AuditEntry:
    """Build an AuditEntry from an audit_log row."""
    id_, processing_id, action, item_type, item_id, before, after, reason, created_at = row
    return AuditEntry(
        id=id_, processing_id=processing_id, action=action, item_type=item_type, item_id=item_id,
        before=json.loads(before) if before else None, after=json.loads(after) if after else None,
        reason=reason, created_at=ts(created_at),  # type: ignore[arg-type]
    )


AUDIT_COLUMNS = "id, processing_id, action, item_type, item_id, before, after, reason, created_at"


async def scrub(tx: Tx, scope_id: int, item_types: Sequence[str], clean: Callable[[str], str]) -> int:
    """Pass every text kept in the scope's entries about these item types through `clean`; returns entries changed.

    Final erasure: what an item once said (its text before a change, a reflection's reason) must not
    outlive the forgetting in the audit log either.
    """
    marks = ",".join("?" * len(item_types))
    rows = await tx.fetchall("SELECT id, before, after, reason FROM audit_log WHERE scope_id = ?"
                             f" AND item_type IN ({marks})", (scope_id, *item_types))
    changed = 0
    for id_, before, after, reason in rows:
        new = [_scrubbed(before, clean), _scrubbed(after, clean), clean(reason or "")]
        if new != [before, after, reason or ""]:
            await tx.execute("UPDATE audit_log SET before = ?, after = ?, reason = ? WHERE id = ?", (*new, id_))
            changed += 1
    return changed


def _scrubbed(stored: str | None, clean: Callable[[str], str]) -> str | None:
    """A stored JSON document with every string in it cleaned (unchanged text when nothing changes)."""
    if stored is None:
        return None
    data = json.loads(stored)
    cleaned = _walk(data, clean)
    return stored if cleaned == data else json.dumps(cleaned, ensure_ascii=False)


def _walk(value: Any, clean: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [_walk(v, clean) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, clean) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Processing:
    """One processing as the change log shows it: its entries (newest first) and whether it may still be undone.

    `state`: 'open' (entries standing: it may be undone), 'undone' (taken back), 'final' (its items were
    forgotten for good: nothing to restore), 'undo' (it is itself the undoing of another processing).
    """

    id: str
    entries: tuple[AuditEntry, ...]
    state: str

    @property
    def created_at(self) -> datetime:
        """When its newest change was made."""
        return self.entries[0].created_at


def _erased(entry: AuditEntry) -> bool:
    return entry.action == ERASE or entry.before == ERASED or entry.after == ERASED


def _processing(processing_id: str, rows: Sequence[Any]) -> Processing:
    """A processing from its audit_log rows (AUDIT_COLUMNS and undone_at), newest first."""
    entries = tuple(entry_from_row(r[:-1]) for r in rows)
    standing = [e for e, r in zip(entries, rows) if r[-1] is None and not _erased(e)]
    if processing_id.startswith("undo-"):
        state = "undo"
    elif standing:
        state = "open"
    else:
        state = "final" if any(_erased(e) for e in entries) else "undone"
    return Processing(processing_id, entries, state)


async def processings(db: Database, scope_id: int, limit: int = 20, offset: int = 0) -> list[Processing]:
    """The scope's processings, newest first, each with all its entries."""
    async with db.reading() as tx:
        ids = [r[0] for r in await tx.fetchall(
            "SELECT processing_id FROM audit_log WHERE scope_id = ? GROUP BY processing_id ORDER BY max(id) DESC"
            " LIMIT ? OFFSET ?", (scope_id, limit, offset))]
        found = [(pid, await tx.fetchall(f"SELECT {AUDIT_COLUMNS}, undone_at FROM audit_log WHERE scope_id = ?"
                                         " AND processing_id = ? ORDER BY id DESC", (scope_id, pid)))
                 for pid in ids]
    return [_processing(pid, rows) for pid, rows in found]


async def processing(db: Database, scope_id: int, processing_id: str) -> Processing | None:
    """One processing of the scope (None: the scope has none by this id)."""
    async with db.reading() as tx:
        rows = await tx.fetchall(f"SELECT {AUDIT_COLUMNS}, undone_at FROM audit_log WHERE scope_id = ?"
                                 " AND processing_id = ? ORDER BY id DESC", (scope_id, processing_id))
    return _processing(processing_id, rows) if rows else None
