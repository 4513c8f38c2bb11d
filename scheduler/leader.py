"""One scheduler across several workers: only the worker holding the lease `scheduler` runs its jobs.

APScheduler 3's job store must not be shared by several schedulers, so each worker keeps its own (in its data
directory) and the database decides who runs: every `RENEW_SECONDS` a worker asks for the lease; the holder starts
its scheduler (or keeps it and picks up reminders and settings another worker changed: `sync_changes`), the others stop
theirs. A worker that
dies keeps the lease at most `HOLD_SECONDS`; then another takes it, and its scheduler runs what was missed (a
reminder due meanwhile fires late, once, within APScheduler's grace time; the planner's slot it missed, or was
running when it died, runs at once: `memory.storage.job_slots`). One process on SQLite always holds it.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal

from memory import SCHEDULER, Leases, MemoryStoreError
from scheduler.service import Scheduler

log = logging.getLogger(__name__)

HOLD_SECONDS = 60.0
RENEW_SECONDS = 20.0  # well inside the hold: two missed renewals still keep it

Action = Literal["start", "stop", "sync", "wait"]


def leader_action(held: bool, running: bool) -> Action:
    """What a worker does with its scheduler once it knows whether it holds the lease."""
    if held:
        return "sync" if running else "start"
    return "stop" if running else "wait"


class SchedulerLeader:
    """Start this worker's scheduler while it holds the lease, stop it when another worker does."""

    def __init__(self, scheduler: Scheduler, leases: Leases, worker: str, clock: Callable[[], float] = time.time,
                 hold: float = HOLD_SECONDS, every: float = RENEW_SECONDS) -> None:
        self.scheduler, self.leases, self.worker, self.clock = scheduler, leases, worker, clock
        scheduler.worker = worker  # its planner's slots are claimed in the name that holds the lease
        scheduler.outbox.worker = worker  # a push is claimed by the worker sending it, so no other sends it too
        self.hold, self.every = hold, every
        self._seen: tuple[object, ...] | None = None  # the reminders' and preferences' fingerprints the jobs follow

    async def step(self) -> Action:
        """Ask for (or renew) the lease and act on the answer."""
        action = leader_action(await self._take(), self.scheduler.running)
        if action == "start":
            log.info("worker %s holds the scheduler lease: its scheduler starts", self.worker)
            seen = await self._changes()  # read first: a change made while the jobs are written is seen next step
            await self._renewing(self.scheduler.start())
            self._seen = seen
        elif action == "stop":
            log.warning("worker %s lost the scheduler lease: its scheduler stops", self.worker)
            await self.scheduler.stop()
        elif action == "sync":
            await self.sync_changes()
        return action

    async def sync_changes(self) -> None:
        """Bring the jobs in line when a reminder or a setting changed anywhere (another worker's turn set a reminder,
        its /settings moved the brief, the diary or the zone): at the latest one step after the change."""
        seen = await self._changes()
        if seen != self._seen:
            self._seen = seen
            await self._renewing(self.scheduler.refresh())

    async def _changes(self) -> tuple[object, ...]:
        """The fingerprints of what the jobs are made from and other workers change."""
        store = self.scheduler.store
        return await store.reminders.version(), await store.preferences.version()

    async def _take(self) -> bool:
        """Take or renew the lease; a database that does not answer means 'not held'."""
        try:
            return await self.leases.take(SCHEDULER, self.worker, self.clock(), self.hold)
        except MemoryStoreError as exc:  # the database away: its cause in one line, not a traceback each time
            log.warning("worker %s could not renew the scheduler lease (%s)", self.worker, exc)
            return False
        except Exception:  # the lease cannot be confirmed: another worker may take it once it runs out
            log.exception("worker %s could not renew the scheduler lease", self.worker)
            return False

    async def _renewing(self, work: Awaitable[None]) -> None:
        """Do work while renewing the lease every `every` seconds: starting a scheduler writes a job per person to
        its job store, which for thousands of people can take longer than the lease is held."""
        async def renew() -> None:
            while True:
                await asyncio.sleep(self.every)
                if not await self._take():  # the next step finds out and stops the scheduler
                    log.warning("worker %s lost the scheduler lease while its jobs were written", self.worker)

        keeper = asyncio.create_task(renew())
        try:
            await work
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper

    async def _step_or_log(self) -> None:
        """One step; one that failed is logged and the next one tries again (a database restarting or failing over
        must not end the loop: this worker would never run the scheduler again)."""
        try:
            await self.step()
        except MemoryStoreError as exc:  # the database away (DatabaseUnavailable): the cause is known
            log.warning("worker %s: the scheduler lease's step failed (%s); trying again in %g s", self.worker, exc,
                        self.every)
        except Exception:
            log.exception("worker %s: the scheduler lease's step failed; trying again in %g s", self.worker,
                          self.every)

    async def run(self) -> None:
        """Step every `every` seconds until cancelled; then stop the scheduler and give the lease up."""
        try:
            while True:
                await self._step_or_log()
                await asyncio.sleep(self.every)
        finally:
            if self.scheduler.running:
                await self.scheduler.stop()
            await self.leases.release(SCHEDULER, self.worker)
