"""Incognito: answered from the memory as it is, nothing of the messages kept (byte search of the data folder),
the stretch logged, kept over a restart, ended by /incognito aus or by its time."""
from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.channels.telegram.channel import TelegramChannel
from bot.commands.catalog import BY_NAME
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.incognito_turns import Switch, asks_for_reminder, parse_switch
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram import USER, make_channel

pytestmark = pytest.mark.both_backends("incognito state rows")

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 4, 14, 0, tzinfo=BERLIN)
SECRET_WORDS = ("Quokkamondschein", "Zitronenfalterpass", "Wendeltreppenkuss")


def files_holding(folder: Path, word: str) -> list[str]:
    """Every file under folder whose bytes hold the word (UTF-8), by name."""
    return [p.name for p in folder.rglob("*") if p.is_file() and word.encode() in p.read_bytes()]


def test_the_switch_words_are_read_with_the_clock_passed_in() -> None:
    assert parse_switch("", NOW) == Switch(True, None)
    assert parse_switch("aus", NOW) == Switch(False) == parse_switch(" OFF ", NOW)
    assert parse_switch("2h", NOW) == Switch(True, NOW.timestamp() + 7200)
    assert parse_switch("30 min", NOW) == Switch(True, NOW.timestamp() + 1800)
    assert parse_switch("1 Tag", NOW) == Switch(True, NOW.timestamp() + 86400)
    assert parse_switch("bis morgen", NOW) == Switch(True, datetime(2026, 3, 5, tzinfo=BERLIN).timestamp())
    for bad in ("8 Tage", "0h", "zwei Stunden", "2 Wochen", "an aus"):
        assert parse_switch(bad, NOW) is None, bad


def test_a_reminder_request_is_recognised_without_setting_it() -> None:
    assert asks_for_reminder("Erinnere mich morgen um 9 an den Zahnarzt", NOW, BERLIN)
    assert not asks_for_reminder("Wie geht es dir?", NOW, BERLIN)


@pytest.fixture
async def channel(tg: FakeTelegram, engine: Engine) -> AsyncIterator[TelegramChannel]:
    ch = make_channel(tg, engine)
    await ch.start()
    yield ch
    await ch.stop()


@pytest.mark.sqlite_only("searches the bytes of the data folder; PostgreSQL's files are the server's")
async def test_a_day_in_incognito_leaves_no_trace_in_the_data_folder_but_its_stretch(
        tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
        background: ScriptedLLM, tmp_path: Path) -> None:
    tg.send_text(USER, "Ich heiße Anna und trinke gern Tee.")
    await tg.wait_for_sent(1)
    tg.send_text(USER, "/incognito")
    [*_, on] = await tg.wait_for_sent(2)
    assert on["text"] == t("de", "incognito_on")
    chat.responder = lambda call: f"Verstehe. [THOUGHT: {SECRET_WORDS[0]} merken] [FOLLOWUP: {SECRET_WORDS[1]}]"
    for i, word in enumerate(SECRET_WORDS):
        tg.send_text(USER, f"Heute ist etwas passiert: {word}, ganz geheim.")
        await tg.wait_for_sent(3 + i)
    # the stretch's own turns reach the model; the memory as it was too
    assert SECRET_WORDS[0] in chat.calls[-1].prompt and "Tee" in chat.calls[-1].prompt
    tg.send_text(USER, "Erinnere mich morgen um 9 an den Zahnarzt")
    [*_, refused] = await tg.wait_for_sent(6)
    assert refused["text"] == t("de", "incognito_no_reminder")
    await engine.drain()
    scope = await engine.scope_for(f"tg:{USER}")
    assert (await store.incognito.current(scope)) is not None
    tg.send_text(USER, "/incognito aus")
    [*_, off] = await tg.wait_for_sent(7)
    assert off["text"] == t("de", "incognito_off", messages="4 Nachrichten")
    [stretch] = await store.incognito.stretches(scope)
    assert (stretch.messages, stretch.ended_by) == (4, "command")
    chat.responder = lambda call: "Schön."
    tg.send_text(USER, "Jetzt wieder normal: Pflaumenkompottwetter.")
    await tg.wait_for_sent(8)
    tg.send_text(USER, "/think")
    await tg.wait_for_sent(9)
    tg.send_text(USER, "/writediary")
    await tg.wait_for_sent(10)
    await engine.drain()
    # reflection, the diary and extraction afterwards saw nothing of the stretch
    assert background.calls and not any(w in c.prompt for c in background.calls for w in SECRET_WORDS)
    texts = [m.text for m in await store.messages.recent(scope, 50)]
    assert any("Pflaumenkompottwetter" in x for x in texts)
    assert not any(w in x for x in texts for w in SECRET_WORDS)
    assert not any(SECRET_WORDS[1] in topic.text for topic in await store.topics.list(scope))  # no marker kept
    await store.db.checkpoint()
    for word in SECRET_WORDS + ("Zahnarzt",):
        assert files_holding(tmp_path, word) == [], word
    assert files_holding(tmp_path, "Pflaumenkompottwetter")  # the search finds what was stored


