"""Photos on Matrix, against one real Synapse for the module: a person's matrix-nio client uploads real pictures
(plain and end-to-end encrypted), the channel downloads (and decrypts) them, and the real openai and anthropic SDKs
hand them to the fake HTTP APIs in each provider's format. Bad pictures get a short answer and store nothing."""
from __future__ import annotations

import dataclasses
import io
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
import pytest_asyncio
from nio import Api, Event, RoomMemberEvent, RoomMessageText, RoomSendResponse, UploadResponse
from nio.crypto.attachments import encrypt_attachment
from PIL import Image as Pillow

from bot.app import matrix_config
from bot.channels.matrix.channel import MatrixChannel
from bot.channels.matrix.images import caption_of, stated
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.help_lines import crisis_help
from bot.llm.anthropic_api import AnthropicChat
from bot.llm.openai_api import OpenAIChat
from bot.llm.vision import vision_on
from bot.settings import Settings
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM
from tests.fakes.llm_api import FakeLLM, images_in
from tests.fakes.synapse import Synapse
from tests.images import bmp, corrupt_jpeg, forty_megapixels, jpeg, png, size_of
from tests.test_matrix import NOTHING_LEARNED, PASSWORD, Human, running

ON_ONE_SYNAPSE = pytest.mark.asyncio(loop_scope="module")


# --- pure parts -------------------------------------------------------------------------------------


def test_a_caption_is_the_body_beside_a_file_name_and_the_stated_size_is_read() -> None:
    assert caption_of({"body": "Für Oma", "filename": "kuchen.jpg"}) == "Für Oma"
    assert caption_of({"body": "kuchen.jpg", "filename": "kuchen.jpg"}) == ""
    assert caption_of({"body": "kuchen.jpg"}) == ""  # before MSC2530 the body is the file's name
    assert stated({"info": {"mimetype": "image/png", "size": 1234}}) == ("image/png", 1234)
    assert stated({"info": "broken"}) == ("", 0) and stated({}) == ("", 0)


# --- the real thing ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def syn(synapse: Synapse) -> Synapse:
    """The run's one Synapse (tests/conftest.py); this module's users have names of their own."""
    return synapse


@pytest_asyncio.fixture(loop_scope="module")
async def llm() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as server:
        yield server


@dataclass
class Bot:
    """A fresh bot account whose engine speaks to the fake API through a real SDK, and Anna (E2E) to talk to it."""

    syn: Synapse
    store: MemoryStore
    engine: Engine
    bot_id: str
    settings: Settings
    anna: Human

    def channel(self, **changes: Any) -> MatrixChannel:
        config = dataclasses.replace(matrix_config(self.settings), **{"streaming": False, **changes})
        return MatrixChannel(self.engine, Commands(self.engine), config)

    def said(self, event: Event) -> bool:
        return isinstance(event, RoomMessageText) and event.sender == self.bot_id

    def joined(self, event: Event) -> bool:
        return isinstance(event, RoomMemberEvent) and event.state_key == self.bot_id and event.membership == "join"

    async def user_texts(self, scope: str) -> list[str]:
        found = await self.engine.scope_for(scope)
        return [m.text for m in await self.store.messages.recent(found, 50) if m.role == "user"]


async def make_bot(syn: Synapse, llm: FakeLLM, tmp_path: Path, provider: str, language: str = "de") -> tuple[Bot, Any]:
    """A bot whose chat model is the real SDK of `provider` at the fake API (vision as `auto` decides)."""
    bot_id, _, _ = await syn.register(syn.fresh_name("mnemo"), PASSWORD)
    anna = await Human.login(syn, syn.fresh_name("anna"), tmp_path / "anna-store")
    if provider == "openai":
        chat: Any = OpenAIChat("gpt-4o", llm.openai_base_url, "sk-test")
    else:
        chat = AnthropicChat("claude-sonnet-4-5", llm.anthropic_base_url, "sk-test")
    background = ScriptedLLM("background")
    background.responder = lambda call: NOTHING_LEARNED
    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", FakeEmbedder(), semantic_dedupe=0.97)
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, vision=vision_on("auto", chat.model),
                                                          language=language))
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", matrix_homeserver=syn.url,  # type: ignore[call-arg]
                        matrix_user_id=bot_id, matrix_password=PASSWORD, matrix_allowed_users=[anna.user_id])
    return Bot(syn, store, engine, bot_id, settings, anna), chat


@pytest_asyncio.fixture(loop_scope="module")
async def openai_bot(syn: Synapse, llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Bot]:
    async for made in _bot(syn, llm, tmp_path, "openai"):
        yield made


