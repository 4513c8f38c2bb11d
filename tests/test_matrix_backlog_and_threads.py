"""Matrix against one real Synapse for the module: messages written while mnemo was down count in the rate limit by
when they were sent (origin_server_ts, set by the tests' application service), and a message in a thread is answered
in that thread (in a direct room and in a room of many, streamed too)."""
from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest_asyncio
from nio import AsyncClient, RoomMessageText, SyncResponse

from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.ratelimit import Bucket, counted_at, take
from bot.texts import t
from tests import test_matrix_polish as polish
from tests.fakes.llm import ScriptedLLM
from tests.test_matrix import NOTHING_LEARNED, Human, running
from tests.test_matrix_polish import ON_ONE_SYNAPSE, Bot, collect, quiet, shown

syn, store, bot = polish.syn, polish.store, polish.bot  # the same fixtures: a Synapse for this module

BACKLOG, APART = 24, 4.0  # 24 messages 4 s apart: under 20 a minute, more than the 20 that may come at once


# --- pure parts -------------------------------------------------------------------------------------


def test_a_message_counts_when_it_was_sent_never_later_than_now() -> None:
    assert counted_at(1_000.0, 900.0) == 900.0 and counted_at(1_000.0, 5_000.0) == 1_000.0
    assert counted_at(1_000.0, None) == 1_000.0
    bucket = None
    for n in range(BACKLOG):  # written 4 s apart, all taken in at once much later: every one passes
        passed, bucket = take(bucket, counted_at(10_000.0, 1_000.0 + n * APART), per_minute=20, burst=20)
        assert passed
    late = Bucket(0.0, 500.0)
    assert take(late, 400.0, 20, 20) == (False, late)  # one older than the last refills nothing, moves no clock back


# --- the real thing ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Limited:
    """The module's bot with an engine that lets 20 messages a minute through (as the default settings do)."""

    bot: Bot
    chat: ScriptedLLM


@pytest_asyncio.fixture(loop_scope="module")
async def limited(bot: Bot) -> AsyncIterator[Limited]:
    chat, background = ScriptedLLM(), ScriptedLLM()
    background.responder = lambda call: NOTHING_LEARNED
    chat.responder = lambda call: "Gelesen: " + re.findall(r"Nachricht (\d+)", call.messages[-1].content)[-1]
    engine = Engine(bot.store, chat, background, EngineConfig(relevance_floor=0.0, rate_limit_per_minute=20),
                    clock=bot.clock)
    try:
        yield Limited(dataclasses.replace(bot, engine=engine, chat=chat), chat)
    finally:
        await engine.drain()
        await engine.close()


async def massaged(bot: Bot, name: str) -> Human:
    """A person whose messages may say when they were sent (a user of the tests' application service)."""
    user_id, token, device = await bot.syn.massaged_user(bot.syn.fresh_name(name))
    client = AsyncClient(bot.syn.url, user_id)
    client.restore_login(user_id, device, token)
    await client.sync(timeout=0, full_state=True)
    human = Human(client)
    bot.people.append(human)
    return human


async def bot_says(human: Human, room: str, bot: Bot, until: Callable[[list[str]], bool],
                   seconds: float = 60.0) -> list[str]:
    """The bot's new messages in the room until `until` holds of them, syncing with a timeline long enough for all."""
    said: list[str] = []
    deadline = time.monotonic() + seconds
    while not until(said):
        assert time.monotonic() < deadline, f"gave up waiting; saw {said}"
        response = await human.client.sync(timeout=1000, sync_filter={"room": {"timeline": {"limit": 200}}})
        assert isinstance(response, SyncResponse), response
        joined = response.rooms.join.get(room)
        said += [e.body for e in (joined.timeline.events if joined else []) if bot.said(e)]  # type: ignore[attr-defined]
    return said


