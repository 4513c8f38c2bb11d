"""The morning brief and the day's yearly dates: facts gathered by the program, pushed in the companion's voice.

The program computes every item (today's reminders with their local times, open topics due today, the
birthdays and yearly dates of today and tomorrow with ages, one line of weather); the model writes only a
short opening in the companion's voice, and the program puts the items under it, so no date, time or age
is ever left to the model. A failing model or weather service changes the words, never whether the
message goes out. Both go through the outbox (kinds "morning" and "date"): they follow the quiet hours and
do not count against check-ins. A message already in the outbox for the local day is not made again
(a restart, a second run), and group chats get neither. The date push stands aside only for a brief that
carries the dates: one made and not given up, or one still to come that day; when the day's brief is
dropped or fails, the planner pushes the dates on its next run. A brief made after the day's date push (a
restart after both times) leaves out what the push named.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from memory import MemoryStore, OpenTopic, OutboxItem, Preferences, Scope, StoredReminder, is_group_scope, parse_place
from scheduler.delivery import OutboxSender
from scheduler.ports import Composer, Weather
from scheduler.weather_line import weather_line
from scheduler.yearly_dates import DueDate, dates_ahead

log = logging.getLogger(__name__)

LINES = {
    "de": {"greeting": "Guten Morgen!", "nothing": "Guten Morgen! Heute steht nichts an – hab einen schönen Tag.",
           "today": "Heute", "tomorrow": "Morgen", "years": " – {n} Jahre",
           "birthday": "🎂 {when}: Geburtstag von {who}", "anniversary": "💍 {when}: Jahrestag mit {who}",
           "other": "📅 {when}: ein besonderer Tag für {who}", "reminder": "⏰ {time} {text}", "topic": "💬 {text}",
           "weather": "🌤 {line}"},
    "en": {"greeting": "Good morning!", "nothing": "Good morning! Nothing on today – have a good day.",
           "today": "Today", "tomorrow": "Tomorrow", "years": " – {n} years",
           "birthday": "🎂 {when}: {who}'s birthday", "anniversary": "💍 {when}: anniversary with {who}",
           "other": "📅 {when}: a special day for {who}", "reminder": "⏰ {time} {text}", "topic": "💬 {text}",
           "weather": "🌤 {line}"},
}

LOST = frozenset({"dropped", "failed"})  # outbox states of a message given up unsent

VOICE = ("Write only a short opening in your own voice (one or two sentences, no list). The program puts "
         "these items under your words, so do not repeat their times, dates or ages and add none of your own:\n")


@dataclass(frozen=True)
class BriefFacts:
    """What the morning brief of one local day says, all computed by the program."""

    day: date
    reminders: tuple[tuple[datetime, str], ...] = ()  # local due time, the person's words
    topics: tuple[str, ...] = ()
    dates: tuple[DueDate, ...] = ()  # today and tomorrow
    weather: str = ""  # one line, or "" (not configured, or the service failed)

    @property
    def empty(self) -> bool:
        """Nothing to say: no reminder, topic or date (the weather alone is no news)."""
        return not (self.reminders or self.topics or self.dates)


def brief_facts(now: datetime, reminders: Sequence[StoredReminder], topics: Sequence[OpenTopic],
                dates: Sequence[DueDate], weather: str = "") -> BriefFacts:
    """The brief of the local day of `now` (aware, in the person's zone): reminders and topics due that day."""
    zone = now.tzinfo
    start = datetime.combine(now.date(), time(0), zone)
    end = datetime.combine(now.date() + timedelta(days=1), time(0), zone)
    due = tuple((r.due_at.astimezone(zone), r.text) for r in reminders if start <= r.due_at < end)
    open_today = tuple(tp.text for tp in topics if tp.due_at is not None and start <= tp.due_at < end)
    return BriefFacts(now.date(), tuple(sorted(due)), open_today, tuple(dates), weather)


def date_line(due: DueDate, today: date, lang: str) -> str:
    """'🎂 Heute: Geburtstag von Miriam (Schwester) – 40 Jahre'."""
    words = LINES.get(lang, LINES["de"])
    when = words["today"] if due.day == today else words["tomorrow"]
    who = f"{due.person} ({due.relation})" if due.relation else due.person
    years = words["years"].format(n=due.years) if due.years is not None else ""
    return words.get(due.kind, words["other"]).format(when=when, who=who) + years


def item_lines(facts: BriefFacts, lang: str) -> list[str]:
    """The brief's items as the person reads them, in the order: dates, reminders, topics, weather."""
    words = LINES.get(lang, LINES["de"])
    lines = [date_line(d, facts.day, lang) for d in facts.dates]
    lines += [words["reminder"].format(time=f"{at:%H:%M}", text=text) for at, text in facts.reminders]
    lines += [words["topic"].format(text=text) for text in facts.topics]
    lines += [words["weather"].format(line=facts.weather)] if facts.weather else []
    return lines


def model_detail(facts: BriefFacts) -> str:
    """The facts as the model reads them (English, every date and time spelled out)."""
    parts = [f"Today is {facts.day:%A %Y-%m-%d}."]
    parts += [d.fact(facts.day) for d in facts.dates]
    parts += [f"Reminder today at {at:%H:%M}: {text}" for at, text in facts.reminders]
    parts += [f"Open topic to ask about today: {text}" for text in facts.topics]
    parts += [facts.weather] if facts.weather else []
    if facts.empty:
        parts.append("Nothing is planned today.")
    return VOICE + "\n".join(parts)


def message(opening: str, facts: BriefFacts, lang: str, fallback: str) -> str:
    """The opening (the model's, or the fixed words when it failed) with the computed items under it."""
    lines = item_lines(facts, lang)
    head = opening.strip() or fallback
    return "\n".join([head, "", *lines]) if lines else head


async def compose(composer: Composer, scope: Scope, reason: str, facts: BriefFacts, lang: str, fallback: str) -> str:
    """The message in the companion's voice; the fixed opening when the model fails or declines."""
    try:
        opening = await composer.compose_proactive(scope, reason, model_detail(facts))
    except Exception:
        log.warning("the model could not write the %s for scope %s; it goes out with the fixed words", reason,
                    scope.id, exc_info=True)
        opening = ""
    return message(opening, facts, lang, fallback)


def brief_today(prefs: Preferences, reads_in_the_morning: bool) -> bool:
    """Whether the brief goes out today: it is on, and every day was asked for or the person reads mornings."""
    return bool(prefs.morning) and (prefs.morning_days == "daily" or reads_in_the_morning)


def brief_ahead(prefs: Preferences, reads_in_the_morning: bool, local: datetime) -> bool:
    """Whether the day's brief is still to come: it goes out today and its time is now or later."""
    if not brief_today(prefs, reads_in_the_morning):
        return False
    hour, minute = (int(x) for x in prefs.morning.split(":"))
    return (local.hour, local.minute) <= (hour, minute)


def brief_carries_dates(brief_status: str | None, ahead: bool) -> bool:
    """Whether the day's brief carries the dates: made and not given up, or (not made yet) still to come."""
    return ahead if brief_status is None else brief_status not in LOST


def dates_to_push(prefs: Preferences, today: date, dates: Sequence[DueDate], brief_carries: bool) -> list[DueDate]:
    """The dates the day's own push names: today's (or, on the eve setting, tomorrow's) unless the brief has them."""
    if brief_carries:
        return []
    day = today + timedelta(days=1) if prefs.date_notice == "eve" else today
    return [d for d in dates if d.day == day]


def of_the_day(items: Sequence[OutboxItem], kind: str, today: date, zone: ZoneInfo) -> OutboxItem | None:
    """The outbox item of this kind made on the person's local day, if any."""
    return next((item for item in items
                 if item.kind == kind and datetime.fromtimestamp(item.created_at, zone).date() == today), None)


async def weather_for(weather: Weather | None, prefs: Preferences, day: date, zone: ZoneInfo, lang: str) -> str:
    """One line of weather for the person's place, or '' (no service, no place, or it failed: logged)."""
    place = parse_place(prefs.place) if prefs.place else None
    if weather is None or place is None:
        return ""
    try:
        return weather_line(await weather.forecast(place[0], place[1], day, zone.key), lang)
    except Exception as exc:
        log.warning("the weather service failed (%s); the brief goes out without weather", exc)
        return ""


@dataclass(frozen=True)
class Context:
    """What the brief and the date push need besides the scope and the time."""

    store: MemoryStore
    composer: Composer
    outbox: OutboxSender
    zone: ZoneInfo  # the deployment's; a person's own setting wins
    lang: str
    weather: Weather | None = None


async def local_now(ctx: Context, scope: Scope, now: float) -> tuple[Preferences, ZoneInfo, datetime]:
    """The person's preferences, zone and local time."""
    prefs = await ctx.store.preferences.get(scope)
    zone = ZoneInfo(prefs.timezone) if prefs.timezone else ctx.zone
    return prefs, zone, datetime.fromtimestamp(now, zone)


async def send_brief(ctx: Context, scope: Scope, now: float, reads_in_the_morning: bool) -> str:
    """Send the morning brief of the person's local day, when it is due; returns what happened, in words."""
    if is_group_scope(scope.user_id):
        return "group chat: no brief"
    prefs, zone, local = await local_now(ctx, scope, now)
    if not brief_today(prefs, reads_in_the_morning):
        return "not today: the person rarely reads in the morning on this weekday"
    items = await ctx.store.outbox.items(scope)  # what was made already (a restart, a second run)
    if of_the_day(items, "morning", local.date(), zone) is not None:
        return "already made for today"
    dates = dates_ahead(await ctx.store.person_dates.all(scope), now, zone)
    if of_the_day(items, "date", local.date(), zone) is not None:
        # The day's date push came first (a restart after both times): what it named is not said twice.
        pushed = dates_to_push(prefs, local.date(), dates, brief_carries=False)
        dates = [d for d in dates if d not in pushed]
    facts = brief_facts(local, await ctx.store.reminders.active(scope), await ctx.store.topics.list(scope), dates,
                        await weather_for(ctx.weather, prefs, local.date(), zone, ctx.lang))
    if facts.empty and prefs.morning_empty == "nothing":
        return "nothing to say, and the person chose silence then"
    words = LINES.get(ctx.lang, LINES["de"])
    fallback = words["nothing"] if facts.empty and not facts.weather else words["greeting"]
    text = await compose(ctx.composer, scope, "morning brief", facts, ctx.lang, fallback)
    await ctx.outbox.deliver(scope, text, kind="morning")
    return "sent"


async def brief_lost(ctx: Context, scope: Scope, now: float) -> bool:
    """Whether the brief of the person's local day was given up (dropped, or failed for good) and no date push
    was made since: the dates it carried may still need their own."""
    _, zone, local = await local_now(ctx, scope, now)
    items = await ctx.store.outbox.items(scope)
    brief = of_the_day(items, "morning", local.date(), zone)
    return brief is not None and brief.status in LOST and of_the_day(items, "date", local.date(), zone) is None


async def push_dates(ctx: Context, scope: Scope, now: float, reads_in_the_morning: bool) -> str:
    """Push the day's yearly dates (or tomorrow's, on the eve setting); returns what happened, in words."""
    if is_group_scope(scope.user_id):
        return "group chat: no date push"
    prefs, zone, local = await local_now(ctx, scope, now)
    items = await ctx.store.outbox.items(scope)
    brief = of_the_day(items, "morning", local.date(), zone)
    carries = brief_carries_dates(brief.status if brief else None, brief_ahead(prefs, reads_in_the_morning, local))
    ahead = dates_ahead(await ctx.store.person_dates.all(scope), now, zone)
    due = dates_to_push(prefs, local.date(), ahead, carries)
    if not due:
        return "no date to push" if not carries else "the morning brief carries the dates"
    if of_the_day(items, "date", local.date(), zone) is not None:
        return "already made for today"
    facts = BriefFacts(local.date(), dates=tuple(due))
    text = await compose(ctx.composer, scope, "yearly date", facts, ctx.lang, "")
    await ctx.outbox.deliver(scope, text.strip(), kind="date")
    return "sent"
