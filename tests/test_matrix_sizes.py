"""No event mnemo sends is over Matrix's 64 KiB: the sizes as matrix-nio and Synapse count them (encrypted too), what
an edit carries when the whole text does not fit twice, and a streamed reply of 15,500 characters in an encrypted room
of one real Synapse: its preview edits are accepted, the reply comes once, in its bubbles."""
from __future__ import annotations

import contextlib
import json
import logging
import random
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
import vodozemac
from nio import Api, AsyncClient, LoginResponse, RoomCreateResponse, RoomSendResponse

from bot.channels.matrix.messages import MESSAGE_BYTES, edit_content, json_bytes, message_content, split_message
from bot.channels.matrix.sizes import CONTENT_BYTES, ENVELOPE_BYTES, MAX_EVENT_BYTES, encrypted_bytes, fits_in
from bot.conversation.bubbles import split_bubbles
from tests import test_matrix_polish as polish
from tests.test_matrix import PASSWORD, Human, running
from tests.test_matrix_polish import ON_ONE_SYNAPSE, Bot, collect, quiet, shown

syn, store, bot = polish.syn, polish.store, polish.bot  # the same fixtures: a Synapse for this module

ROOM = "!" + "r" * 43 + ":localhost"
PARAGRAPH = ("Grüße aus München! Heute früh war ich am Fluss, die Möwen haben „laut“ geschrien, und **das Wasser** "
             "glänzte in der Sonne. Später gab's Kaffee & Kuchen – Käsekuchen, natürlich. 🙂 Und \"du\"?")


