"""A held MCP call answered where people answer: the yes/no buttons on Telegram (the unmodified python-telegram-bot
against the local fake Bot API), the reactions its legend names on Matrix (a real Synapse), the numbered lines in the
terminal (the real OpenAI SDK against the local fake API). Never a typed "ja" or a 👍 (issue 38)."""
from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nio import ReactionEvent, RoomMessageText

from bot.app import running_engine
from bot.channels.console import ConsoleChannel
from bot.channels.telegram.channel import TelegramChannel
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.llm.port import ToolCall
from bot.mcp.toolbox import McpToolBox
from bot.settings import Settings
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.llm_api import FakeLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_matrix import World, running, texts, world  # noqa: F401  (the fixture)
from tests.test_mcp_tools import ALARM, asked, done, stdio_servers, weather_box
from tests.test_telegram_choices import ANNA, EVE, GROUP, make_channel, pressed, said, shows_buttons
from tests.test_telegram_reactions import reacted

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

IN_GROUP: dict[str, Any] = {"chat_id": GROUP, "chat_type": "supergroup"}


@pytest.fixture
def alarms(tmp_path: Path) -> Path:
    return tmp_path / "alarms.txt"


@pytest.fixture
async def box(alarms: Path) -> AsyncIterator[McpToolBox]:
    async with weather_box(stdio_servers(alarms)) as opened:
        yield opened


@pytest.fixture
async def channel(tg: FakeTelegram, store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
                  box: McpToolBox) -> AsyncIterator[TelegramChannel]:
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0), toolboxes=[box])
    ch = make_channel(tg, engine)
    await ch.start()
    yield ch
    await ch.stop()
    await engine.drain()
    await engine.close()


def wants_alarm(chat: ScriptedLLM) -> None:
    chat.enqueue("", [ToolCall("a1", "weather__set_alarm", {"time": "07:00", "label": "Aufstehen"})])
    chat.enqueue("Den Wecker stelle ich, sobald du zustimmst.")


async def test_on_telegram_only_the_person_asked_presses_yes_and_the_answer_replaces_the_question(
    tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, alarms: Path,
) -> None:
    wants_alarm(chat)
    _, question = await said(tg, ANNA, "@mnemo_bot weck mich bitte um 7", replies=2, first_name="Anna", **IN_GROUP)
    assert question["text"] == asked()
    assert shows_buttons(tg, question["message_id"]) == ["tool:yes:1", "tool:no:1"]

    assert await pressed(tg, EVE, question["message_id"], "tool:yes:1") == t("de", "choice_not_yours")
    assert not alarms.exists(), "a press by somebody else runs nothing"
    assert shows_buttons(tg, question["message_id"]) == ["tool:yes:1", "tool:no:1"], "still Anna's to answer"

    assert await pressed(tg, ANNA, question["message_id"], "tool:yes:1") == ""  # the answer is in the message
    assert tg.messages[question["message_id"]]["text"] == done()
    assert shows_buttons(tg, question["message_id"]) == []
    assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"
    assert await pressed(tg, ANNA, question["message_id"], "tool:yes:1") == t("de", "button_stale")
    assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"


async def test_on_telegram_a_thumbs_up_runs_nothing_and_a_typed_yes_neither_only_the_button_does(
    tg: FakeTelegram, channel: TelegramChannel, store: MemoryStore, chat: ScriptedLLM, alarms: Path,
) -> None:
    wants_alarm(chat)
    _, question = await said(tg, ANNA, "Weck mich bitte um 7", replies=2)
    await reacted(tg, ANNA, question["message_id"], new=("👍",))  # a plain acknowledgement on Telegram
    assert not alarms.exists(), "a 👍 runs nothing"
    assert shows_buttons(tg, question["message_id"]) == ["tool:yes:1", "tool:no:1"]
    scope = await channel.engine.scope_for(f"tg:{ANNA}")
    assert await store.reactions.feedback(scope, 0) != [], "the 👍 stays what it is: feedback"
    (typed,) = await said(tg, ANNA, "Na klar!")
    assert typed["text"] == t("de", "tool_press_to_run", tool=ALARM) and not alarms.exists()
    assert await pressed(tg, ANNA, question["message_id"], "tool:yes:1") == ""
    assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"


