"""Documents on Matrix against the real Synapse: a person's matrix-nio client uploads a PDF or a text file as m.file
into an end-to-end encrypted direct room; mnemo downloads and decrypts it, reads it and answers its caption; what it
does not read (encrypted, an unknown kind) it says plainly, and the model never sees it."""
from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nio import RoomSendResponse, UploadResponse

from bot.conversation.engine import Engine, EngineConfig
from bot.settings import Settings
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.synapse import Synapse
from tests.pdfs import encrypted as locked
from tests.pdfs import pdf
from tests.test_matrix import PASSWORD, Human, World, running, texts

NOTHING_LEARNED = json.dumps({"facts": [], "content": [], "profile": []})
LEASE = pdf("Mietvertrag (Auszug)\nMiete: 850 Euro im Monat\nKündigungsfrist: 3 Monate")


@pytest.fixture
async def world(tmp_path: Path, store: MemoryStore, synapse: Synapse) -> AsyncIterator[World]:
    syn = synapse
    bot_id, _, _ = await syn.register(syn.fresh_name("mnemo"), PASSWORD)
    anna = await Human.login(syn, syn.fresh_name("anna"), tmp_path / "anna-store")
    chat, background = ScriptedLLM(), ScriptedLLM()
    background.responder = lambda call: NOTHING_LEARNED
    engine = Engine(store, chat, background, EngineConfig())
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", matrix_homeserver=syn.url,  # type: ignore[call-arg]
                        matrix_user_id=bot_id, matrix_password=PASSWORD, matrix_allowed_users=[anna.user_id],
                        streaming=False)
    try:
        yield World(syn, settings, store, chat, engine, bot_id, anna, tmp_path)
    finally:
        await engine.drain()
        await engine.close()
        await anna.client.close()


async def send_file(anna: Human, room: str, data: bytes, name: str, mime: str, caption: str = "") -> str:
    """Upload a file encrypted and post it as Element does (m.file; a caption as its body beside the file name)."""
    uploaded, keys = await anna.client.upload(io.BytesIO(data), content_type=mime, filename=name, encrypt=True,
                                              filesize=len(data))
    assert isinstance(uploaded, UploadResponse), uploaded
    content: dict[str, Any] = {"msgtype": "m.file", "body": caption or name, "filename": name,
                               "info": {"mimetype": mime, "size": len(data)}, "file": {**keys,
                                                                                       "url": uploaded.content_uri}}
    sent = await anna.client.room_send(room, "m.room.message", content, ignore_unverified_devices=True)
    assert isinstance(sent, RoomSendResponse), sent
    return str(sent.event_id)


async def test_documents_in_an_encrypted_room_are_read_or_plainly_refused(world: World) -> None:
    anna = world.anna
    async with running(world.channel(encryption=True)) as channel:
        assert channel.client is not None and channel.client.olm is not None
        room = await anna.open_dm(world.bot_id, encrypted=True)
        await anna.wait_for(room, world.bot_joined)

        world.chat.enqueue("Drei Monate.")
        said = await send_file(anna, room, LEASE, "miete.pdf", "application/pdf", "Wie lang ist die Kündigungsfrist?")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Drei Monate."]
        prompt = world.chat.calls[-1].prompt
        assert "Kündigungsfrist: 3 Monate" in prompt and "Wie lang ist die Kündigungsfrist?" in prompt
        scope = await world.store.scope("mnemo", anna.user_id)
        logged = await world.store.messages.by_channel_id(scope, "matrix", said)
        assert logged is not None and logged.text == "(Dokument: miete.pdf) Wie lang ist die Kündigungsfrist?"

        world.chat.enqueue("Oma: 0341 12345.")
        await send_file(anna, room, b"Name;Telefon\nOma;0341 12345\n", "kontakte.csv", "text/csv",
                        "Welche Nummer hat Oma?")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Oma: 0341 12345."]
        assert "Oma;0341 12345" in world.chat.calls[-1].prompt

        await send_file(anna, room, locked(LEASE), "geheim.pdf", "application/pdf")
        assert texts(await anna.wait_for(room, world.from_bot)) == [t("de", "document_encrypted")]
        await send_file(anna, room, b"PK\x03\x04 ...", "brief.docx", "application/msword", "Lies mal")
        assert texts(await anna.wait_for(room, world.from_bot)) == [t("de", "document_unknown_kind")]
        assert len(world.chat.calls) == 2, "the model saw neither refused document"
