"""Named leases on the database: which worker holds a role (the scheduler, Matrix sync) until when.

Several workers share one PostgreSQL database; a role that must run once is held by one of them at a time. A lease
is taken, renewed and released with one statement each, so two workers asking at once cannot both get it; a worker
that dies leaves its lease to run out, and another takes it then. On SQLite there is one process, which takes every
lease it asks for (the same statements run there).

Leases are judged by the database's clock, so two workers whose clocks disagree still agree on who holds one: the
`now` a caller passes (its time.time(), or a test's fake clock) is moved by how far the PostgreSQL server's
`clock_timestamp()` is from this process's clock (`Leases.clock`), to the whole second (`on_database_clock`). A fake
clock moved by hand moves with it; a worker whose clock runs 30 s ahead is moved back 30 s. On SQLite (one process)
the process clock is the database's. The difference is asked of the server once a minute (`OFFSET_SECONDS`) and kept
in between, so taking, renewing and reading a lease stays one statement (a worker waiting for a learning lock asks
every 50 ms).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from memory.storage.db import Database

SCHEDULER = "scheduler"  # the worker that runs the scheduler's jobs
MATRIX_SYNC = "matrix-sync"  # the worker that syncs with the Matrix homeserver
# A claimed row (inbox, outbox) a worker may take at now (the first parameter): nobody's, run out, or its own already.
CLAIMABLE = "(claimed_until IS NULL OR claimed_until <= ? OR claimed_by = ?)"
OFFSET_SECONDS = 60.0  # how long the database clock's difference from this process's clock is kept before asked again


@dataclass(frozen=True)
class Lease:
    """Who holds a named lease, and until when (a time.time() value)."""

    name: str
    holder: str
    until: float


class Leases:
    """Take, renew, release and read named leases."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.clock: Callable[[], float] = time.time  # this process's clock (a skewed one, in a test)
        self.monotonic: Callable[[], float] = time.monotonic  # how old the kept difference is
        self._offset: tuple[Callable[[], float], float, int] | None = None  # (clock, measured at, seconds)

    async def on_database_clock(self, now: float) -> float:
        """`now`, read from this process's clock (or a fake clock a test moves from it), on the database's clock: moved
        by the whole seconds the PostgreSQL server's clock differs from this process's; on SQLite as it is."""
        if self.db.dialect != "postgres":
            return now
        kept = self._offset
        if kept is None or kept[0] is not self.clock or self.monotonic() - kept[1] >= OFFSET_SECONDS:
            kept = self._offset = (self.clock, self.monotonic(), await self._measured_offset())
        return now + kept[2]

    async def _measured_offset(self) -> int:
        """The whole seconds the PostgreSQL server's clock is ahead of this process's (negative: behind)."""
        before = self.clock()
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)", ())
        return round(float(row[0]) - (before + self.clock()) / 2)

    async def take(self, name: str, holder: str, now: float, seconds: float) -> bool:
        """Hold the lease until now + seconds when it is free, ran out, or is ours already (a renewal); say whether
        we hold it now (`now` on the database's clock: see the module)."""
        now = await self.on_database_clock(now)
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO leases(name, holder, until) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE"
                " SET holder = excluded.holder, until = excluded.until"
                " WHERE leases.holder = excluded.holder OR leases.until <= ?",
                (name, holder, now + seconds, now))
            return await tx.changes() > 0

    async def take_over(self, name: str, old: str, holder: str, now: float, seconds: float) -> bool:
        """Take the lease from `old` (known to be gone) when it still holds it; say whether we hold it now."""
        now = await self.on_database_clock(now)
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE leases SET holder = ?, until = ? WHERE name = ? AND holder = ?",
                             (holder, now + seconds, name, old))
            return await tx.changes() > 0

    async def release(self, name: str, holder: str) -> None:
        """Give the lease up at once (when we hold it), so another worker need not wait for it to run out."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

    async def current(self, name: str, now: float) -> Lease | None:
        """The lease as it stands at now; None when nobody holds it (or it ran out). Its end is told on the clock
        `now` was read from."""
        shift = await self.on_database_clock(now) - now
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT name, holder, until FROM leases WHERE name = ? AND until > ?",
                                    (name, now + shift))
        return Lease(str(row[0]), str(row[1]), float(row[2]) - shift) if row else None