async def test_a_restart_keeps_incognito_and_its_time_ends_it_at_the_next_message(
        tmp_path: Path, chat: ScriptedLLM, background: ScriptedLLM) -> None:
    clock = [NOW.timestamp()]
    config = EngineConfig(relevance_floor=0.0, zone=BERLIN)
    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", FakeEmbedder())
    engine = Engine(store, chat, background, config, clock=lambda: clock[0])
    scope = await engine.scope_for("u1")
    await engine.incognito.switch_on(scope, NOW.timestamp() + 3600)
    await engine.handle(Incoming("u1", f"Vor dem Neustart: {SECRET_WORDS[0]}", channel="console"))
    await engine.close()
    await store.close()

    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", FakeEmbedder())
    engine = Engine(store, chat, background, config, clock=lambda: clock[0])
    reply = await engine.handle(Incoming("u1", f"Nach dem Neustart: {SECRET_WORDS[1]}", channel="console"))
    assert reply is not None and not reply.failed
    assert await store.messages.recent(scope, 10) == []
    clock[0] += 3601
    reply = await engine.handle(Incoming("u1", "Wieder da: Pflaumenkompottwetter", channel="console"))
    ended = t("de", "incognito_ended_by_time", until="15:00", messages="2 Nachrichten")
    assert reply is not None and reply.bubbles[0] == ended
    assert [m.text for m in await store.messages.recent(scope, 10)][0] == "Wieder da: Pflaumenkompottwetter"
    [stretch] = await store.incognito.stretches(scope)
    assert (stretch.ended_at, stretch.messages, stretch.ended_by) == (NOW.timestamp() + 3600, 2, "time")
    await engine.drain()
    await engine.close()
    await store.db.checkpoint()
    await store.close()
    assert files_holding(tmp_path, SECRET_WORDS[0]) == files_holding(tmp_path, SECRET_WORDS[1]) == []


async def test_a_crisis_in_incognito_gets_the_help_lines_and_is_not_stored(
        engine: Engine, store: MemoryStore, tmp_path: Path) -> None:
    scope = await engine.scope_for("u1")
    await engine.incognito.switch_on(scope, None)
    reply = await engine.handle(Incoming("u1", "Ich will mir das Leben nehmen", channel="console"))
    assert reply is not None and "0800" in "\n".join(reply.bubbles)
    assert await store.messages.recent(scope, 10) == []
    await store.db.checkpoint()
    assert files_holding(tmp_path, "Leben nehmen") == []


async def test_a_yes_still_decides_the_open_question_in_incognito(
        engine: Engine, store: MemoryStore, chat: ScriptedLLM) -> None:
    scope = await engine.scope_for("u1")
    chat.enqueue("Oh, verstehe. [RULE: Keine Emojis verwenden]")
    await engine.handle(Incoming("u1", "Hör auf mit den Emojis", channel="console"))
    assert await engine.open_question(scope) is not None
    await engine.incognito.switch_on(scope, None)
    await engine.handle(Incoming("u1", "ja", channel="console"))
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Keine Emojis verwenden"]
    assert [m.text for m in await store.messages.recent(scope, 10) if m.role == "user"] == ["Hör auf mit den Emojis"]


async def test_in_a_group_an_admin_switches_incognito_and_a_member_cannot(tg: FakeTelegram, engine: Engine) -> None:
    assert BY_NAME["incognito"].in_group == "admins"  # a member's /incognito is refused like every admin command
    ch = make_channel(tg, engine, allowed_groups=frozenset({"-1001"}), admins=frozenset({f"tg:{USER}"}))
    await ch.start()
    try:
        tg.send_text(USER, "/incognito@mnemo_bot 2h", chat_id=-1001, chat_type="supergroup")
        [answer] = await tg.wait_for_sent(1)
        assert answer["text"].startswith("🕶️ Inkognito ist an bis ")
        async with engine.store.db.reading() as tx:
            assert len(await tx.fetchall("SELECT 1 FROM scope_state WHERE key = 'incognito'")) == 1
    finally:
        await ch.stop()


async def test_deleteme_in_incognito_keeps_it_on_and_the_next_message_is_not_stored(
        engine: Engine, store: MemoryStore, chat: ScriptedLLM) -> None:
    commands = Commands(engine)
    scope = await engine.scope_for("u1")
    await engine.handle(Incoming("u1", "Ich heiße Anna.", channel="console"))
    await engine.drain()
    on = await engine.incognito.switch_on(scope, None)
    await engine.handle(Incoming("u1", f"Nur kurz: {SECRET_WORDS[0]}", channel="console"))
    await commands.run("u1", "/deleteme")
    await commands.press("u1", "deleteme:yes")
    kept = await store.incognito.current(scope)
    assert kept is not None and (kept.since, kept.until) == (on.since, on.until)
    reply = await engine.handle(Incoming("u1", f"Und noch: {SECRET_WORDS[1]}", channel="console"))
    assert reply is not None and not reply.failed
    await engine.drain()
    assert await store.messages.recent(scope, 10) == []
    assert SECRET_WORDS[0] not in chat.calls[-1].prompt, "the stretch's turns went with everything else"
    activity = await store.incognito.activity(scope)
    assert activity is not None and activity.messages == 1, "what the planner knew of the stretch went too"
