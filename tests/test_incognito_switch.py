"""/incognito's words as people write them ('an', 'on', 'aus', 'status'), and a stretch switched on that way keeping
nothing of a document, a photo or a voice note (byte search of the data folder): issue 52, the smaller ones."""
from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.incognito_turns import Switch, parse_switch
from bot.texts import t
from bot.voice.openai_audio import OpenAITranscriber
from memory.store import MemoryStore
from tests.fakes.audio import spoken
from tests.fakes.llm import ScriptedLLM
from tests.fakes.openai_audio import FakeAudioAPI
from tests.fakes.telegram_api import FakeTelegram
from tests.images import jpeg
from tests.pdfs import pdf
from tests.test_incognito import files_holding
from tests.test_telegram import USER, make_channel

NOW = datetime(2026, 3, 4, 14, 0, tzinfo=ZoneInfo("Europe/Berlin"))
SECRETS = {"document": "Quittenblütenvertrag", "name": "Tannenhäherakte", "caption": "Morgenrotmuschel",
           "photo": "Kieselmondbucht", "voice": "Schneckenpostkarte"}


def test_incognito_an_is_understood() -> None:
    for on in ("an", "AN", "on", "ein", "start"):
        assert parse_switch(on, NOW) == Switch(True), on
    for off in ("aus", "off", "Aus"):
        assert parse_switch(off, NOW) == Switch(False), off
    assert parse_switch("an 2h", NOW) == Switch(True, NOW.timestamp() + 7200)
    for asks in ("status", "?"):
        assert parse_switch(asks, NOW) == Switch(None), asks
    assert parse_switch("an aus", NOW) is None


@pytest.fixture
async def engine(store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
                 audio: FakeAudioAPI) -> AsyncIterator[Engine]:
    e = Engine(store, chat, background, EngineConfig(relevance_floor=0.0),
               transcriber=OpenAITranscriber("whisper-1", audio.base_url, None))
    yield e
    await e.drain()
    await e.close()


@pytest.fixture
async def channel(tg: FakeTelegram, engine: Engine) -> AsyncIterator[TelegramChannel]:
    ch = make_channel(tg, engine)
    await ch.start()
    yield ch
    await ch.stop()


async def said(tg: FakeTelegram, send: object) -> str:
    """The text of mnemo's next message after `send` (a queued update's id) went out."""
    before = len(tg.sent)
    assert isinstance(send, int)
    [answer] = (await tg.wait_for_sent(before + 1))[before:]
    return str(answer["text"])


@pytest.mark.sqlite_only("searches the bytes of the data folder; PostgreSQL's files are the server's")
async def test_incognito_an_keeps_nothing_of_a_document_a_photo_or_a_voice_note(
        tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
        background: ScriptedLLM, audio: FakeAudioAPI, tmp_path: Path) -> None:
    assert await said(tg, tg.send_text(USER, "/incognito status")) == t("de", "incognito_status_off")
    assert await said(tg, tg.send_text(USER, "/incognito an")) == t("de", "incognito_on")
    assert await said(tg, tg.send_text(USER, "/incognito status")) == t(
        "de", "incognito_status_on", until="bis /incognito aus", messages="0 Nachrichten")
    chat.responder = lambda call: "Verstehe."
    document = pdf(f"Vertrag: {SECRETS['document']}")
    assert await said(tg, tg.send_media(USER, "document", document, file_name=f"{SECRETS['name']}.pdf",
                                        caption=f"Lies das: {SECRETS['caption']}")) == "Verstehe."
    assert SECRETS["document"] in chat.calls[-1].prompt  # read for the answer
    assert await said(tg, tg.send_photo(USER, jpeg(), caption=f"Foto von {SECRETS['photo']}")) == "Verstehe."
    audio.hear(f"Ich schreibe eine {SECRETS['voice']}.")
    assert await said(tg, tg.send_media(USER, "voice", spoken("Ich schreibe eine Postkarte"))) == "Verstehe."
    assert SECRETS["voice"] in chat.calls[-1].prompt  # heard for the answer
    await engine.drain()
    scope = await engine.scope_for(f"tg:{USER}")
    assert await store.messages.count(scope) == 0 and background.calls == []
    assert await said(tg, tg.send_text(USER, "/incognito aus")) == t("de", "incognito_off", messages="3 Nachrichten")
    await store.db.checkpoint()
    for what, word in SECRETS.items():
        assert files_holding(tmp_path, word) == [], what
