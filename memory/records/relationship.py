"""The relationship of one companion with one user: stage, four values, mood, notes, intentions, shared history.

This module only stores it; how it may change is decided by `scheduler.relationship`.
"""
from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from memory.ledgers import audit
from memory.models import AuditEntry, Scope
from memory.storage.db import Database, Tx

VALUES = ("familiarity", "trust", "affection", "playfulness")
FIRST_STAGE = "acquaintance"
LIST_FIELDS = ("intentions", "opinions", "rituals", "in_jokes")
EVOLVING_FIELDS = ("opinions", "rituals", "in_jokes")


@dataclass(frozen=True)
class Relationship:
    """How close a companion and a user are; values 0-100, lists of short sentences."""

    stage: str = FIRST_STAGE
    familiarity: int = 0
    trust: int = 10
    affection: int = 10
    playfulness: int = 10
    mood: str = ""
    notes: str = ""
    intentions: tuple[str, ...] = ()
    opinions: tuple[str, ...] = ()
    rituals: tuple[str, ...] = ()
    in_jokes: tuple[str, ...] = ()
    stage_changed_at: float = 0.0
    updated_at: float = 0.0

    def value(self, name: str) -> int:
        """One of the four values by name."""
        if name not in VALUES:
            raise KeyError(name)
        return int(getattr(self, name))


@dataclass(frozen=True)
class Logged:
    """One audited part of a relationship change: the fields before and after, and why."""

    before: Mapping[str, Any]
    after: Mapping[str, Any]
    reason: str
    extra: Mapping[str, Any] = field(default_factory=dict)  # goes into the entry's `after`, e.g. asked/applied


_COLS = ("stage, familiarity, trust, affection, playfulness, mood, notes, intentions, evolving,"
         " stage_changed_at, updated_at")
_FIELD_NAMES = {f.name for f in fields(Relationship)}


def _from_row(row: Any) -> Relationship:
    evolving = json.loads(row[8] or "{}")
    return Relationship(
        stage=row[0], familiarity=int(row[1]), trust=int(row[2]), affection=int(row[3]), playfulness=int(row[4]),
        mood=row[5], notes=row[6], intentions=tuple(json.loads(row[7] or "[]")),
        opinions=tuple(evolving.get("opinions", ())), rituals=tuple(evolving.get("rituals", ())),
        in_jokes=tuple(evolving.get("in_jokes", ())), stage_changed_at=float(row[9]), updated_at=float(row[10]),
    )


def coerce(values: Mapping[str, Any]) -> dict[str, Any]:
    """Turn stored JSON values (lists, numbers) back into Relationship field values; unknown keys are dropped."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in _FIELD_NAMES:
            continue
        if key in LIST_FIELDS:
            out[key] = tuple(str(v) for v in value or ())
        elif key in VALUES:
            out[key] = int(value)
        elif key in ("stage_changed_at", "updated_at"):
            out[key] = float(value)
        else:
            out[key] = str(value)
    return out


async def _upsert(tx: Tx, scope_id: int, r: Relationship) -> None:
    evolving = json.dumps({k: list(getattr(r, k)) for k in EVOLVING_FIELDS}, ensure_ascii=False)
    await tx.execute(
        f"INSERT INTO relationships(scope_id, {_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(scope_id) DO UPDATE SET stage = excluded.stage, familiarity = excluded.familiarity,"
        " trust = excluded.trust, affection = excluded.affection, playfulness = excluded.playfulness,"
        " mood = excluded.mood, notes = excluded.notes, intentions = excluded.intentions,"
        " evolving = excluded.evolving, stage_changed_at = excluded.stage_changed_at, updated_at = excluded.updated_at",
        (scope_id, r.stage, r.familiarity, r.trust, r.affection, r.playfulness, r.mood, r.notes,
         json.dumps(list(r.intentions), ensure_ascii=False), evolving, r.stage_changed_at, r.updated_at),
    )


class Relationships:
    """Read and write the relationship of a scope; every write is audited so /undo can revert it."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, scope: Scope) -> Relationship:
        """The stored relationship, or the first stage dated from when the scope began."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(f"SELECT {_COLS} FROM relationships WHERE scope_id = ?", (scope.id,))
            if row is not None:
                return _from_row(row)
            began = await tx.fetchone("SELECT created_at FROM scopes WHERE id = ?", (scope.id,))
        start = float(began[0]) if began else time.time()
        return Relationship(stage_changed_at=start, updated_at=start)

    async def save(self, scope: Scope, state: Relationship, logged: Sequence[Logged], processing: str) -> None:
        """Store the new state and one audit entry per logged part, in one transaction."""
        async with self.db.transaction() as tx:
            await _upsert(tx, scope.id, state)
            for part in logged:
                await audit.record(tx, scope.id, processing, "update", "relationship", scope.id,
                                   before=dict(part.before), after={**part.after, **part.extra}, reason=part.reason)

    async def restore(
        self, scope: Scope, values: Mapping[str, Any], processing: str, reason: str = "undo",
    ) -> Relationship:
        """Put the given fields back (undo), audited like any change."""
        current = await self.get(scope)
        fields_back = coerce(values)
        restored = replace(current, **fields_back, updated_at=time.time())
        before = {k: _jsonable(getattr(current, k)) for k in fields_back}
        await self.save(scope, restored, [Logged(before, {k: _jsonable(v) for k, v in fields_back.items()}, reason)],
                        processing)
        return restored

    async def rewrite(
        self, scope: Scope, values: Mapping[str, Any], processing: str, reason: str = "", final: bool = False,
    ) -> Relationship:
        """Replace texts (notes, mood, list items) without touching the values; `final` keeps no old text."""
        current = await self.get(scope)
        changed = coerce(values)
        new = replace(current, **changed, updated_at=time.time())
        async with self.db.transaction() as tx:
            await _upsert(tx, scope.id, new)
            if final:
                await audit.record(tx, scope.id, processing, audit.ERASE, "relationship", scope.id,
                                   after={"fields": sorted(changed)}, reason=reason)
            else:
                await audit.record(tx, scope.id, processing, "update", "relationship", scope.id,
                                   before={k: _jsonable(getattr(current, k)) for k in changed},
                                   after={k: _jsonable(v) for k, v in changed.items()}, reason=reason)
        return new

    async def history(self, scope: Scope, limit: int = 5) -> list[AuditEntry]:
        """The newest relationship changes that were not undone, newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {audit.AUDIT_COLUMNS} FROM audit_log WHERE scope_id = ? AND item_type = 'relationship'"
                " AND undone_at IS NULL AND processing_id NOT LIKE 'undo-%' ORDER BY id DESC LIMIT ?",
                (scope.id, limit),
            )
        return [audit.entry_from_row(r) for r in rows]


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
