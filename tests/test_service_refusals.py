"""A service that refuses mnemo is told as what it is: a transcription service answering 401 or 404 is no damaged
recording, a chat model's 400 for a prompt over its context is no outage. The person gets a short true sentence, the
operator's log line names the setting to change. Real clients (mnemo's OpenAI-compatible client, the anthropic SDK)
against local fake HTTP servers, the person on Telegram's fake Bot API."""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.admin import ops
from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine, EngineConfig
from bot.errors import LLMRefused, LLMRejected, LLMTooLong, LLMUnavailable
from bot.llm.anthropic_api import AnthropicChat
from bot.llm.openai_api import OpenAIChat
from bot.llm.port import ChatMessage, CompletionRequest
from bot.llm.retries import status_error
from bot.texts import t
from bot.voice.openai_audio import OpenAITranscriber
from memory.store import MemoryStore
from tests.engine_kit import settings_for
from tests.fakes.audio import spoken
from tests.fakes.llm import ScriptedLLM
from tests.fakes.llm_api import FakeLLM
from tests.fakes.openai_audio import FakeAudioAPI
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram import USER, make_channel

OPENAI_TOO_LONG = ("This model's maximum context length is 8192 tokens. However, your messages resulted in 9731 "
                   "tokens. Please reduce the length of the messages.")


@pytest.fixture
async def model_api() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as api:
        yield api


@pytest.fixture
async def telegram_with(tg: FakeTelegram, store: MemoryStore, background: ScriptedLLM, model_api: FakeLLM,
                        audio: FakeAudioAPI) -> AsyncIterator[TelegramChannel]:
    """Telegram in front of the real OpenAI-compatible chat client and transcriber, both at local fakes."""
    chat = OpenAIChat("fake-model", model_api.openai_base_url, "sk-test", sleep=_no_wait)
    transcriber = OpenAITranscriber("whisper-1", audio.base_url, "sk-audio")
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0), transcriber=transcriber)
    channel = make_channel(tg, engine)
    await channel.start()
    yield channel
    await channel.stop()
    await engine.close()
    await chat.aclose()
    await transcriber.aclose()


async def _no_wait(seconds: float) -> None:
    """Retries of an outage go on at once in these tests."""


async def said(tg: FakeTelegram, send: object) -> str:
    """What mnemo answered to the next message."""
    before = len(tg.sent)
    assert callable(send)
    send()
    return str((await tg.wait_for_sent(before + 1))[before]["text"])


async def test_a_transcription_service_refusing_the_key_or_the_model_is_no_damaged_recording(
    tg: FakeTelegram, telegram_with: TelegramChannel, audio: FakeAudioAPI, store: MemoryStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    audio.hear(status=401)
    assert await said(tg, lambda: tg.send_media(USER, "voice", spoken("Hallo"))) == t("de", "voice_refused")
    assert "MNEMO_TRANSCRIBE_API_KEY" in caplog.text and "sk-audio" not in caplog.text

    caplog.clear()
    audio.hear(status=404)
    assert await said(tg, lambda: tg.send_media(USER, "voice", spoken("Hallo"))) == t("de", "voice_refused")
    assert "MNEMO_TRANSCRIBE_MODEL" in caplog.text and "MNEMO_TRANSCRIBE_BASE_URL" in caplog.text
    assert t("de", "voice_refused") != t("de", "voice_unreadable")
    assert await store.messages.count(await store.scope("mnemo", f"tg:{USER}")) == 0  # nothing half-stored

    audio.hear(status=400)  # the file itself refused: that one is a damaged recording
    assert await said(tg, lambda: tg.send_media(USER, "voice", spoken("Hallo"))) == t("de", "voice_unreadable")


async def test_a_chat_model_finding_the_prompt_too_long_or_refusing_is_told_as_such(
    tg: FakeTelegram, telegram_with: TelegramChannel, model_api: FakeLLM, store: MemoryStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    model_api.enqueue_error(400, OPENAI_TOO_LONG)
    assert await said(tg, lambda: tg.send_text(USER, "Erzähl mir was.")) == t("de", "model_too_long")
    assert "MNEMO_RECENT_MESSAGES" in caplog.text and "MNEMO_CHAT_MODEL" in caplog.text

    caplog.clear()
    model_api.enqueue_error(401)
    assert await said(tg, lambda: tg.send_text(USER, "Hallo?")) == t("de", "model_refused")
    assert "check MNEMO_CHAT_API_KEY" in caplog.text and "sk-test" not in caplog.text

    caplog.clear()
    model_api.enqueue_error(404, "The model `fake-modell` does not exist.")
    assert await said(tg, lambda: tg.send_text(USER, "Und jetzt?")) == t("de", "model_refused")
    assert "check MNEMO_CHAT_MODEL and MNEMO_CHAT_BASE_URL" in caplog.text
    assert len(model_api.requests) == 3, "a refusal is not tried again"

    for _ in range(4):  # an outage stays an outage, tried again first (four tries in all)
        model_api.enqueue_error(500)
    assert await said(tg, lambda: tg.send_text(USER, "Noch da?")) == t("de", "model_down")
    model_api.enqueue("Ja, wieder da.")
    assert await said(tg, lambda: tg.send_text(USER, "Jetzt?")) == "Ja, wieder da."


async def test_the_anthropic_sdk_s_refusals_map_the_same_way(model_api: FakeLLM) -> None:
    llm = AnthropicChat("claude-fake", model_api.anthropic_base_url, "sk-ant", sleep=_no_wait)
    try:
        model_api.enqueue_error(400, "prompt is too long: 210000 tokens > 200000 maximum")
        with pytest.raises(LLMTooLong):
            await llm.complete(CompletionRequest([ChatMessage("user", "hallo")]))
        model_api.enqueue_error(401)
        with pytest.raises(LLMRefused) as refused:
            await llm.complete(CompletionRequest([ChatMessage("user", "hallo")]))
        assert refused.value.fix == "key"
    finally:
        await llm.aclose()


def test_which_status_is_which_error() -> None:
    assert isinstance(status_error("m", 400, OPENAI_TOO_LONG, 1), LLMTooLong)
    assert isinstance(status_error("m", 413, "Request Entity Too Large", 1), LLMTooLong)
    other = status_error("m", 400, "Invalid value for 'temperature'", 1)
    assert type(other) is LLMRejected
    key, model = status_error("m", 403, "forbidden", 1), status_error("m", 404, "not found", 1)
    assert isinstance(key, LLMRefused) and key.fix == "key"
    assert isinstance(model, LLMRefused) and model.fix == "model"
    assert isinstance(status_error("m", 503, "busy", 1), LLMUnavailable)
    assert t("en", "model_too_long") != t("en", "model_down") != t("en", "model_refused")


async def test_mnemo_doctor_names_the_setting_when_the_url_is_wrong(model_api: FakeLLM, tmp_path: Path) -> None:
    wrong = settings_for(tmp_path / "data", chat_base_url=model_api.openai_base_url + "/falsch")  # answers 404
    [model] = [c for c in await ops.doctor(wrong) if c.name == "chat model"]
    assert not model.ok and "check MNEMO_CHAT_MODEL and MNEMO_CHAT_BASE_URL" in model.detail
