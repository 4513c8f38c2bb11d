"""Remembering right, as a scripted replay: fake model, real store, real bundled embedder."""
from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.llm.port import ToolCall
from memory.store import MemoryStore
from tests.fakes.llm import Call, ScriptedLLM

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 25, 14, 30, tzinfo=BERLIN).timestamp()
HOUR = 3600.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def judge(decide: dict[str, str], rewrite: str = "") -> object:
    """A background model that judges items by a word in their text; extraction gets empty lists."""
    def respond(call: Call) -> str:
        if "You check a companion's memory" not in call.system[0].text:
            return json.dumps({"facts": [], "content": [], "profile": [], "rule": ""})
        out = []
        for item_id, text in re.findall(r'\[(\w+:\d+)\] "([^"]*)"', call.messages[0].content):
            action = next((a for word, a in decide.items() if word in text), "keep")
            out.append({"id": item_id, "action": action, "text": rewrite if action == "rewrite" else ""})
        return json.dumps({"verdicts": out})
    return respond


@pytest.fixture
async def world(tmp_path, real_embedder) -> AsyncIterator[tuple[Engine, MemoryStore, ScriptedLLM, ScriptedLLM, Clock]]:  # type: ignore[no-untyped-def]
    store = await MemoryStore.open(tmp_path, real_embedder)
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    background.responder = judge({})  # type: ignore[assignment]
    clock = Clock(NOW)
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN), clock=clock)
    yield engine, store, chat, background, clock
    await engine.close()
    await store.close()


async def test_invented_tv_show_is_rewritten_logged_and_announced(world) -> None:  # type: ignore[no-untyped-def]
    engine, store, chat, background, clock = world
    scope = await engine.scope_for("anna")
    await store.messages.add(scope, "assistant", "Schaust du heute Abend wieder Dark?", created_at=NOW - HOUR)
    wrong = (await store.notes.add(scope, "Anna schaut gern die Serie Dark.")).note
    background.responder = judge({"Dark": "rewrite"}, rewrite="Anna schaut gern die Serie Babylon Berlin.")
    chat.enqueue("Oh, da habe ich mich vertan – Babylon Berlin also!")
    trigger = "Das stimmt nicht, ich habe nie gesagt, dass ich Dark schaue. Ich schaue Babylon Berlin."
    reply = await engine.handle(Incoming("anna", trigger))
    await engine.drain()
    assert reply is not None
    assert "„Anna schaut gern die Serie Dark.“ → „Anna schaut gern die Serie Babylon Berlin.“" in reply.bubbles[-1]
    old = await store.notes.get(scope, wrong.id)
    assert old.valid_to is not None and old.superseded_by is not None
    assert [n.text for n in await store.notes.list(scope)] == ["Anna schaut gern die Serie Babylon Berlin."]
    log = await store.audit_log(scope, 5)
    changed = [e for e in log if e.processing_id == log[0].processing_id]
    assert {e.action for e in changed} == {"create", "close"}
    assert all(e.reason == trigger for e in changed)
    assert "Anna schaut gern die Serie Dark." in json.dumps([e.before for e in changed], ensure_ascii=False)


async def test_never_in_egypt_changes_only_what_the_judge_names(world) -> None:  # type: ignore[no-untyped-def]
    engine, store, chat, background, clock = world
    scope = await engine.scope_for("anna")
    christian = (await store.notes.add(scope, "Christian war letztes Jahr in Ägypten.")).note
    anna = (await store.notes.add(scope, "Anna war 2019 im Urlaub in Ägypten.")).note
    other = (await store.notes.add(scope, "Anna trinkt morgens Kaffee.")).note
    background.responder = judge({"Anna war": "delete"})
    chat.enqueue("Verstehe, dann habe ich das falsch abgespeichert.")
    await engine.handle(Incoming("anna", "Ich war nie in Ägypten."))
    await engine.drain()
    assert (await store.notes.get(scope, christian.id)).valid_to is None
    assert (await store.notes.get(scope, other.id)).valid_to is None
    closed = await store.notes.get(scope, anna.id)
    assert closed.valid_to is not None, "contradicted, so closed rather than erased"


async def test_similarity_alone_never_deletes(world) -> None:  # type: ignore[no-untyped-def]
    engine, store, chat, background, clock = world
    scope = await engine.scope_for("anna")
    christian = (await store.notes.add(scope, "Christian war letztes Jahr in Ägypten.")).note
    background.responder = judge({})  # the judge keeps everything
    chat.enqueue("Okay!")
    reply = await engine.handle(Incoming("anna", "Ich war nie in Ägypten."))
    await engine.drain()
    assert reply is not None and "korrigiert" not in " ".join(reply.bubbles)
    assert (await store.notes.get(scope, christian.id)).valid_to is None
    assert [e.action for e in await store.audit_log(scope)] == ["create"]


