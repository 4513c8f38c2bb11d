"""A simulated month of one person's proactive messages: when mnemo wrote first, why, and whether she answered.

Anna (Berlin) writes on weekday evenings and late on weekend mornings, as a seeded random habit; she answers
a message that reaches her in those hours soon, others at her next session. On day 2 she names her sister's
birthday, on day 3 she asks for the morning brief (on the days she reads in the morning), on day 10 she
announces a week's holiday. Everything runs through the real engine, the real scheduler (its jobs fired on a
simulated clock in 5-minute steps), the real Telegram channel against the local fake Bot API and scripted
models; March 2027 includes the switch to summer time. Prints one line per message mnemo sent on its own: a
check-in answered or not (and after how long), a brief or date push read when she next wrote; then the hours
learned by the month's end.

    .venv/bin/python bench/month.py [--seed 7] [--year 2027 --month 3]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.channels.push import ChannelSender  # noqa: E402
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig  # noqa: E402
from bot.commands.runner import Commands  # noqa: E402
from bot.conversation.engine import Engine, EngineConfig  # noqa: E402
from bot.llm.writer import LLMWriter  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from scheduler.rhythm import describe, week_of_likely_hours  # noqa: E402
from scheduler.service import Scheduler  # noqa: E402
from tests.fakes.embedder import FakeEmbedder  # noqa: E402
from tests.fakes.llm import Call, ScriptedLLM  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402

BERLIN = ZoneInfo("Europe/Berlin")
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
ANNA = 42
STEP = 300.0


@dataclass
class Sent:
    """One message mnemo sent on its own, and what Anna did with it."""

    at: datetime
    text: str
    answered: datetime | None = None


def chat_model(call: Call) -> str:
    """The chat model: a check-in names its reason (from the prompt), a reply is short."""
    reason = re.search(r"Why you may write now: ([^:\n]+)", call.prompt)
    if reason:
        return f"Hallo Anna! [{reason.group(1)}]"
    return "Schön, dass du schreibst."


def background_model(call: Call) -> str:
    """The background model: Miriam's birthday from the message that names it; nothing else is learned."""
    system = call.system[0].text
    if "extract memories" in system:
        ids = [int(i) for i in re.findall(r"^\[(\d+)\] user: .*Geburtstag", call.messages[0].content, re.M)]
        people = [{"name": "Miriam", "relation": "Schwester", "source_ids": ids[:1],
                   "dates": [{"kind": "birthday", "month": 3, "day": 20}]}] if ids else []
        return json.dumps({"facts": [], "content": [], "profile": [], "people": people})
    if "reflecting privately" in system:
        return json.dumps({"thoughts": ["Anna hat viel zu tun."], "concern": ""})
    if "diary" in system:
        return "Ein Tag mit Anna."
    return "{}"


def sessions(first: datetime, days: int, rng: random.Random) -> list[datetime]:
    """When Anna opens the chat: weekday evenings (70 %), weekend late mornings (50 %)."""
    out = []
    for day in range(days):
        base = first + timedelta(days=day)
        if base.weekday() < 5 and rng.random() < 0.7:
            out.append(base.replace(hour=19, minute=30) + timedelta(minutes=rng.randrange(0, 120, 5)))
        elif base.weekday() >= 5 and rng.random() < 0.5:
            out.append(base.replace(hour=10) + timedelta(minutes=rng.randrange(0, 120, 5)))
    return out


def answered(sent: list[Sent], now: datetime) -> None:
    """Anna wrote at `now`: every message before it that she had not answered (or read) is answered now."""
    for s in sent:
        if s.answered is None and s.at <= now:
            s.answered = now


def reads_now(at: datetime) -> bool:
    """Whether a message reaching Anna at `at` is read soon: her evenings and weekend late mornings."""
    return 18 <= at.hour < 23 if at.weekday() < 5 else 9 <= at.hour < 13


