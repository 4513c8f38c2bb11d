"""Several workers behind one webhook URL: two Telegram channels on two connections to one database, the updates
posted to either of them (a load balancer): every message answered once, each chat's in order; a chat left by a
worker that stopped is answered by the other."""
from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from memory.store import MemoryStore
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

pytestmark = pytest.mark.both_backends("the inbox's claims by two workers")

PEOPLE = (101, 102, 103, 104)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def echo(call: Call) -> str:
    """The reply names the message it answers (the last line the person wrote)."""
    return "Antwort auf " + call.messages[-1].content.strip().splitlines()[-1]


@pytest.fixture
async def workers(tg: FakeTelegram, store: MemoryStore, second_store: MemoryStore,
                  background: ScriptedLLM) -> AsyncIterator[list[TelegramChannel]]:
    channels, engines = [], []
    for name, mine in (("w1", store), ("w2", second_store)):
        chat = ScriptedLLM("chat")
        chat.responder = echo
        engine = Engine(mine, chat, background, EngineConfig(relevance_floor=0.0))
        port = free_port()
        config = TelegramConfig(token=tg.token, base_url=tg.base_url, streaming=False,
                                allowed_users=frozenset(str(p) for p in PEOPLE),
                                webhook_url=f"http://127.0.0.1:{port}/hook", webhook_port=port, webhook_secret="s3cret")
        channels.append(TelegramChannel(engine, Commands(engine), dataclasses.replace(config, worker=name)))
        engines.append(engine)
    yield channels
    for channel in channels:
        await channel.stop()
    for engine in engines:
        await engine.drain()
        await engine.close()


async def post_alternately(tg: FakeTelegram, channels: list[TelegramChannel]) -> None:
    """Post the pending updates to the workers in turns of three, as a load balancer would: one person's messages
    reach both workers."""
    async with aiohttp.ClientSession() as session:
        for n, update in enumerate(list(tg.pending)):
            url = channels[(n // 3) % len(channels)].config.webhook_url
            async with session.post(str(url), json=update,
                                    headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"}) as response:
                assert response.status == 200
            tg.pending.remove(update)


async def test_two_webhook_workers_answer_every_message_once_and_each_chat_in_order(
        tg: FakeTelegram, workers: list[TelegramChannel]) -> None:
    for channel in workers:
        await channel.start()
    for n in range(3):
        for person in PEOPLE:
            tg.send_text(person, f"Nachricht {n} von {person}")
    await post_alternately(tg, workers)
    sent = await tg.wait_for_sent(12, timeout=20)
    await asyncio.sleep(0.5)  # time for a second answer, were there one
    assert len(tg.sent) == 12
    for person in PEOPLE:
        assert [m["text"] for m in sent if m["chat_id"] == person] == [
            f"Antwort auf Nachricht {n} von {person}" for n in range(3)]


async def test_the_chats_of_a_worker_that_stopped_are_answered_by_the_other(
        tg: FakeTelegram, workers: list[TelegramChannel], store: MemoryStore) -> None:
    first, second = workers
    await first.start()
    first.intake.clock = lambda: 0.0  # its claims ran out long ago: as if it died before answering
    await first.app.stop()  # it answers nothing any more, but its webhook still takes updates in
    tg.send_text(PEOPLE[0], "Bist du da?")
    await post_alternately(tg, [first])
    assert (await store.inbox.unhandled("telegram"))[0].payload is not None
    await second.start()  # its pull at start claims the chat the first one left
    (reply,) = await tg.wait_for_sent(1, timeout=10)
    assert reply["text"] == "Antwort auf Bist du da?"


async def test_a_chats_messages_recorded_out_of_order_are_answered_in_the_order_they_were_sent(
        tg: FakeTelegram, workers: list[TelegramChannel]) -> None:
    """Two messages of one chat reach the webhook in the other order (two workers' requests race); the worker that
    claims the chat answers them in Telegram's order (their update ids), not in the order they were recorded."""
    first, second = workers
    await first.start()
    first.intake.clock = lambda: 0.0  # its claims ran out long ago: it records, the second one answers
    await first.app.stop()
    tg.send_text(PEOPLE[0], "Erstens")
    tg.send_text(PEOPLE[0], "Zweitens")
    async with aiohttp.ClientSession() as session:
        for update in reversed(list(tg.pending)):  # the later update is recorded first
            async with session.post(str(first.config.webhook_url), json=update,
                                    headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"}) as response:
                assert response.status == 200
            tg.pending.remove(update)
    await second.start()
    sent = await tg.wait_for_sent(2, timeout=10)
    assert [m["text"] for m in sent] == ["Antwort auf Erstens", "Antwort auf Zweitens"]
