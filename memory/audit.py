"""The audit log: every memory change is an entry with the item before and after, grouped by processing."""
from __future__ import annotations

import dataclasses
import json
import time
import uuid
from datetime import datetime
from typing import Any

from memory.db import Tx
from memory.models import AuditEntry, ts


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
    await tx.execute(
        "INSERT INTO audit_log(scope_id, processing_id, action, item_type, item_id, before, after, reason, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            scope_id, processing_id, action, item_type, item_id,
            json.dumps(_jsonable(before), ensure_ascii=False) if before is not None else None,
            json.dumps(_jsonable(after), ensure_ascii=False) if after is not None else None,
            reason, time.time(),
        ),
    )


def entry_from_row(row: Any) -> AuditEntry:
    """Build an AuditEntry from an audit_log row."""
    id_, processing_id, action, item_type, item_id, before, after, reason, created_at = row
    return AuditEntry(
        id=id_, processing_id=processing_id, action=action, item_type=item_type, item_id=item_id,
        before=json.loads(before) if before else None, after=json.loads(after) if after else None,
        reason=reason, created_at=ts(created_at),  # type: ignore[arg-type]
    )


AUDIT_COLUMNS = "id, processing_id, action, item_type, item_id, before, after, reason, created_at"