def long_reply(chars: int = 15_500) -> str:
    """A German reply of about `chars` characters in paragraphs, with umlauts, quotes, an emoji and bold words."""
    paragraphs = [f"{n}. {PARAGRAPH}" for n in range(chars // (len(PARAGRAPH) + 6) + 1)]
    return "\n\n".join(paragraphs)[:chars].rstrip()


def canonical(data: dict[str, Any]) -> int:
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8"))


# --- pure parts -------------------------------------------------------------------------------------


def test_the_estimate_of_an_encrypted_event_is_never_below_what_megolm_makes() -> None:
    session, rng = vodozemac.GroupSession(), random.Random(42)
    alphabet = "abc äöü ß\n\"\\🙂–„“"
    for length in (0, 1, 15, 16, 17, 500, 5_000, 20_000):
        content = message_content("".join(rng.choice(alphabet) for _ in range(length)))
        plaintext = Api.to_json({"content": content, "type": "m.room.message", "room_id": ROOM})  # as matrix-nio
        ciphertext = session.encrypt(plaintext.encode()).to_base64()  # as matrix-nio's OutboundGroupSession
        made = canonical({"algorithm": "m.megolm.v1.aes-sha2", "sender_key": "k" * 43, "ciphertext": ciphertext,
                          "session_id": session.session_id, "device_id": "ABCDEFGHIJ"})
        estimate = encrypted_bytes("m.room.message", content, ROOM)
        assert made <= estimate <= made + 100, (length, made, estimate)
    assert all(json_bytes(t) == len(json.dumps(t)) - 2 for t in ("äöü", "🙂", "\x7f\x01", '"\\\n', PARAGRAPH))


def test_an_edit_of_a_long_reply_keeps_its_html_and_shortens_its_fallback_where_it_is_encrypted() -> None:
    text = long_reply()
    [chunk] = split_message(text)  # 15,500 characters with umlauts: one message
    assert chunk == text and json_bytes(text) <= MESSAGE_BYTES
    whole = {"msgtype": "m.text", "body": f"* {text}", "m.new_content": message_content(text),
             "m.relates_to": {"rel_type": "m.replace", "event_id": "$preview"}}
    assert encrypted_bytes("m.room.message", whole, ROOM) > MAX_EVENT_BYTES  # what Synapse refused before
    plain, encrypted = edit_content("$preview", text, fits_in(ROOM, False)), edit_content("$preview", text,
                                                                                          fits_in(ROOM, True))
    assert plain == whole  # an unencrypted room takes it all
    assert encrypted["m.new_content"] == whole["m.new_content"] and "formatted_body" in encrypted["m.new_content"]
    assert encrypted["body"] == f"* {text[:200]}…"
    assert encrypted_bytes("m.room.message", encrypted, ROOM) <= CONTENT_BYTES
    emoji = "🙂" * 16_000  # the worst text: 12 bytes each in matrix-nio's JSON, split to fit an edit all the same
    for part in split_message(emoji):
        edit = edit_content("$preview", part, fits_in(ROOM, True))
        assert encrypted_bytes("m.room.message", edit, ROOM) <= CONTENT_BYTES and edit["m.new_content"]["body"] == part


# --- the real thing ---------------------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_synapse_adds_less_than_the_envelope_kept_free(bot: Bot) -> None:
    user_id, _, _ = await bot.syn.register(bot.syn.fresh_name("sizer"), PASSWORD)
    client = AsyncClient(bot.syn.url, user_id)
    try:
        assert isinstance(await client.login(PASSWORD), LoginResponse)
        created = await client.room_create()
        assert isinstance(created, RoomCreateResponse), created
        room = created.room_id
        low, high = 60_000, MAX_EVENT_BYTES  # the largest body Synapse takes, found by halving
        while low < high:
            middle = (low + high + 1) // 2
            sent = await client.room_send(room, "m.room.message", {"msgtype": "m.text", "body": "a" * middle})
            low, high = (middle, high) if isinstance(sent, RoomSendResponse) else (low, middle - 1)
        added = MAX_EVENT_BYTES - canonical({"msgtype": "m.text", "body": "a" * low})
        assert 0 < added <= ENVELOPE_BYTES, added  # measured: 575 bytes in a new room
        body = "a" * (CONTENT_BYTES - canonical({"msgtype": "m.text", "body": ""}))
        assert fits_in(room, False)({"msgtype": "m.text", "body": body})
        assert isinstance(await client.room_send(room, "m.room.message", {"msgtype": "m.text", "body": body}),
                          RoomSendResponse)
    finally:
        await client.close()


@ON_ONE_SYNAPSE
async def test_a_streamed_reply_of_15500_characters_in_an_encrypted_room_comes_once(
    bot: Bot, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.channels")
    anna = await bot.person("Anna", store=True)
    # One long paragraph: a streamed preview grows up to its first bubble (never past it, so it never shrinks), and
    # here the first bubble is the whole reply, so its edits grow to the full 15,500 characters.
    text = long_reply().replace("\n\n", " ")
    bubbles = list(split_bubbles(text))
    bot.chat.enqueue("Ja.")
    bot.chat.enqueue(text)
    try:
        async with running_encrypted(bot, anna) as room:
            await anna.say(room, "Hallo")  # the first message shares the room key with the bot
            await collect(anna, room, bot.from_bot, until=lambda e: shown([e]) == ["Ja."])
            await quiet(anna, room, bot, 0.5)
            bot.chat.chunks, bot.chat.chunk_delay = 25, 0.15
            await anna.say(room, "Erzähl mir alles von deinem Tag.")
            events = await collect(anna, room, bot.from_bot, until=lambda e: shown([e]) == bubbles[-1:], seconds=40)
            events += await quiet(anna, room, bot, 1.5)
    finally:
        bot.chat.chunks, bot.chat.chunk_delay = 3, 0.0
    assert len(bubbles) == 1 and len(bubbles[0]) > 15_000
    assert shown(events) == bubbles and len([e for e in events if bot.said(e)]) == 1  # no second copy
    problems = [r.getMessage() for r in caplog.records if r.name.startswith("bot.channels")]
    assert problems == []  # no preview edit or send refused
    longest = max((e.source["content"]["m.new_content"]["body"] for e in events if not bot.said(e)), key=len)
    whole = {"msgtype": "m.text", "body": f"* {longest}", "m.new_content": message_content(longest),
             "m.relates_to": {"rel_type": "m.replace", "event_id": events[0].event_id}}
    assert encrypted_bytes("m.room.message", whole, room) > MAX_EVENT_BYTES  # a preview edit Synapse refused before
    assert all(e.decrypted for e in events)  # type: ignore[attr-defined]
    sizes = await raw_sizes(bot, anna.client, room, [e.event_id for e in events])
    assert max(sizes) < MAX_EVENT_BYTES and max(sizes) > 40_000, sizes  # as the homeserver stored them


@contextlib.asynccontextmanager
async def running_encrypted(bot: Bot, anna: Human) -> AsyncIterator[str]:
    """The bot running with encryption and streaming, in a new encrypted direct room with Anna (its id)."""
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}), encryption=True, streaming=True)):
        room = await anna.open_dm(bot.bot_id, encrypted=True)
        await anna.wait_for(room, bot.joined)
        yield room


async def raw_sizes(bot: Bot, client: AsyncClient, room: str, event_ids: list[str]) -> list[int]:
    """The size of each event as the homeserver hands it out (encrypted, with its envelope)."""
    sizes = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {client.access_token}"}) as http:
        for event_id in event_ids:
            url = f"{bot.syn.url}/_matrix/client/v3/rooms/{quote(room)}/event/{quote(event_id)}"
            async with http.get(url) as resp:
                raw = await resp.json()
                assert resp.status == 200 and raw["type"] == "m.room.encrypted", raw
            sizes.append(canonical(raw))
    return sizes
