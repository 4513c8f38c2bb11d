"""Photos on Telegram: the unmodified python-telegram-bot Application against the fake Bot API (getFile and the
download), the engine, and the real openai SDK against the fake Chat Completions API, which gets the picture."""
from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from PIL import Image as Pillow

from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine, EngineConfig
from bot.llm.openai_api import OpenAIChat
from bot.llm.vision import vision_on
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.llm_api import FakeLLM, images_in
from tests.fakes.telegram_api import FakeTelegram
from tests.images import bmp, corrupt_jpeg, forty_megapixels, jpeg, png, sticker
from tests.test_telegram import USER, make_channel

JSON = dict[str, Any]
NOTHING_LEARNED = json.dumps({"facts": [], "content": [], "profile": []})


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLM]:
    async with FakeLLM(models=("gpt-4o",)) as server:
        yield server


@contextlib.asynccontextmanager
async def running(tg: FakeTelegram, store: MemoryStore, llm: FakeLLM, model: str = "gpt-4o",
                  **config: Any) -> AsyncIterator[Engine]:
    """The engine on the real openai SDK (pictures on for a vision model, as `auto` decides) and a started channel."""
    chat = OpenAIChat(model, llm.openai_base_url, "sk-test")
    background = ScriptedLLM("background")
    background.responder = lambda call: NOTHING_LEARNED
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, vision=vision_on("auto", model),
                                                          **config))
    channel = make_channel(tg, engine)
    await channel.start()
    try:
        yield engine
    finally:
        await channel.stop()
        await engine.drain()
        await engine.close()
        await chat.aclose()


async def answer(tg: FakeTelegram, send: int) -> str:
    """The text of the bot's next message after an update was queued."""
    before = len(tg.sent)
    await tg.wait_for_sent(before + 1, timeout=10)
    return str(tg.sent[before]["text"])


async def user_texts(engine: Engine) -> list[str]:
    scope = await engine.scope_for(f"tg:{USER}")
    return [m.text for m in await engine.store.messages.recent(scope, 50) if m.role == "user"]


def size_of(data: bytes) -> tuple[int, int]:
    with Pillow.open(io.BytesIO(data)) as opened:
        return opened.size


async def test_a_photo_is_downloaded_and_reaches_the_model_as_an_image_part_and_its_description_is_kept(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM,
) -> None:
    llm.enqueue("[PHOTO: ein Kuchen mit Erdbeeren und Sahne] Der sieht toll aus! Für wen ist er?")
    original = jpeg(2000, 1500)
    async with running(tg, store, llm) as engine:
        reply = await answer(tg, tg.send_photo(USER, original, "Für Omas Geburtstag"))
        assert reply == "Der sieht toll aus! Für wen ist er?"
        [request] = llm.requests
        [(mime, data)] = images_in(request.json)
        assert mime == "image/jpeg" and size_of(data) == (1568, 1176)  # the original size, scaled down
        assert request.json["messages"][-1]["content"][0]["text"].endswith("Für Omas Geburtstag")
        assert tg.downloads == ["photo_5"]  # only the largest of the five sizes
        assert await user_texts(engine) == ["(Foto: ein Kuchen mit Erdbeeren und Sahne) Für Omas Geburtstag"]


async def test_the_largest_size_within_the_limit_is_taken(tg: FakeTelegram, store: MemoryStore, llm: FakeLLM) -> None:
    llm.enqueue("[PHOTO: ein roter Kreis] Schön!")
    async with running(tg, store, llm):
        await answer(tg, tg.send_photo(USER, jpeg(2000, 1500), "Kunst", sizes={2000: 12_000_000}))
    assert tg.downloads == ["photo_4"] and "getFile" in tg.calls  # the 1280 one; the original was never fetched
    [(_, data)] = images_in(llm.last_request.json)
    assert size_of(data) == (1280, 960)


async def test_image_files_and_static_stickers_are_looked_at_and_moving_ones_get_a_short_answer(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM,
) -> None:
    llm.enqueue("[PHOTO: ein Bildschirmfoto] Das ist ein Screenshot.")
    llm.enqueue("[PHOTO: ein lachender Kreis] 😄")
    async with running(tg, store, llm) as engine:
        assert await answer(tg, tg.send_image_file(USER, png(), "image/png", "screen.png", "Was ist das?")) == \
            "Das ist ein Screenshot."
        assert await answer(tg, tg.send_sticker(USER, sticker(), emoji="😂")) == "😄"
        assert [mime for request in llm.requests for mime, _ in images_in(request.json)] == ["image/jpeg"] * 2
        assert llm.last_request.json["messages"][-1]["content"][0]["text"].endswith("😂")  # the sticker's emoji
        assert await answer(tg, tg.send_sticker(USER, b"\x1f\x8b animated", animated=True)) == t("de", "image_moving")
        assert await answer(tg, tg.send_sticker(USER, b"\x1a\x45 video", video=True)) == t("de", "image_moving")
        assert tg.downloads == ["document_1", "sticker_2"] and len(llm.requests) == 2
        assert await user_texts(engine) == ["(Foto: ein Bildschirmfoto) Was ist das?", "(Foto: ein lachender Kreis) 😂"]