async def test_on_telegram_no_runs_nothing(
    tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, alarms: Path,
) -> None:
    wants_alarm(chat)
    _, question = await said(tg, ANNA, "Weck mich bitte um 7", replies=2)
    assert await pressed(tg, ANNA, question["message_id"], "tool:no:1") == ""
    assert tg.messages[question["message_id"]]["text"] == t("de", "tool_not_run", tool=ALARM)
    assert not alarms.exists()


async def test_in_the_terminal_a_typed_ja_runs_nothing_and_the_number_of_ja_does(tmp_path: Path,
                                                                                    alarms: Path) -> None:
    async with FakeLLM() as llm:
        llm.responder = lambda body: (json.dumps({"facts": [], "content": [], "profile": []})
                                      if "response_format" in body else "Gern.")
        llm.enqueue_tool_call("weather__set_alarm", {"time": "07:00", "label": "Aufstehen"})
        llm.enqueue("Den Wecker stelle ich, sobald du zustimmst.")
        settings = Settings(_env_file=None, data_dir=tmp_path / "data", chat_base_url=llm.openai_base_url,  # type: ignore[call-arg]
                            chat_model="fake-model", chat_api_key="test-key", llm_timeout=5,
                            mcp_servers=stdio_servers(alarms))
        out = io.StringIO()
        async with running_engine(settings) as engine:
            console = ConsoleChannel(engine, stdin=io.StringIO("Weck mich um 7\nja\n"), stdout=out,
                                     commands=Commands(engine))
            await console.run()
            assert not alarms.exists(), "a typed ja runs nothing"
            shown = out.getvalue()
            assert f"Mnemo: {t('de', 'tool_press_to_run', tool=ALARM)}" in shown
            assert shown.count("1) Ja") == 2  # the question's choices again under that sentence
            console = ConsoleChannel(engine, stdin=io.StringIO("1\n"), stdout=out, commands=Commands(engine))
            await console.run()
    shown = out.getvalue()
    assert asked() in shown and "2) Nein" in shown
    assert f"Mnemo: {done()}" in shown
    assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"
    first = next(r.json for r in llm.requests if r.path.endswith("/chat/completions"))
    assert "weather__set_alarm" in {tool["function"]["name"] for tool in first["tools"]}


async def test_on_matrix_a_thumbs_up_runs_nothing_and_the_reaction_its_legend_names_does(
    world: World, box: McpToolBox, alarms: Path,  # noqa: F811
) -> None:
    background = ScriptedLLM("background")
    background.responder = lambda call: '{"facts": [], "content": [], "profile": []}'
    engine = Engine(world.store, world.chat, background, EngineConfig(relevance_floor=0.0), toolboxes=[box])
    anna, bot_id = world.anna, world.bot_id
    yes, no = "1\ufe0f\u20e3", "2\ufe0f\u20e3"
    try:
        async with running(dataclasses.replace(world, engine=engine).channel()):
            room = await anna.open_dm(bot_id)
            await anna.wait_for(room, world.bot_joined)
            wants_alarm(world.chat)
            await anna.say(room, "Weck mich bitte um 7")
            events = await anna.wait_for(
                room, lambda e: world.from_bot(e) or (isinstance(e, ReactionEvent) and e.sender == bot_id), count=4)
            question = [e for e in events if isinstance(e, RoomMessageText)][-1]
            assert question.body == f"{asked()}\n\n{t('de', 'react_with')}\n{yes} Ja · {no} Nein"
            assert sorted((e.key, e.reacts_to) for e in events if isinstance(e, ReactionEvent)) == \
                sorted([(yes, question.event_id), (no, question.event_id)])
            assert not alarms.exists(), "nothing runs before the yes"
            await anna.react(room, question.event_id, "👍")  # a plain acknowledgement: it runs nothing
            assert [e for e in await anna.sync(room, 1.5) if world.from_bot(e)] == []
            assert not alarms.exists(), "a 👍 runs nothing"
            await anna.react(room, question.event_id, yes)
            assert texts(await anna.wait_for(room, world.from_bot)) == [done()]
            assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"
            await anna.react(room, question.event_id, no)  # too late: the question is closed, nothing is undone
            later = texts([e for e in await anna.sync(room, 1.5) if world.from_bot(e)])
            assert t("de", "tool_not_run", tool=ALARM) not in later
            assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"
    finally:
        await engine.drain()
        await engine.close()
