"""Where the engine's features meet: an open question, a crisis, a reminder, a group, a restart, the clock."""
from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming, question_expired
from bot.conversation.help_lines import crisis_help
from bot.errors import LLMUnavailable
from bot.learning.corrections import profile_value
from bot.llm.port import Completion, CompletionRequest, ToolCall, Usage
from bot.texts import t
from memory.store import MemoryStore
from tests.engine_kit import make_engine
from tests.fakes.llm import Call, ScriptedLLM

BERLIN = ZoneInfo("Europe/Berlin")
CRISIS_WITH_NO = "Nein, ich kann nicht mehr. Ich will nicht mehr leben."
HELP = crisis_help("DE", "de")


class Clock:
    """A settable clock for the engine."""

    def __init__(self, start: datetime) -> None:
        self.now = start.timestamp()

    def __call__(self) -> float:
        return self.now


def background_llm() -> ScriptedLLM:
    """The background model: empty extractions, and it would happily propose a rule for any objection."""
    llm = ScriptedLLM("background")

    def answer(call: Call) -> str:
        schema = call.json_schema or {}
        if "verdicts" in schema.get("properties", {}):
            return json.dumps({"verdicts": []})
        if "rule" in schema.get("properties", {}):
            return json.dumps({"rule": "Sei nicht so fröhlich."})
        return json.dumps({"facts": [], "content": [], "profile": []})

    llm.responder = answer
    return llm


NOON = datetime(2026, 11, 30, 12, 0, tzinfo=BERLIN)  # the engines' clock unless a test sets its own


async def ask_rule(engine: Engine, chat: ScriptedLLM, user: str = "anna", **incoming: Any) -> None:
    """Let the model propose a rule, so a yes/no question is open."""
    chat.enqueue("[RULE: Keine Emojis verwenden.] Alles klar.")
    reply = await engine.handle(Incoming(user, "Hör auf mit den Emojis", **incoming))
    assert reply is not None and reply.buttons and "Soll ich mir das merken?" in reply.bubbles[-1]


# --- an open question meets a crisis or an everyday message --------------------------------------------


