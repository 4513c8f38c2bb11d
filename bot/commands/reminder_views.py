"""/reminders lists the user's reminders; the rem buttons cancel or snooze one (under /reminders and pushed ones)."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.commands.invocation import Call, Pressed
from bot.conversation.reminder_requests import due_words, user_zone
from bot.exchange import Button, Reply
from memory import StoredReminder
from scheduler.reminder_times import SNOOZES, snooze_until

LIST_BUTTONS = 10


def _line(reminder: StoredReminder, number: int, lang: str, zone: ZoneInfo) -> str:
    return f"#{number} {due_words(reminder.due_at.astimezone(zone), reminder.repeat, lang)} – {reminder.text}"


async def reminders(call: Call, args: str) -> Reply:
    """/reminders: the active reminders, soonest first, each with a delete button."""
    zone = await user_zone(call.store, call.scope, call.zone)
    active = await call.store.reminders.active(call.scope)
    if not active:
        return Reply((call.t("reminders_empty"),))
    numbers = await call.store.numbers.of_many(call.scope, "reminder", [r.id for r in active])
    lines = [call.t("reminders_head")] + [_line(r, numbers[r.id], call.lang, zone) for r in active]
    rows = tuple((Button(call.t("reminder_delete_id", id=numbers[r.id]), f"rem:cancel:{numbers[r.id]}"),)
                 for r in active[:LIST_BUTTONS])
    return Reply(("\n".join(lines),), buttons=rows)


async def press(call: Call, fields: list[str]) -> Pressed | None:
    """'rem:cancel:<number>' or 'rem:snooze:<10m|1h|tomorrow>:<number>' in the presser's scope.

    Raises NotFound when the scope has no reminder under the number (or it is no longer active, for cancel).
    """
    store, scope = call.store, call.scope
    if len(fields) == 2 and fields[0] == "cancel" and fields[1].isdigit():
        reminder = await store.reminders.cancel(scope, await store.numbers.item(scope, "reminder", int(fields[1])))
        done = call.t("reminder_cancelled", text=reminder.text)
        return Pressed(done, done)
    if len(fields) == 3 and fields[0] == "snooze" and fields[1] in SNOOZES and fields[2].isdigit():
        now = call.engine.clock()
        zone = await user_zone(store, scope, call.zone)
        reminder = await store.reminders.get(scope, await store.numbers.item(scope, "reminder", int(fields[2])))
        until = snooze_until(fields[1], datetime.fromtimestamp(now, zone), reminder.due_at, zone)
        snoozed = await store.reminders.snooze(scope, reminder.id, until.timestamp(), now=now)
        notice = call.t("reminder_snoozed", when=due_words(snoozed.due_at.astimezone(zone), "", call.lang))
        return Pressed(notice, f"⏰ {reminder.text}\n{notice}")
    return None
