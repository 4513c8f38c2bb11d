"""Messenger polish on Matrix, against one real Synapse for the module: pairing, rooms, streamed replies,
restarts (with the host clock set back and forward, a gap longer than the sync's timeline, and a SIGKILL),
rate limits and long replies."""
from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import logging
import os
import re
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from nio import Event, RoomCreateResponse, RoomMemberEvent, RoomMessageText, RoomSendError, RoomSendResponse

from bot.app import matrix_config
from bot.channels.matrix.channel import MatrixChannel
from bot.channels.matrix.messages import (
    MESSAGE_BYTES,
    MESSAGE_CHARS,
    edit_content,
    flood_wait,
    json_bytes,
    mentions,
    message_content,
    split_message,
    without_mention,
)
from bot.channels.matrix.rooms import Received, Route, inbox_payload
from bot.channels.push import ChannelSender
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.llm.port import ToolCall
from bot.settings import Settings
from bot.texts import addressed, t
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM
from tests.fakes.synapse import Synapse
from tests.test_matrix import NOTHING_LEARNED, PASSWORD, Human, running

ON_ONE_SYNAPSE = pytest.mark.asyncio(loop_scope="module")  # one homeserver for the whole module

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"\b([A-HJ-NP-Z2-9]{8})\b")
YEARS = 10 * 365 * 24 * 3600.0


# --- pure parts -------------------------------------------------------------------------------------


def test_long_replies_are_split_within_the_event_size() -> None:
    long = " ".join(f"wort{i}" for i in range(7000))  # about 60,000 characters
    chunks = split_message(long)
    assert len(chunks) == 4 and " ".join(chunks) == long and all(len(c) <= MESSAGE_CHARS for c in chunks)
    emoji = "🙂" * 12_000  # 4 bytes each: split by size, not by count
    assert all(json_bytes(c) <= MESSAGE_BYTES for c in split_message(emoji)) and "".join(split_message(emoji)) == emoji
    lines = "a\n" * 12_000  # a newline is two bytes in JSON
    assert all(json_bytes(c) <= MESSAGE_BYTES for c in split_message(lines))
    assert "formatted_body" not in message_content("&" * 12_000)  # the HTML, five times as big, would not fit beside it
    edit = edit_content("$preview", "Fertig.")
    assert edit["m.new_content"]["body"] == "Fertig." and edit["body"] == "* Fertig."
    assert edit["m.relates_to"] == {"rel_type": "m.replace", "event_id": "$preview"}


def test_mentions_and_what_is_left_of_the_message() -> None:
    me, names = "@mnemo:example.org", ["Mnemo", "mnemo"]
    assert mentions({"body": "hi", "m.mentions": {"user_ids": [me]}}, me, names)
    assert mentions({"body": "Mnemo hi", "formatted_body": f'<a href="https://matrix.to/#/{me}">Mnemo</a> hi'},
                    me, names)
    assert mentions({"body": "Mnemo: Kino oder Park?"}, me, names)
    assert mentions({"body": "was meinst du, @mnemo?"}, me, names)
    assert not mentions({"body": "Mnemonics sind toll, mnemo ist nett"}, me, names)
    assert not mentions({"body": f"> <{me}> alte Antwort\n\nDanke dir"}, me, ["Mnemo"])
    assert without_mention("Mnemo: was meinst du, Kino oder Park?", me, names) == "was meinst du, Kino oder Park?"
    assert without_mention("Was sagst du, @mnemo?", me, names) == "Was sagst du?"


def test_rate_limit_waits_as_told_and_gives_up_in_the_end() -> None:
    limited = RoomSendError("Too Many Requests", "M_LIMIT_EXCEEDED", retry_after_ms=1500)
    assert flood_wait(limited, attempt=1) == 1.5
    assert flood_wait(limited, attempt=5) is None  # the fifth refusal is reported
    assert flood_wait(RoomSendError("slow", "M_LIMIT_EXCEEDED", retry_after_ms=600_000), 1) is None
    assert flood_wait(RoomSendError("slow", "M_LIMIT_EXCEEDED"), 1) == 5.0
    assert flood_wait(RoomSendError("no", "M_FORBIDDEN"), 1) is None


