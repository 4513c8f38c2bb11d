"""Commands run once: a message delivered again (a replay, a redelivery under a new update id) never runs one twice.

The crash moments themselves (a real SIGKILL while a command runs or after it answered) are in
tests/scenarios/test_channels_crashes.py.
"""
from __future__ import annotations

import asyncio

import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.catalog import changes_something, owner_of
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.exchange import Button
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.telegram_api import FakeTelegram

pytestmark = [pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
              pytest.mark.both_backends("the ledger that runs a command once")]

USER = 42


async def test_an_undo_delivered_twice_takes_back_one_change_and_answers_once(
    tg: FakeTelegram, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    for text in ("Anna mag Parks.", "Anna hat einen Hund.", "Anna spielt Cello."):
        await store.notes.add(scope, text)
    channel = TelegramChannel(engine, Commands(engine), TelegramConfig(
        token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER)}), streaming=False))
    await channel.start()
    try:
        tg.send_text(USER, "/undo")
        message = tg.pending[-1]["message"]
        tg.send_update({"message": message})  # the same message again, under a new update id
        tg.send_text(USER, "/start")  # answered after both (one chat's updates run in order)
        await tg.wait_for_sent(2)
        await asyncio.sleep(0.2)
    finally:
        await channel.stop()
    assert [m["text"].splitlines()[0] for m in tg.sent] == [t("de", "undo_done"), t("de", "start", name="Mnemo")]
    assert [n.text for n in await store.notes.list(scope)] == ["Anna hat einen Hund.", "Anna mag Parks."]
    async with store.db.reading() as tx:
        rows = await tx.fetchall("SELECT event_id, state, reply FROM command_runs")
    assert [(state, reply) for _, state, reply in rows] == [("delivered", None), ("delivered", None)]


def test_which_commands_change_something() -> None:
    for name, args in [("undo", ""), ("writediary", ""), ("think", ""), ("deleteme", ""), ("forget", "3"),
                       ("settings", "diary 21:00"), ("diary", "aus"), ("people", "rename 3 Mia"),
                       ("people", "forget 3")]:
        assert changes_something(name, args), (name, args)
    for name, args in [("memories", ""), ("memories", "Hund"), ("diary", "3"), ("rules", ""), ("export", ""),
                       ("people", ""), ("people", "Mia"), ("why", "3"), ("help", ""), ("settings", "")]:
        assert not changes_something(name, args), (name, args)


def test_a_choice_belongs_to_who_asked_unless_it_only_shows_something() -> None:
    confirm = ((Button("Ja", "deleteme:yes"), Button("Abbrechen", "cancel")),)
    paging = ((Button("Weiter", "mem:10"),),)
    assert owner_of(confirm, "tg:42") == "tg:42"
    assert owner_of(paging, "tg:42") is None  # anyone let into the chat may turn the page
    assert owner_of(confirm, "tg:777", may_decide=False) is None  # a member's question: for any admin to answer


async def test_a_command_whose_answer_could_not_be_sent_keeps_no_copy_of_it(
    tg: FakeTelegram, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    await store.notes.add(scope, "Anna mag Parks.")
    channel = TelegramChannel(engine, Commands(engine), TelegramConfig(
        token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER)}), streaming=False))
    await channel.start()
    try:
        tg.fail_next("sendMessage", status=400, description="Bad Request: chat not found")
        tg.send_text(USER, "/undo")
        (told,) = await tg.wait_for_sent(1)
        await asyncio.sleep(0.2)
    finally:
        await channel.stop()
    assert told["text"] == t("de", "failed") and await store.notes.count(scope) == 0
    async with store.db.reading() as tx:
        assert await tx.fetchall("SELECT state, reply FROM command_runs") == [("delivered", None)]


async def test_deleteme_takes_the_records_of_commands_and_buttons_along(
    tg: FakeTelegram, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    note = (await store.notes.add(scope, "Anna mag Parks.")).note
    channel = TelegramChannel(engine, Commands(engine), TelegramConfig(
        token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER)}), streaming=False))
    await channel.start()
    try:
        tg.send_text(USER, f"/forget {note.id}")
        tg.send_text(USER, "/deleteme")
        _, confirm = await tg.wait_for_sent(2)
        await asyncio.sleep(0.2)  # the buttons are recorded right after the message is sent
        async with store.db.reading() as tx:
            assert (await tx.fetchone("SELECT count(*) FROM choices WHERE scope_id = ?", (scope.id,)))[0] == 2
            assert (await tx.fetchone("SELECT count(*) FROM command_runs WHERE scope_id = ?", (scope.id,)))[0] == 2
        tg.press_button(USER, confirm["message_id"], "deleteme:yes")
        await tg.wait_until(lambda: bool(tg.callback_answers), what="the answer to the press")
        await asyncio.sleep(0.2)
    finally:
        await channel.stop()
    assert tg.callback_answers[-1]["text"] == t("de", "deleteme_done")
    async with store.db.reading() as tx:
        for table in ("choices", "command_runs", "notes"):
            assert (await tx.fetchone(f"SELECT count(*) FROM {table} WHERE scope_id = ?", (scope.id,)))[0] == 0, table
