"""/healthz: whether the database answers, which channels run, whether the scheduler runs, whether Matrix can read
what is sent to it."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memory import MemoryStore
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
    if crypto is not None:
        body["matrix_crypto"] = crypto
    return (200 if database else 503), body
