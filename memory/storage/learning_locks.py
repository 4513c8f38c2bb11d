"""One learning lock per scope across every worker: learning from a person and erasing them, one at a time.

Extraction, the summary, reflection, the diary and a history import's batches take it, and so do /forget, /deleteme
and the web page's edits, so an erasure never runs while a run reads what it erases and writes it back after it.
The lock is a lease row (`memory.storage.leases`) named `learning:<scope id>`: taken and released in one statement
each (the same on SQLite and PostgreSQL), renewed by a task while it is held, left to run out when its holder dies
(`LEASE_SECONDS`), then taken over; sooner when the holder was a process of this host that no longer runs
(`holder_is_gone`: a worker killed and restarted does not wait a minute for the lock it left). Not a PostgreSQL
advisory lock: a process has one link (`memory.storage.postgres`), on which a session lock is re-entrant (two tasks of
one worker would both hold it) and a waiting `pg_advisory_lock` would stall every other statement of the worker, a
transaction-level lock would keep a transaction open over minutes of model calls while that connection serializes
every transaction, and a worker whose host went away keeps a session's lock until the server notices the connection is
dead. In one process the holders of a scope also queue on an asyncio.Lock, so only one of them at a time asks the
database.

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

from memory.models import Scope
from memory.storage.leases import Leases

log = logging.getLogger(__name__)

# A dead holder's lock is taken over after this long: a worker on another host that died (whether it runs cannot be
# seen from here) holds its person's learning up this long at most. A living holder renews it three times as often;
# one that stalls longer (a paused database) loses it, and what it holds checks its input before it writes.
LEASE_SECONDS = 15.0
RENEW_SECONDS = LEASE_SECONDS / 3  # real seconds
POLL_SECONDS = 0.05  # how often a waiting worker asks the database again


CHECK_GONE_EVERY = 20  # a waiting worker looks whether the holder's process still runs every this many polls


def this_process() -> tuple[str, str, int]:
    """This process among a host's: the host name, its process-id namespace (empty where /proc has none), its id."""
    try:
        namespace = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        namespace = ""
    return socket.gethostname(), namespace, os.getpid()


def process_runs(pid: int) -> bool:
    """Whether a process with this id runs on this host (in this namespace); one we may not signal runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def holder_is_gone(holder: str, here: tuple[str, str, int], runs: Callable[[int], bool]) -> bool:
    """Whether a lock's holder (`host:namespace:pid:instance/hold`) was a process of this host and process-id
    namespace that no longer runs. Anything else (another host, another container, no namespace known, this very
    process, a name of another form) is not judged: its lease is left to run out."""
    parts = holder.split("/", 1)[0].rsplit(":", 3)
    if len(parts) != 4:
        return False
    host, namespace, pid, _ = parts
    if not namespace or (host, namespace) != here[:2] or not pid.isdigit() or int(pid) == here[2]:
        return False
    return not runs(int(pid))


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
        self.here = this_process()
        host, namespace, pid = self.here
        self.worker = worker or f"{host}:{namespace}:{pid}:{uuid.uuid4().hex[:8]}"
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
            polls = 0
            while not await self.leases.take(name, held.holder, clock(), self.seconds):
                if polls % CHECK_GONE_EVERY == 0 and await self._take_from_the_gone(name, held, clock()):
                    break
                polls += 1
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

    async def _take_from_the_gone(self, name: str, held: Held, now: float) -> bool:
        """Take the lock over when its holder was a process of this host that no longer runs; say whether we did."""
        lease = await self.leases.current(name, now)
        if lease is None or not holder_is_gone(lease.holder, self.here, process_runs):
            return False
        if not await self.leases.take_over(name, lease.holder, held.holder, now, self.seconds):
            return False
        log.warning("took the learning lock of scope %s over from a process of this host that no longer runs",
                    held.scope.id)
        return True

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