async def test_a_crisis_message_with_a_no_word_gets_help_and_the_model_not_the_question(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    await ask_rule(engine, chat)
    chat.enqueue("Ich bin da. Magst du mir erzählen, was passiert ist?")
    reply = await engine.handle(Incoming("anna", CRISIS_WITH_NO))
    assert reply is not None and reply.bubbles[0] == HELP and "Ich bin da." in reply.bubbles[1]  # the help text first
    assert "In Ordnung, das merke ich mir nicht." not in "\n".join(reply.bubbles) and reply.buttons == ()
    assert "SAFETY FIRST" in chat.calls[-1].system[0].text
    scope = await engine.scope_for("anna")
    assert (await store.rules.pending(scope)) is not None  # the question was not decided by the crisis message
    await engine.close()


async def test_a_crisis_that_sounds_like_a_correction_proposes_no_rule_and_is_not_streamed(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    background = background_llm()
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
    chat.enqueue("[RULE: Weniger Witze.] Ich höre dir zu. Wie geht es dir gerade?")
    shown: list[str] = []

    async def preview(text: str) -> None:
        shown.append(text)

    reply = await engine.handle(Incoming("anna", "Das stimmt so nicht mehr, ich will nicht mehr leben"), preview)
    await engine.drain()
    assert reply is not None and reply.buttons == () and "Soll ich mir das merken?" not in "\n".join(reply.bubbles)
    assert reply.bubbles[0] == HELP and HELP not in "\n".join(reply.bubbles[1:])  # first, and once
    assert shown == []  # nothing half-written reaches the person before the help lines
    assert not any("verdicts" in json.dumps(c.json_schema or {}) for c in background.calls)  # no correction judge
    assert not any("rule" in (c.json_schema or {}).get("properties", {}) for c in background.calls)
    scope = await engine.scope_for("anna")
    assert await store.rules.list(scope, "pending") == [] and await store.rules.list(scope) == []
    assert chat.calls[-1].tools is not None and "propose_rule" not in {t.name for t in chat.calls[-1].tools}
    await engine.close()


async def test_a_crisis_with_a_reminder_request_stores_no_reminder(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    chat.enqueue("Ich bin bei dir.")
    reply = await engine.handle(Incoming("anna", "Erinnere mich morgen um 9 daran, dass ich nicht mehr leben will"))
    assert reply is not None and HELP in "\n\n".join(reply.bubbles)
    assert await store.reminders.active(await engine.scope_for("anna")) == []
    await engine.close()


async def test_a_crisis_gets_the_help_lines_when_the_model_is_down(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    chat.enqueue_error(LLMUnavailable("connection refused"))
    reply = await engine.handle(Incoming("anna", "ich will sterben"))
    assert reply is not None and HELP in "\n\n".join(reply.bubbles) and not reply.failed
    await engine.close()


@pytest.mark.parametrize("everyday", ["Ich kann nicht schlafen, schon wieder.", "Genau, ich habe heute frei",
                                      "Nein heute war ein langer Tag"])
async def test_an_everyday_message_goes_to_the_model_and_the_question_stays_open(store: MemoryStore,
                                                                                everyday: str) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    await ask_rule(engine, chat)
    chat.enqueue("Oh, erzähl mal.")
    reply = await engine.handle(Incoming("anna", everyday))
    assert reply is not None and reply.bubbles == ("Oh, erzähl mal.",) and reply.buttons == ()
    scope = await engine.scope_for("anna")
    assert await store.rules.list(scope, "active") == [] and await store.rules.pending(scope) is not None
    # Issue 38: a later typed yes never decides an older question (before, it did); its buttons still do.
    chat.enqueue("Schön.")
    reply = await engine.handle(Incoming("anna", "ja, gerne"))
    assert reply is not None and reply.bubbles == ("Schön.",)
    assert await store.rules.list(scope, "active") == [] and await engine.open_question(scope) is not None
    await engine.close()


async def test_an_unanswered_question_expires_and_a_later_yes_is_just_a_message(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=BERLIN))
    engine = make_engine(store, chat, clock=clock, background=background_llm())
    await ask_rule(engine, chat)
    assert not question_expired(clock.now, clock.now + 23 * 3600) and question_expired(clock.now, clock.now + 24 * 3600)
    clock.now += 25 * 3600
    chat.enqueue("Schön!")
    reply = await engine.handle(Incoming("anna", "ja"))
    assert reply is not None and reply.bubbles == ("Schön!",)
    scope = await engine.scope_for("anna")
    assert await store.rules.list(scope, "active") == [] and await store.rules.pending(scope) is None
    await engine.close()


async def test_a_newer_question_replaces_the_open_one_and_closes_its_buttons(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    await ask_rule(engine, chat)
    scope = await engine.scope_for("anna")
    first = await store.rules.pending(scope)
    chat.enqueue("[RULE: Kürzer antworten.] Mach ich.")
    reply = await engine.handle(Incoming("anna", "Und bitte kürzer"))
    assert reply is not None and reply.closes == (f"rule:{first.id}",) and "Kürzer antworten." in reply.bubbles[-1]
    assert first.id not in {r.id for r in await store.rules.list(scope, "rejected")}  # nobody said no (issue 52)
    await engine.handle(Incoming("anna", "ja"))
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Kürzer antworten."]
    await engine.close()


# --- groups ---------------------------------------------------------------------------------------------


async def test_in_a_group_only_the_admin_who_was_asked_decides_by_typing(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    group = "tg:group:-100"
    await ask_rule(engine, chat, group, sender="tg:1", may_decide=True)
    scope = await engine.scope_for(group)
    chat.enqueue("Ha, gut.")
    reply = await engine.handle(Incoming(group, "Ben: ja", sender="tg:2", may_decide=False))
    assert reply is not None and reply.bubbles == ("Ha, gut.",)
    chat.enqueue("Hm.")
    await engine.handle(Incoming(group, "ja", sender="tg:3", may_decide=True))  # another admin, not the one asked
    assert await store.rules.list(scope, "active") == []
    # the one asked, but the companion answered two others since: the 'ja' may be for them, so the buttons decide
    chat.enqueue("Genau.")
    reply = await engine.handle(Incoming(group, "ja", sender="tg:1", may_decide=True))
    assert reply is not None and reply.bubbles == ("Genau.",) and await store.rules.list(scope, "active") == []
    await engine.close()


async def test_in_a_group_the_asked_admins_yes_right_after_the_question_decides(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    group = "tg:group:-100"
    await ask_rule(engine, chat, group, sender="tg:1", may_decide=True)
    reply = await engine.handle(Incoming(group, "ja", sender="tg:1", may_decide=True))
    assert reply is not None and reply.bubbles == ("📌 Gemerkt: Keine Emojis verwenden.",)
    await engine.close()


async def test_a_member_who_is_no_admin_corrects_nothing_and_only_an_admin_answers_their_rule(
        store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    group = "tg:group:-100"
    scope = await engine.scope_for(group)
    note = (await store.notes.add(scope, "Die Gruppe trifft sich freitags.")).note
    chat.enqueue("Na gut.")
    reply = await engine.handle(Incoming(group, "Ben: das stimmt nicht mehr", sender="tg:2", may_decide=False))
    assert reply is not None and reply.buttons  # a rule may be proposed, the judge is not asked
    assert (await store.notes.get(scope, note.id)).valid_to is None
    reply = await engine.handle(Incoming(group, "ja", sender="tg:1", may_decide=True))  # any admin, right after
    assert reply is not None and reply.bubbles[0].startswith("📌 Gemerkt:")
    await engine.close()


async def test_a_member_who_is_no_admin_answers_no_rule_and_an_admin_after_them_leaves_it_to_the_buttons(
        store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    group = "tg:group:-100"
    scope = await engine.scope_for(group)
    chat.enqueue("Na gut.")
    await engine.handle(Incoming(group, "Ben: das stimmt nicht mehr", sender="tg:2", may_decide=False))
    chat.enqueue("Hm.")
    await engine.handle(Incoming(group, "Ben: ja", sender="tg:2", may_decide=False))
    chat.enqueue("Okay.")
    await engine.handle(Incoming(group, "ja", sender="tg:1", may_decide=True))  # the companion spoke in between
    assert await store.rules.list(scope, "active") == [] and await store.rules.pending(scope) is not None
    await engine.close()


# --- a restart keeps what is pending -------------------------------------------------------------------


async def test_a_restart_keeps_the_open_question_the_why_notes_and_the_reminder_question(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=BERLIN))
    first = make_engine(store, chat, clock=clock, background=background_llm())
    scope = await first.scope_for("anna")
    note = (await store.notes.add(scope, "Anna spielt Cello im Orchester.")).note
    await ask_rule(first, chat)
    chat.enqueue("Klingt schön!")
    await first.handle(Incoming("anna", "Ich übe heute Cello"))
    reply = await first.handle(Incoming("anna", "Erinnere mich morgen"))
    assert reply is not None and reply.bubbles == (t("de", "reminder_ask_time"),)  # the reminder asks for its time
    await first.close()

    second = make_engine(store, chat, clock=clock, background=background_llm())  # a new process on the same database
    reply = await second.handle(Incoming("anna", "um 9 an die Orchesterprobe"))
    assert reply is not None and "Orchesterprobe" in reply.bubbles[0]
    assert [r.text for r in await store.reminders.active(scope)] == ["Orchesterprobe"]
    assert await second.last_notes(scope) == [note.id]
    reply = await second.handle(Incoming("anna", "Woher weißt du das?"))
    assert reply is not None and "Cello" in reply.bubbles[0]
    chat.enqueue("Gern.")
    reply = await second.handle(Incoming("anna", "ja"))  # no longer the very next message: left to the buttons
    assert reply is not None and reply.bubbles == ("Gern.",)
    assert (await second.open_question(scope)) is not None
    await second.close()


# --- the clock and the prompt ---------------------------------------------------------------------------


async def test_dates_the_model_sees_are_in_the_persons_zone_and_lines_say_who_spoke(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    clock = Clock(datetime(2026, 11, 30, 0, 34, tzinfo=BERLIN))  # 23:34 UTC the day before
    engine = make_engine(store, chat, clock=clock, background=background_llm())
    scope = await engine.scope_for("anna")
    await store.notes.add(scope, "Anna war auf dem Weihnachtsmarkt.", created_at=clock.now)
    chat.enqueue("Schön.")
    await engine.handle(Incoming("anna", "Der Weihnachtsmarkt war toll"))
    clock.now += 3600
    chat.enqueue("", [ToolCall("c1", "recall_chat", {"query": "Weihnachtsmarkt"})])
    chat.enqueue("Ja, du warst dort.")
    await engine.handle(Incoming("anna", "Wo war ich?"))
    prompt = chat.calls[-2].prompt
    assert "2026-11-30: Anna war auf dem Weihnachtsmarkt." in prompt and "2026-11-29" not in prompt
    tool_result = chat.calls[-1].messages[-1].content
    assert "2026-11-30 00:34 the person: \"Der Weihnachtsmarkt war toll\"" in tool_result
    assert "2026-11-30 00:34 you: \"Schön.\"" in tool_result
    await engine.close()


async def test_the_first_message_appears_once_in_the_first_prompt(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    chat.enqueue("Hallo!")
    await engine.handle(Incoming("anna", "Hallo, ich bin Anna und neu hier"))
    assert chat.calls[-1].prompt.count("ich bin Anna und neu hier") == 1
    await engine.close()


def test_a_rewritten_profile_value_never_repeats_its_key() -> None:
    assert profile_value("work", "work: work: Lehrerin") == "Lehrerin"
    assert profile_value("work", "Work:Lehrerin in Köln") == "Lehrerin in Köln"
    assert profile_value("work", "Lehrerin") == "Lehrerin"
    assert profile_value("name", "Nametag: Anna") == "Nametag: Anna"


# --- crisis meets the rate limit, the size limit and a check-in ----------------------------------------


async def test_a_crisis_message_passes_the_rate_limit_and_an_oversized_one_still_gets_help(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm(), rate_limit_per_minute=1.0,
                         max_message_chars=200)
    chat.enqueue("Hallo!")
    await engine.handle(Incoming("anna", "Hallo"))
    refused = await engine.handle(Incoming("anna", "Noch was"))
    assert refused is not None and refused.failed  # over the limit: neither read nor stored
    chat.enqueue("Ich bin da.")
    reply = await engine.handle(Incoming("anna", "ich will nicht mehr leben"))
    assert reply is not None and not reply.failed and HELP in "\n\n".join(reply.bubbles)
    long = "Ich will sterben. " + "Alles ist zu viel. " * 30
    reply = await engine.handle(Incoming("anna", long))
    assert reply is not None and reply.bubbles[0] == HELP and "zu lang" in reply.bubbles[1]
    await engine.close()


async def test_a_check_in_soon_after_a_crisis_speaks_with_the_safety_rules(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=BERLIN))
    engine = make_engine(store, chat, clock=clock, background=background_llm())
    scope = await engine.scope_for("anna")
    chat.enqueue("Ich bin da.")
    await engine.handle(Incoming("anna", "ich will mich umbringen"))
    clock.now += 26 * 3600
    chat.enqueue("Hey, ich denke an dich. Wie geht es dir heute?")
    await engine.compose_proactive(scope, "silence", "")
    assert "SAFETY FIRST" in chat.calls[-1].system[0].text
    clock.now += 4 * 86400
    chat.enqueue("Na, wie läuft's?")
    await engine.compose_proactive(scope, "silence", "")
    assert "SAFETY FIRST" not in chat.calls[-1].system[0].text
    await engine.close()


async def test_a_reply_delivered_again_after_a_crash_keeps_its_question_buttons(store: MemoryStore) -> None:
    chat = ScriptedLLM("chat")
    engine = make_engine(store, chat, clock=Clock(NOON), background=background_llm())
    chat.enqueue("[RULE: Keine Emojis verwenden.] Alles klar.")
    incoming = Incoming("anna", "Hör auf mit den Emojis", channel="telegram", channel_message_id="42:7")
    first = await engine.handle(incoming)
    assert first is not None and first.buttons
    again = await engine.earlier_reply(incoming)  # what a replay delivers when the send was cut off
    assert again is not None and again.bubbles == first.bubbles and again.buttons == first.buttons
    await engine.handle(Incoming("anna", "ja"))
    decided = await engine.earlier_reply(incoming)
    assert decided is not None and decided.buttons == ()  # the question is answered: no buttons come back
    await engine.close()


class SlowExtraction(ScriptedLLM):
    """A background model whose extraction answer waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__("background")
        self.started, self.go = asyncio.Event(), asyncio.Event()

    async def complete(self, request: CompletionRequest) -> Completion:
        messages = request.messages
        if request.json_schema and "facts" in request.json_schema.get("properties", {}):
            self.started.set()
            await self.go.wait()
            ids = [int(m) for m in re.findall(r"\[(\d+)\] user:", messages[-1].content)]
            return Completion(json.dumps({"facts": [{"text": "Anna hat Angst vor Spinnen.", "source_ids": ids}],
                                          "content": [], "profile": []}), (), Usage(10, 10), "background")
        return await super().complete(request)


async def test_deleteme_during_an_extraction_in_flight_leaves_nothing_behind(store: MemoryStore) -> None:
    chat, background = ScriptedLLM("chat"), SlowExtraction()
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
    commands = Commands(engine)
    chat.enqueue("Oh nein!")
    await engine.handle(Incoming("anna", "Ich habe solche Angst vor Spinnen"))
    await asyncio.wait_for(background.started.wait(), 5)  # the extraction has read the message and waits
    deleting = asyncio.create_task(commands.press("anna", "deleteme:yes"))
    await asyncio.sleep(0.05)
    background.go.set()
    await deleting
    await engine.drain()
    scope = await engine.scope_for("anna")
    assert await store.notes.list(scope) == [] and await store.messages.recent(scope) == []
    await engine.close()