async def month(year: int, month_no: int, seed: int, data: Path) -> tuple[list[Sent], str]:
    """Run the month; the messages mnemo sent on its own, with Anna's answers, and the hours it learned."""
    rng = random.Random(seed)
    first = datetime(year, month_no, 1, tzinfo=BERLIN)
    days = ((first + timedelta(days=32)).replace(day=1) - first).days
    said = {2: "Meine Schwester Miriam hat am 20. März Geburtstag.", 3: "/settings morgen 7:30",
            10: "Ab Montag bin ich eine Woche im Urlaub!"}
    store = await MemoryStore.open(data / "mnemo.sqlite3", FakeEmbedder())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = chat_model  # type: ignore[assignment]
    background.responder = background_model  # type: ignore[assignment]
    clock_now = [first.timestamp()]
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN, relevance_floor=0.0), clock=lambda: clock_now[0])
    sent: list[Sent] = []
    pending: list[datetime] = []  # when Anna will answer what she has read
    plan = sessions(first, days, rng)
    away = (first + timedelta(days=14), first + timedelta(days=21))  # the holiday she announces on day 10
    plan = [s for s in plan if not away[0] <= s < away[1]]
    async with FakeTelegram(token="123:ABC") as tg:
        channel = TelegramChannel(engine, Commands(engine), TelegramConfig(
            token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(ANNA)}), streaming=False))
        await channel.start()
        scheduler = Scheduler(store, "mnemo", LLMWriter(background), engine, ChannelSender({"telegram": channel}),
                              BERLIN, data, clock=lambda: clock_now[0])

        async def write(text: str) -> None:
            before = len(tg.sent)
            tg.send_text(ANNA, text)
            await tg.wait_for_sent(before + 1)
            await engine.drain()

        try:
            end = first + timedelta(days=days)
            while clock_now[0] < end.timestamp():
                start, clock_now[0] = clock_now[0], clock_now[0] + STEP
                now = datetime.fromtimestamp(clock_now[0], BERLIN)
                before = len(tg.sent)
                await scheduler.run_due(start, clock_now[0])
                for message in tg.sent[before:]:
                    sent.append(Sent(now, str(message.get("text", ""))))
                    if is_checkin(str(message.get("text", ""))) and not away[0] <= now < away[1]:
                        soon = reads_now(now)
                        pending.append(now + timedelta(minutes=rng.randrange(10, 60, 5)) if soon else
                                       next((s for s in plan if s > now), end))
                if plan and now >= plan[0]:
                    session = plan.pop(0)
                    text = said.pop(session.day, None) if session.day in said else None
                    await write(text or "Hallo, heute war viel los.")
                    pending = [p for p in pending if p > now]
                    answered(sent, now)
                elif pending and now >= min(pending):
                    pending.remove(min(pending))
                    await write("Danke, mir geht's gut.")
                    answered(sent, now)
                for day, text in list(said.items()):  # what she meant to say on a day she did not write
                    if now.day == day and now.hour == 21 and now.minute == 0:
                        said.pop(day)
                        await write(text)
            scope = await engine.scope_for(f"tg:{ANNA}")
            hist = await store.rhythm.histogram(scope, clock_now[0])
            hours = describe(week_of_likely_hours(hist, (await store.preferences.get(scope)).hours()), DAY_NAMES)
        finally:
            await channel.stop()
            await engine.close()
            await store.close()
    return sent, hours


ASKED_FOR = {"morning brief": "morning brief", "yearly date": "birthday push"}  # not check-ins: she asked


def kind(text: str) -> str:
    """What a pushed message was: the reason the program gave the model, from its first line."""
    reason = re.search(r"\[([^\]]+)\]", text.split("\n")[0])
    if text.startswith("📔"):
        return "diary"
    if text.startswith("⏰"):
        return "reminder"
    if reason is None:
        return "other"
    return ASKED_FOR.get(reason.group(1), f"check-in ({reason.group(1)})")


def is_checkin(text: str) -> bool:
    """Whether a pushed message was a check-in (what the back-off and 'never twice unanswered' are about)."""
    return kind(text).startswith("check-in")


def outcome(s: Sent) -> str:
    """What Anna did with a message: a check-in answered (late ones count as ignored); the others read when she
    next wrote (she asked for them: no answer is expected, the next message shows she has seen it)."""
    after = s.answered - s.at if s.answered else None
    if after is None:
        return "not answered" if is_checkin(s.text) else "not read (no message after it)"
    hours = f"{after.total_seconds() / 3600:.1f} h"
    if not is_checkin(s.text):
        return f"read: she wrote after {hours}"
    return f"answered after {hours}" + (" (late: counts as ignored)" if after > timedelta(hours=12) else "")


def shown(text: str) -> str:
    """The computed items of a message (its second and third line), shortened."""
    lines = text.split("\n")
    return " / ".join(line for line in lines[1:3] if line)[:70] if len(lines) > 1 else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--year", type=int, default=2027)
    parser.add_argument("--month", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        sent, hours = asyncio.run(month(args.year, args.month, args.seed, Path(tmp)))
    for s in sent:
        print(f"{s.at:%a %d.%m. %H:%M %Z}  {kind(s.text):28} {outcome(s):48} {shown(s.text)}")
    checkins = [s for s in sent if is_checkin(s.text)]
    print(f"\n{len(sent)} messages on its own, {len(checkins)} check-ins "
          f"({sum(1 for s in checkins if s.answered)} answered); simulated in {time.perf_counter() - started:.0f} s")
    print(f"hours learned at the month's end (likely to read): {hours}")


if __name__ == "__main__":
    main()