def test_nothing_of_an_unknown_user_goes_into_the_inbox() -> None:
    event = RoomMessageText.from_dict({"type": "m.room.message", "event_id": "$1", "sender": "@eve:x",
                                       "origin_server_ts": 1, "content": {"msgtype": "m.text", "body": "Geheim"}})
    assert isinstance(event, RoomMessageText)
    assert inbox_payload(Received("!r:x", event, Route("stranger", "@eve:x"))) is None
    assert "Geheim" in (inbox_payload(Received("!r:x", event, Route("private", "@eve:x"))) or "")


# --- the real thing ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def syn(synapse: Synapse) -> Synapse:
    """The run's one Synapse (tests/conftest.py); this module's users have names of their own."""
    return synapse


@pytest_asyncio.fixture(loop_scope="module")
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    s = await MemoryStore.open(tmp_path / "mnemo.sqlite3", FakeEmbedder(), semantic_dedupe=0.97)
    yield s
    await s.close()


class Clock:
    """The time the bot believes it is; a test sets it back or forward."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@dataclass
class Bot:
    """A fresh bot account with an engine whose clock the test controls, and people to talk to it."""

    syn: Synapse
    store: MemoryStore
    chat: ScriptedLLM
    engine: Engine
    clock: Clock
    bot_id: str
    settings: Settings
    tmp: Path
    people: list[Human]

    def channel(self, **changes: Any) -> MatrixChannel:
        """A channel built from the settings as bot.app builds it (streaming off unless asked for)."""
        config = dataclasses.replace(matrix_config(self.settings), **{"streaming": False, **changes})
        return MatrixChannel(self.engine, Commands(self.engine), config, clock=self.clock)

    async def person(self, name: str, store: bool = False) -> Human:
        """A new person on the homeserver with a display name."""
        human = await Human.login(self.syn, self.syn.fresh_name(name.lower()),
                                  self.tmp / f"{name}-store" if store else None)
        await human.client.set_displayname(name)
        self.people.append(human)
        return human

    def from_bot(self, event: Event) -> bool:
        return isinstance(event, RoomMessageText) and event.sender == self.bot_id

    def joined(self, event: Event) -> bool:
        return isinstance(event, RoomMemberEvent) and event.state_key == self.bot_id and event.membership == "join"

    def said(self, event: Event) -> bool:
        """A new message of the bot (not an edit)."""
        return self.from_bot(event) and "m.new_content" not in event.source["content"]


@pytest_asyncio.fixture(loop_scope="module")
async def bot(syn: Synapse, store: MemoryStore, tmp_path: Path) -> AsyncIterator[Bot]:
    bot_id, token, _ = await syn.register(syn.fresh_name("mnemo"), PASSWORD)
    async with aiohttp.ClientSession() as http, http.put(
            f"{syn.url}/_matrix/client/v3/profile/{bot_id}/displayname", json={"displayname": "Mnemo"},
            headers={"Authorization": f"Bearer {token}"}) as resp:
        assert resp.status == 200
    chat, background, clock = ScriptedLLM(), ScriptedLLM(), Clock()
    background.responder = lambda call: NOTHING_LEARNED
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0), clock=clock)
    settings = Settings(_env_file=None, data_dir=tmp_path, matrix_homeserver=syn.url,  # type: ignore[call-arg]
                        matrix_user_id=bot_id, matrix_password=PASSWORD)
    made = Bot(syn, store, chat, engine, clock, bot_id, settings, tmp_path, [])
    try:
        yield made
    finally:
        await engine.drain()
        await engine.close()
        for human in made.people:
            await human.client.close()


def shown(events: list[Event]) -> list[str]:
    """What the room shows of these messages: each message once, in its latest edited form."""
    current: dict[str, str] = {}
    for event in events:
        content = event.source.get("content", {})
        if "m.new_content" in content:
            current[content["m.relates_to"]["event_id"]] = content["m.new_content"]["body"]
        else:
            current.setdefault(event.event_id, event.body)  # type: ignore[attr-defined]
    return list(current.values())


async def quiet(human: Human, room: str, bot: Bot, seconds: float = 1.0) -> list[Event]:
    """The bot's messages in the room during the next moment (expected: none)."""
    return [e for e in await human.sync(room, seconds) if bot.from_bot(e)]


