"""/healthz: whether the database answers, which channels run, whether the scheduler runs (and, where several workers
share the database, which worker holds its lease until when), whether Matrix can read what is sent to it."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from memory import SCHEDULER, MemoryStore
from scheduler.budget import TokenBudget


class Runs(Protocol):
    """Something started and stopped (the scheduler)."""

    @property
    def running(self) -> bool:
        """Whether it runs now."""


@runtime_checkable
class ReportsCrypto(Protocol):
    """A channel with end-to-end encryption (Matrix) that says how its keys are."""

    def crypto_report(self) -> Mapping[str, Any]:
        """'ok' (bool), 'undecryptable_since_start' and, when not ok, 'problem'."""


@dataclass
class Running:
    """What the operator's endpoints look at: the store, the budget, the scheduler and the channels as they run."""

    store: MemoryStore
    budget: TokenBudget | None = None
    scheduler: Runs | None = None
    channels: Callable[[], Mapping[str, bool]] = field(default=dict)  # channel name -> running
    crypto: ReportsCrypto | None = None  # the Matrix channel, when it runs
    worker: str | None = None  # this worker's name where several may share the database (PostgreSQL); None: SQLite
    clock: Callable[[], float] = time.time


async def health(running: Running) -> tuple[int, dict[str, Any]]:
    """The status code (503 when the database does not answer) and a short JSON body; 'degraded' (still 200: a
    restart would not help) when Matrix cannot read what is sent to it."""
    database = await running.store.db.reachable()
    crypto = dict(running.crypto.crypto_report()) if running.crypto is not None else None
    status = "ok" if crypto is None or crypto["ok"] else "degraded"
    body = {
        "status": status if database else "unavailable",
        "database": database,
        "scheduler": bool(running.scheduler is not None and running.scheduler.running),
        "channels": dict(running.channels()),
    }
    if running.worker is not None:
        body["worker"] = running.worker
        body["scheduler_lease"] = await scheduler_lease(running) if database else None
    if crypto is not None:
        body["matrix_crypto"] = crypto
    return (200 if database else 503), body


async def scheduler_lease(running: Running) -> dict[str, str] | None:
    """Which worker holds the scheduler's lease and until when (UTC, on this worker's clock); None: nobody now."""
    lease = await running.store.leases.current(SCHEDULER, running.clock())
    if lease is None:
        return None
    until = datetime.fromtimestamp(lease.until, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return {"holder": lease.holder, "until": until}
