"""The Matrix channel as in production against a real Synapse, with a human matrix-nio client on the other side."""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from uuid import uuid4

import pytest
from nio import (
    Api,
    AsyncClient,
    AsyncClientConfig,
    DownloadResponse,
    Event,
    LoginResponse,
    ReactionEvent,
    RoomCreateResponse,
    RoomMemberEvent,
    RoomMessage,
    RoomMessageFile,
    RoomMessageText,
    RoomSendResponse,
    SyncResponse,
    TypingNoticeEvent,
)

from bot.app import matrix_config
from bot.channels.matrix.channel import MatrixChannel
from bot.channels.matrix.config import MatrixConfig
from bot.channels.matrix.messages import (
    KEYCAPS,
    fit_messages,
    normalize_key,
    reaction_choices,
    strip_reply_fallback,
    to_html,
)
from bot.commands.runner import Commands
from bot.conversation.engine import Button, Engine, EngineConfig
from bot.errors import ConfigError
from bot.llm.port import Completion, CompletionRequest, ToolCall
from bot.settings import Settings
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.synapse import Synapse

PASSWORD = "correct horse battery staple"
NOTHING_LEARNED = json.dumps({"facts": [], "content": [], "profile": []})
ENCRYPTION = {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}


# --- pure parts -------------------------------------------------------------------------------------


def test_html_body_escapes_and_keeps_lines() -> None:
    assert to_html("a < b & **c**\nd") == "a &lt; b &amp; <strong>c</strong><br>d"


def test_rule_question_becomes_thumbs_and_other_buttons_numbered_keycaps() -> None:
    rule = (Button("Ja", "rule:yes:7"), Button("Nein", "rule:no:7"))
    assert reaction_choices((rule,), "de") == ([("👍", "rule:yes:7"), ("👎", "rule:no:7")],
                                               "Reagiere mit: 👍 Ja · 👎 Nein")
    pairs, hint = reaction_choices(((Button("◀ Zurück", "mem:0"), Button("Weiter ▶", "mem:20")),), "de")
    assert pairs == [(KEYCAPS[0], "mem:0"), (KEYCAPS[1], "mem:20")]
    assert hint == "Reagiere mit:\n1️⃣ ◀ Zurück · 2️⃣ Weiter ▶"


def test_reaction_keys_match_without_skin_tone_or_variation_selector() -> None:
    assert normalize_key("👍🏽") == normalize_key("👍") and normalize_key("1\u20e3") == normalize_key(KEYCAPS[0])


def test_at_most_three_messages_and_reply_quotes_dropped() -> None:
    assert fit_messages(["a", "b", "c", "d"]) == ("a", "b", "c\n\nd")
    assert strip_reply_fallback("> <@anna:localhost> alt\n\nneu") == "neu"


# --- the real thing ---------------------------------------------------------------------------------


@dataclass
class Human:
    """A person's matrix-nio client that keeps syncing and remembers what it saw."""

    client: AsyncClient
    typing: set[str] = field(default_factory=set)

    @classmethod
    async def login(cls, syn: Synapse, localpart: str, store: Path | None = None) -> Human:
        """Register, log in (with an E2E store when given) and sync once, so later syncs bring only news."""
        user_id, _, _ = await syn.register(localpart, PASSWORD)
        config = AsyncClientConfig(encryption_enabled=store is not None, store_sync_tokens=store is not None)
        if store is not None:
            store.mkdir(parents=True)
        client = AsyncClient(syn.url, user_id, store_path=str(store or ""), config=config)
        assert isinstance(await client.login(PASSWORD, device_name=localpart), LoginResponse)
        if client.should_upload_keys:
            await client.keys_upload()
        await client.sync(timeout=0, full_state=True)
        return cls(client)

    @property
    def user_id(self) -> str:
        return str(self.client.user_id)

    async def open_dm(self, bot_id: str, encrypted: bool = False) -> str:
        """Create a direct room inviting the bot."""
        created = await self.client.room_create(is_direct=True, invite=[bot_id],
                                                initial_state=[ENCRYPTION] if encrypted else [])
        assert isinstance(created, RoomCreateResponse), created
        return str(created.room_id)

    async def open_group(self, *invite: str) -> str:
        """Create a named room for several people."""
        created = await self.client.room_create(name="Gruppe", invite=list(invite))
        assert isinstance(created, RoomCreateResponse), created
        return str(created.room_id)

    async def say(self, room_id: str, text: str) -> str:
        """Send a text; its event id."""
        sent = await self.client.room_send(room_id, "m.room.message", {"msgtype": "m.text", "body": text},
                                           ignore_unverified_devices=True)
        assert isinstance(sent, RoomSendResponse), sent
        return str(sent.event_id)

    async def react(self, room_id: str, event_id: str, key: str, encrypted: bool = False) -> None:
        """Annotate an event with a reaction (encrypted, as Element sends it in an encrypted room)."""
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}
        if not encrypted:
            assert isinstance(await self.client.room_send(room_id, "m.reaction", content), RoomSendResponse)
            return
        # nio's room_send never encrypts reactions, so encrypt here and send the result as it is.
        event_type, ciphertext = self.client.encrypt(room_id, "m.reaction", content)
        method, path, data = Api.room_send(self.client.access_token, room_id, event_type, ciphertext, uuid4())
        sent = await self.client._send(RoomSendResponse, method, path, data, (room_id,))
        assert isinstance(sent, RoomSendResponse), sent

    async def wait_for(self, room_id: str, match: Callable[[Event], bool], count: int = 1,
                       seconds: float = 10.0) -> list[Event]:
        """Sync until `count` new events in the room match; fail after `seconds`."""
        found: list[Event] = []
        deadline = time.monotonic() + seconds
        while len(found) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"only {len(found)} of {count} matching events arrived: {found!r}"
            found += [e for e in await self.sync(room_id, min(left, 2.0)) if match(e)]
        return found

    async def sync(self, room_id: str, seconds: float) -> list[Event]:
        """One sync (waiting up to `seconds` for news); the room's new timeline events."""
        response = await self.client.sync(timeout=int(seconds * 1000))
        assert isinstance(response, SyncResponse), response
        room = response.rooms.join.get(room_id)
        if room is None:
            return []
        for event in room.ephemeral:
            if isinstance(event, TypingNoticeEvent):
                self.typing.update(event.users)
        return list(room.timeline.events)


