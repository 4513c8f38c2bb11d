"""A proactive world for scenarios: the real Telegram channel against the fake Bot API, the scheduler's jobs on a
simulated clock, a scripted chat model that writes numbered check-ins and a background model that files one topic."""
from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Self
from zoneinfo import ZoneInfo

from bot.channels.push import ChannelSender
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.llm.writer import LLMWriter
from memory.models import Scope
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

BERLIN = ZoneInfo("Europe/Berlin")
USER = 42
STEP = 5 * 60  # the outbox reads the clock: jobs run at the end of their step (reminders here fall on 5 minutes)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class World:
    """Anna (Telegram user 42) and her companion; `async with World(...)` starts the fake and the channel."""

    def __init__(self, store: MemoryStore, data_dir: Path, start: datetime, topic: str = "",
                 due: datetime | None = None, silence: timedelta = timedelta(hours=24)) -> None:
        self.store, self.clock, self.silence = store, Clock(start.timestamp()), silence
        self.checkins = 0
        chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
        chat.responder = self._chat  # type: ignore[assignment]
        background.responder = lambda call: self._background(call, topic, due)  # type: ignore[assignment]
        self.engine = Engine(store, chat, background, EngineConfig(zone=BERLIN, relevance_floor=0.0), clock=self.clock)
        self.tg = FakeTelegram(token="123:ABC")
        self.data_dir = data_dir
        self.scheduler: Scheduler
        self.channel: TelegramChannel

    def _chat(self, call: Call) -> str:
        if "Why you may write now" in call.prompt:
            self.checkins += 1
            return f"Na, wie geht es dir? ({self.checkins})"
        return "Danke, dass du es mir erzählst."

    @staticmethod
    def _background(call: Call, topic: str, due: datetime | None) -> str:
        system = call.system[0].text
        if "extract memories" in system:
            ids = [int(i) for i in re.findall(r"^\[(\d+)\] user:", call.messages[0].content, re.MULTILINE)]
            topics = [{"text": topic, "due": due.isoformat(), "source_ids": ids[:1]}] if topic and due and ids else []
            return json.dumps({"facts": [], "content": [], "profile": [], "topics": topics})
        if "reflecting privately" in system:
            return json.dumps({"thoughts": ["Anna hat viel vor."], "concern": ""})
        if "diary" in system:
            return "Ein Tag mit Anna."
        return "ok"

    async def __aenter__(self) -> Self:
        await self.tg.__aenter__()
        self.channel = TelegramChannel(self.engine, Commands(self.engine), TelegramConfig(
            token=self.tg.token, base_url=self.tg.base_url, allowed_users=frozenset({str(USER)}), streaming=False))
        await self.channel.start()
        self.scheduler = Scheduler(self.store, "mnemo", LLMWriter(self.engine.background), self.engine,
                                   ChannelSender({"telegram": self.channel}), BERLIN, self.data_dir,
                                   silence=self.silence, clock=self.clock)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.channel.stop()
        await self.engine.close()
        await self.tg.__aexit__(kind, exc, tb)

    async def anna_writes(self, text: str, at: datetime) -> None:
        """Anna writes on Telegram at `at`; wait for the reply and for what is learned from it."""
        self.clock.now = at.timestamp()
        before = len(self.tg.sent)
        self.tg.send_text(USER, text)
        await self.tg.wait_for_sent(before + 1)
        await self.engine.drain()

    async def scope(self) -> Scope:
        return await self.engine.scope_for(f"tg:{USER}")

    async def drive(self, until: datetime, step: int = STEP) -> None:
        """Advance the clock in 5-minute steps, running every job that falls due (the planner, reminders, …)."""
        while self.clock.now < until.timestamp():
            start, self.clock.now = self.clock.now, self.clock.now + step
            await self.scheduler.run_due(start, self.clock.now)

    def shown(self) -> list[str]:
        """What the chat shows, in order: each message Telegram accepted."""
        return [m["text"] for m in self.tg.sent]

    async def pushed(self) -> list[tuple[str, str]]:
        """What the companion sent on its own, as stored: (local 'day hh:mm', text)."""
        messages = await self.store.messages.recent(await self.scope(), 1000)
        return [(m.created_at.astimezone(BERLIN).strftime("%d. %H:%M"), m.text) for m in messages
                if m.channel == "proactive"]
