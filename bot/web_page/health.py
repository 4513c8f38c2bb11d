"""/healthz: whether the database answers, which channels run, whether the scheduler runs."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory import MemoryStore
from scheduler.budget import TokenBudget


class Runs(Protocol):
    """Something started and stopped (the scheduler)."""

    @property
    def running(self) -> bool:
        """Whether it runs now."""


@dataclass
class Running:
    """What the operator's endpoints look at: the store, the budget, the scheduler and the channels as they run."""

    store: MemoryStore
    budget: TokenBudget | None = None
    scheduler: Runs | None = None
    channels: Callable[[], Mapping[str, bool]] = field(default=dict)  # channel name -> running


async def health(running: Running) -> tuple[int, dict[str, Any]]:
    """The status code (503 when the database does not answer) and a short JSON body."""
    database = await running.store.db.reachable()
    body = {
        "status": "ok" if database else "unavailable",
        "database": database,
        "scheduler": bool(running.scheduler is not None and running.scheduler.running),
        "channels": dict(running.channels()),
    }
    return (200 if database else 503), body
