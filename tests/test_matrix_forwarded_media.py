"""Media forwarded from an unencrypted room into an encrypted one, against the real Synapse: Element sends the forward
as an encrypted event whose content carries the file's plain `url` (no `file` with keys), which matrix-nio's
decryption refuses as invalid. Anna's real matrix-nio client sends exactly such events (her client encrypts whatever
content it is given); mnemo downloads the file unencrypted and treats it like the other media of its kind, after a
restart too."""
from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nio import BadEvent, Event, RoomMessageAudio, RoomMessageFile, RoomMessageImage, RoomSendResponse, UploadResponse

from bot.channels.matrix.images import media_in_the_clear
from bot.channels.matrix.rooms import from_inbox
from bot.conversation.engine import Engine, EngineConfig
from bot.settings import Settings
from bot.voice.openai_audio import OpenAITranscriber
from memory.store import MemoryStore
from tests.fakes.audio import spoken
from tests.fakes.llm import ScriptedLLM
from tests.fakes.openai_audio import FakeAudioAPI
from tests.fakes.synapse import Synapse
from tests.images import png
from tests.test_matrix import PASSWORD, Human, World, running, texts

NOTHING_LEARNED = json.dumps({"facts": [], "content": [], "profile": []})


def decrypted_source(content: dict[str, Any]) -> dict[str, Any]:
    """A decrypted event as matrix-nio's Megolm decryption hands it to its parser."""
    return {"type": "m.room.message", "content": content, "event_id": "$fwd", "sender": "@anna:localhost",
            "origin_server_ts": 1_700_000_000_000, "room_id": "!dm:localhost"}


def test_a_decrypted_media_event_with_a_plain_url_is_read_as_unencrypted_media() -> None:
    url = "mxc://localhost/abc"
    kinds = {"m.image": RoomMessageImage, "m.file": RoomMessageFile, "m.audio": RoomMessageAudio}
    for msgtype, kind in kinds.items():
        source = decrypted_source({"msgtype": msgtype, "body": "x", "url": url, "info": {"mimetype": "a/b"}})
        refused = Event.parse_decrypted_event(source)
        assert isinstance(refused, BadEvent)  # matrix-nio's reading: 'file' is a required property
        read = media_in_the_clear(refused)
        assert isinstance(read, kind) and read.url == url and read.event_id == "$fwd", msgtype
        replayed = from_inbox(json.dumps({"room_id": "!dm:localhost", "kind": "private", "scope": "@anna:localhost",
                                          "event": source}))
        assert replayed is not None and isinstance(replayed.event, kind)  # after a restart the same


@pytest.fixture
async def world(tmp_path: Path, store: MemoryStore, audio: FakeAudioAPI, synapse: Synapse) -> AsyncIterator[World]:
    syn = synapse
    bot_id, _, _ = await syn.register(syn.fresh_name("mnemo"), PASSWORD)
    anna = await Human.login(syn, syn.fresh_name("anna"), tmp_path / "anna-store")
    chat, background = ScriptedLLM(), ScriptedLLM()
    background.responder = lambda call: NOTHING_LEARNED
    transcriber = OpenAITranscriber("whisper-1", audio.base_url, None)
    engine = Engine(store, chat, background, EngineConfig(vision=True), transcriber=transcriber)
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", matrix_homeserver=syn.url,  # type: ignore[call-arg]
                        matrix_user_id=bot_id, matrix_password=PASSWORD, matrix_allowed_users=[anna.user_id],
                        streaming=False)
    try:
        yield World(syn, settings, store, chat, engine, bot_id, anna, tmp_path)
    finally:
        await engine.drain()
        await engine.close()
        await transcriber.aclose()
        await anna.client.close()


async def forward(anna: Human, room: str, data: bytes, content: dict[str, Any]) -> str:
    """Upload a file unencrypted and send `content` pointing at it by its plain url, encrypted (as Element forwards
    media from an unencrypted room into an encrypted one); its event id."""
    mime = content["info"]["mimetype"]
    uploaded, _ = await anna.client.upload(io.BytesIO(data), content_type=mime, filename=content["body"],
                                           encrypt=False, filesize=len(data))
    assert isinstance(uploaded, UploadResponse), uploaded
    sent = await anna.client.room_send(room, "m.room.message", {**content, "url": uploaded.content_uri},
                                       ignore_unverified_devices=True)
    assert isinstance(sent, RoomSendResponse), sent
    return str(sent.event_id)


async def test_media_forwarded_with_a_plain_url_into_an_encrypted_room_is_answered(
        world: World, audio: FakeAudioAPI) -> None:
    anna = world.anna
    async with running(world.channel(encryption=True)):
        room = await anna.open_dm(world.bot_id, encrypted=True)
        await anna.wait_for(room, world.bot_joined)
        world.chat.enqueue("Hallo!")
        await anna.say(room, "Hallo")  # the first message shares the room key with the bot
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Hallo!"]

        picture = png()
        world.chat.enqueue("Ein schönes Bild.")
        await forward(anna, room, picture, {"msgtype": "m.image", "body": "bild.png",
                                            "info": {"mimetype": "image/png", "size": len(picture)}})
        assert texts(await anna.wait_for(room, world.from_bot, seconds=20)) == ["Ein schönes Bild."]
        assert [len(m.images) for m in world.chat.calls[-1].messages if m.images] == [1]

        world.chat.enqueue("Oma: 0341 12345.")
        table = b"Name;Telefon\nOma;0341 12345\n"
        await forward(anna, room, table, {"msgtype": "m.file", "body": "Welche Nummer hat Oma?",
                                          "filename": "kontakte.csv", "info": {"mimetype": "text/csv",
                                                                               "size": len(table)}})
        assert texts(await anna.wait_for(room, world.from_bot, seconds=20)) == ["Oma: 0341 12345."]
        assert "Oma;0341 12345" in world.chat.calls[-1].prompt and "Welche Nummer hat Oma?" in \
            world.chat.calls[-1].prompt

        sent = spoken("Ich habe einen Kuchen gebacken")
        audio.hear("Ich habe einen Kuchen gebacken.")
        world.chat.enqueue("Was für einen?")
        said = await forward(anna, room, sent, {"msgtype": "m.audio", "body": "Voice message",
                                                "info": {"mimetype": "audio/ogg", "size": len(sent),
                                                         "duration": 2000},
                                                "org.matrix.msc3245.voice": {}})
        assert texts(await anna.wait_for(room, world.from_bot, seconds=20)) == ["Was für einen?"]
        assert audio.uploads[-1].data == sent  # the bytes Anna forwarded, downloaded as they are
        scope = await world.store.scope("mnemo", anna.user_id)
        logged = await world.store.messages.by_channel_id(scope, "matrix", said)
        assert logged is not None and (logged.text, logged.origin) == ("Ich habe einen Kuchen gebacken.", "voice")
