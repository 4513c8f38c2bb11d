"""The terminal across a restart: a choice shown as numbered lines before the restart is answered by number after it."""
from __future__ import annotations

import io
import json
from pathlib import Path

from bot.channels.console import CONSOLE_USER, ConsoleChannel
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.llm.port import ToolCall
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM


async def session(path: Path, chat: ScriptedLLM, *lines: str) -> str:
    """One run of mnemo in the terminal: open the database, type the lines, end; what it printed."""
    background = ScriptedLLM("background")
    background.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    out = io.StringIO()
    async with await MemoryStore.open(path, FakeEmbedder(), semantic_dedupe=0.97) as store:
        engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
        try:
            await ConsoleChannel(engine, stdin=io.StringIO("".join(f"{line}\n" for line in lines)), stdout=out,
                                 commands=Commands(engine)).run()
            await engine.drain()
        finally:
            await engine.close()
    return out.getvalue()


async def counts(path: Path) -> tuple[int, list[str], int]:
    """Notes, active rules and messages of the terminal's user, read by a fresh process."""
    async with await MemoryStore.open(path, FakeEmbedder(), semantic_dedupe=0.97) as store:
        scope = await store.scope("mnemo", CONSOLE_USER)
        return (await store.notes.count(scope), [r.text for r in await store.rules.list(scope, "active")],
                await store.messages.count(scope))


async def test_a_rule_question_asked_before_a_restart_is_answered_by_number_after_it(tmp_path: Path) -> None:
    chat = ScriptedLLM("chat")
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kürzer."})])
    chat.enqueue("Gern.")
    before = await session(tmp_path, chat, "Fass dich bitte kürzer.")
    assert "  1) Ja\n  2) Nein" in before
    after = await session(tmp_path, chat, "1")
    assert t("de", "rule_saved", rule="Antworte kürzer.") in after
    assert (await counts(tmp_path))[1] == ["Antworte kürzer."]
    assert len(chat.calls) == 2  # the "1" after the restart never reached the model


async def test_deleteme_asked_before_a_restart_is_confirmed_after_it_and_a_stale_number_is_a_message(
    tmp_path: Path,
) -> None:
    chat = ScriptedLLM("chat")
    chat.responder = lambda call: "Schön."
    await session(tmp_path, chat, "Ich mag Parks.", "/deleteme")
    assert (await counts(tmp_path))[2] == 2
    after = await session(tmp_path, chat, "1", "2")
    assert t("de", "deleteme_done") in after
    notes, rules, messages = await counts(tmp_path)
    assert (notes, rules) == (0, [])
    assert messages == 2  # the "2" came after the choice was answered: a message to the model, and its reply


async def test_a_profile_question_asked_before_a_restart_is_decided_by_a_yes_after_it(tmp_path: Path) -> None:
    async with await MemoryStore.open(tmp_path, FakeEmbedder(), semantic_dedupe=0.97) as store:
        scope = await store.scope("mnemo", CONSOLE_USER)  # what an extraction held back for the person's yes
        await store.profile.propose(scope, "facts", "work", "Lehrerin")
    chat = ScriptedLLM("chat")
    chat.responder = lambda call: "Schön."
    before = await session(tmp_path, chat, "Ich komme gerade aus der Schule.")
    assert t("de", "profile_question", fact="Arbeit: Lehrerin") in before and "  1) Ja\n  2) Nein" in before
    after = await session(tmp_path, chat, "ja")
    assert t("de", "profile_saved", fact="Arbeit: Lehrerin") in after
    assert len(chat.calls) == 1  # the "ja" after the restart answered the question and never reached the model
    async with await MemoryStore.open(tmp_path, FakeEmbedder(), semantic_dedupe=0.97) as store:
        scope = await store.scope("mnemo", CONSOLE_USER)
        assert [(e.key, e.value) for e in await store.profile.list(scope)] == [("work", "Lehrerin")]
        assert await store.profile.pending(scope) is None
