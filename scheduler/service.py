"""The scheduler in the bot's process: APScheduler jobs persisted in the data directory.

Jobs: a planner every 15 minutes (check-ins for every user, and per-user jobs for new users),
per user a reflection and a diary at the user's times in the user's zone, the day's yearly dates at the
start of the user's active hours, the morning brief at the user's chosen time (when they asked for one),
and one job per active reminder at its due time (moved to the next time after a repeating one fired). After downtime a
missed job runs once (coalesce, grace period), never in a burst.

Each planner slot runs once, also across workers whose job stores differ (`memory.storage.job_slots`): a run claims
its slot first. A scheduler that starts while the newest slot was not run, or its run was cut off, runs the planner at
once (not when the next slot is due): a fresh job store knows nothing of the slot that passed.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from zoneinfo import ZoneInfo

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from memory import DiaryEntry, JobSlot, MemoryStore, Preferences, Scope, is_group_scope, private_file
from scheduler.budget import TokenBudget
from scheduler.checkin import check_in
from scheduler.delivery import OutboxSender
from scheduler.diary import write_diary
from scheduler.morning import Context, brief_lost, push_dates, send_brief
from scheduler.ports import Composer, JobRuns, Sender, Weather, Writer
from scheduler.reflection import Reflection, reflect
from scheduler.reminder_pushes import push_due
from scheduler.rhythm import reads_in_morning

log = logging.getLogger(__name__)

PLANNER_MINUTES = 15
PLANNER_START = datetime(2020, 1, 1)  # the planner's slots count from here, in the scheduler's zone
GRACE_SECONDS = 6 * 3600

_running: Scheduler | None = None  # the instance APScheduler's persisted jobs call into


@dataclass(frozen=True)
class JobSpec:
    """One job: its id, what it runs, for which scope, and when."""

    id: str
    kind: str  # "planner" | "reflect" | "diary" | "reminder" | "dates" | "morning"
    scope_id: int
    trigger: BaseTrigger


def trigger_meaning(trigger: BaseTrigger) -> str:
    """What a trigger means, to tell whether a stored job must move: a moment for a one-time job (the same moment in
    another zone is the same), else its fields with its zone (a cron trigger's `str` leaves the zone out)."""
    if isinstance(trigger, DateTrigger):
        return f"date {trigger.run_date.timestamp()}"
    return repr(trigger)


def planner_slot(now: float, start: float, every: float) -> float:
    """The planner's slot `now` falls in: the last of start + n * every at or before it (seconds)."""
    return start + (now - start) // every * every


def planner_missed(latest: JobSlot | None, current: float) -> bool:
    """Whether a scheduler that starts runs the planner at once: the newest slot run is older than the current one,
    or its run was cut off; not when the planner never ran (a new installation waits for its first slot)."""
    return latest is not None and (latest.slot < current or latest.done_at is None)


async def run_job(kind: str, scope_id: int) -> None:
    """Entry point of persisted jobs: run `kind` now on the running scheduler."""
    if _running is None:
        log.warning("job %s for scope %s fired without a running scheduler", kind, scope_id)
        return
    await _running.run(kind, scope_id, time.time())


class Scheduler:
    """Owns the jobs; `run` does the work of one job at a given time (also used with a simulated clock)."""

    def __init__(
        self, store: MemoryStore, companion_id: str, writer: Writer, composer: Composer, sender: Sender,
        zone: ZoneInfo, data_dir: Path, silence: timedelta | None = None,  # None: by the relationship's stage
        clock: Callable[[], float] = time.time, lang: str = "de", budget: TokenBudget | None = None,
        weather: Weather | None = None, job_runs: JobRuns | None = None,
        planner_every: timedelta = timedelta(minutes=PLANNER_MINUTES),
    ) -> None:
        self.store, self.companion_id, self.lang = store, companion_id, lang
        self.budget = budget  # reflection and diary pause when the day's background tokens are spent
        self.writer, self.composer, self.sender = writer, composer, sender
        self.zone, self.silence = zone, silence
        self.jobs_path = Path(data_dir) / "jobs.sqlite3"
        self.jobs_url = f"sqlite:///{self.jobs_path}"
        self.outbox = OutboxSender(store, sender, clock, zone, lang)
        self.mornings = Context(store, composer, self.outbox, zone, lang, weather)
        self._aps: AsyncIOScheduler | None = None
        self.job_runs = job_runs  # counts every job run by kind and outcome (the metrics), when given
        self.planner_every = planner_every
        self.planner_start = PLANNER_START.replace(tzinfo=zone)
        self.worker = "main"  # who claims the planner's slots: the worker's name when several share the database

    @property
    def running(self) -> bool:
        """Whether APScheduler is started and runs jobs."""
        return self._aps is not None and bool(self._aps.running)

    async def specs(self) -> list[JobSpec]:
        """Every job that should exist now: the planner and each user's reflection and diary."""
        quarter = IntervalTrigger(seconds=self.planner_every.total_seconds(), start_date=self.planner_start,
                                  timezone=self.zone)
        out = [JobSpec("planner", "planner", 0, quarter)]
        for scope in await self.store.scopes(self.companion_id):
            prefs = await self.store.preferences.get(scope)
            zone = ZoneInfo(prefs.timezone) if prefs.timezone else self.zone
            for kind, at in (("reflect", prefs.reflection_time), ("diary", prefs.diary_time)):
                hour, minute = (int(x) for x in at.split(":"))
                trigger = CronTrigger(hour=hour, minute=minute, timezone=zone)
                out.append(JobSpec(f"{kind}:{scope.id}", kind, scope.id, trigger))
            if not is_group_scope(scope.user_id):
                out += self.morning_specs(scope, prefs, zone, bool(await self.store.person_dates.all(scope)))
            for reminder in await self.store.reminders.active(scope):
                out.append(JobSpec(f"reminder:{reminder.id}", "reminder", scope.id,
                                   DateTrigger(run_date=reminder.due_at.astimezone(zone), timezone=zone)))
        return out

    @staticmethod
    def morning_specs(scope: Scope, prefs: Preferences, zone: ZoneInfo, has_dates: bool) -> list[JobSpec]:
        """The day's yearly dates at the start of the active hours (when there are some); the brief, when on."""
        out = [JobSpec(f"dates:{scope.id}", "dates", scope.id,
                       CronTrigger(hour=prefs.hours()[0] % 24, minute=0, timezone=zone))] if has_dates else []
        if prefs.morning:
            hour, minute = (int(x) for x in prefs.morning.split(":"))
            out.append(JobSpec(f"morning:{scope.id}", "morning", scope.id,
                               CronTrigger(hour=hour, minute=minute, timezone=zone)))
        return out

    async def start(self) -> None:
        """Start APScheduler with the persistent job store and make sure every job exists."""
        global _running
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

        private_file(self.jobs_path)  # SQLite would create it readable by everyone; its journal takes its mode
        self._aps = AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=self.jobs_url)},
            job_defaults={"coalesce": True, "misfire_grace_time": GRACE_SECONDS, "max_instances": 1},
            timezone=self.zone,
        )
        _running = self
        self._aps.start()
        self.store.reminders.on_change = self.refresh
        await self.sync_jobs()
        if planner_missed(await self.store.job_slots.latest("planner"), self.planner_slot(time.time())):
            self._aps.modify_job("planner", next_run_time=datetime.now(self.zone))

    def planner_slot(self, now: float) -> float:
        """The planner's slot at `now`."""
        return planner_slot(now, self.planner_start.timestamp(), self.planner_every.total_seconds())

    async def sync_jobs(self) -> None:
        """Add jobs for new users and move jobs whose time a user changed; existing ones keep their next run. Nothing
        on a worker whose scheduler does not run (not the leader): the leader sees the change and moves the jobs."""
        if self._aps is None:
            return
        specs = await self.specs()
        for spec in specs:
            job = self._aps.get_job(spec.id)
            if job is not None and trigger_meaning(job.trigger) == trigger_meaning(spec.trigger):
                continue
            self._aps.add_job("scheduler.service:run_job", spec.trigger, args=(spec.kind, spec.scope_id),
                              id=spec.id, replace_existing=True)
            # The job store writes synchronously (~15 ms each): a new leader adding a job per user would otherwise
            # hold up this worker's chats, and its claims and lease could run out meanwhile.
            await asyncio.sleep(0)
        wanted = {spec.id for spec in specs}
        for job in self._aps.get_jobs():
            if job.id.startswith(("reminder:", "morning:", "dates:")) and job.id not in wanted:
                job.remove()  # a reminder cancelled or fired; a brief turned off; no dates left

    def next_fires(self, after: float) -> dict[str, datetime]:
        """When each stored job fires next after `after`, by its trigger as the job store keeps it (by job id)."""
        assert self._aps is not None
        start = datetime.fromtimestamp(after, self.zone)
        fires = {job.id: job.trigger.get_next_fire_time(None, start) for job in self._aps.get_jobs()}
        return {job: at for job, at in fires.items() if at is not None}

    async def refresh(self) -> None:
        """Bring the jobs in line with the reminders after one changed (only while running)."""
        if self._aps is not None:
            await self.sync_jobs()

    async def stop(self) -> None:
        """Stop running jobs (they stay stored for the next start)."""
        global _running
        if self.store.reminders.on_change == self.refresh:
            self.store.reminders.on_change = None
        if self._aps is not None:
            self._aps.shutdown(wait=False)
            self._aps = None
        if _running is self:  # another scheduler may have started since (a test's second worker)
            _running = None

    async def run(self, kind: str, scope_id: int, now: float) -> None:
        """Do one job's work at `now`; a failure is logged and counted, other users are not affected."""
        outcome = await self._run(kind, scope_id, now)
        if self.job_runs is not None:
            self.job_runs.job_ran(kind, outcome)

    async def _run(self, kind: str, scope_id: int, now: float) -> str:
        """One job's work: 'ok', 'skipped' (no such user, the budget spent) or 'failed' (logged and counted)."""
        try:
            if kind == "planner":
                return await self.plan_once(now)
            scope = next((s for s in await self.store.scopes(self.companion_id) if s.id == scope_id), None)
            if scope is None:
                return "skipped"
            if kind in ("reflect", "diary") and self.budget is not None and not await self.budget.allows(now):
                log.info("%s for scope %s skipped: the daily token budget for background work is spent", kind, scope_id)
                return "skipped"
            if kind == "reflect":
                async with self.store.learning_locks.hold(scope):  # never beside an erasure on any worker
                    await reflect(self.store, self.writer, scope, now=now)
            elif kind == "diary":
                await self.diary(scope, now)
            elif kind == "reminder":
                await push_due(self.store, self.outbox, scope, now, self.zone, self.lang)
            elif kind in ("morning", "dates"):
                await self.morning(kind, scope, now)
        except Exception:
            log.exception("%s job for scope %s failed; nothing was sent", kind, scope_id)
            await self.count_failure(kind, now)
            return "failed"
        return "ok"

    async def plan_once(self, now: float) -> str:
        """The planner for the slot `now` falls in, unless it ran (or runs) elsewhere: 'ok' or 'skipped'."""
        slot = self.planner_slot(now)
        if not await self.store.job_slots.claim("planner", slot, self.worker, now):
            log.info("the planner's slot at %s ran already (or runs on another worker): skipped", slot)
            return "skipped"
        if not await self.plan(now, slot):
            log.warning("the planner's slot at %s was taken over by another worker: this run stopped", slot)
            return "skipped"
        await self.store.job_slots.done("planner", slot, self.worker, time.time())
        return "ok"

    async def plan(self, now: float, slot: float | None = None) -> bool:
        """The planner: retry the outbox, the dates of a brief given up, a check-in decision for every user, then
        jobs for new users. With the slot it claimed, it stops (False) at the next user once the slot is another
        worker's (this one lost the scheduler lease and the next leader runs the slot again); a person it writes to is
        claimed in the slot first, so one lost in the middle of them is written to once."""
        scopes = await self.store.scopes(self.companion_id)
        await self.outbox.flush(scopes)
        for scope in scopes:
            if slot is not None and not await self.store.job_slots.holds("planner", slot, self.worker):
                return False
            try:
                if await brief_lost(self.mornings, scope, now):  # the dates it carried need their own push
                    await self.morning("dates", scope, now)
            except Exception:
                log.exception("the dates of a lost brief for scope %s failed; nothing was sent", scope.id)
                await self.count_failure("dates", now)
            try:
                claim = None if slot is None else partial(self.store.job_slots.claim_person, "planner", slot,
                                                          scope.id, self.worker, now)
                await check_in(self.store, self.composer, self.outbox, scope, now, self.zone, self.silence, claim)
            except Exception:
                log.exception("check-in for scope %s failed; nothing was sent", scope.id)
                await self.count_failure("checkin", now)
        if self._aps is not None:
            await self.sync_jobs()
        return True

    async def count_failure(self, kind: str, now: float) -> None:
        """Count a failed job in the database (shown by `mnemo stats` and `mnemo doctor`); never raises."""
        try:
            await self.store.failures.add(f"scheduler.{kind}", now)
        except Exception:
            log.exception("counting the failed %s job failed too", kind)

    async def diary(self, scope: Scope, now: float) -> None:
        """Write the diary entry and push it when the user asked for that."""
        prefs = await self.store.preferences.get(scope)
        zone = ZoneInfo(prefs.timezone) if prefs.timezone else self.zone
        async with self.store.learning_locks.hold(scope):  # never beside an erasure on any worker
            entry = await write_diary(self.store, self.writer, scope, now, zone)
        if entry is not None and prefs.diary_push:
            await self.outbox.deliver(scope, f"📔 {entry.day}\n{entry.text}", kind="diary")

    async def morning(self, kind: str, scope: Scope, now: float) -> None:
        """The morning brief, or the day's yearly dates (unless the brief of the day carries them)."""
        prefs = await self.store.preferences.get(scope)
        reads = await self.reads_in_the_morning(scope, prefs, now)
        if kind == "morning":
            outcome = await send_brief(self.mornings, scope, now, reads)
        else:
            outcome = await push_dates(self.mornings, scope, now, reads)
        log.info("%s for scope %s: %s", kind, scope.id, outcome)

    async def reads_in_the_morning(self, scope: Scope, prefs: Preferences, now: float) -> bool:
        """Whether the person usually reads at the brief's hour on this weekday (with too little data: yes)."""
        if not prefs.morning:
            return False
        zone = ZoneInfo(prefs.timezone) if prefs.timezone else self.zone
        day = datetime.fromtimestamp(now, zone)
        return reads_in_morning(await self.store.rhythm.histogram(scope, now), day.weekday(),
                                int(prefs.morning.split(":")[0]))

    async def reflect_now(self, scope: Scope) -> Reflection | None:
        """Reflect now, even when nothing new was said (/think); errors reach the caller."""
        async with self.store.learning_locks.hold(scope):
            return await reflect(self.store, self.writer, scope, force=True)

    async def write_diary_now(self, scope: Scope) -> DiaryEntry | None:
        """Write today's entry now, in the user's zone (/writediary); None when there was no conversation."""
        prefs = await self.store.preferences.get(scope)
        zone = ZoneInfo(prefs.timezone) if prefs.timezone else self.zone
        async with self.store.learning_locks.hold(scope):
            return await write_diary(self.store, self.writer, scope, time.time(), zone)

    async def run_due(self, start: float, end: float,
                      on_run: Callable[[str, int, float], Awaitable[None]] | None = None) -> int:
        """Run every job whose fire time falls in (start, end], in time order, at that time (simulated clocks)."""
        due: list[tuple[float, str, int]] = []
        for spec in await self.specs():
            fire = spec.trigger.get_next_fire_time(None, datetime.fromtimestamp(start, self.zone))
            while fire is not None and fire.timestamp() <= end:
                if fire.timestamp() > start:
                    due.append((fire.timestamp(), spec.kind, spec.scope_id))
                fire = spec.trigger.get_next_fire_time(fire, fire + timedelta(seconds=1))
        for at, kind, scope_id in sorted(due):
            await self.run(kind, scope_id, at)
            if on_run:
                await on_run(kind, scope_id, at)
        return len(due)
