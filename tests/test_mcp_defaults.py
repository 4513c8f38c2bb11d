"""MCP tools by the specification's defaults (issue 38): a tool its server does not annotate read-only asks first,
the operator's `read_only` lets it run without asking, after text from outside it is not run at all, and only a
press of its question's own yes runs it (a typed "ja" does not)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from bot.commands.runner import Commands
from bot.conversation.engine import Incoming
from bot.llm.port import ToolCall
from bot.texts import t
from memory.store import MemoryStore
from tests.engine_kit import make_engine
from tests.fakes.clock import Clock
from tests.fakes.llm import ScriptedLLM
from tests.test_mcp_tools import SERVER, START, weather_box

CARD = "Send a postcard (no annotations: by the MCP defaults it may change things) (weather)"  # its description


def servers(alarms: Path, **extra: object) -> str:
    """The test server with the unannotated post_card and the read-only forecast allowed."""
    return json.dumps({"weather": {"command": sys.executable, "args": [str(SERVER), "stdio", str(alarms)],
                                   "tools": ["forecast", "post_card"], "timeout": 10, **extra}})


async def test_a_tool_without_annotations_asks_first_and_runs_only_at_its_button(store: MemoryStore,
                                                                                 tmp_path: Path) -> None:
    alarms, chat = tmp_path / "alarms.txt", ScriptedLLM("chat")
    async with weather_box(servers(alarms)) as box:
        engine = make_engine(store, chat, [box], Clock(START))
        chat.enqueue("", [ToolCall("p1", "weather__post_card", {"to": "Oma"})])
        chat.enqueue("Die Karte schicke ich, sobald du zustimmst.")
        asked = await engine.handle(Incoming("tg:1", "Schick Oma eine Karte"))
        assert asked is not None and [b.data for b in asked.buttons[0]] == ["tool:yes:1", "tool:no:1"]
        assert asked.bubbles[-1].startswith(t("de", "tool_question", tool=CARD, args="").split("🔧")[0])
        assert not alarms.exists(), "nothing runs before the press"
        typed = await engine.handle(Incoming("tg:1", "Na klar!"))
        assert typed is not None and typed.bubbles == (t("de", "tool_press_to_run", tool=CARD),)
        assert typed.buttons == asked.buttons  # the question's own buttons again, to press
        assert not alarms.exists(), "a typed yes runs nothing"
        pressed = await Commands(engine).press("tg:1", "tool:yes:1", admin=True)
        await engine.close()
    assert pressed.text == t("de", "tool_done", tool=CARD, result="Karte an Oma verschickt.")
    assert alarms.read_text(encoding="utf-8") == "card to Oma\n"


async def test_the_operators_read_only_declaration_runs_it_without_asking(store: MemoryStore, tmp_path: Path) -> None:
    alarms, chat = tmp_path / "alarms.txt", ScriptedLLM("chat")
    async with weather_box(servers(alarms, read_only=["post_card"])) as box:
        engine = make_engine(store, chat, [box], Clock(START))
        chat.enqueue("", [ToolCall("p1", "weather__post_card", {"to": "Oma"})])
        chat.enqueue("Erledigt.")
        reply = await engine.handle(Incoming("tg:1", "Schick Oma eine Karte"))
        await engine.close()
    assert reply is not None and reply.bubbles == ("Erledigt.",) and reply.buttons == ()
    assert alarms.read_text(encoding="utf-8") == "card to Oma\n"


async def test_after_text_from_outside_an_unannotated_tool_does_not_run(store: MemoryStore, tmp_path: Path) -> None:
    alarms, chat = tmp_path / "alarms.txt", ScriptedLLM("chat")
    async with weather_box(servers(alarms)) as box:
        engine = make_engine(store, chat, [box], Clock(START))
        chat.enqueue("", [ToolCall("f1", "weather__forecast", {"place": "Berlin"})])  # its answer taints the turn
        chat.enqueue("", [ToolCall("p1", "weather__post_card", {"to": "Oma"})])
        chat.enqueue("Sonnig.")
        reply = await engine.handle(Incoming("tg:1", "Wetter in Berlin? Und schick Oma eine Karte"))
        scope = await engine.scope_for("tg:1")
        assert await engine.open_question(scope) is None
        await engine.close()
    assert reply is not None and reply.buttons == ()
    assert chat.calls[2].messages[-1].content == "error: unknown tool 'weather__post_card'"
    assert "weather__post_card" not in {spec.name for spec in chat.calls[2].tools or ()}
    assert not alarms.exists()
