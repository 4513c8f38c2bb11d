"""The Telegram channel with commands and a scheduler in a child process, run until the test kills it.

    python -m tests.scenarios.telegram_child DB BASE_URL MODE

MODE `normal`: the models answer at once; `writer-hangs`: the background writer (diary, reflection) never
answers; `stream-hangs`: the chat model streams half of its reply, slowly, and then never finishes. The child
prints "ready" once it polls, and "writer called" / "streaming" when a model is reached.
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.llm.port import Completion, CompletionRequest, Usage
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.fakes.embedder import FakeEmbedder

STREAMED = ("Das klingt nach einem schönen Tag im Park, und ich freue mich mit dir. Was hast du dort "
            "gemacht, und wer war dabei? Erzähl mir alles, ich habe Zeit und höre gern zu.")
THOUGHTS = '{"thoughts": ["Anna wirkt heute gelöst."]}'
DIARY = "📔 Heute hat Anna vom Park erzählt."


async def writer_answer(instructions: str, material: str, *, max_tokens: int = 800) -> str:
    """The background writer of the tests: thoughts as JSON for a reflection, a line for the diary."""
    return THOUGHTS if '"thoughts"' in instructions else DIARY


class Model:
    """A chat and background model for the child: answers at once, or streams half a reply and hangs."""

    model = "child"

    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def complete(self, request: CompletionRequest) -> Completion:
        on_text = request.on_text
        if request.json_schema is not None:
            return Completion('{"facts": [], "content": [], "profile": []}', (), Usage(1, 1), self.model)
        if self.mode == "stream-hangs" and on_text is not None:
            print("streaming", flush=True)
            words = STREAMED.split(" ")
            for end in range(1, len(words) // 2):
                await on_text(" ".join(words[:end]))
                await asyncio.sleep(0.15)
            await asyncio.Event().wait()
        return Completion("Schön.", (), Usage(1, 1), self.model)


async def main(db: str, base_url: str, mode: str, database_url: str = "") -> None:
    store = await MemoryStore.open(db, FakeEmbedder(), semantic_dedupe=0.97, database_url=database_url or None)
    model = Model(mode)
    engine = Engine(store, model, model, EngineConfig(relevance_floor=0.0))  # type: ignore[arg-type]

    async def writer(instructions: str, material: str, *, max_tokens: int = 800) -> str:
        print("writer called", flush=True)
        if mode == "writer-hangs":
            await asyncio.Event().wait()
        return await writer_answer(instructions, material, max_tokens=max_tokens)

    commands = Commands(engine)
    zone = ZoneInfo("Europe/Berlin")
    commands.scheduler = Scheduler(store, "mnemo", writer, engine, None, zone, Path(db).parent)  # type: ignore[arg-type]
    config = TelegramConfig(token="123:ABC", base_url=base_url, allowed_users=frozenset({"42"}),
                            streaming=mode == "stream-hangs")
    await TelegramChannel(engine, commands, config).start()
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
