"""Birthdays and the brief on Telegram: said in March, pushed the next March; /settings for the brief."""
from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_scheduler import Clock, drive, learnt, on_telegram

BERLIN = ZoneInfo("Europe/Berlin")


def extraction(call: Call) -> str:
    """The background model: Miriam and her birthday (and a garbage date), from the user's message."""
    if "extract memories" not in call.system[0].text:
        return "{}"
    ids = [int(i) for i in re.findall(r"^\[(\d+)\] user:", call.messages[0].content, re.M)]
    people = [{"name": "Miriam", "relation": "Schwester", "source_ids": ids[:1],
               "dates": [{"kind": "birthday", "month": 3, "day": 3, "year": 1986},
                         {"kind": "anniversary", "month": 2, "day": 31}]}] if ids else []
    return json.dumps({"facts": [], "content": [], "profile": [], "people": people})


@asynccontextmanager
async def miriam_said(store: MemoryStore, tmp_path: Path, clock: Clock, reply: Callable[[Call], str],
                      *commands: str) -> AsyncIterator[tuple[FakeTelegram, Engine, Scheduler]]:
    """User 42 on Telegram names Miriam's birthday (learnt), then sends each command; the chat model says `reply`."""
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = reply  # type: ignore[assignment]
    background.responder = extraction  # type: ignore[assignment]
    async with on_telegram(store, tmp_path, clock, chat, background) as (tg, engine, scheduler):
        tg.send_text(42, "Meine Schwester Miriam hat am 3. März Geburtstag, sie ist 1986 geboren.")
        await tg.wait_for_sent(1)
        await learnt(engine, "tg:42")
        for n, command in enumerate(commands, start=2):
            tg.send_text(42, command)
            await tg.wait_for_sent(n)
        yield tg, engine, scheduler


async def test_a_birthday_said_in_march_is_pushed_the_next_march(store: MemoryStore, tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 3, 10, 10, 0, tzinfo=BERLIN).timestamp())
    reply = lambda call: "Miriam wird sich freuen!" if "yearly date" in call.prompt else "Schön!"  # noqa: E731
    async with miriam_said(store, tmp_path, clock, reply, "/settings nachfragen aus", "/people") as (
        tg, engine, scheduler,
    ):
        await drive(scheduler, clock, datetime(2026, 3, 12, tzinfo=BERLIN))
        clock.now = datetime(2027, 3, 2, 12, 0, tzinfo=BERLIN).timestamp()  # a year later
        await drive(scheduler, clock, datetime(2027, 3, 4, tzinfo=BERLIN))
    texts = [m["text"] for m in tg.sent if str(m["chat_id"]) == "42"]
    assert "#1 Miriam – Schwester · 🎂 Geburtstag 3.3.1986" in texts[2]
    assert texts[3:] == ["Miriam wird sich freuen!\n\n🎂 Heute: Geburtstag von Miriam (Schwester) – 41 Jahre"]
    pushed = [item for item in await store.outbox.items(await engine.scope_for("tg:42")) if item.kind == "date"]
    assert [datetime.fromtimestamp(item.created_at, BERLIN).strftime("%Y-%m-%d %H:%M") for item in pushed] == [
        "2027-03-03 09:00"]


async def test_settings_for_the_brief_and_bad_values_change_nothing(engine: Engine, store: MemoryStore) -> None:
    commands = Commands(engine)

    async def say(text: str) -> str:
        reply = await commands.run("tg:7", text)
        assert reply is not None
        return "\n".join(reply.bubbles)

    assert "Morgengruß: aus" in await say("/settings")
    assert "Morgengruß: 07:30 Uhr, an den Tagen, an denen du morgens liest; ohne Neuigkeiten: ein kurzer Gruß" in \
        await say("/settings morgen 7:30")
    assert "Morgengruß: 07:30 Uhr, jeden Tag" in await say("/settings morgen täglich")
    assert "ohne Neuigkeiten: nichts" in await say("/settings morgen leer nichts")
    assert "am Vortag" in await say("/settings geburtstage vortag")
    assert "Ort fürs Wetter: 52.52,13.4" in await say("/settings ort 52.52, 13.40")
    before = await store.preferences.get(await engine.scope_for("tg:7"))
    for bad in ("/settings morgen 25:00", "/settings morgen später", "/settings ort Berlin", "/settings ort 99,13",
                "/settings geburtstage nie"):
        assert (await say(bad)).startswith("Das verstehe ich nicht – erwartet:"), bad
    assert await store.preferences.get(await engine.scope_for("tg:7")) == before
    assert "Morgengruß: aus" in await say("/settings morgen aus")


async def test_the_brief_arrives_on_telegram_with_the_reminder_in_the_persons_zone_and_the_birthday(
    store: MemoryStore, tmp_path: Path,
) -> None:
    tokyo = ZoneInfo("Asia/Tokyo")  # eight hours ahead of Berlin in March: the brief at 7:30 is 23:30 there
    clock = Clock(datetime(2027, 3, 1, 20, 0, tzinfo=tokyo).timestamp())
    reply = lambda call: "Guten Morgen, Anna!" if "morning brief" in call.prompt else "Schön!"  # noqa: E731
    async with miriam_said(store, tmp_path, clock, reply, "/settings nachfragen aus", "/settings morgen 7:30") as (
        tg, engine, scheduler,
    ):
        anna = await engine.scope_for("tg:42")
        await store.preferences.set(anna, "timezone", "Asia/Tokyo")
        await store.reminders.add(anna, "Zahnarzt", datetime(2027, 3, 3, 14, 0, tzinfo=tokyo).timestamp(),
                                  now=clock.now)
        await drive(scheduler, clock, datetime(2027, 3, 3, 12, 0, tzinfo=tokyo))
    texts = [m["text"] for m in tg.sent if str(m["chat_id"]) == "42"]
    birthday = "Geburtstag von Miriam (Schwester) – 41 Jahre"
    assert texts[3:] == [f"Guten Morgen, Anna!\n\n🎂 Morgen: {birthday}",
                         f"Guten Morgen, Anna!\n\n🎂 Heute: {birthday}\n⏰ 14:00 Zahnarzt"]
    made = [(item.kind, f"{datetime.fromtimestamp(item.created_at, tokyo):%d.%m. %H:%M}")
            for item in await store.outbox.items(anna)]
    assert made == [("morning", "02.03. 07:30"), ("morning", "03.03. 07:30")], "at 7:30 in Tokyo; no date push aside"
