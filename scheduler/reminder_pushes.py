"""Push the reminders whose time has come, with snooze buttons, and move repeating ones to their next time.

Reminders go through the outbox as kind "reminder" with their due time: recorded before sending, retried
when the channel fails (one that arrives late says so), and never logged as proactive, so they do not count
against the check-in budget.
"""
from __future__ import annotations

import logging
from datetime import datetime
from zoneinfo import ZoneInfo

from memory import ButtonRows, MemoryStore, Scope, StoredReminder
from scheduler.delivery import OutboxSender
from scheduler.reminder_times import next_due

log = logging.getLogger(__name__)

# Button labels under a pushed reminder: snooze 10 min, 1 h, tomorrow; stop a repeating one.
LABELS = {"de": ("💤 10 Min.", "💤 1 Std.", "💤 Morgen", "✖ Nicht mehr erinnern"),
          "en": ("💤 10 min", "💤 1 h", "💤 Tomorrow", "✖ Stop reminding")}


def push_text(reminder: StoredReminder) -> str:
    """The pushed message: the user's own words after the alarm clock."""
    return f"⏰ {reminder.text}"


def push_buttons(reminder: StoredReminder, number: int, lang: str) -> ButtonRows:
    """Snooze buttons (and a stop button for a repeating reminder) by the user's number, as (label, data) rows."""
    ten, hour, tomorrow, stop = LABELS.get(lang, LABELS["de"])
    rows: ButtonRows = ((ten, f"rem:snooze:10m:{number}"), (hour, f"rem:snooze:1h:{number}"),
                        (tomorrow, f"rem:snooze:tomorrow:{number}")),
    if reminder.repeat:
        rows += (((stop, f"rem:cancel:{number}"),),)
    return rows


async def push_due(store: MemoryStore, outbox: OutboxSender, scope: Scope, now: float, zone: ZoneInfo,
                   lang: str) -> int:
    """Deliver every reminder of the scope due by `now`; returns how many went out (or wait in the outbox)."""
    prefs = await store.preferences.get(scope)
    zone = ZoneInfo(prefs.timezone) if prefs.timezone else zone
    moment = datetime.fromtimestamp(now, zone)
    pushed = 0
    for reminder in await store.reminders.due(scope, now):
        buttons = push_buttons(reminder, await store.numbers.of(scope, "reminder", reminder.id), lang)
        following = next_due(reminder.due_at, reminder.repeat, moment, zone)
        item = await store.reminders.fire(scope, reminder, following.timestamp() if following else None, now,
                                          push_text(reminder), buttons, await outbox.claim())
        if item is None:  # fired meanwhile by another worker's scheduler
            continue
        if not await outbox.send(scope, item):
            log.warning("reminder %s for scope %s not delivered yet; the outbox retries it", reminder.id, scope.id)
        pushed += 1
    return pushed