async def code_in(human: Human, room: str, bot: Bot, encrypted: bool = False) -> str:
    """Wait for a pairing code from the bot in the room (end-to-end encrypted when the room is)."""
    [message] = await human.wait_for(room, bot.said)
    assert message.decrypted == encrypted
    found = CODE.search(message.body)  # type: ignore[attr-defined]
    assert found, message.body  # type: ignore[attr-defined]
    assert message.body == t("de", "pairing_code", code=found.group(1), minutes="10 Minuten")  # type: ignore[attr-defined]
    return found.group(1)


async def collect(human: Human, room: str, match: Callable[[Event], bool], until: Callable[[Event], bool],
                  seconds: float = 15.0) -> list[Event]:
    """Every matching event in the room until one of them satisfies `until`; fail after `seconds`."""
    found: list[Event] = []
    deadline = time.monotonic() + seconds
    while not any(until(e) for e in found):
        left = deadline - time.monotonic()
        assert left > 0, f"gave up waiting; saw {[getattr(e, 'body', e) for e in found]}"
        found += [e for e in await human.sync(room, min(left, 2.0)) if match(e)]
    return found


async def say(human: Human, room: str, content: dict[str, Any]) -> str:
    sent = await human.client.room_send(room, "m.room.message", {"msgtype": "m.text", **content})
    assert isinstance(sent, RoomSendResponse), sent
    return str(sent.event_id)