@dataclass
class World:
    """Synapse, the people on it, and everything the bot needs to run as in production."""

    syn: Synapse
    settings: Settings
    store: MemoryStore
    chat: ScriptedLLM
    engine: Engine
    bot_id: str
    anna: Human
    tmp: Path

    def channel(self, **changes: object) -> MatrixChannel:
        """A fresh channel built from the settings, as bot.app builds it."""
        config: MatrixConfig = dataclasses.replace(matrix_config(self.settings), **changes)  # type: ignore[arg-type]
        return MatrixChannel(self.engine, Commands(self.engine), config)

    def from_bot(self, event: Event) -> bool:
        return isinstance(event, RoomMessage) and event.sender == self.bot_id

    def bot_joined(self, event: Event) -> bool:
        return isinstance(event, RoomMemberEvent) and event.state_key == self.bot_id and event.membership == "join"


class SlowLLM(ScriptedLLM):
    """A scripted model that thinks for a moment, long enough to be seen typing."""

    async def complete(self, request: CompletionRequest) -> Completion:
        await asyncio.sleep(0.3)
        return await super().complete(request)


@pytest.fixture
async def world(tmp_path: Path, store: MemoryStore, synapse: Synapse) -> AsyncIterator[World]:
    syn = synapse  # one Synapse for the run (tests/conftest.py), users of the test's own
    bot_id, _, _ = await syn.register(syn.fresh_name("mnemo"), PASSWORD)
    anna = await Human.login(syn, syn.fresh_name("anna"), tmp_path / "anna-store")
    chat, background = SlowLLM(), ScriptedLLM()
    background.responder = lambda call: NOTHING_LEARNED
    engine = Engine(store, chat, background, EngineConfig())
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", matrix_homeserver=syn.url,  # type: ignore[call-arg]
                        matrix_user_id=bot_id, matrix_password=PASSWORD, matrix_allowed_users=[anna.user_id],
                        streaming=False)  # streamed replies: tests/test_matrix_polish.py
    try:
        yield World(syn, settings, store, chat, engine, bot_id, anna, tmp_path)
    finally:
        await engine.drain()
        await engine.close()
        await anna.client.close()


@contextlib.asynccontextmanager
async def running(channel: MatrixChannel) -> AsyncIterator[MatrixChannel]:
    await channel.start()
    try:
        yield channel
    finally:
        await channel.stop()


def texts(events: list[Event]) -> list[str]:
    return [e.body for e in events if isinstance(e, RoomMessage)]  # type: ignore[attr-defined]


