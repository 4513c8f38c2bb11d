"""Delivery through the outbox: record first, send, mark sent; failed sends retried with backoff.

Before each try, the pure `verdict` decides whether the message still fits its moment:
- a check-in is dropped (status `dropped`, the reason kept) when the try falls outside the person's active
  hours or more than 3 h after it was written (the quiet time after a message: the reason it was written
  for may be stale);
- a reminder is always delivered, and when it arrives more than 5 minutes after its due time it says so:
  "(verspätet – fällig war 14:00)", in the person's zone;
- a diary push is delivered within an hour of being written (the person chose that time) or later within
  their active hours; outside them it waits for their start, and after a day it is dropped (/diary shows it);
- a morning brief goes out within an hour of its time (the person chose it, even before their active hours),
  later only within the active hours, and after 3 h it is dropped (it is no news by noon);
- a birthday or yearly date ("date") goes out within the active hours, waits for their start outside them,
  and is dropped after a day;
- a saved notice ("notice", "💾 gemerkt: …") follows the person's own message, so it goes out at any hour, but
  only within an hour of being written (later it is no news); it is not logged as the companion's words.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from memory import ButtonRows, MemoryStore, OutboxItem, Scope
from scheduler.errors import RetryLater
from scheduler.planner import QUIET_AFTER_MESSAGE, within_active_hours
from scheduler.ports import Sender

log = logging.getLogger(__name__)

# Seconds before the 1st, 2nd, … retry; after the last one the message is given up (status failed).
BACKOFF = (30.0, 120.0, 600.0, 3600.0, 3 * 3600.0)

CHECKIN_FRESH = QUIET_AFTER_MESSAGE  # a check-in older than this is not sent any more
LATE_AFTER = timedelta(minutes=5)  # a reminder delivered later than this after its due time says so
DIARY_ON_TIME = timedelta(hours=1)  # a diary push this young goes out at any hour
DIARY_KEEP = timedelta(days=1)  # an older diary push is dropped
MORNING_KEEP = timedelta(hours=3)  # an older morning brief is dropped
NOTICE_KEEP = timedelta(hours=1)  # an older saved notice is dropped
CLAIM_SECONDS = 120.0  # how long a worker holds a message it sends (another takes it over after that)
UNLOGGED = frozenset({"notice"})  # kinds that are no words of the companion: not written into the conversation

LATE = {"de": "(verspätet – fällig war {time})", "en": "(late – it was due at {time})"}
OTHER_DAY = {"de": "%d.%m. %H:%M", "en": "%d %b %H:%M"}


def next_try(attempts: int, now: float, wait: float = 0.0) -> float | None:
    """When to try again after `attempts` failed tries (never before the `wait` a channel asked for), or None."""
    return now + max(BACKOFF[attempts], wait) if attempts < len(BACKOFF) else None


@dataclass(frozen=True)
class Verdict:
    """What to do with an outbox item at one try: 'send', 'drop' or 'wait' (until `until`)."""

    action: str
    reason: str = ""
    until: datetime | None = None
    late_for: datetime | None = None  # a reminder's due time, local, when it arrives late


def next_start(now: datetime, hours: tuple[int, int]) -> datetime:
    """The next moment the person's active hours begin (now is in their zone)."""
    start = now.replace(hour=hours[0], minute=0, second=0, microsecond=0)
    return start if start > now else start + timedelta(days=1)


