"""Companions: the characters one deployment hosts, each written once and then kept as it is."""
from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.errors import CompanionExists
from memory.models import ts
from memory.storage.db import Database


@dataclass(frozen=True)
class Companion:
    """A companion's fixed character: who it is, how it is tuned, how close it may become."""

    id: str
    name: str
    age: int | None
    template: str
    sliders: Mapping[str, int] = field(default_factory=dict)
    wish: str = ""
    core: str = ""
    created_at: datetime | None = None


_COLS = "id, name, age, template, sliders, wish, core, created_at"


def _companion(row: Any) -> Companion:
    return Companion(row[0], row[1], row[2], row[3], json.loads(row[4] or "{}"), row[5], row[6], ts(row[7]))


class Companions:
    """Create, read and list companions (they belong to the deployment, not to a user)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, companion: Companion) -> Companion:
        """Store a new companion; CompanionExists when the id is taken."""
        now = time.time()
        async with self.db.transaction() as tx:
            if await tx.fetchone("SELECT 1 FROM companions WHERE id = ?", (companion.id,)):
                raise CompanionExists(f"a companion with the id {companion.id!r} already exists")
            await tx.execute(
                f"INSERT INTO companions({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (companion.id, companion.name, companion.age, companion.template,
                 json.dumps(dict(companion.sliders)), companion.wish, companion.core, now),
            )
        stored = await self.get(companion.id)
        assert stored is not None
        return stored

    async def get(self, companion_id: str) -> Companion | None:
        """The companion with this id, or None when the deployment runs on MNEMO_PERSONA alone."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(f"SELECT {_COLS} FROM companions WHERE id = ?", (companion_id,))
        return _companion(row) if row else None

    async def list(self) -> list[Companion]:
        """Every companion, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM companions ORDER BY created_at, id")
        return [_companion(r) for r in rows]