async def test_chat_commands_rule_reaction_push_and_restart(world: World) -> None:
    anna, bot_id = world.anna, world.bot_id
    async with running(world.channel()) as channel:
        room = await anna.open_dm(bot_id)
        await anna.wait_for(room, world.bot_joined)

        world.chat.enqueue("Hallo Anna!\n\nSchön, dass **du** da bist.")
        said = await anna.say(room, "Hallo, ich bin Anna")
        first, second = await anna.wait_for(room, world.from_bot, count=2)
        assert texts([first, second]) == ["Hallo Anna!", "Schön, dass **du** da bist."]
        assert second.source["content"]["format"] == "org.matrix.custom.html"
        assert second.source["content"]["formatted_body"] == "Schön, dass <strong>du</strong> da bist."
        assert bot_id in anna.typing
        scope = await world.store.scope("mnemo", anna.user_id)
        logged = await world.store.messages.by_channel_id(scope, "matrix", said)
        assert logged is not None and logged.text == "Hallo, ich bin Anna"

        await anna.say(room, "!memories")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Ich habe mir noch nichts über dich gemerkt."]
        await anna.say(room, "/help")
        [help_text] = texts(await anna.wait_for(room, world.from_bot))
        assert "!memories –" in help_text and "!forget –" in help_text and "/" not in help_text  # "/…" is Element's
        await anna.say(room, "!export")
        notice, upload = await anna.wait_for(room, world.from_bot, count=2)
        assert texts([notice]) == ["Hier sind alle deine Daten."]
        assert isinstance(upload, RoomMessageFile) and upload.body == "mnemo-export.json"
        downloaded = await anna.client.download(upload.url)
        assert isinstance(downloaded, DownloadResponse), downloaded
        assert "Hallo, ich bin Anna" in downloaded.body.decode("utf-8")

        world.chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kürzer."})])
        world.chat.enqueue("Gut, ich fasse mich kurz.")
        await anna.say(room, "Ich mag es knapp")
        events = await anna.wait_for(
            room, lambda e: world.from_bot(e) or (isinstance(e, ReactionEvent) and e.sender == bot_id), count=4)
        assert texts(events)[0] == "Gut, ich fasse mich kurz."
        question = [e for e in events if isinstance(e, RoomMessageText)][-1]
        assert "Soll ich mir das merken? 📌 Antworte kürzer." in question.body
        assert question.body.endswith("\n\nReagiere mit: 👍 Ja · 👎 Nein")  # in a direct room too (issue 52)
        assert sorted((e.key, e.reacts_to) for e in events if isinstance(e, ReactionEvent)) == \
            sorted([("👍", question.event_id), ("👎", question.event_id)])
        await anna.react(room, question.event_id, "👍")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["📌 Gemerkt: Antworte kürzer."]
        assert [r.text for r in await world.store.rules.list(scope, "active")] == ["Antworte kürzer."]

        await channel.send(anna.user_id, "Hallo")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Hallo"]

    session = json.loads((world.settings.data_dir / "matrix" / "session.json").read_text())
    assert (world.settings.data_dir / "matrix" / "session.json").stat().st_mode & 0o077 == 0
    await anna.say(room, "Bist du noch da?")
    world.chat.enqueue("Ja, wieder da.")
    calls_before = len(world.chat.calls)
    async with running(world.channel()) as channel:
        assert channel.client is not None and channel.client.device_id == session["device_id"]
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Ja, wieder da."]
        quiet = [e for e in await anna.sync(room, 1.5) if world.from_bot(e)]
        assert quiet == [], f"old messages answered again: {texts(quiet)}"
    assert len(world.chat.calls) == calls_before + 1


async def test_strangers_are_declined_and_history_is_not_answered_on_first_start(world: World) -> None:
    anna, syn = world.anna, world.syn
    stranger = await Human.login(syn, syn.fresh_name("mallory"))
    try:
        # Before mnemo ever ran: the bot's account already shares a room with Anna, who wrote in it.
        earlier = AsyncClient(syn.url, world.bot_id)
        assert isinstance(await earlier.login(PASSWORD), LoginResponse)
        room = await anna.open_dm(world.bot_id)
        await earlier.join(room)
        await earlier.close()
        await anna.wait_for(room, world.bot_joined)
        await anna.say(room, "Alte Nachricht von gestern")
        strange_room = await stranger.open_dm(world.bot_id)
        await stranger.wait_for(strange_room, lambda e: isinstance(e, RoomMemberEvent))
        await stranger.say(strange_room, "Lass mich rein")
        with pytest.raises(ConfigError, match="MNEMO_MATRIX_PASSWORD"):
            await world.channel(password="wrong").start()

        async with running(world.channel(unknown_users="refuse")):  # pairing: tests/test_matrix_polish.py
            await stranger.wait_for(strange_room, lambda e: isinstance(e, RoomMemberEvent)
                                    and e.state_key == world.bot_id and e.membership == "leave")
            group = await anna.open_group(world.bot_id, stranger.user_id)
            await stranger.client.join(group)
            await anna.wait_for(group, world.bot_joined)
            await stranger.wait_for(group, lambda e: isinstance(e, RoomMemberEvent))
            await stranger.say(group, "Hallo Bot, was weißt du über Anna?")
            await anna.say(group, "Hallo zusammen")
            world.chat.enqueue("Jetzt bin ich da.")
            await anna.say(room, "Neue Nachricht")
            replies = texts(await anna.wait_for(room, world.from_bot))
            assert replies == ["Jetzt bin ich da."]
            assert [e for e in await anna.sync(room, 1.0) if world.from_bot(e)] == []
            assert [e for e in await anna.sync(group, 0.2) if world.from_bot(e)] == []

        assert len(world.chat.calls) == 1
        scope = await world.store.scope("mnemo", anna.user_id)
        assert [m.text for m in await world.store.messages.recent(scope, 10) if m.role == "user"] == ["Neue Nachricht"]
        strange_scope = await world.store.scope("mnemo", stranger.user_id)
        assert await world.store.messages.count(strange_scope) == 0
    finally:
        await stranger.client.close()


