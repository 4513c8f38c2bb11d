"""Help first (issue 51): in a crisis the help text reaches the person as a message of its own before the model is
asked, on Telegram (the unmodified python-telegram-bot against the fake Bot API) and Matrix (matrix-nio against a real
Synapse, in an encrypted room). A model that hangs or fails never holds it back; a send of it that fails on the wire
puts it first in the reply; a message replayed after a kill still gets it, once."""
from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bench import help_first
from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.help_lines import crisis_help
from bot.errors import LLMUnavailable
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import GatedLLM, ScriptedLLM
from tests.fakes.synapse import Synapse
from tests.fakes.telegram_api import FakeTelegram
from tests.test_matrix import World, running, texts, world  # noqa: F401  (the fixture)
from tests.test_telegram import USER, make_channel

ROOT = Path(__file__).resolve().parent.parent
HELP = crisis_help("DE", "de")
CRISIS = "Ich will nicht mehr leben."
GROUP = -100777

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


@pytest.fixture
def gated() -> GatedLLM:
    """A chat model that waits at its gate until the test opens it (never, where it hangs)."""
    return GatedLLM()


@pytest.fixture
async def slow_engine(store: MemoryStore, gated: GatedLLM, background: ScriptedLLM) -> AsyncIterator[Engine]:
    engine = Engine(store, gated, background, EngineConfig(relevance_floor=0.0))
    yield engine
    gated.gate.set()
    await engine.drain()
    await engine.close()


@pytest.fixture
async def slow_channel(tg: FakeTelegram, slow_engine: Engine) -> AsyncIterator[TelegramChannel]:
    channel = make_channel(tg, slow_engine, allowed_groups=frozenset({str(GROUP)}))
    await channel.start()
    yield channel
    await channel.stop()


async def test_the_help_text_reaches_telegram_while_the_model_hangs(
    tg: FakeTelegram, slow_channel: TelegramChannel, gated: GatedLLM,
) -> None:
    tg.send_text(USER, CRISIS)
    await asyncio.wait_for(gated.waiting.wait(), 10)  # the model was asked, and hangs
    [help_message] = await tg.wait_for_sent(1)
    assert help_message["text"] == HELP and not gated.gate.is_set()
    assert "reply_parameters" not in help_message or not help_message["reply_parameters"]  # private: no reply

    gated.enqueue("Ich bin da. Magst du mir erzählen, was passiert ist?")
    gated.gate.set()
    sent = await tg.wait_for_sent(2)
    assert [m["text"] for m in sent] == [HELP, "Ich bin da. Magst du mir erzählen, was passiert ist?"]
    assert "SAFETY FIRST" in gated.calls[-1].prompt


async def test_in_a_group_the_help_text_answers_the_message_it_is_for(
    tg: FakeTelegram, slow_channel: TelegramChannel, gated: GatedLLM,
) -> None:
    tg.send_text(USER, f"@mnemo_bot {CRISIS}", chat_id=GROUP, chat_type="supergroup")
    [help_message] = await tg.wait_for_sent(1)
    said = max(m for m, msg in tg.messages.items() if msg.get("text") == f"@mnemo_bot {CRISIS}")
    assert help_message["text"] == HELP and help_message["reply_parameters"]["message_id"] == said
    gated.enqueue("Ich bin da.")
    gated.gate.set()
    assert (await tg.wait_for_sent(2))[1]["text"] == "Ich bin da."


async def test_a_failing_model_the_help_text_first_then_mnemos_own_words(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM,
) -> None:
    channel = make_channel(tg, engine)
    await channel.start()
    try:
        chat.enqueue_error(LLMUnavailable("the model is down"))
        tg.send_text(USER, CRISIS)
        sent = await tg.wait_for_sent(2)
    finally:
        await channel.stop()
    assert [m["text"] for m in sent] == [HELP, t("de", "crisis_model_down")]


async def test_a_help_text_that_fails_on_the_wire_leads_the_reply(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM,
) -> None:
    channel = make_channel(tg, engine)
    await channel.start()
    try:
        tg.fail_next("sendMessage", status=400, description="Bad Request: something on the way")
        chat.enqueue("Ich bin bei dir.")
        tg.send_text(USER, CRISIS)
        sent = await tg.wait_for_sent(2)
    finally:
        await channel.stop()
    assert [m["text"] for m in sent] == [HELP, "Ich bin bei dir."]  # the reply's first bubble, then the answer
    assert tg.calls.count("sendMessage") == 3  # the help text's own send failed; the reply brought it


async def test_a_help_text_that_leads_the_reply_is_logged_with_it_and_delivered_again_after_a_crash(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore,
) -> None:
    chat.enqueue("Ich bin bei dir.")
    crisis = Incoming("anna", CRISIS, channel="telegram", channel_message_id="41")
    reply = await engine.handle(crisis)  # no channel to send it at once: the help text is the reply's first bubble
    assert reply is not None and reply.bubbles == (HELP, "Ich bin bei dir.")
    scope = await engine.scope_for("anna")
    logged = [m.text for m in await store.messages.recent(scope) if m.role == "assistant"]
    assert logged == [f"{HELP}\n\nIch bin bei dir."]
    again = await engine.earlier_reply(crisis)  # the reply a replay after a crash delivers: the help text with it
    assert again is not None and again.bubbles[0] == HELP


