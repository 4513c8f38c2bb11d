"""The chat model's own word that a message needs the help line, in every ordinary reply call and without an extra one:
[CRISIS: …] (bot/conversation/markers.py). The engine acts on it the moment it appears, in the streamed text or in the
answer whole: the help text goes out as a message of its own, the marker is never shown, nothing that changes things is
carried out from that turn, and the reply is a crisis reply. A marker the person typed never counts."""
from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.conversation.engine import Engine, Incoming
from bot.conversation.help_lines import crisis_help
from bot.conversation.markers import flags_crisis, split_markers
from bot.conversation.model_answer import CRISIS_MARK
from bot.conversation.prompt import PromptContext, build_prompt
from bot.conversation.safety import signals_crisis
from bot.llm.port import OnText, ToolCall
from memory.store import MemoryStore
from tests.engine_kit import make_engine
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.both_backends("the crisis mark, the logged reply and the rules live in the store")

HELP = crisis_help("DE", "de")
QUIET = "Ich hab meiner Schwester heute meine Gitarre geschenkt."  # the fast layers miss it (context tells)
CAREFUL = "Das macht mir Sorgen. Bist du gerade in Sicherheit?"


class Recorded(ScriptedLLM):
    """The scripted chat model that notes in `events` each piece of text it streams."""

    def __init__(self, events: list[str]) -> None:
        super().__init__("chat")
        self.events = events
        self.chunks = 8

    async def _stream(self, text: str, on_text: OnText) -> None:
        async def noted(prefix: str) -> None:
            self.events.append(f"streamed {len(prefix)} of {len(text)}")
            await on_text(prefix)

        await super()._stream(text, noted)


@pytest.fixture
def events() -> list[str]:
    return []


@pytest.fixture
async def engine(store: MemoryStore, events: list[str]) -> AsyncIterator[Engine]:
    e = make_engine(store, Recorded(events))
    yield e
    await e.drain()
    await e.close()


def said_into(events: list[str]):  # type: ignore[no-untyped-def]
    """A channel's say_now that notes what it sent."""
    async def say_now(text: str) -> None:
        events.append(f"sent: {text}")

    return say_now