async def test_yesterday_evening_finds_only_yesterday_evening(world) -> None:  # type: ignore[no-untyped-def]
    engine, store, chat, background, clock = world
    scope = await engine.scope_for("anna")
    yesterday_evening = datetime(2026, 11, 24, 20, 15, tzinfo=BERLIN).timestamp()
    yesterday_morning = datetime(2026, 11, 24, 8, 0, tzinfo=BERLIN).timestamp()
    today = datetime(2026, 11, 25, 9, 0, tzinfo=BERLIN).timestamp()
    await store.messages.add(scope, "user", "Ich habe Lasagne mit Spinat gekocht.", created_at=yesterday_evening)
    await store.messages.add(scope, "user", "Zum Frühstück gab es Lasagne von vorgestern.",
                             created_at=yesterday_morning)
    await store.messages.add(scope, "user", "Wie gesagt, gestern Abend gab es Lasagne – die war super.",
                             created_at=today)
    chat.enqueue("", [ToolCall("c1", "recall_chat", {"query": "was habe ich gestern abends über Lasagne gesagt"})])
    chat.enqueue("Du hast Lasagne mit Spinat gekocht.")
    await engine.handle(Incoming("anna", "Was habe ich gestern abends gesagt?"))
    await engine.drain()
    result = chat.calls[1].messages[-1].content
    assert "Lasagne mit Spinat" in result
    assert "Frühstück" not in result and "Wie gesagt" not in result


async def test_forget_is_final_and_the_next_undo_takes_back_nothing_else(world) -> None:  # type: ignore[no-untyped-def]
    engine, store, chat, background, clock = world
    commands = Commands(engine)
    scope = await engine.scope_for("anna")
    tea = (await store.notes.add(scope, "Anna trinkt morgens Tee.")).note
    note = (await store.notes.add(scope, "Anna spielt seit zehn Jahren Cello.")).note
    await commands.press("anna", f"forget:{note.id}")
    assert [h.item_id for h in await store.search(scope, "Cello")] == [tea.id]
    undone = await commands.run("anna", "/undo")
    assert undone is not None and undone.bubbles == (
        "Das habe ich endgültig vergessen, da gibt es nichts wiederherzustellen.",)
    assert [n.id for n in await store.notes.list(scope)] == [tea.id], "the forgotten note stays gone, the tea stays"
    assert note.id not in [h.item_id for h in await store.search(scope, "Welches Instrument spiele ich?")]


async def test_diary_questions_are_answered_from_the_database(world) -> None:  # type: ignore[no-untyped-def]
    engine, store, chat, background, clock = world
    scope = await engine.scope_for("anna")
    await store.diary.add(scope, "2026-11-23", "Heute hat Anna von ihrem Garten erzählt.")
    await store.diary.add(scope, "2026-11-24", "Anna war müde, wir haben wenig geredet.")
    chat.enqueue("Zwei Einträge.")
    await engine.handle(Incoming("anna", "Wie viele Einträge hast du in deinem Tagebuch?"))
    await engine.drain()
    prompt = chat.calls[0].messages[-1].content
    assert "you have written 2 diary entries" in prompt and "Anna war müde" in prompt


async def test_why_shows_the_source_and_corrects_with_a_button(world) -> None:  # type: ignore[no-untyped-def]
    engine, store, chat, background, clock = world
    commands = Commands(engine)
    scope = await engine.scope_for("anna")
    source = await store.messages.add(scope, "user", "Ich arbeite jetzt bei der Stadtbibliothek.",
                                      created_at=NOW - 48 * HOUR)
    note = (await store.notes.add(scope, "Anna arbeitet bei der Stadtbibliothek.", source_message_ids=[source.id])).note
    chat.enqueue("Wie läuft es in der Bibliothek?")
    await engine.handle(Incoming("anna", "Wie war mein Tag auf der Arbeit?"))
    why = await engine.handle(Incoming("anna", "Wie kommst du darauf?"))
    assert why is not None and "Ich arbeite jetzt bei der Stadtbibliothek." in why.bubbles[0]
    assert [b.data for b in why.buttons[0]] == [f"why:wrong:{note.id}", f"why:old:{note.id}", f"forget:{note.id}"]
    pressed = await commands.press("anna", f"why:old:{note.id}")
    assert pressed.text is not None and "Stadtbibliothek" in pressed.text
    assert (await store.notes.get(scope, note.id)).valid_to is not None
    assert (await commands.press("anna", f"why:old:{note.id}")).notice == "Das ist schon erledigt."


async def test_with_consent_a_new_profile_fact_waits_for_a_yes(tmp_path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    store = await MemoryStore.open(tmp_path, real_embedder)
    chat, background = ScriptedLLM(), ScriptedLLM()

    def extract(call: Call) -> str:
        ids = [int(i) for i in re.findall(r"^\[(\d+)\] user:", call.messages[0].content, re.M)]
        return json.dumps({"facts": [], "content": [], "profile": [
            {"category": "facts", "key": "Wohnort", "value": "Leipzig", "source_ids": ids[:1]}]})

    background.responder = extract  # type: ignore[assignment]
    engine = Engine(store, chat, background, EngineConfig(profile_consent=True))
    commands = Commands(engine)
    try:
        chat.enqueue("Schön, Leipzig!")
        await engine.handle(Incoming("anna", "Ich wohne in Leipzig."))
        await engine.drain()
        scope = await engine.scope_for("anna")
        assert await store.profile.list(scope) == []
        chat.enqueue("Wie geht's?")
        reply = await engine.handle(Incoming("anna", "Hallo!"))
        assert reply is not None and "Darf ich mir das über dich merken? 👤 Wohnort: Leipzig" in reply.bubbles[-1]
        pressed = await commands.press("anna", reply.buttons[0][0].data)
        assert pressed.text == "👤 Gemerkt: Wohnort: Leipzig"
        assert [(e.key, e.value) for e in await store.profile.list(scope)] == [("Wohnort", "Leipzig")]
        assert (await commands.press("anna", reply.buttons[0][0].data)).notice == "Diese Auswahl gibt es nicht (mehr)."
    finally:
        await engine.close()
        await store.close()