@pytest_asyncio.fixture(loop_scope="module")
async def anthropic_bot(syn: Synapse, llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Bot]:
    async for made in _bot(syn, llm, tmp_path, "anthropic"):
        yield made


@pytest_asyncio.fixture(loop_scope="module")
async def english_bot(syn: Synapse, llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Bot]:
    async for made in _bot(syn, llm, tmp_path, "openai", "en"):
        yield made


async def _bot(syn: Synapse, llm: FakeLLM, tmp_path: Path, provider: str, language: str = "de") -> AsyncIterator[Bot]:
    made, chat = await make_bot(syn, llm, tmp_path, provider, language)
    try:
        yield made
    finally:
        await made.engine.drain()
        await made.engine.close()
        await chat.aclose()
        await made.store.close()
        await made.anna.client.close()


async def send_picture(human: Human, room: str, data: bytes, mime: str = "image/jpeg", caption: str = "",
                       encrypted: bool = False, size: int | None = None, url: str | None = None,
                       extra: dict[str, Any] | None = None) -> str:
    """Upload a picture (encrypted for an encrypted room) and send it as m.image with its caption (MSC2530)."""
    filename = "bild." + mime.split("/")[-1]
    content: dict[str, Any] = {"msgtype": "m.image", "body": caption or filename, "filename": filename,
                               "info": {"mimetype": mime, "size": len(data) if size is None else size}, **(extra or {})}
    if url is None:
        uploaded, keys = await human.client.upload(io.BytesIO(data), content_type=mime, filename=filename,
                                                   encrypt=encrypted, filesize=len(data))
        assert isinstance(uploaded, UploadResponse), uploaded
        url = uploaded.content_uri
        if encrypted:
            assert keys is not None
            content["file"] = {"url": url, **keys}
    if "file" not in content:
        content["url"] = url
    sent = await human.client.room_send(room, "m.room.message", content, ignore_unverified_devices=True)
    assert isinstance(sent, RoomSendResponse), sent
    return str(sent.event_id)


async def reply_to(bot: Bot, room: str) -> str:
    [reply] = await bot.anna.wait_for(room, bot.said, seconds=20)
    return str(reply.body)  # type: ignore[attr-defined]


