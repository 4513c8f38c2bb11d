"""A held MCP call answered where people answer: the yes/no buttons on Telegram (the unmodified python-telegram-bot
against the local fake Bot API), 👍/👎 on Matrix (a real Synapse), a typed "ja" in the terminal (the real OpenAI SDK
against the local fake API)."""
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


async def test_on_telegram_no_runs_nothing(
    tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, alarms: Path,
) -> None:
    wants_alarm(chat)
    _, question = await said(tg, ANNA, "Weck mich bitte um 7", replies=2)
    assert await pressed(tg, ANNA, question["message_id"], "tool:no:1") == ""
    assert tg.messages[question["message_id"]]["text"] == t("de", "tool_not_run", tool=ALARM)
    assert not alarms.exists()


async def test_in_the_terminal_a_typed_ja_runs_the_call(tmp_path: Path, alarms: Path) -> None:
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
    shown = out.getvalue()
    assert asked() in shown and "1) Ja" in shown and "2) Nein" in shown
    assert f"Mnemo: {done()}" in shown
    assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"
    first = next(r.json for r in llm.requests if r.path.endswith("/chat/completions"))
    assert "weather__set_alarm" in {tool["function"]["name"] for tool in first["tools"]}


async def test_on_matrix_a_thumbs_up_runs_the_call_and_a_late_thumbs_down_undoes_nothing(
    world: World, box: McpToolBox, alarms: Path,  # noqa: F811
) -> None:
    background = ScriptedLLM("background")
    background.responder = lambda call: '{"facts": [], "content": [], "profile": []}'
    engine = Engine(world.store, world.chat, background, EngineConfig(relevance_floor=0.0), toolboxes=[box])
    anna, bot_id = world.anna, world.bot_id
    try:
        async with running(dataclasses.replace(world, engine=engine).channel()):
            room = await anna.open_dm(bot_id)
            await anna.wait_for(room, world.bot_joined)
            wants_alarm(world.chat)
            await anna.say(room, "Weck mich bitte um 7")
            events = await anna.wait_for(
                room, lambda e: world.from_bot(e) or (isinstance(e, ReactionEvent) and e.sender == bot_id), count=4)
            question = [e for e in events if isinstance(e, RoomMessageText)][-1]
            assert question.body == asked()
            assert sorted((e.key, e.reacts_to) for e in events if isinstance(e, ReactionEvent)) == \
                sorted([("👍", question.event_id), ("👎", question.event_id)])
            assert not alarms.exists(), "nothing runs before the yes"
            await anna.react(room, question.event_id, "👍")
            assert texts(await anna.wait_for(room, world.from_bot)) == [done()]
            assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"
            await anna.react(room, question.event_id, "👎")  # too late: the question is closed, nothing is undone
            later = texts([e for e in await anna.sync(room, 1.5) if world.from_bot(e)])
            assert t("de", "tool_not_run", tool=ALARM) not in later
            assert alarms.read_text(encoding="utf-8") == "07:00 Aufstehen\n"
    finally:
        await engine.drain()
        await engine.close()
