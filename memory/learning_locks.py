"""One learning lock per scope across every worker: learning from a person and erasing them, one at a time.

Extraction, the summary, reflection, the diary and a history import's batches take it, and so do /forget, /deleteme
and the web page's edits, so an erasure never runs while a run reads what it erases and writes it back after it.
The lock is a lease row in `leases` (`memory.leases`) named `learning:<scope id>`: taken and released in one
statement each (the same on SQLite and PostgreSQL), renewed by a task while it is held, left to run out when its
holder dies (`LEASE_SECONDS`), then taken over. Not a PostgreSQL advisory lock: a process has one connection
(`memory.postgres`), on which a session lock is re-entrant (two tasks of one worker would both hold it) and a waiting
`pg_advisory_lock` would stall every other statement of the worker, a transaction-level lock would keep a transaction
open over minutes of model calls while that connection serializes every transaction, and a worker whose host went
away keeps a session's lock until the server notices the connection is dead. In one process the holders of a scope
also queue on an asyncio.Lock, so only one of them at a time asks the database.

A lease can be lost (a worker stalled longer than the lease); `Held.lost` says so, and every learning writer also
checks that what it read is still there before it writes (`Journal.present`, `Conversations.set_summary`).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from memory.leases import Leases
from memory.models import Scope

log = logging.getLogger(__name__)

LEASE_SECONDS = 60.0  # a dead holder's lock is taken over after this long
RENEW_SECONDS = LEASE_SECONDS / 3  # a living holder renews it this often (real seconds)
POLL_SECONDS = 0.05  # how often a waiting worker asks the database again


def lease_name(scope_id: int) -> str:
    """The name of a scope's learning lock in `leases`."""
    return f"learning:{scope_id}"


@dataclass
class Held:
    """A learning lock being held: by whom, and whether it was lost meanwhile (another worker took it over)."""

    scope: Scope
    holder: str
    lost: bool = False


class LearningLocks:
    """Take a scope's learning lock, wait for it, keep it renewed, give it back."""

    def __init__(self, leases: Leases, worker: str | None = None, *, seconds: float = LEASE_SECONDS,
                 renew: float = RENEW_SECONDS, poll: float = POLL_SECONDS) -> None:
        self.leases = leases
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.seconds, self.renew, self.poll = seconds, renew, poll
        self._local: dict[int, asyncio.Lock] = {}
        self._held: dict[int, tuple[asyncio.Task[object] | None, Held]] = {}  # per scope: the task holding it

    @contextlib.asynccontextmanager
    async def hold(self, scope: Scope, clock: Callable[[], float] = time.time) -> AsyncIterator[Held]:
        """Run a block while this worker holds the scope's learning lock; wait while anyone else holds it.

        clock gives the lease's times (a time.time() value), so a test can let a dead holder's lease run out.
        The task holding the lock may enter it again (the web page's edit that forgets a note through /forget's
        function); any other task waits.
        """
        task = asyncio.current_task()
        mine = self._held.get(scope.id)
        if mine is not None and mine[0] is task:
            yield mine[1]
            return
        local = self._local.setdefault(scope.id, asyncio.Lock())
        async with local:
            held = Held(scope, f"{self.worker}/{uuid.uuid4().hex[:12]}")
            name = lease_name(scope.id)
            while not await self.leases.take(name, held.holder, clock(), self.seconds):
                await asyncio.sleep(self.poll)
            renewing = asyncio.ensure_future(self._keep(name, held, clock))
            self._held[scope.id] = (task, held)
            try:
                yield held
            finally:
                del self._held[scope.id]
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)
                await self.leases.release(name, held.holder)

    async def holder(self, scope: Scope, now: float) -> str | None:
        """Who holds the scope's learning lock at now (None: nobody)."""
        lease = await self.leases.current(lease_name(scope.id), now)
        return lease.holder if lease else None

    async def _keep(self, name: str, held: Held, clock: Callable[[], float]) -> None:
        """Renew the lease until cancelled; mark it lost when another worker took it over or renewing failed."""
        while True:
            await asyncio.sleep(self.renew)
            try:
                kept = await self.leases.take(name, held.holder, clock(), self.seconds)
            except Exception:
                log.exception("renewing the learning lock of scope %s failed; it counts as lost", held.scope.id)
                kept = False
            if not kept:
                log.warning("the learning lock of scope %s was lost (a stall longer than %.0f s); what it held "
                            "checks its input before writing", held.scope.id, self.seconds)
                held.lost = True
                return