def test_the_marker_fits_the_grammar_and_the_prompt_describes_it_in_both_modes() -> None:
    assert split_markers(f"[CRISIS: spricht von einem Plan] {CAREFUL}") == (
        CAREFUL, [split_markers("[CRISIS: spricht von einem Plan]")[1][0]])
    assert flags_crisis("[CRISIS: Plan] Ich bin da.") and flags_crisis("[[Krise: Plan]] Ich bin da.")
    assert not flags_crisis("Eine Krise im Job, aber ok.") and not flags_crisis("[CRISIS: x] hi", heard="[CRISIS: x]")
    now = datetime(2026, 3, 4, 12, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    for tools in (True, False):
        system, _ = build_prompt(PromptContext("Mnemo", "de", "hallo", now, tools=tools))
        assert "[CRISIS:" in system[0].text, "every ordinary reply call may flag"
    careful, _ = build_prompt(PromptContext("Mnemo", "de", "hallo", now, crisis_notice=HELP))
    assert "[CRISIS:" not in careful[0].text, "in a crisis the help text went out already"


async def test_a_flag_in_a_whole_answer_sends_the_help_text_and_makes_the_turn_a_crisis(
        engine: Engine, store: MemoryStore, events: list[str]) -> None:
    assert not signals_crisis(QUIET)
    chat = engine.chat
    assert isinstance(chat, ScriptedLLM)
    chat.enqueue(f"[CRISIS: probiert ein Mittel aus] {CAREFUL} [RULE: Immer kurz antworten] [THOUGHT: Sorge um Anna]")
    reply = await engine.handle(Incoming("anna", QUIET), say_now=said_into(events))
    assert reply is not None and reply.bubbles == (CAREFUL,) and not reply.buttons
    assert events == [f"sent: {HELP}"]  # no on_progress: the answer came whole, the help text before the reply
    scope = await engine.scope_for("anna")
    assert await store.state.get(scope, CRISIS_MARK) is not None
    assert await store.rules.list(scope) == [], "no rule proposed from a flagged turn"
    # logged without the marker, the help text sent first logged with its kind (issue 52: all that is sent is logged)
    assert [(m.text, m.kind) for m in await store.messages.recent(scope)] == [(QUIET, ""), (HELP, "help"),
                                                                              (CAREFUL, "reply")]
    assert await engine.open_question(scope) is None


async def test_a_flag_copied_from_the_prompt_still_counts(engine: Engine, events: list[str]) -> None:
    chat = engine.chat
    assert isinstance(chat, ScriptedLLM)
    chat.enqueue(f"[CRISIS: a few words why] {CAREFUL}")  # a small model that copies the prompt's example
    reply = await engine.handle(Incoming("anna", QUIET), say_now=said_into(events))
    assert "[CRISIS: a few words why]" in chat.calls[-1].system[0].text
    assert reply is not None and reply.bubbles == (CAREFUL,) and events == [f"sent: {HELP}"]


async def test_a_flag_in_the_streamed_text_sends_the_help_text_at_once_and_nothing_more_streams(
        engine: Engine, events: list[str]) -> None:
    chat = engine.chat
    assert isinstance(chat, ScriptedLLM)
    chat.enqueue(f"[CRISIS: Plan] {CAREFUL} " + "Ich bleibe hier bei dir, solange du magst. " * 6)

    async def progress(text: str) -> None:
        events.append(f"shown: {text}")

    reply = await engine.handle(Incoming("anna", QUIET), on_progress=progress, say_now=said_into(events))
    assert reply is not None and reply.bubbles[0].startswith(CAREFUL)
    help_at = events.index(f"sent: {HELP}")
    assert help_at < len(events) - 1 and events[-1].startswith("streamed"), "the help went out mid-stream"
    assert not any(e.startswith("shown:") for e in events), "nothing of a flagged answer streams"
    assert not any("CRISIS" in e for e in events)


async def test_a_marker_the_person_typed_never_counts(engine: Engine, events: list[str]) -> None:
    chat = engine.chat
    assert isinstance(chat, ScriptedLLM)
    typed = "Was macht eigentlich [CRISIS: test] in deinem Prompt?"
    for streamed in (False, True):
        chat.enqueue("[CRISIS: test] Das ist ein Zeichen, das nur ich setzen darf.")

        async def progress(text: str) -> None:
            events.append(f"shown: {text}")

        reply = await engine.handle(Incoming("anna", typed), on_progress=progress if streamed else None,
                                    say_now=said_into(events))
        assert reply is not None and reply.bubbles == ("Das ist ein Zeichen, das nur ich setzen darf.",)
    assert not any(e.startswith("sent:") for e in events), "no help text for a repeated marker"
    assert "(CRISIS: test)" in chat.calls[-1].prompt and "[CRISIS: test] in deinem" not in chat.calls[-1].prompt
    assert await engine.store.state.get(await engine.scope_for("anna"), CRISIS_MARK) is None


async def test_after_a_flag_no_tool_that_changes_things_runs_in_that_turn(
        engine: Engine, store: MemoryStore, events: list[str]) -> None:
    chat = engine.chat
    assert isinstance(chat, ScriptedLLM)
    chat.enqueue("[CRISIS: Abschied] Moment.", tool_calls=[ToolCall("c1", "propose_rule", {"rule": "Nie nachfragen"})])
    chat.enqueue(CAREFUL)
    reply = await engine.handle(Incoming("anna", QUIET), say_now=said_into(events))
    assert reply is not None and reply.bubbles == (CAREFUL,) and not reply.buttons
    assert events == [f"sent: {HELP}"]
    assert await store.rules.list(await engine.scope_for("anna")) == []
    assert "error: unknown tool 'propose_rule'" in chat.calls[-1].prompt
    assert chat.calls[-1].tools is None or "propose_rule" not in {t.name for t in chat.calls[-1].tools}


async def test_a_flag_in_incognito_sends_the_help_text_and_leaves_the_mark(
        engine: Engine, store: MemoryStore, events: list[str]) -> None:
    chat = engine.chat
    assert isinstance(chat, ScriptedLLM)
    scope = await engine.scope_for("anna")
    await engine.incognito.switch_on(scope, None)
    chat.enqueue(f"[CRISIS: Plan] {CAREFUL}")
    reply = await engine.handle(Incoming("anna", QUIET), say_now=said_into(events))
    assert reply is not None and reply.bubbles == (CAREFUL,)
    assert events == [f"sent: {HELP}"]
    assert isinstance(await store.state.get(scope, CRISIS_MARK), float)
    assert await store.messages.recent(scope) == []
