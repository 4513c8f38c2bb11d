"""Scenarios on Telegram (the real python-telegram-bot Application against the fake Bot API), streaming on:
an open yes/no question meets a crisis message, an everyday message, and a reminder request."""
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.help_lines import crisis_help
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

JSON = dict[str, Any]
ANNA = 42
HELP = crisis_help("DE", "de")

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


@pytest.fixture
async def world(store: MemoryStore) -> AsyncIterator[tuple[FakeTelegram, ScriptedLLM, Engine]]:
    """Anna on Telegram with a streaming channel; the chat model is scripted per test."""
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    background.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    chat.chunks = 6
    async with FakeTelegram(token="123:ABC") as tg:
        engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
        config = TelegramConfig(token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(ANNA)}),
                                streaming=True)
        channel = TelegramChannel(engine, Commands(engine), config)
        await channel.start()
        try:
            yield tg, chat, engine
        finally:
            await channel.stop()
            await engine.drain()
            await engine.close()
    await asyncio.sleep(0)


async def say(tg: FakeTelegram, text: str) -> list[JSON]:
    """Anna writes; the messages and edits the bot made for it, once its reply is final."""
    before_sent, before_edits = len(tg.sent), len(tg.edits)
    tg.send_text(ANNA, text)
    await tg.wait_until(lambda: len(tg.sent) > before_sent, what=f"a reply to {text!r}")
    await asyncio.sleep(0.3)  # a streamed reply's last edit
    new = tg.sent[before_sent:]
    ids = {m["message_id"] for m in new}
    return new + [e for e in tg.edits[before_edits:] if e.get("message_id") in ids]


def final_text(tg: FakeTelegram, shown: list[JSON]) -> str:
    """What the person sees of the reply now (its new messages as they stand after every edit)."""
    ids = dict.fromkeys(m["message_id"] for m in shown if "kind" not in m)
    return "\n\n".join(tg.messages[i]["text"] for i in ids)


async def test_a_pending_question_never_swallows_a_crisis_or_an_everyday_message(
    world: tuple[FakeTelegram, ScriptedLLM, Engine], store: MemoryStore,
) -> None:
    tg, chat, engine = world
    chat.enqueue("[RULE: Keine Emojis verwenden.] Alles klar, keine Emojis mehr.")
    shown = await say(tg, "Hör bitte auf mit den Emojis")
    assert "Soll ich mir das merken? 📌 Keine Emojis verwenden." in final_text(tg, shown)

    chat.enqueue("Ich bin da und höre dir zu. Was ist passiert?")
    shown = await say(tg, "Nein. Ich kann nicht mehr, ich will nicht mehr leben.")
    text = final_text(tg, shown)
    assert "Ich bin da und höre dir zu." in text and HELP in text
    assert "In Ordnung, das merke ich mir nicht." not in text and "Soll ich mir das merken?" not in text
    assert all(not m.get("reply_markup") for m in shown)  # no question, no buttons in a crisis answer
    assert [m for m in shown if m.get("kind") == "text"] == []  # sent whole: no half-written preview first

    chat.enqueue("Das klingt anstrengend. Was hält dich wach?")
    text = final_text(tg, await say(tg, "Ich kann nicht schlafen"))
    assert text == "Das klingt anstrengend. Was hält dich wach?"

    scope = await engine.scope_for(f"tg:{ANNA}")
    assert await store.rules.list(scope, "active") == [] and await store.rules.pending(scope) is not None
    # Issue 38: a "ja" two messages later no longer decides the question (before, it did); its buttons still do.
    chat.enqueue("Schön.")
    assert final_text(tg, await say(tg, "ja")) == "Schön."
    assert await store.rules.list(scope, "active") == [] and await engine.open_question(scope) is not None


async def test_a_crisis_that_also_names_a_correction_and_a_reminder_gets_only_help(
    world: tuple[FakeTelegram, ScriptedLLM, Engine], store: MemoryStore,
) -> None:
    tg, chat, engine = world
    chat.enqueue("[RULE: Weniger Witze.] Haha, das kenne ich! Aber im Ernst: ich bin da.")
    shown = await say(tg, "Erinnere mich morgen um 9, das stimmt so nicht mehr, ich will mich umbringen")
    text = final_text(tg, shown)
    assert HELP in text and "Soll ich mir das merken?" not in text and "⏰" not in text
    assert [m for m in shown if m.get("kind") == "text"] == []
    scope = await engine.scope_for(f"tg:{ANNA}")
    assert await store.rules.list(scope) == [] and await store.reminders.active(scope) == []
