"""The optional crisis judge (MNEMO_CRISIS_JUDGE): a message the fast layers rate a close call is judged by the
background model in parallel with the turn, with the last messages as context; a yes brings the help text first and
the crisis answer; a no, a model that hangs past the timeout, or any answer but {"help_line": true|false} leaves the
fast layers' verdict (the failures counted). Scripted models and a detector that calls a close call on cue."""
from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable

import pytest

from bot.conversation.crisis import Assessment
from bot.conversation.crisis_judge import INSTRUCTION, JudgeGarbage, judge_request, verdict
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.help_lines import crisis_help
from bot.conversation.model_answer import CRISIS_MARK
from memory.store import MemoryStore
from tests.fakes.llm import Call, GatedLLM, ScriptedLLM

pytestmark = pytest.mark.both_backends("the failure counts and the crisis mark live in the store")

HELP = crisis_help("DE", "de")
CLOSE = "Ich hab heute den Gürtel am Haken im Keller ausprobiert."  # the detector below calls it a close call
NOTHING = json.dumps({"facts": [], "content": [], "profile": []})


class CloseCalls:
    """The fast layers, as a fake: never a yes; a close call for a message about a belt."""

    async def crisis(self, text: str) -> bool:
        return False

    async def assess(self, text: str) -> Assessment:
        return Assessment(False, uncertain="Gürtel" in text)


def judging(answer: str) -> Callable[[Call], str]:
    """A background model that answers the judge with `answer` and learns nothing."""
    return lambda call: answer if call.system and call.system[0].text == INSTRUCTION else NOTHING


def judge_calls(llm: ScriptedLLM) -> list[Call]:
    return [call for call in llm.calls if call.system and call.system[0].text == INSTRUCTION]


@pytest.fixture
def background() -> ScriptedLLM:
    llm = GatedLLM("background", held=lambda call: False)
    llm.responder = judging('{"help_line": true}')  # type: ignore[assignment]
    return llm


@pytest.fixture
async def engine(store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM) -> AsyncIterator[Engine]:
    e = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, crisis_detector=CloseCalls(),
                                                     crisis_judge=True, crisis_judge_timeout=0.5))
    yield e
    await e.drain()
    await e.close()


async def handled(engine: Engine, text: str, sent: list[str]) -> tuple[str, ...]:
    """The reply's bubbles for Anna's message; what went out at once lands in `sent`."""
    async def say_now(help_text: str) -> None:
        sent.append(help_text)

    reply = await engine.handle(Incoming("anna", text), say_now=say_now)
    assert reply is not None and not reply.failed
    return reply.bubbles


def test_the_answer_must_have_exactly_the_shape_asked_for() -> None:
    assert verdict({"help_line": True}) is True and verdict({"help_line": False}) is False
    for garbage in ({"help_line": "yes"}, {"help_line": 1}, {"help_line": True, "why": "x"}, {}, [True], "true", None):
        with pytest.raises(JudgeGarbage):
            verdict(garbage)
    request = judge_request("Neue Nachricht", [("user", "Hallo"), ("assistant", "Hi Anna!")])
    assert request.json_schema is not None and request.messages[0].content.endswith(
        "<message>\nNeue Nachricht\n</message>")
    assert "person: Hallo\ncompanion: Hi Anna!" in request.messages[0].content


async def test_a_yes_brings_the_help_text_first_and_the_crisis_answer_and_the_judge_ran_alongside(
        engine: Engine, chat: ScriptedLLM, background: GatedLLM, store: MemoryStore) -> None:
    sent: list[str] = []
    chat.enqueue("Hallo Anna!")
    await handled(engine, "Hallo, ich bin Anna.", sent)
    assert judge_calls(background) == [], "no close call, no judge"

    background.held = lambda call: call.system[0].text == INSTRUCTION  # the judge waits at the gate
    chat.enqueue("Das macht mir Sorgen. Bist du gerade in Sicherheit?")
    turn = asyncio.create_task(handled(engine, CLOSE, sent))
    await asyncio.wait_for(background.waiting.wait(), 5)
    scope = await engine.scope_for("anna")
    for _ in range(200):  # the turn goes on meanwhile: the message is logged while the judge thinks
        if len(await store.messages.recent(scope)) == 3:
            break
        await asyncio.sleep(0.01)
    assert [m.text for m in await store.messages.recent(scope)][-1] == CLOSE and not turn.done()
    background.gate.set()
    assert await turn == ("Das macht mir Sorgen. Bist du gerade in Sicherheit?",)
    assert sent == [HELP]
    assert "SAFETY FIRST" in chat.calls[-1].prompt and await store.state.get(scope, CRISIS_MARK) is not None
    [asked] = judge_calls(background)
    assert "person: Hallo, ich bin Anna.\ncompanion: Hallo Anna!" in asked.prompt and CLOSE in asked.prompt


@pytest.mark.parametrize("answer", ['{"help_line": false}', '{"help_line": "ja"}', "Ja, das klingt ernst.",
                                    '{"help_line": true, "reason": "Gürtel"}'])
async def test_a_no_or_garbage_leaves_the_ordinary_answer(
        answer: str, engine: Engine, chat: ScriptedLLM, background: ScriptedLLM, store: MemoryStore) -> None:
    background.responder = judging(answer)  # type: ignore[assignment]
    sent: list[str] = []
    chat.enqueue("Wofür brauchst du den Gürtel denn?")
    assert await handled(engine, CLOSE, sent) == ("Wofür brauchst du den Gürtel denn?",)
    assert sent == [] and len(judge_calls(background)) == 1
    assert await store.state.get(await engine.scope_for("anna"), CRISIS_MARK) is None
    garbage = answer != '{"help_line": false}'
    assert await store.failures.get("crisis_judge.garbage") == (1 if garbage else 0)


async def test_a_judge_that_hangs_holds_the_turn_no_longer_than_its_timeout(
        engine: Engine, chat: ScriptedLLM, background: GatedLLM, store: MemoryStore) -> None:
    background.held = lambda call: call.system[0].text == INSTRUCTION  # never let through
    sent: list[str] = []
    chat.enqueue("Wofür brauchst du den Gürtel denn?")
    started = time.monotonic()
    assert await handled(engine, CLOSE, sent) == ("Wofür brauchst du den Gürtel denn?",)
    assert 0.4 < time.monotonic() - started < 2.0 and sent == []
    assert await store.failures.get("crisis_judge.timeout") == 1


async def test_off_by_default_and_in_incognito_a_yes_leaves_the_mark(
        store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM, engine: Engine) -> None:
    plain = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, crisis_detector=CloseCalls()))
    try:
        chat.enqueue("Wofür brauchst du den Gürtel denn?")
        assert await handled(plain, CLOSE, []) == ("Wofür brauchst du den Gürtel denn?",)
        assert judge_calls(background) == [], "MNEMO_CRISIS_JUDGE is off unless set"
    finally:
        await plain.close()

    scope = await engine.scope_for("ben")
    await engine.incognito.switch_on(scope, None)
    chat.enqueue("Ich bin da.")
    sent: list[str] = []

    async def say_now(text: str) -> None:
        sent.append(text)

    reply = await engine.handle(Incoming("ben", CLOSE), say_now=say_now)
    assert reply is not None and reply.bubbles == ("Ich bin da.",) and sent == [HELP]
    assert isinstance(await store.state.get(scope, CRISIS_MARK), float) and await store.messages.recent(scope) == []
