"""The slots of repeating scheduler jobs that were run (the planner's quarter hours), so each runs once across workers.

Every worker's scheduler keeps its own APScheduler job store, and only the one holding the lease `scheduler` runs
jobs; but a job store left behind by an earlier turn as leader still holds the next run time it had then, and fires
it late when its worker leads again; and a worker that lost the lease may still be in the middle of firing a job.
So a run first claims its slot here, which a worker may only while no other worker holds the scheduler lease: a
slot is run once. A slot whose runner died before it was done may be claimed again, by the next leader (or the same
worker restarted); a slot older than one claimed already never runs (missed slots run once, as the newest, as
APScheduler coalesces them).

Within a slot, each person it writes to is claimed too (`claim_person`, before the message is written): a worker that
lost the lease in the middle of a person, and the next leader running the same slot, write to that person once.
"""
from __future__ import annotations

from dataclasses import dataclass

from memory.storage.db import Database
from memory.storage.leases import SCHEDULER, Leases

# Nobody but the worker asking holds the scheduler lease (on SQLite nobody holds it: one process runs the jobs).
_MAY_LEAD = "NOT EXISTS (SELECT 1 FROM leases WHERE name = ? AND until > ? AND holder <> ?)"
KEEP_SECONDS = 7 * 24 * 3600.0  # how long a slot is remembered (a week of the planner: 672 rows)


@dataclass(frozen=True)
class Slot:
    """One slot of a job: when it was due (a time.time() value), who started it when, and when it was done."""

    job: str
    slot: float
    worker: str
    started_at: float
    done_at: float | None


class JobSlots:
    """Claim a job's slot before running it, mark it done after; read what ran."""

    def __init__(self, db: Database, leases: Leases | None = None) -> None:
        self.db = db
        self.leases = leases or Leases(db)  # whose clock judges the scheduler lease (the database's)

    async def claim(self, job: str, slot: float, worker: str, now: float) -> bool:
        """Take the slot for `worker` and say whether it is ours to run: when no other worker holds the scheduler
        lease at `now`, no later slot was claimed, and this one was not, or was cut off (never done)."""
        at = await self.leases.on_database_clock(now)  # the lease is judged on the database's clock
        async with self.db.transaction() as tx:
            await tx.execute(
                f"INSERT INTO job_slots(job, slot, worker, started_at) SELECT ?, ?, ?, ? WHERE {_MAY_LEAD}"
                " AND NOT EXISTS (SELECT 1 FROM job_slots WHERE job = ? AND slot > ?)"
                " ON CONFLICT(job, slot) DO UPDATE SET worker = excluded.worker, started_at = excluded.started_at"
                f" WHERE job_slots.done_at IS NULL AND {_MAY_LEAD}",
                (job, slot, worker, now, SCHEDULER, at, worker, job, slot, SCHEDULER, at, worker))
            return await tx.changes() > 0

    async def claim_person(self, job: str, slot: float, scope_id: int, worker: str, now: float) -> bool:
        """Take one person of the slot for `worker` before writing to them, and say whether it is ours: when no other
        worker holds the scheduler lease at `now` and nobody claimed the person in this slot before (not even a
        worker cut off before it sent: the person's next slot writes then)."""
        at = await self.leases.on_database_clock(now)
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO person_slots(job, slot, scope_id, worker, claimed_at) SELECT ?, ?, ?, ?, ?"
                f" WHERE {_MAY_LEAD} ON CONFLICT(job, slot, scope_id) DO NOTHING",
                (job, slot, scope_id, worker, now, SCHEDULER, at, worker))
            return await tx.changes() > 0

    async def done(self, job: str, slot: float, worker: str, now: float) -> None:
        """Mark the slot done at `now` (when `worker` still holds it); forget the job's slots a week older."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE job_slots SET done_at = ? WHERE job = ? AND slot = ? AND worker = ?",
                             (now, job, slot, worker))
            await tx.execute("DELETE FROM job_slots WHERE job = ? AND slot < ?", (job, slot - KEEP_SECONDS))
            await tx.execute("DELETE FROM person_slots WHERE job = ? AND slot < ?", (job, slot - KEEP_SECONDS))

    async def holds(self, job: str, slot: float, worker: str) -> bool:
        """Whether `worker` still holds the slot it claimed (not done, not taken over by the next leader)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT 1 FROM job_slots WHERE job = ? AND slot = ? AND worker = ?"
                                    " AND done_at IS NULL", (job, slot, worker))
        return row is not None

    async def latest(self, job: str) -> Slot | None:
        """The newest slot of the job that was claimed; None when it never ran."""
        slots = await self._read("SELECT job, slot, worker, started_at, done_at FROM job_slots WHERE job = ?"
                                 " ORDER BY slot DESC LIMIT 1", (job,))
        return slots[0] if slots else None

    async def since(self, job: str, start: float) -> list[Slot]:
        """The job's slots from `start` on, oldest first."""
        return await self._read("SELECT job, slot, worker, started_at, done_at FROM job_slots WHERE job = ?"
                                " AND slot >= ? ORDER BY slot", (job, start))

    async def _read(self, sql: str, params: tuple[object, ...]) -> list[Slot]:
        async with self.db.reading() as tx:
            rows = await tx.fetchall(sql, params)
        return [Slot(str(r[0]), float(r[1]), str(r[2]), float(r[3]), None if r[4] is None else float(r[4]))
                for r in rows]