@ON_ONE_SYNAPSE
async def test_messages_written_while_down_count_by_when_they_were_sent(limited: Limited) -> None:
    bot, chat = limited.bot, limited.chat
    anna = await massaged(bot, "anna")
    allowed = frozenset({anna.user_id})
    async with running(bot.channel(allowed_users=allowed)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        await anna.say(room, "Hallo, Nachricht 0")
        assert [e.body for e in await anna.wait_for(room, bot.said)] == ["Gelesen: 0"]  # type: ignore[attr-defined]

    start = time.time()  # while mnemo is down, Anna writes 24 messages 4 s apart (as origin_server_ts says) ...
    for n in range(1, BACKLOG + 1):
        await bot.syn.send_at(anna.user_id, room, {"msgtype": "m.text", "body": f"Nachricht {n}"},
                              round((start + n * APART) * 1000))
    bot.clock.offset = BACKLOG * APART + 60  # ... and mnemo is back a minute after the last one
    async with running(bot.channel(allowed_users=allowed)):
        replies = await bot_says(anna, room, bot, until=lambda said: len(said) >= BACKLOG
                                 or t("de", "rate_limited") in said)
        assert await quiet(anna, room, bot) == []
    assert replies == [f"Gelesen: {n}" for n in range(1, BACKLOG + 1)]
    assert t("de", "rate_limited") not in replies and len(chat.calls) == BACKLOG + 1

    sent = round(bot.clock() * 1000)  # the same 24 sent all in the same second: the limit still holds
    for n in range(BACKLOG + 1, 2 * BACKLOG + 1):
        await bot.syn.send_at(anna.user_id, room, {"msgtype": "m.text", "body": f"Nachricht {n}"}, sent)
    async with running(bot.channel(allowed_users=allowed)):
        flood = await bot_says(anna, room, bot, until=lambda said: t("de", "rate_limited") in said)
        flood += [e.body for e in await quiet(anna, room, bot, 2.0)]  # type: ignore[attr-defined]
    assert flood.count(t("de", "rate_limited")) == 1 and len(flood) < BACKLOG + 1  # told once, the rest is silence
    scope = await bot.engine.scope_for(anna.user_id)
    stored = [m.text for m in await bot.store.messages.recent(scope, 100) if m.role == "user"]
    assert stored[: BACKLOG + 1] == ["Hallo, Nachricht 0", *(f"Nachricht {n}" for n in range(1, BACKLOG + 1))]
    assert len(stored) == len(flood) - 1 + BACKLOG + 1  # a refused message is neither read nor stored


def relation(content: dict[str, Any]) -> dict[str, Any]:
    return dict(content.get("m.relates_to") or {})


@ON_ONE_SYNAPSE
async def test_a_message_in_a_thread_is_answered_in_that_thread(bot: Bot) -> None:
    anna = await bot.person("Anna")
    bot.chat.enqueue("Im Hauptverlauf.")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        root = await anna.say(room, "Ein neues Thema")
        [first] = await anna.wait_for(room, bot.said)
        assert relation(first.source["content"]) == {}
        bot.chat.enqueue("Im Faden geantwortet.")
        asked = await polish.say(anna, room, {"body": "Und dazu noch eine Frage", "m.relates_to": {
            "rel_type": "m.thread", "event_id": root, "is_falling_back": True, "m.in_reply_to": {"event_id": root}}})
        [reply] = await anna.wait_for(room, bot.said)
        command = await polish.say(anna, room, {"body": "!export", "m.relates_to": {
            "rel_type": "m.thread", "event_id": root, "is_falling_back": True,
            "m.in_reply_to": {"event_id": reply.event_id}}})
        notice, upload = await anna.wait_for(room, lambda e: e.sender == bot.bot_id, count=2)
    assert reply.body == "Im Faden geantwortet."  # type: ignore[attr-defined]
    assert notice.body == "Hier sind alle deine Daten." and upload.source["content"]["msgtype"] == "m.file"  # type: ignore[attr-defined]
    for answer in (notice, upload):  # a command's answer and its file go into the thread too
        assert relation(answer.source["content"]) == {"rel_type": "m.thread", "event_id": root,
                                                      "is_falling_back": True, "m.in_reply_to": {"event_id": command}}
    assert relation(reply.source["content"]) == {"rel_type": "m.thread", "event_id": root, "is_falling_back": True,
                                                  "m.in_reply_to": {"event_id": asked}}
    assert bot.chat.calls[-1].messages[-1].content.endswith("Und dazu noch eine Frage")
    assert "Ein neues Thema" not in bot.chat.calls[-1].messages[-1].content  # a thread's fallback is no quote


@ON_ONE_SYNAPSE
async def test_a_notice_of_mnemos_own_on_a_message_in_a_thread_goes_into_the_thread(bot: Bot) -> None:
    anna = await bot.person("Anna")
    bot.chat.enqueue("Hallo.")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        root = await anna.say(room, "Schau mal")
        await anna.wait_for(room, bot.said)
        video = await polish.say(anna, room, {"msgtype": "m.video", "body": "clip.mp4", "url": "mxc://localhost/clip",
                                              "m.relates_to": {"rel_type": "m.thread", "event_id": root,
                                                               "is_falling_back": True,
                                                               "m.in_reply_to": {"event_id": root}}})
        [notice] = await anna.wait_for(room, bot.said)
        plain = await polish.say(anna, room, {"msgtype": "m.video", "body": "clip.mp4", "url": "mxc://localhost/clip"})
        [outside] = await anna.wait_for(room, bot.said)
    assert notice.body == t("de", "not_text_kind") == outside.body  # type: ignore[attr-defined]
    assert relation(notice.source["content"]) == {"rel_type": "m.thread", "event_id": root, "is_falling_back": True,
                                                   "m.in_reply_to": {"event_id": video}}
    assert relation(outside.source["content"]) == {} and plain  # a message outside a thread: the timeline


@ON_ONE_SYNAPSE
async def test_in_a_room_a_streamed_answer_in_a_thread_stays_there_as_a_reply(bot: Bot) -> None:
    anna = await bot.person("Anna")
    room = await anna.open_group(bot.bot_id)
    bot.chat.chunks, bot.chat.chunk_delay = 6, 0.2
    final = "Ja, der Ausflug am Sonntag klingt gut. Nehmt etwas zu trinken mit!"
    bot.chat.enqueue(final)
    async with running(bot.channel(allowed_rooms=frozenset({room}), streaming=True)):
        await anna.wait_for(room, bot.joined)
        root = await anna.say(room, "Wer kommt am Sonntag mit?")
        asked = await polish.say(anna, room, {"body": "Mnemo, was meinst du?", "m.relates_to": {
            "rel_type": "m.thread", "event_id": root, "is_falling_back": True, "m.in_reply_to": {"event_id": root}}})
        events = await collect(anna, room, bot.from_bot, until=lambda e: e.source["content"].get(
            "m.new_content", {}).get("body") == final)
        events += await quiet(anna, room, bot, 0.8)
    bot.chat.chunks, bot.chat.chunk_delay = 0, 0.0
    [preview] = [e for e in events if bot.said(e)]
    assert shown(events) == [final] and isinstance(preview, RoomMessageText)
    assert relation(preview.source["content"]) == {"rel_type": "m.thread", "event_id": root, "is_falling_back": False,
                                                    "m.in_reply_to": {"event_id": asked}}
    assert all(relation(e.source["content"]) == {"rel_type": "m.replace", "event_id": preview.event_id}
               for e in events if e is not preview)