async def test_matrix_gets_the_help_text_in_an_encrypted_room_while_the_model_hangs(
    world: World, gated: GatedLLM, background: ScriptedLLM,  # noqa: F811
) -> None:
    engine = Engine(world.store, gated, background, EngineConfig(relevance_floor=0.0))
    slow = dataclasses.replace(world, engine=engine)
    anna = world.anna
    try:
        async with running(slow.channel()):
            room = await anna.open_dm(world.bot_id, encrypted=True)
            await anna.wait_for(room, world.bot_joined)
            await anna.say(room, CRISIS)
            first = await anna.wait_for(room, world.from_bot, seconds=20)
            assert texts(first) == [HELP] and not gated.gate.is_set()
            await asyncio.wait_for(gated.waiting.wait(), 10)  # the model, asked after the help text, hangs
            assert first[0].source["content"].get("m.relates_to") is None  # a direct chat: no reply
            gated.enqueue("Ich bin da.")
            gated.gate.set()
            assert texts(await anna.wait_for(room, world.from_bot, seconds=20)) == ["Ich bin da."]
    finally:
        gated.gate.set()
        await engine.drain()
        await engine.close()


CHILD = textwrap.dedent('''
    """The Telegram channel with a chat model that never answers (it says so on stdout)."""
    import asyncio, sys
    from bot.commands.runner import Commands
    from bot.conversation.engine import Engine, EngineConfig, Incoming
    from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
    from memory.store import MemoryStore
    from tests.fakes.embedder import FakeEmbedder
    from tests.fakes.llm import StuckLLM

    async def main(db, base_url, database_url=""):
        store = await MemoryStore.open(db, FakeEmbedder(), semantic_dedupe=0.97, database_url=database_url or None)
        engine = Engine(store, StuckLLM(), StuckLLM(), EngineConfig(relevance_floor=0.0))
        config = TelegramConfig(token="123:ABC", base_url=base_url, allowed_users=frozenset({"42"}), streaming=False)
        await TelegramChannel(engine, Commands(engine), config).start()
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main(*sys.argv[1:4]))
''')


@pytest.mark.parametrize("cut", ["while the help text was on its way", "while the model thought"])
async def test_a_message_replayed_after_a_kill_gets_the_help_text_once(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM, tmp_path: Path, cut: str,
) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(tmp_path / "mnemo.sqlite3"), tg.base_url, store.db.url or "", cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=asyncio.subprocess.PIPE)
    assert child.stdout is not None
    early = cut == "while the help text was on its way"
    try:
        assert (await asyncio.wait_for(child.stdout.readline(), 30)).strip() == b"ready"
        if early:
            tg.hangs["sendmessage"] = 1  # the help text's send never comes back
        tg.send_text(USER, CRISIS)
        if early:
            # the hang taken, not the call seen: a call is listed before its body is read, and a kill in between
            # left the hang for the next worker's send (clean-clone CI, 2026-12-07)
            await tg.wait_until(lambda: tg.hangs["sendmessage"] == 0, 10, "the help text's send to hang")
        else:
            assert (await asyncio.wait_for(child.stdout.readline(), 10)).strip() == b"model called"
    finally:
        child.kill()  # SIGKILL: no reply came
        await child.wait()
    assert [m["text"] for m in tg.sent] == ([] if early else [HELP])  # before the model was even asked

    chat.enqueue("Ich bin da. Was ist passiert?")
    again = make_channel(tg, engine)
    await again.start()
    try:
        sent = await tg.wait_for_sent(2)
        await asyncio.sleep(0.3)  # nothing more comes
    finally:
        await again.stop()
    assert [m["text"] for m in tg.sent] == [HELP, "Ich bin da. Was ist passiert?"]  # the help text once, first
    scope = await engine.scope_for(f"tg:{USER}")
    logged = [(m.role, m.text) for m in await store.messages.recent(scope)]  # the help text logged once too
    assert logged == [("user", CRISIS), ("assistant", HELP), ("assistant", "Ich bin da. Was ist passiert?")]
    assert sent[0]["text"] == HELP


async def test_with_an_8_s_model_the_help_text_arrives_within_half_a_second_on_both_channels(
    synapse: Synapse,
) -> None:
    """bench/help_first.py, short: mnemo in a process of its own as the product runs, three people at once on each
    channel (Matrix: encrypted rooms), one crisis message each, the chat model taking 8 s."""
    figures = await help_first.run(messages=3, people=3, delay=8.0, synapse=synapse)
    for channel in ("telegram", "matrix"):
        each = figures[channel]["each"]
        assert len(each) == 3
        assert all(answer_s >= 8.0 for _, answer_s in each), (channel, each)  # the model took its 8 s meanwhile
    telegram, matrix = figures["telegram"]["each"], figures["matrix"]["each"]
    assert all(help_s <= 0.5 for help_s, _ in telegram), telegram
    # Matrix: mnemo's own share, the help event's server time minus the message's, is held to the goal; the whole
    # way also holds the person's client encrypting, sending, syncing and decrypting in this test's process, which on
    # two cores shared with the other test worker took up to 0.8 s (docs/testing.md). bench/help_first.py measures
    # the whole way on a machine of its own (docs/benchmarks.md).
    assert figures["matrix"]["help_by_server_clock"]["max_ms"] <= 500, figures["matrix"]
    assert all(help_s <= 1.0 for help_s, _ in matrix), matrix