async def mnemo(data_dir: Path, *args: str) -> tuple[int, str]:
    """Run the real `mnemo` command line in a child process; its exit code and output."""
    env = {**os.environ, "MNEMO_DATA_DIR": str(data_dir), "MNEMO_EMBEDDING_MODEL": "fake"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "--env-file", "/dev/null", *args, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


# --- pairing ------------------------------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_pairing_from_the_first_invite_to_an_approved_chat(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    anna, eve, max_ = await bot.person("Anna"), await bot.person("Eve", store=True), await bot.person("Max")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}), admins=frozenset({anna.user_id}))):
        # First contact: Eve invites mnemo to an encrypted direct room, as Element does.
        eve_room = await eve.open_dm(bot.bot_id, encrypted=True)
        code = await code_in(eve, eve_room, bot, encrypted=True)
        await eve.say(eve_room, "Mein Geheimnis: ich heiße eigentlich Evelyn.")
        assert await quiet(eve, eve_room, bot) == []  # the code is valid: no second answer
        again = await eve.open_dm(bot.bot_id)  # nor a second code in a second room
        await eve.wait_for(again, lambda e: isinstance(e, RoomMemberEvent) and e.state_key == bot.bot_id
                           and e.membership == "leave")
        # Until approved, nothing of Eve is stored beyond the pending request.
        async with bot.store.db.reading() as tx:
            assert await tx.fetchall("SELECT payload FROM inbox WHERE payload IS NOT NULL") == []
            scopes = [row[0] for row in await tx.fetchall("SELECT user_id FROM scopes")]
            rows = [row for table in ("pairing_requests", "inbox", "messages")
                    for row in await tx.fetchall(f"SELECT * FROM {table}")]
        assert eve.user_id not in scopes and "Evelyn" not in "\n".join(map(str, rows))
        assert [(r.code, r.user_id, r.display_name) for r in await bot.store.access.pending(time.time())] == [
            (code, eve.user_id, "Eve")]

        status, out = await mnemo(bot.tmp, "pair", "approve", code.lower())
        assert status == 0 and f"pairing approved: {eve.user_id} (Eve) on matrix by cli" in out
        [welcome] = await eve.wait_for(eve_room, bot.said)  # the running bot tells her, once
        assert welcome.body == t("de", "paired_welcome")  # type: ignore[attr-defined]
        bot.chat.enqueue("Hallo Eve, schön dich kennenzulernen!")
        await eve.say(eve_room, "Jetzt aber: Hallo!")
        assert [m.body for m in await eve.wait_for(eve_room, bot.said)] == ["Hallo Eve, schön dich kennenzulernen!"]

        # Max writes first in a room mnemo is already in? No: he invites too, and Anna approves from her chat.
        max_room = await max_.open_dm(bot.bot_id)
        max_code = await code_in(max_, max_room, bot)
        anna_room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(anna_room, bot.joined)
        await anna.say(anna_room, "!pair")
        [listing] = await anna.wait_for(anna_room, bot.said)
        assert max_code in listing.body and "Max" in listing.body  # type: ignore[attr-defined]
        await anna.say(anna_room, f"!pair {max_code}")
        [approved] = await anna.wait_for(anna_room, bot.said)
        assert approved.body == t("de", "pair_approved", user=max_.user_id, name="Max")  # type: ignore[attr-defined]
        [welcome] = await max_.wait_for(max_room, bot.said)
        assert welcome.body == t("de", "paired_welcome")  # type: ignore[attr-defined]

        await anna.say(anna_room, f"!pair revoke {max_.user_id}")
        [revoked] = await anna.wait_for(anna_room, bot.said)
        assert revoked.body == t("de", "pair_revoked", user=max_.user_id)  # type: ignore[attr-defined]
        await max_.say(max_room, "Bin ich noch drin?")  # first contact by writing: a new code
        assert await code_in(max_, max_room, bot) != max_code
    assert len(bot.chat.calls) == 1
    logged = [r.getMessage() for r in caplog.records]
    assert any(f"pairing approved: {max_.user_id} (Max) on matrix by {anna.user_id}" in m for m in logged)
    assert any(f"pairing revoked: {max_.user_id} (Max) on matrix by {anna.user_id}" in m for m in logged)


# --- rooms ------------------------------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_in_a_room_mnemo_stays_silent_until_mentioned_and_keeps_the_rooms_memory_apart(bot: Bot) -> None:
    anna, eve = await bot.person("Anna"), await bot.person("Eve")
    alias = bot.syn.fresh_name("familie")
    created = await anna.client.room_create(alias=alias, name="Familie", invite=[bot.bot_id, eve.user_id])
    assert isinstance(created, RoomCreateResponse), created
    family = created.room_id
    other = await anna.open_group(bot.bot_id, eve.user_id)
    for room in (family, other):
        await eve.client.join(room)
    channel = bot.channel(allowed_users=frozenset({anna.user_id}), admins=frozenset({anna.user_id}),
                          allowed_rooms=frozenset({f"#{alias}:localhost"}))
    async with running(channel):
        await anna.wait_for(family, bot.joined)
        dm = await anna.open_dm(bot.bot_id)
        await anna.wait_for(dm, bot.joined)
        bot.chat.enqueue("Privat: schön, Anna.")
        await anna.say(dm, "Ich habe Angst vor der Prüfung.")
        await anna.wait_for(dm, bot.said)

        await eve.say(family, "Hallo zusammen, wer kommt heute?")
        await anna.say(family, "Ich!")
        await eve.say(family, "!memories")  # not addressed, and Eve is no admin
        await eve.say(other, "Mnemo: bist du da?")  # a room not on the allowlist
        assert await quiet(anna, family, bot, 1.5) == [] and len(bot.chat.calls) == 1

        bot.chat.enqueue("Ja, ich bin da!")
        asked = await say(eve, family, {
            "body": "Mnemo: was meinst du, Kino oder Park?", "m.mentions": {"user_ids": [bot.bot_id]},
            "format": "org.matrix.custom.html",
            "formatted_body": f'<a href="https://matrix.to/#/{bot.bot_id}">Mnemo</a>: was meinst du, Kino oder Park?'})
        [answer] = await anna.wait_for(family, bot.said)
        assert answer.body == "Ja, ich bin da!"  # type: ignore[attr-defined]
        assert answer.source["content"]["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}

        bot.chat.enqueue("Dann Kino.")
        await say(anna, family, {"body": f"> <{bot.bot_id}> Ja, ich bin da!\n\nUnd wenn es regnet?",
                                 "m.relates_to": {"m.in_reply_to": {"event_id": answer.event_id}}})
        assert [m.body for m in await anna.wait_for(family, bot.said)] == ["Dann Kino."]  # type: ignore[attr-defined]
        assert "Angst vor der Prüfung" not in bot.chat.calls[-1].prompt  # no private memory in the room

        await say(eve, family, {"body": "Mnemo: !memories"})  # a command from someone who is no admin
        assert await quiet(anna, family, bot) == []
        await anna.say(family, "!memories")  # an admin's bare command: answered with the room's memories
        [listing] = await anna.wait_for(family, bot.said)
        assert listing.body == t("de", addressed("memories_empty", group=True))  # type: ignore[attr-defined]
        await anna.say(family, "!deleteme")  # deletes nothing in a room: the private chat is where it works
        [refused] = await anna.wait_for(family, bot.said)
        assert refused.body == t("de", "deleteme_private_only").replace("/", "!")  # type: ignore[attr-defined]

        group = await bot.engine.scope_for(f"mx:group:{family}")
        assert [m.text for m in await bot.store.messages.recent(group) if m.role == "user"] == [
            "Eve: was meinst du, Kino oder Park?", "Anna: Und wenn es regnet?"]
        private = await bot.engine.scope_for(anna.user_id)
        assert [m.text for m in await bot.store.messages.recent(private)] == [
            "Ich habe Angst vor der Prüfung.", "Privat: schön, Anna."]
        async with bot.store.db.reading() as tx:
            assert eve.user_id not in {row[0] for row in await tx.fetchall("SELECT user_id FROM scopes")}

        # Proactive messages go only to direct rooms.
        assert not await ChannelSender({"matrix": channel}).deliver(group, "Na, wie war das Kino?")
        with pytest.raises(ValueError, match="direct rooms"):
            await channel.send(f"mx:group:{family}", "Hallo Gruppe")
        assert await quiet(anna, family, bot, 0.3) == []
    assert len(bot.chat.calls) == 3


# --- streamed replies -------------------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_a_streamed_reply_is_one_message_edited_in_place_then_finalized(bot: Bot) -> None:
    anna = await bot.person("Anna")
    bot.chat.chunks, bot.chat.chunk_delay = 8, 0.25
    bot.chat.enqueue("Das klingt nach einem schönen Tag. [THOUGHT: Anna mag Parks] "
                     "Was hast du im Park gemacht, erzähl!")
    final = "Das klingt nach einem schönen Tag. Was hast du im Park gemacht, erzähl!"
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}), streaming=True)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        await anna.say(room, "Ich war heute im Park.")
        events = await collect(anna, room, bot.from_bot, until=lambda e: e.source["content"].get(
            "m.new_content", {}).get("body") == final)
        events += await quiet(anna, room, bot, 0.8)
    [preview] = [e for e in events if bot.said(e)]  # exactly one message: the preview, finalized in place
    edits = [e for e in events if not bot.said(e)]
    assert len(edits) >= 2 and shown(events) == [final] and bot.chat.calls[0].streamed
    for edit in edits:
        content = edit.source["content"]
        assert content["m.relates_to"] == {"rel_type": "m.replace", "event_id": preview.event_id}
        assert "[" not in content["m.new_content"]["body"] and content["body"].startswith("* ")
    stamps = [e.server_timestamp for e in [preview, *edits]]
    gaps = [b - a for a, b in itertools.pairwise(stamps[:-1])]  # the last edit is the finalization
    assert all(gap >= 550 for gap in gaps), gaps
    assert bot.bot_id in anna.typing
    scope = await bot.engine.scope_for(anna.user_id)
    assert [m.text for m in await bot.store.messages.recent(scope)] == ["Ich war heute im Park.", final]
    assert [th.text for th in await bot.store.thoughts.latest(scope, 5)] == ["Anna mag Parks"]


