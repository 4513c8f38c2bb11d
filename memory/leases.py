"""Named leases on the database: which worker holds a role (the scheduler, Matrix sync) until when.

Several workers share one PostgreSQL database; a role that must run once is held by one of them at a time. A lease
is taken, renewed and released with one statement each, so two workers asking at once cannot both get it; a worker
that dies leaves its lease to run out, and another takes it then. On SQLite there is one process, which takes every
lease it asks for (the same statements run there).
"""
from __future__ import annotations

from dataclasses import dataclass

from memory.db import Database

SCHEDULER = "scheduler"  # the worker that runs the scheduler's jobs
MATRIX_SYNC = "matrix-sync"  # the worker that syncs with the Matrix homeserver
# A claimed row (inbox, outbox) a worker may take at now (the first parameter): nobody's, run out, or its own already.
CLAIMABLE = "(claimed_until IS NULL OR claimed_until <= ? OR claimed_by = ?)"


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

    async def take(self, name: str, holder: str, now: float, seconds: float) -> bool:
        """Hold the lease until now + seconds when it is free, ran out, or is ours already (a renewal); say whether
        we hold it now."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO leases(name, holder, until) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE"
                " SET holder = excluded.holder, until = excluded.until"
                " WHERE leases.holder = excluded.holder OR leases.until <= ?",
                (name, holder, now + seconds, now))
            return await tx.changes() > 0

    async def release(self, name: str, holder: str) -> None:
        """Give the lease up at once (when we hold it), so another worker need not wait for it to run out."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

    async def current(self, name: str, now: float) -> Lease | None:
        """The lease as it stands at now; None when nobody holds it (or it ran out)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT name, holder, until FROM leases WHERE name = ? AND until > ?", (name, now))
        return Lease(str(row[0]), str(row[1]), float(row[2])) if row else None