@pytest.mark.parametrize("case", ["60 MB", "40 megapixels", "damaged", "bitmap"])
async def test_a_bad_picture_gets_a_short_answer_nothing_is_stored_and_the_next_message_is_answered(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM, case: str,
) -> None:
    sends = {
        "60 MB": (lambda: tg.send_image_file(USER, b"\xff\xd8 not really sixty megabytes", "image/jpeg",
                                             caption="Mein Panorama", size=60_000_000),
                  "Das Bild ist mir zu groß (60 MB, ich nehme höchstens 10 MB). Schick es mir bitte kleiner."),
        "40 megapixels": (lambda: tg.send_image_file(USER, forty_megapixels(), "image/jpeg", caption="Panorama"),
                          "Das Bild hat zu viele Pixel (40 Megapixel, ich nehme höchstens 25). "
                          "Schick es mir bitte kleiner."),
        "damaged": (lambda: tg.send_image_file(USER, corrupt_jpeg(), "image/jpeg", caption="Hm"),
                    t("de", "image_unreadable")),
        "bitmap": (lambda: tg.send_image_file(USER, bmp(), "image/bmp", "alt.bmp"), t("de", "image_type")),
    }
    send, expected = sends[case]
    llm.enqueue("Gut, danke!")
    async with running(tg, store, llm) as engine:
        assert await answer(tg, send()) == expected
        if case == "60 MB":
            assert "getFile" not in tg.calls and tg.downloads == []  # refused before anything was downloaded
        assert llm.requests == [] and await user_texts(engine) == []
        tg.send_text(USER, "Wie geht's?")
        assert await answer(tg, 0) == "Gut, danke!"
        assert await user_texts(engine) == ["Wie geht's?"]


async def test_without_a_vision_model_the_caption_is_answered_and_the_picture_is_said_unseen(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM,
) -> None:
    llm.enqueue("Alles Gute für Oma!")
    async with running(tg, store, llm, model="llama3.2") as engine:
        before = len(tg.sent)
        tg.send_photo(USER, jpeg(), "Für Omas Geburtstag")
        await tg.wait_for_sent(before + 2)
        assert [m["text"] for m in tg.sent[before:]] == ["Alles Gute für Oma!", t("de", "photo_not_seen")]
        assert images_in(llm.last_request.json) == [] and tg.downloads == ["photo_3"]  # checked, never sent
        assert await answer(tg, tg.send_photo(USER, jpeg())) == t("de", "photo_unseen")
        assert len(llm.requests) == 1
        assert await user_texts(engine) == ["(Foto) Für Omas Geburtstag", "(Foto)"]


async def test_a_photo_in_a_group_that_is_not_allowed_is_neither_downloaded_nor_stored(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM,
) -> None:
    group = -100123
    async with running(tg, store, llm) as engine:
        tg.send_photo(USER, jpeg(), "@mnemo_bot schau, der Gipfel!", chat_id=group, chat_type="supergroup")
        tg.send_text(USER, "Hallo")
        await tg.wait_for_sent(1)
        assert tg.downloads == [] and len(llm.requests) == 1  # only the private "Hallo" was answered
        assert await engine.store.messages.count(await engine.scope_for(f"tg:group:{group}")) == 0


async def test_a_photo_named_in_an_allowed_group_is_answered_with_the_senders_name(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM,
) -> None:
    group = -100123
    chat = OpenAIChat("gpt-4o", llm.openai_base_url, "sk-test")
    background = ScriptedLLM("background")
    background.responder = lambda call: NOTHING_LEARNED
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, vision=True))
    channel: TelegramChannel = make_channel(tg, engine, allowed_groups=frozenset({str(group)}))
    llm.enqueue("[PHOTO: ein Berggipfel im Schnee] Wow, welche Aussicht!")
    await channel.start()
    try:
        tg.send_photo(USER, jpeg(), "Grüße vom Gipfel", chat_id=group, chat_type="supergroup")  # not for mnemo
        reply = await answer(tg, tg.send_photo(USER, jpeg(), "@mnemo_bot schau, der Gipfel!", chat_id=group,
                                               chat_type="supergroup"))
        assert reply == "Wow, welche Aussicht!" and len(tg.downloads) == 1 and len(llm.requests) == 1
        assert tg.sent[-1]["chat_id"] == group
        scope = await engine.scope_for(f"tg:group:{group}")
        assert [m.text for m in await store.messages.recent(scope) if m.role == "user"] == [
            "Anna: (Foto: ein Berggipfel im Schnee) schau, der Gipfel!"]
    finally:
        await channel.stop()
        await engine.drain()
        await engine.close()
        await chat.aclose()


async def test_a_photo_stored_but_not_answered_when_the_process_died_is_fetched_again_and_answered(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM,
) -> None:
    update_id = tg.send_photo(USER, jpeg(), "Unser Garten")
    update = tg.pending.pop()  # Telegram handed it over and the last run stored it, then it was killed
    await store.inbox.record("telegram", [(str(update_id), json.dumps(update))], time.time())
    llm.enqueue("[PHOTO: ein Garten mit Tomaten] Wie grün!")
    async with running(tg, store, llm) as engine:
        assert await answer(tg, update_id) == "Wie grün!"
        assert images_in(llm.last_request.json) and tg.downloads == ["photo_3"]
        assert await user_texts(engine) == ["(Foto: ein Garten mit Tomaten) Unser Garten"]
    async with store.db.reading() as tx:
        assert (await tx.fetchone("SELECT count(*) FROM inbox WHERE handled_at IS NULL"))[0] == 0


async def test_a_picture_over_the_bot_apis_20_mb_is_not_fetched_even_when_mnemo_would_take_it(
    tg: FakeTelegram, store: MemoryStore, llm: FakeLLM,
) -> None:
    async with running(tg, store, llm, image_max_bytes=50_000_000) as engine:
        reply = await answer(tg, tg.send_image_file(USER, b"\xff\xd8 small", "image/jpeg", caption="Groß",
                                                    size=25_000_000))
        assert reply == "Dieses Bild (25 MB) konnte ich nicht herunterladen. Schick es mir bitte kleiner."
        assert "getFile" not in tg.calls and llm.requests == [] and await user_texts(engine) == []