@ON_ONE_SYNAPSE
async def test_a_streamed_reply_in_bubbles_and_streaming_turned_off(bot: Bot) -> None:
    anna = await bot.person("Anna")
    bot.chat.enqueue("", [ToolCall("c1", "search_memory", {"query": "Park"})])
    bot.chat.enqueue("Erster Gedanke.\n\nZweiter Gedanke.\n\nDritter Gedanke.")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}), streaming=True)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        await anna.say(room, "Was weißt du über den Park?")
        events = await collect(anna, room, bot.from_bot, until=lambda e: e.body == "Dritter Gedanke.")  # type: ignore[attr-defined]
        events += await quiet(anna, room, bot, 0.8)
    assert shown(events) == ["Erster Gedanke.", "Zweiter Gedanke.", "Dritter Gedanke."]
    assert [c.streamed for c in bot.chat.calls] == [True, True]

    bot.chat.enqueue("Eins.\n\nZwei.")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}), streaming=False)):
        await anna.say(room, "Hallo")
        events = await anna.wait_for(room, bot.from_bot, count=2)
        events += await quiet(anna, room, bot, 0.5)
    assert [e.body for e in events] == ["Eins.", "Zwei."] and not bot.chat.calls[-1].streamed  # type: ignore[attr-defined]


# --- restarts -----------------------------------------------------------------------------------------