def centre(data: bytes) -> tuple[int, int, int]:
    """The colour in the middle of a picture (red, in the test pictures)."""
    with Pillow.open(io.BytesIO(data)) as opened:
        return opened.convert("RGB").getpixel((opened.width // 2, opened.height // 2))  # type: ignore[return-value]


@ON_ONE_SYNAPSE
async def test_a_picture_in_a_plain_room_reaches_the_openai_api_and_its_description_is_kept(
    openai_bot: Bot, llm: FakeLLM,
) -> None:
    bot, anna = openai_bot, openai_bot.anna
    async with running(bot.channel(encryption=False)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        llm.enqueue("[PHOTO: ein Kuchen mit Erdbeeren und Sahne] Der sieht toll aus!")
        await send_picture(anna, room, jpeg(2000, 1500), caption="Für Omas Geburtstag")
        assert await reply_to(bot, room) == "Der sieht toll aus!"
        [(mime, data)] = images_in(llm.last_request.json)
        assert mime == "image/jpeg" and size_of(data) == (1568, 1176) and centre(data)[0] > 150
        content = llm.last_request.json["messages"][-1]["content"]
        assert content[0]["type"] == "text" and content[0]["text"].endswith("Für Omas Geburtstag")
        assert content[1]["type"] == "image_url"

        llm.enqueue("[PHOTO: ein roter Kreis] Hübsch!")  # no caption: the body is the file's name
        await send_picture(anna, room, jpeg())
        assert await reply_to(bot, room) == "Hübsch!"
        assert not llm.last_request.json["messages"][-1]["content"][0]["text"].endswith("bild.jpeg")
    assert await bot.user_texts(anna.user_id) == [
        "(Foto: ein Kuchen mit Erdbeeren und Sahne) Für Omas Geburtstag", "(Foto: ein roter Kreis)"]


@ON_ONE_SYNAPSE
async def test_an_encrypted_picture_is_decrypted_and_reaches_the_anthropic_api_as_an_image_block(
    anthropic_bot: Bot, llm: FakeLLM,
) -> None:
    bot, anna = anthropic_bot, anthropic_bot.anna
    async with running(bot.channel(encryption=True)) as channel:
        assert channel.client is not None and channel.client.olm is not None
        room = await anna.open_dm(bot.bot_id, encrypted=True)
        await anna.wait_for(room, bot.joined)
        llm.enqueue("Hallo!")
        await anna.say(room, "Hallo")  # the first message shares the room key with the bot
        assert await reply_to(bot, room) == "Hallo!"
        llm.enqueue("[PHOTO: ein roter Kreis auf hellem Grund] Geheimes Kunstwerk!")
        await send_picture(anna, room, jpeg(800, 600), caption="Nur für dich", encrypted=True)
        [reply] = await anna.wait_for(room, bot.said, seconds=20)
        assert reply.decrypted and reply.body == "Geheimes Kunstwerk!"  # type: ignore[attr-defined]
        body = llm.last_request.json
        blocks = body["messages"][-1]["content"]
        assert [b["type"] for b in blocks] == ["image", "text"] and blocks[1]["text"].endswith("Nur für dich")
        [(mime, data)] = images_in(body)
        assert mime == "image/jpeg" and size_of(data) == (800, 600) and centre(data)[0] > 150  # decrypted right
    assert (await bot.user_texts(anna.user_id))[-1] == "(Foto: ein roter Kreis auf hellem Grund) Nur für dich"


@ON_ONE_SYNAPSE
async def test_bad_pictures_get_a_short_answer_store_nothing_and_the_next_message_is_answered(
    openai_bot: Bot, llm: FakeLLM,
) -> None:
    bot, anna = openai_bot, openai_bot.anna
    async with running(bot.channel(encryption=False)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        # said to be 60 MB, at an address that holds nothing: had it been downloaded, the answer would be a failure
        await send_picture(anna, room, b"", caption="Panorama", size=60_000_000, url="mxc://localhost/nothinghere")
        assert await reply_to(bot, room) == \
            "Das Bild ist mir zu groß (60 MB, ich nehme höchstens 10 MB). Schick es mir bitte kleiner."
        await send_picture(anna, room, forty_megapixels(), caption="Riesig")
        assert await reply_to(bot, room) == \
            "Das Bild hat zu viele Pixel (40 Megapixel, ich nehme höchstens 25). Schick es mir bitte kleiner."
        await send_picture(anna, room, corrupt_jpeg(), caption="Kaputt")
        assert await reply_to(bot, room) == t("de", "image_unreadable")
        await send_picture(anna, room, bmp(), mime="image/bmp")
        assert await reply_to(bot, room) == t("de", "image_type")
        assert llm.requests == [] and await bot.user_texts(anna.user_id) == []
        llm.enqueue("Mir geht's gut, danke!")
        await anna.say(room, "Wie geht's dir?")
        assert await reply_to(bot, room) == "Mir geht's gut, danke!"
    assert await bot.user_texts(anna.user_id) == ["Wie geht's dir?"]


@ON_ONE_SYNAPSE
async def test_in_a_room_a_picture_is_answered_when_its_caption_names_mnemo(openai_bot: Bot, llm: FakeLLM) -> None:
    bot, anna = openai_bot, openai_bot.anna
    room = await anna.open_group(bot.bot_id)
    async with running(bot.channel(encryption=False, allowed_rooms=frozenset({room}))):
        await anna.wait_for(room, bot.joined)
        await send_picture(anna, room, jpeg(), caption="Grüße vom Gipfel")  # not for mnemo
        llm.enqueue("[PHOTO: ein Berggipfel im Schnee] Was für eine Aussicht!")
        await send_picture(anna, room, jpeg(), caption=f"{bot.bot_id}: schau, der Gipfel!",
                           extra={"m.mentions": {"user_ids": [bot.bot_id]}})
        assert await reply_to(bot, room) == "Was für eine Aussicht!"
        assert len(llm.requests) == 1
    assert await bot.user_texts(f"mx:group:{room}") == [
        f"{anna.user_id.removeprefix('@').split(':')[0]}: (Foto: ein Berggipfel im Schnee) schau, der Gipfel!"]
    assert [mime for mime, _ in images_in(llm.last_request.json)] == ["image/jpeg"]


# --- pictures in encrypted rooms ----------------------------------------------------------------------


async def send_file_event(human: Human, room: str, data: bytes, *, encrypt_event: bool = True, caption: str = "",
                          spoil: Callable[[dict[str, Any]], None] = lambda keys: None) -> str:
    """Upload an encrypted PNG and send it as m.image with its `file` (key, iv, hash) as Element does; `spoil` may
    change those before it goes out. Unencrypted events go out as they are, in an encrypted room too."""
    uploaded, keys = await human.client.upload(io.BytesIO(data), content_type="image/png", filename="bild.png",
                                               encrypt=True, filesize=len(data))
    assert isinstance(uploaded, UploadResponse) and keys is not None, uploaded
    spoil(keys)
    content = {"msgtype": "m.image", "body": caption or "bild.png", "filename": "bild.png",
               "info": {"mimetype": "image/png", "size": len(data)}, "file": {"url": uploaded.content_uri, **keys}}
    if encrypt_event:
        sent = await human.client.room_send(room, "m.room.message", content, ignore_unverified_devices=True)
    else:  # matrix-nio encrypts in an encrypted room; this goes as Element forwards a picture
        method, path, body = Api.room_send(human.client.access_token, room, "m.room.message", content, uuid4())
        sent = await human.client._send(RoomSendResponse, method, path, body, (room,))
    assert isinstance(sent, RoomSendResponse), sent
    return str(sent.event_id)


def another_key(keys: dict[str, Any]) -> None:
    keys["key"]["k"] = encrypt_attachment(b"x")[1]["key"]["k"]  # a valid key, not the one it was encrypted with


def another_hash(keys: dict[str, Any]) -> None:
    keys["hashes"]["sha256"] = encrypt_attachment(b"x")[1]["hashes"]["sha256"]


@ON_ONE_SYNAPSE
async def test_an_unencrypted_picture_in_an_encrypted_room_is_answered_without_a_schema_in_the_log(
    anthropic_bot: Bot, llm: FakeLLM, caplog: pytest.LogCaptureFixture,
) -> None:
    bot, anna = anthropic_bot, anthropic_bot.anna
    caplog.set_level(logging.INFO)
    async with running(bot.channel(encryption=True)):
        room = await anna.open_dm(bot.bot_id, encrypted=True)
        await anna.wait_for(room, bot.joined)
        llm.enqueue("Hallo!")
        await anna.say(room, "Hallo")
        assert await reply_to(bot, room) == "Hallo!"
        llm.enqueue("[PHOTO: ein roter Kreis] Ein weitergeleitetes Bild!")
        await send_file_event(anna, room, png(), encrypt_event=False)
        [reply] = await anna.wait_for(room, bot.said, seconds=20)
        assert reply.decrypted and reply.body == "Ein weitergeleitetes Bild!"  # type: ignore[attr-defined]
        [(mime, data)] = images_in(llm.last_request.json)
        assert mime == "image/jpeg" and centre(data)[0] > 150  # decrypted right
    said = [r.getMessage() for r in caplog.records]
    assert [m for m in said if "\n" in m or "schema" in m] == []
    assert any(m.startswith("Error validating event: 'url' is a required property") for m in said)  # nio's, cut
    assert (await bot.user_texts(anna.user_id))[-1] == "(Foto: ein roter Kreis)"


@ON_ONE_SYNAPSE
async def test_a_picture_that_cannot_be_decrypted_is_told_so(openai_bot: Bot, llm: FakeLLM) -> None:
    bot, anna = openai_bot, openai_bot.anna
    async with running(bot.channel(encryption=True)):
        room = await anna.open_dm(bot.bot_id, encrypted=True)
        await anna.wait_for(room, bot.joined)
        llm.enqueue("Hallo!")
        await anna.say(room, "Hallo")
        assert await reply_to(bot, room) == "Hallo!"
        requests = len(llm.requests)
        await send_file_event(anna, room, png(), spoil=another_key)
        assert await reply_to(bot, room) == t("de", "image_undecryptable")
        await send_file_event(anna, room, png(), spoil=another_hash)
        assert await reply_to(bot, room) == t("de", "image_undecryptable")
        assert len(llm.requests) == requests and await bot.user_texts(anna.user_id) == ["Hallo"]
        llm.enqueue("Ich bin da. Was ist passiert?")  # a caption in crisis is answered first, without the picture
        await send_file_event(anna, room, png(), spoil=another_key, caption="Ich will nicht mehr leben.")
        help_lines, answer = await anna.wait_for(room, bot.said, count=2, seconds=20)  # the help text first
        assert help_lines.body == crisis_help("DE", "de") and answer.body == "Ich bin da. Was ist passiert?"  # type: ignore[attr-defined]
    assert (await bot.user_texts(anna.user_id))[-1] == "(Foto) Ich will nicht mehr leben."
    assert t("de", "image_undecryptable") != t("de", "image_type")


@ON_ONE_SYNAPSE
async def test_a_picture_that_cannot_be_decrypted_is_told_so_in_english(english_bot: Bot) -> None:
    bot, anna = english_bot, english_bot.anna
    async with running(bot.channel(encryption=True)):
        room = await anna.open_dm(bot.bot_id, encrypted=True)
        await anna.wait_for(room, bot.joined)
        await send_file_event(anna, room, png(), spoil=another_key)
        assert await reply_to(bot, room) == \
            "I couldn't open this picture – it could not be decrypted. Please send it again."
