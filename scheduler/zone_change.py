"""What moves when a person changes their time zone, besides the jobs (`Scheduler.sync_jobs` moves those).

Learned hours were counted on the clock of the zone in force. When that zone was never the person's own (the
deployment's, before they chose one), the person wrote at those moments on their own clock, which mnemo did not
know: the weights move by the difference, so the same moments stay. When the person had chosen the old zone, they
lived by it; someone who moves keeps their habits on the local clock (reading after work at 20:00 in Berlin, at
20:00 in New York), so the weights stay where they are.

A repeating reminder ("every day at 8") keeps its time on the person's clock; a one-time reminder keeps its moment
(an appointment does not move because its person does).
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from memory import MemoryStore, Scope
from scheduler.reminder_times import next_due


def offset_hours(zone: ZoneInfo, at: float) -> float:
    """The zone's offset from UTC at `at`, in hours (-5.0 for New York in winter)."""
    offset = datetime.fromtimestamp(at, UTC).astimezone(zone).utcoffset() or timedelta()
    return offset.total_seconds() / 3600


def rhythm_shift(old: ZoneInfo, new: ZoneInfo, at: float, chosen_before: bool) -> float:
    """How many hours later the learned weights go on the person's clock: the zones' difference when the old zone was
    not the person's own choice, else none."""
    return 0.0 if chosen_before else offset_hours(new, at) - offset_hours(old, at)


def same_clock(due: datetime, repeat: str, old: ZoneInfo, new: ZoneInfo, now: datetime) -> datetime:
    """A repeating reminder's next time at the same time of day on the new clock (from the same local day on), after
    `now`."""
    local = due.astimezone(old)
    moved = datetime.combine(local.date(), local.timetz().replace(tzinfo=None), new)
    if moved > now:
        return moved
    return next_due(moved, repeat, now, new) or moved


async def change_zone(store: MemoryStore, scope: Scope, zone: str, default: ZoneInfo, now: float) -> None:
    """Set the person's zone ('' for the deployment's) and move their learned hours and repeating reminders with it,
    all in one transaction (a change cut off half-way leaves nothing half done)."""
    prefs = await store.preferences.get(scope)
    old = ZoneInfo(prefs.timezone) if prefs.timezone else default
    new = ZoneInfo(zone) if zone else default
    if old.key == new.key:
        await store.change_zone(scope, zone, 0.0, (), now, "")
        return
    moment = datetime.fromtimestamp(now, new)
    moves = []
    for reminder in await store.reminders.active(scope):
        if reminder.repeat:
            moved = same_clock(reminder.due_at, reminder.repeat, old, new, moment)
            if moved != reminder.due_at:
                moves.append((reminder, moved.timestamp()))
    await store.change_zone(scope, zone, rhythm_shift(old, new, now, chosen_before=bool(prefs.timezone)), moves, now,
                            f"time zone {old.key} -> {new.key}")