def answer_each(call: Any) -> str:
    """The scripted model names the message it answers."""
    last = call.messages[-1].content
    return "Antwort auf " + next(w for w in ("Fünf", "Vier", "Drei", "Zwei", "Eins", "Neustart") if w in last)


@ON_ONE_SYNAPSE
async def test_messages_sent_while_down_are_answered_once_whatever_the_host_clock_says(bot: Bot) -> None:
    anna = await bot.person("Anna")
    bot.chat.responder = answer_each
    allowed = frozenset({anna.user_id})
    async with running(bot.channel(allowed_users=allowed)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        await anna.say(room, "Vor dem Neustart")
        assert [e.body for e in await anna.wait_for(room, bot.said)] == ["Antwort auf Neustart"]  # type: ignore[attr-defined]

    await anna.say(room, "Eins")  # while mnemo is down
    bot.clock.offset = -YEARS  # the host clock now says ten years ago
    async with running(bot.channel(allowed_users=allowed)):
        assert [e.body for e in await anna.wait_for(room, bot.said)] == ["Antwort auf Eins"]  # type: ignore[attr-defined]
        assert await quiet(anna, room, bot) == []

    for word in ("Zwei", "Drei", "Vier", "Fünf"):  # more than the sync brings at once (timeline_limit=2)
        await anna.say(room, word)
    bot.clock.offset = +YEARS  # and now ten years ahead (the inbox forgets every handled id at start)
    async with running(bot.channel(allowed_users=allowed, timeline_limit=2)):
        replies = await anna.wait_for(room, bot.said, count=4)
        assert [e.body for e in replies] == [f"Antwort auf {w}" for w in ("Zwei", "Drei", "Vier", "Fünf")]  # type: ignore[attr-defined]
        assert await quiet(anna, room, bot) == []

    bot.clock.offset = -YEARS  # back again: still nothing old is answered
    async with running(bot.channel(allowed_users=allowed, timeline_limit=2)):
        assert await quiet(anna, room, bot, 1.5) == []
    assert len(bot.chat.calls) == 6
    scope = await bot.engine.scope_for(anna.user_id)
    assert [m.text for m in await bot.store.messages.recent(scope, 20) if m.role == "user"] == [
        "Vor dem Neustart", "Eins", "Zwei", "Drei", "Vier", "Fünf"]


CHILD = textwrap.dedent('''
    """Run the Matrix channel with a chat model that never answers, until killed."""
    import asyncio, sys
    from pathlib import Path
    from bot.commands.runner import Commands
    from bot.conversation.engine import Engine, EngineConfig
    from bot.channels.matrix.channel import MatrixChannel
    from bot.channels.matrix.config import MatrixConfig
    from memory.store import MemoryStore
    from tests.fakes.embedder import FakeEmbedder

    from tests.fakes.llm import StuckLLM as Stuck

    async def main(db, homeserver, bot_id, password, anna, data_dir):
        store = await MemoryStore.open(db, FakeEmbedder(), semantic_dedupe=0.97)
        engine = Engine(store, Stuck(), Stuck(), EngineConfig(relevance_floor=0.0))
        config = MatrixConfig(homeserver, bot_id, password=password, allowed_users=frozenset({anna}),
                              data_dir=Path(data_dir), streaming=False)
        await MatrixChannel(engine, Commands(engine), config).start()
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main(*sys.argv[1:]))
''')


@ON_ONE_SYNAPSE
async def test_a_crash_in_the_middle_of_a_reply_loses_nothing(bot: Bot) -> None:
    anna = await bot.person("Anna")
    allowed = frozenset({anna.user_id})
    bot.chat.enqueue("Hallo Anna.")
    async with running(bot.channel(allowed_users=allowed)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        await anna.say(room, "Hallo")
        await anna.wait_for(room, bot.said)

    script = bot.tmp / "child.py"
    script.write_text(CHILD)
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(bot.tmp / "mnemo.sqlite3"), bot.syn.url, bot.bot_id, PASSWORD,
        anna.user_id, str(bot.tmp / "matrix"), cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE)
    assert child.stdout is not None
    try:
        assert (await asyncio.wait_for(child.stdout.readline(), 30)).strip() == b"ready"
        await anna.say(room, "Bist du da?")
        assert (await asyncio.wait_for(child.stdout.readline(), 10)).strip() == b"model called"
        async with bot.store.db.reading() as tx:  # recorded, and the sync token moved past it
            assert (await tx.fetchone("SELECT count(*) FROM inbox WHERE handled_at IS NULL"))[0] == 1
        await anna.say(room, "Hallo??")
    finally:
        child.kill()  # SIGKILL: no graceful stop
        await child.wait()

    bot.chat.responder = lambda call: "Ja, jetzt!" if "Bist du da?" in call.messages[-1].content else "Hier bin ich."
    async with running(bot.channel(allowed_users=allowed)):
        replies = await anna.wait_for(room, bot.said, count=2)
        assert await quiet(anna, room, bot) == []
    assert [e.body for e in replies] == ["Ja, jetzt!", "Hier bin ich."]  # type: ignore[attr-defined]
    scope = await bot.engine.scope_for(anna.user_id)
    assert [(m.role, m.text) for m in await bot.store.messages.recent(scope)][2:] == [
        ("user", "Bist du da?"), ("assistant", "Ja, jetzt!"), ("user", "Hallo??"), ("assistant", "Hier bin ich.")]
    async with bot.store.db.reading() as tx:
        assert (await tx.fetchone("SELECT count(*) FROM inbox WHERE handled_at IS NULL OR payload IS NOT NULL"))[0] == 0


@ON_ONE_SYNAPSE
async def test_a_reply_shown_before_a_crash_is_edited_in_place_not_sent_again(bot: Bot) -> None:
    anna = await bot.person("Anna")
    allowed = frozenset({anna.user_id})
    bot.chat.enqueue("Gut, und dir?")
    async with running(bot.channel(allowed_users=allowed)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        asked = await anna.say(room, "Wie geht's?")
        [message] = await anna.wait_for(room, lambda e: getattr(e, "event_id", None) == asked)
        [reply] = await anna.wait_for(room, bot.said)
    payload = inbox_payload(Received(room, message, Route("private", anna.user_id)))
    async with bot.store.db.transaction() as tx:  # as if the process died after sending, before marking it handled
        await tx.execute("UPDATE inbox SET handled_at = NULL, payload = ?, shown = ? WHERE event_id = ?",
                         (payload, json.dumps([reply.event_id]), asked))
    async with running(bot.channel(allowed_users=allowed)):
        [edit] = await anna.wait_for(room, bot.from_bot)
        assert await quiet(anna, room, bot) == []
    assert edit.source["content"]["m.relates_to"] == {"rel_type": "m.replace", "event_id": reply.event_id}
    assert edit.source["content"]["m.new_content"]["body"] == "Gut, und dir?"
    assert len(bot.chat.calls) == 1
    async with bot.store.db.reading() as tx:
        assert (await tx.fetchone("SELECT count(*) FROM inbox WHERE handled_at IS NULL"))[0] == 0


# --- rate limits and long replies ---------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_a_long_reply_under_a_rate_limit_arrives_whole_once_and_in_order(
    bot: Bot, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.channels.matrix.outgoing")
    anna = await bot.person("Anna")
    _, admin_token, _ = await bot.syn.register(bot.syn.fresh_name("admin"), PASSWORD, admin=True)
    long = " ".join(f"wort{i}" for i in range(5000))  # about 43,000 characters: three messages
    bot.chat.enqueue(f"Erstens.\n\n{long}\n\nDrittens.")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        async with aiohttp.ClientSession() as http, http.post(  # from now on the bot may send five events a second
                f"{bot.syn.url}/_synapse/admin/v1/users/{bot.bot_id}/override_ratelimit",
                json={"messages_per_second": 5, "burst_count": 1},
                headers={"Authorization": f"Bearer {admin_token}"}) as resp:
            assert resp.status == 200, await resp.text()
        await anna.say(room, "Erzähl mir alles.")
        replies = await anna.wait_for(room, bot.said, count=5, seconds=20)
        assert await quiet(anna, room, bot) == []
    texts = [e.body for e in replies]  # type: ignore[attr-defined]
    assert texts[0] == "Erstens." and " ".join(texts[1:4]) == long and texts[4] == "Drittens."
    assert all(len(text) <= 16_000 for text in texts)
    assert any("Matrix rate limit" in r.getMessage() for r in caplog.records)