def verdict(kind: str, written: datetime, due: datetime | None, now: datetime, hours: tuple[int, int]) -> Verdict:
    """Decide whether an outbox item still fits its moment; all times are aware, in the person's zone."""
    zone = now.tzinfo
    assert zone is not None, "verdict needs the person's local time"
    if kind == "checkin":
        if now - written > CHECKIN_FRESH:
            return Verdict("drop", f"missed its window: written {written:%H:%M}, more than 3 h ago")
        if not within_active_hours(now, zone, hours):
            return Verdict("drop", f"missed its window: {now:%H:%M} is outside the active hours {hours[0]}-{hours[1]}")
        return Verdict("send")
    if kind == "reminder":
        meant = due or written
        return Verdict("send", late_for=meant if now - meant > LATE_AFTER else None)
    if kind == "diary":
        if now - written <= DIARY_ON_TIME or within_active_hours(now, zone, hours):
            return Verdict("send")
        if now - written > DIARY_KEEP:
            return Verdict("drop", "a diary push older than a day (/diary shows the entry)")
        return Verdict("wait", "outside the active hours", until=next_start(now, hours))
    if kind == "morning":
        if now - written <= DIARY_ON_TIME:
            return Verdict("send")
        if now - written > MORNING_KEEP:
            return Verdict("drop", f"a morning brief written at {written:%H:%M} is no news any more")
        if within_active_hours(now, zone, hours):
            return Verdict("send")
        return Verdict("wait", "outside the active hours", until=next_start(now, hours))
    if kind == "date":
        if within_active_hours(now, zone, hours):
            return Verdict("send")
        if now - written > DIARY_KEEP:
            return Verdict("drop", "a yearly date's push older than a day")
        return Verdict("wait", "outside the active hours", until=next_start(now, hours))
    if kind == "notice" and now - written > NOTICE_KEEP:
        return Verdict("drop", f"a saved notice written at {written:%H:%M} is no news any more")
    return Verdict("send")


def late_note(due: datetime, now: datetime, lang: str) -> str:
    """'(verspätet – fällig war 14:00)': the due time, with the date when it was another day."""
    shown = f"{due:%H:%M}" if due.date() == now.date() else due.strftime(OTHER_DAY.get(lang, OTHER_DAY["de"]))
    return LATE.get(lang, LATE["de"]).format(time=shown)


