"""A crisis in a photo's caption, a voice note's transcript or an edited message gets the help line first, on Telegram
(the unmodified python-telegram-bot against the fake Bot API) with the real layered detector; an everyday edit is
still ignored. The phrasing is one no pattern knows: the classifier finds it."""
from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.channels.matrix.messages import edited_text
from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.help_lines import crisis_help
from bot.conversation.safety import signals_crisis
from bot.voice.openai_audio import OpenAITranscriber
from memory.store import MemoryStore
from tests.fakes.audio import spoken
from tests.fakes.llm import ScriptedLLM
from tests.fakes.openai_audio import FakeAudioAPI
from tests.fakes.telegram_api import FakeTelegram
from tests.images import jpeg
from tests.safety_kit import real_detector
from tests.test_telegram import (
    USER,
    channel,  # noqa: F401  (the fixture)
    )

HELP = crisis_help("DE", "de")
UNSEEN = "Bald müsst ihr euch keine Sorgen mehr um mich machen, es ist alles geregelt und ich bin müde"

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


@pytest.fixture
async def engine(store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
                 audio: FakeAudioAPI) -> AsyncIterator[Engine]:
    transcriber = OpenAITranscriber("whisper-1", audio.base_url, None)
    e = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, crisis_detector=real_detector()),
               transcriber=transcriber)
    yield e
    await e.drain()
    await e.close()
    await transcriber.aclose()


async def answer_after(tg: FakeTelegram, before: int) -> list[str]:
    """The bot's two messages after the first `before`: the help text, sent first, and the model's answer."""
    return [m["text"] for m in (await tg.wait_for_sent(before + 2))[before:]]


def edit(tg: FakeTelegram, message_id: int, text: str) -> int:
    """Queue an edited_message update: the person changed an earlier message's words."""
    edited: dict[str, Any] = dict(tg.messages[message_id], text=text, edit_date=int(time.time()))
    return tg.send_update({"edited_message": edited})


async def test_the_phrasing_is_unknown_to_the_patterns_and_known_to_the_detector() -> None:
    assert not signals_crisis(UNSEEN)
    assert await real_detector().crisis(UNSEEN)


async def test_a_crisis_in_a_caption_gets_the_help_line(tg: FakeTelegram, channel: TelegramChannel,  # noqa: F811
                                                        chat: ScriptedLLM) -> None:
    chat.enqueue("Ich bin da. Magst du mir erzählen, was los ist?")
    tg.send_photo(USER, jpeg(), UNSEEN)
    assert await answer_after(tg, 0) == [HELP, "Ich bin da. Magst du mir erzählen, was los ist?"]
    assert not any(m.get("reply_markup") for m in tg.sent)  # no question under a crisis answer


async def test_a_crisis_in_a_voice_note_gets_the_help_line(tg: FakeTelegram, channel: TelegramChannel,  # noqa: F811
                                                           chat: ScriptedLLM, audio: FakeAudioAPI) -> None:
    audio.hear(UNSEEN)
    chat.enqueue("Ich höre dich. Bist du gerade in Sicherheit?")
    tg.send_media(USER, "voice", spoken("Es tut mir leid"), duration=3)
    assert await answer_after(tg, 0) == [HELP, "Ich höre dich. Bist du gerade in Sicherheit?"]


async def test_an_edit_that_shows_a_crisis_is_answered_with_the_help_line_and_an_everyday_edit_is_not(
        tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, store: MemoryStore, engine: Engine) -> None:  # noqa: F811
    chat.enqueue("Oh, erzähl!")
    tg.send_text(USER, "Heute war ein langer Tag.")
    await tg.wait_for_sent(1)
    first = max(m for m, msg in tg.messages.items() if msg.get("text") == "Heute war ein langer Tag.")

    edit(tg, first, "Heute war ein sehr langer Tag.")  # everyday: ignored, as before
    chat.enqueue("Ich bin für dich da. Was ist passiert?")
    edit(tg, first, UNSEEN)
    assert await answer_after(tg, 1) == [HELP, "Ich bin für dich da. Was ist passiert?"]  # help first, as any crisis
    scope = await engine.scope_for(f"tg:{USER}")
    said = [m.text for m in await store.messages.recent(scope, 10) if m.role == "user"]
    assert said == ["Heute war ein langer Tag.", UNSEEN]  # the everyday edit is not logged as a message


def test_a_matrix_edit_brings_its_new_words() -> None:
    content = {"msgtype": "m.text", "body": "* " + UNSEEN,
               "m.new_content": {"msgtype": "m.text", "body": UNSEEN},
               "m.relates_to": {"rel_type": "m.replace", "event_id": "$first"}}
    assert edited_text(content) == UNSEEN
    assert edited_text({"body": "no edit"}) == ""
