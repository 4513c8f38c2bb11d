"""Reminder requests in the chat, answered before the model: each becomes a reminder with a computed time.

The time is never the model's guess: `scheduler.reminder_times.parse_reminder` computes it in the user's
zone, and an unclear request is asked back once; the answer completes the request only as the person's very next
message (`completes_ask_back`), with nothing else of the companion's in between and within the hour
(`answering.may_answer`): a later one is a new message, never the missing piece of an old request.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.conversation.answering import may_answer, sent_between
from bot.exchange import Button, Reply
from bot.texts import t
from memory import MemoryStore, Scope, StoredReminder
from scheduler.reminder_times import (
    AskBack,
    Reminder,
    explicit_request,
    original_case,
    parse_reminder,
)

MONTHS_EN = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
MAX_ANSWER = 120  # an answer to "when?" longer than this is a new topic, not the missing piece
ASKED = "reminder_asked"  # the scope_state key of a request asked back ("Wann soll ich dich erinnern?")


def due_words(due: datetime, repeat: str, lang: str) -> str:
    """'am Do, 26.11. um 09:00', 'jeden Montag um 08:00', 'every day at 07:00' (due already in the user's zone)."""
    clock = f"{due:%H:%M}"
    if repeat == "daily":
        return t(lang, "reminder_daily", time=clock)
    if repeat == "weekly":
        return t(lang, "reminder_weekly", weekday=t(lang, "weekdays").split()[due.weekday()], time=clock)
    date = f"{due:%d.%m.}" if lang == "de" else f"{due.day} {MONTHS_EN[due.month - 1]}"
    return t(lang, "reminder_once", weekday=t(lang, "weekdays_short").split()[due.weekday()], date=date, time=clock)


def confirmation(reminder: StoredReminder, number: int, lang: str, zone: ZoneInfo) -> Reply:
    """The deterministic answer to a reminder request, with a button (by the user's number) to take it back."""
    when = due_words(reminder.due_at.astimezone(zone), reminder.repeat, lang)
    return Reply((t(lang, "reminder_set", when=when, text=reminder.text),),
                 buttons=((Button(t(lang, "reminder_delete"), f"rem:cancel:{number}"),),))


def completed(asked: str, missing: str, answer: str, lang: str) -> str:
    """The asked-back request with the user's answer added ('… an den Zahnarzt' + 'um 9')."""
    if missing == "text" and not answer.lower().startswith(("an ", "daran", "to ", "about ", "that ")):
        connector = "to" if "remind" in asked.lower() else "an"
        return f"{asked} {connector} {answer}"
    return f"{asked} {answer}"


def completes_ask_back(asked: list[object] | None, previous_id: int | None) -> bool:
    """Whether a message may complete a request asked back: it is the person's very next message after the one
    that was asked back (`asked` is [request, what is missing, that message's id, when]; an older entry has no id,
    and one kept before issue 52 no time: the person then says it again)."""
    return (asked is not None and len(asked) > 3 and asked[2] is not None and asked[2] == previous_id
            and isinstance(asked[3], (int, float)))


async def user_zone(store: MemoryStore, scope: Scope, default: ZoneInfo) -> ZoneInfo:
    """The user's own time zone, or the deployment's."""
    prefs = await store.preferences.get(scope)
    return ZoneInfo(prefs.timezone) if prefs.timezone else default


class ReminderRequests:
    """Turns reminder requests into stored reminders before the model is asked; remembers one open question."""

    def __init__(self, store: MemoryStore, lang: str, zone: ZoneInfo, clock: Callable[[], float] = time.time) -> None:
        self.store, self.lang, self.zone, self.clock = store, lang, zone, clock

    async def answer(self, scope: Scope, text: str, message_id: int | None = None,
                     previous_id: int | None = None, sent_at: float | None = None) -> Reply | None:
        """The reply to a reminder request (a confirmation or a question back); None when the text is none.

        `message_id` is the message's own id (a request asked back is kept with it), `previous_id` the person's
        message before it (an answer completes a request asked back only right after it). Times ('in 3 Minuten',
        'morgen') count from `sent_at`, when the messenger says the person sent it (never later than now), else
        from now."""
        zone = await user_zone(self.store, scope, self.zone)
        handled = self.clock()
        now = datetime.fromtimestamp(handled if sent_at is None else min(handled, sent_at), zone)
        asked = await self.store.state.pop(scope, ASKED)  # [request, what is missing, message id], asked back last
        parsed = parse_reminder(text, now, zone)
        source = text
        if (parsed is None and asked is not None and completes_ask_back(asked, previous_id) and len(text) <= MAX_ANSWER
                and await self._nothing_between(scope, asked, message_id, now.timestamp())):
            source = completed(asked[0], asked[1], text, self.lang)
            parsed = parse_reminder(source, now, zone)
            if not isinstance(parsed, Reminder):
                return None  # still unclear: let the conversation go on
        if parsed is None:
            return None
        if isinstance(parsed, AskBack):
            if not explicit_request(source):
                return None  # "Jeden Montag um 8 gehe ich schwimmen" tells, it does not ask
            await self.store.state.put(scope, ASKED, [source, parsed.missing, message_id, handled], handled)
            return Reply((t(self.lang, f"reminder_ask_{parsed.missing}"),))
        stored = await self.store.reminders.add(scope, original_case(parsed.text, source), parsed.due.timestamp(),
                                                parsed.repeat, now=handled, reason=text)
        return confirmation(stored, await self.store.numbers.of(scope, "reminder", stored.id), self.lang, zone)

    async def _nothing_between(self, scope: Scope, asked: list[object], message_id: int | None, now: float) -> bool:
        """Whether the companion sent nothing but its question back between the request and this answer (a reminder
        firing, a check-in, a notice: the words may answer that), within the hour (`answering.may_answer`)."""
        request_id, asked_at = asked[2], asked[3]
        assert isinstance(request_id, int) and isinstance(asked_at, (int, float))  # `completes_ask_back` checked
        between = await self.store.messages.after(scope, request_id, 50, before_id=message_id)
        pushed = await sent_between(self.store, scope, float(asked_at), now)
        return may_answer(between, pushed, float(asked_at), now)