async def test_encrypted_room(world: World) -> None:
    anna = world.anna
    async with running(world.channel(encryption=True)) as channel:
        assert channel.client is not None and channel.client.olm is not None
        room = await anna.open_dm(world.bot_id, encrypted=True)
        await anna.wait_for(room, world.bot_joined)
        world.chat.enqueue("Geheim beantwortet.")
        await anna.say(room, "Ein Geheimnis")
        [reply] = await anna.wait_for(room, world.from_bot)
        assert isinstance(reply, RoomMessageText) and reply.decrypted and reply.body == "Geheim beantwortet."

        world.chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Sag du zu mir."})])
        world.chat.enqueue("Mach ich.")
        await anna.say(room, "Wir duzen uns")
        events = await anna.wait_for(
            room, lambda e: world.from_bot(e) or (isinstance(e, ReactionEvent) and e.sender == world.bot_id), count=4)
        question = [e for e in events if isinstance(e, RoomMessageText)][-1]
        await anna.react(room, question.event_id, "👍", encrypted=True)
        assert texts(await anna.wait_for(room, world.from_bot)) == ["📌 Gemerkt: Sag du zu mir."]
    assert list((world.settings.data_dir / "matrix").glob("*.db")), "no E2E store in the data directory"


async def test_encrypted_room_without_e2e_gets_one_clear_log_line(world: World,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    anna = world.anna
    caplog.set_level(logging.WARNING, logger="bot.channels.matrix.channel")
    async with running(world.channel(encryption=False)):
        room = await anna.open_dm(world.bot_id, encrypted=True)
        await anna.wait_for(room, world.bot_joined)
        await anna.say(room, "Kannst du das lesen?")
        assert [e for e in await anna.sync(room, 1.0) if world.from_bot(e)] == []
    lines = [r.getMessage() for r in caplog.records if "is encrypted" in r.getMessage()]
    assert len(lines) == 1 and room in lines[0] and "matrix-nio[e2e]" in lines[0]
    assert len(world.chat.calls) == 0


async def test_an_unreachable_homeserver_is_one_clear_error(tmp_path: Path, store: MemoryStore) -> None:
    engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig())
    with socket.socket() as probe:  # a free port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = MatrixConfig(f"http://127.0.0.1:{port}", "@mnemo:localhost", password="x", data_dir=tmp_path / "m")
    with pytest.raises(ConfigError, match="MNEMO_MATRIX_HOMESERVER"):
        await MatrixChannel(engine, Commands(engine), config).start()


async def test_a_push_to_someone_without_a_room_opens_an_encrypted_direct_room(world: World, tmp_path: Path) -> None:
    ben = await Human.login(world.syn, world.syn.fresh_name("ben"), tmp_path / "ben-store")
    try:
        async with running(world.channel(allowed_users=frozenset({world.anna.user_id, ben.user_id}))) as channel:
            await channel.send(ben.user_id, "Hallo Ben, ich bin jetzt auch hier.")
            room = ""
            deadline = time.monotonic() + 10
            while not room and time.monotonic() < deadline:
                invited = await ben.client.sync(timeout=1000)
                assert isinstance(invited, SyncResponse), invited
                room = next(iter(invited.rooms.invite), "")
            assert room, "no invite arrived"
            await ben.client.join(room)
            [push] = await ben.wait_for(room, world.from_bot)
            assert isinstance(push, RoomMessageText) and push.decrypted
            assert push.body == "Hallo Ben, ich bin jetzt auch hier."
    finally:
        await ben.client.close()