class OutboxSender:
    """A Sender that never loses a message: each one is recorded before it is sent and marked after."""

    def __init__(self, store: MemoryStore, channel: Sender, clock: Callable[[], float] = time.time,
                 zone: ZoneInfo | None = None, lang: str = "de") -> None:
        self.store = store
        self.channel = channel
        self.clock = clock
        self.zone = zone or ZoneInfo("Europe/Berlin")  # the deployment's zone; a person's own setting wins
        self.lang = lang
        # This process's name when several workers share the database: each message is claimed by the one sending it.
        self.worker: str | None = None
        self.claim_seconds = CLAIM_SECONDS  # how long its claim on a message it sends outlives a worker that died
        # Items this process is sending right now: its own planner's flush must not take them again (on PostgreSQL
        # the claim keeps other workers off; it cannot keep off the worker that holds it).
        self._in_flight: set[int] = set()

    async def deliver(self, scope: Scope, text: str, kind: str = "checkin", *, buttons: ButtonRows = (),
                      due_at: float | None = None) -> bool:
        """Record the message and try to send it now; True when it went out at once.

        Only kind "checkin" is logged as proactive (and so counts against the check-in budget).
        """
        item = await self.store.outbox.record(scope, kind, text, self.clock(), buttons, due_at, await self.claim())
        return await self._send(scope, item)

    async def claim(self) -> tuple[str, float] | None:
        """Who holds a message recorded now to be sent at once: this worker, for a while, on the database's clock
        (as every claim is judged); None in one process."""
        if not self.worker:
            return None
        return self.worker, await self.store.leases.on_database_clock(self.clock()) + self.claim_seconds

    async def send(self, scope: Scope, item: OutboxItem) -> bool:
        """Try to send a message recorded elsewhere (`Reminders.fire`) now; True when it went out."""
        return await self._send(scope, item)

    async def flush(self, scopes: list[Scope]) -> int:
        """Retry every due message (after a failure or a restart); returns how many went out."""
        by_id = {s.id: s for s in scopes}
        sent = 0
        due = (await self.store.outbox.claim_due(self.worker, self.clock(), self.claim_seconds) if self.worker
               else await self.store.outbox.due(self.clock()))
        for item in due:
            scope = by_id.get(item.scope_id)
            if scope is not None and item.id not in self._in_flight:
                sent += await self._send(scope, item)
        return sent

    async def _decide(self, scope: Scope, item: OutboxItem, now: float) -> tuple[Verdict, datetime]:
        """The verdict for this try, with now in the person's zone."""
        prefs = await self.store.preferences.get(scope)
        zone = ZoneInfo(prefs.timezone) if prefs.timezone else self.zone
        local = datetime.fromtimestamp(now, zone)
        written = datetime.fromtimestamp(item.created_at or now, zone)
        due = datetime.fromtimestamp(item.due_at, zone) if item.due_at is not None else None
        return verdict(item.kind, written, due, local, prefs.hours()), local

    async def _send(self, scope: Scope, item: OutboxItem) -> bool:
        if item.id in self._in_flight:
            return False
        self._in_flight.add(item.id)
        # A try, once begun, runs to its end and records what it did even when the job sending is cancelled (a worker
        # that lost the scheduler's lease stops its jobs): cancelled while the channel's call was under way, a message
        # that went out was left pending and sent again by the next worker once its claim ran out (a CI chaos round,
        # a reminder due right after a paused database). The item stays in flight here until the try ends.
        return await asyncio.shield(self._send_once(scope, item))

    async def _send_once(self, scope: Scope, item: OutboxItem) -> bool:
        try:  # a due list read before another try of this worker sent the item still holds it: read it again
            return await self.store.outbox.pending(item.id) and await self._try(scope, item)
        finally:
            self._in_flight.discard(item.id)

    async def _try(self, scope: Scope, item: OutboxItem) -> bool:
        """One try: drop, postpone or send the item, and record the outcome."""
        now, wait = self.clock(), 0.0
        decided, local = await self._decide(scope, item, now)
        if decided.action == "drop":
            await self.store.outbox.drop(item.id, decided.reason)
            log.info("outbox item %s (%s) dropped: %s", item.id, item.kind, decided.reason)
            return False
        if decided.action == "wait" and decided.until is not None:
            await self.store.outbox.postpone(item.id, decided.until.timestamp(), decided.reason)
            log.info("outbox item %s (%s) waits until %s: %s", item.id, item.kind, decided.until, decided.reason)
            return False
        text = item.text
        if decided.late_for is not None:
            text = f"{text}\n{late_note(decided.late_for, local, self.lang)}"
        try:
            # Buttons only when there are some: senders written before buttons existed take just the text.
            delivered = await (self.channel.deliver(scope, text, buttons=item.buttons) if item.buttons
                               else self.channel.deliver(scope, text))
            error = "" if delivered else "the channel did not accept the message"
        except RetryLater as exc:
            delivered, error, wait = False, f"the channel asked to wait {exc.seconds:g} s", exc.seconds
            log.warning("outbox item %s: %s", item.id, error)
        except Exception as exc:
            delivered, error = False, f"{type(exc).__name__}: {exc}"
            log.warning("sending outbox item %s failed: %s", item.id, error)
        if not delivered:
            retry = next_try(item.attempts, now, wait)
            await self.store.outbox.mark_failed(item.id, error, retry)
            if retry is None:
                log.error("outbox item %s given up after %d tries: %s", item.id, item.attempts + 1, error)
            return False
        await self._recorded(scope, item, text, now)  # shielded with the whole try (`_send`)
        return True

    async def _recorded(self, scope: Scope, item: OutboxItem, text: str, now: float) -> None:
        """Mark a delivered message sent and log it as the companion's words (a saved notice: only marked)."""
        await self.store.outbox.mark_sent(item.id, now)
        if item.kind not in UNLOGGED:
            await self.store.messages.add(scope, "assistant", text, channel="proactive", created_at=now,
                                          proactive=item.kind == "checkin", kind=item.kind)
