"""Shared commands and button presses against a real store: owner checks, stale and forged data."""
from __future__ import annotations

import json

import pytest

from bot.commands.catalog import parse_command
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.llm.port import ToolCall
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM


@pytest.fixture
def setup(engine: Engine, chat: ScriptedLLM) -> tuple[Engine, Commands, ScriptedLLM]:
    return engine, Commands(engine), chat


def test_parse_command_accepts_slash_bang_and_bot_suffix() -> None:
    assert parse_command("/memories Hund") == ("memories", "Hund")
    assert parse_command("!forget 12") == ("forget", "12")
    assert parse_command("/start@mnemo_bot") == ("start", "")
    assert parse_command("Hallo /start") is None


async def test_model_proposed_rule_becomes_active_only_after_yes(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte in höchstens zwei Sätzen."})])
    chat.enqueue("Verstanden, ich fasse mich kürzer.")
    reply = await engine.handle(Incoming("anna", "Deine Antworten sind mir viel zu lang!"))
    assert reply is not None and "Soll ich mir das merken?" in reply.bubbles[-1]
    yes, no = reply.buttons[0]
    scope = await engine.scope_for("anna")
    assert await store.rules.list(scope, "active") == []

    pressed = await commands.press("anna", yes.data)
    assert pressed.text == "📌 Gemerkt: Antworte in höchstens zwei Sätzen."
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Antworte in höchstens zwei Sätzen."]
    assert (await commands.press("anna", yes.data)).notice == "Das ist schon erledigt."
    assert (await commands.press("anna", no.data)).notice == "Das ist schon erledigt."

    chat.enqueue("Ok.")
    await engine.handle(Incoming("anna", "Wie war dein Tag?"))
    await engine.drain()
    assert "Antworte in höchstens zwei Sätzen." in chat.calls[-1].system[1].text


@pytest.mark.parametrize("typed, still_open", [
    ("Ich war gestern noch im Kino", True), ("Jahr", True), ("Token", True),
    ("Bitte erkläre mir erst, was du meinst", True), ("Genau, ich habe heute frei", True),
    ("Ok, nein", True),  # a no after an ok is no clear answer
])
async def test_other_replies_never_confirm_a_pending_rule(setup, store: MemoryStore, typed: str,  # type: ignore[no-untyped-def]
                                                          still_open: bool) -> None:
    """A message that is no answer goes to the model and leaves the question open; a no drops the rule."""
    engine, commands, chat = setup
    chat.enqueue("[RULE: Keine Emojis verwenden.] Alles klar.")
    reply = await engine.handle(Incoming("anna", "Hör auf mit den Emojis"))
    assert reply is not None and reply.buttons
    calls = len(chat.calls)
    answer = await engine.handle(Incoming("anna", typed))
    await engine.drain()
    scope = await engine.scope_for("anna")
    assert await store.rules.list(scope, "active") == []
    assert (await store.rules.pending(scope) is not None) == still_open
    assert (len(chat.calls) > calls) == still_open  # a message that is no answer is answered by the model
    assert answer is not None and (answer.buttons == ()) and (
        "In Ordnung, das merke ich mir nicht." in answer.bubbles) != still_open


async def test_typed_yes_confirms_a_pending_rule(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    chat.enqueue("[RULE: Keine Emojis verwenden.] Alles klar.")
    await engine.handle(Incoming("anna", "Hör auf mit den Emojis"))
    reply = await engine.handle(Incoming("anna", "Ja, bitte"))
    assert reply is not None and reply.bubbles == ("📌 Gemerkt: Keine Emojis verwenden.",)
    scope = await engine.scope_for("anna")
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Keine Emojis verwenden."]


async def test_forged_and_foreign_button_data_change_nothing(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    anna = await engine.scope_for("anna")
    note = (await store.notes.add(anna, "Anna hat Angst vor Hunden")).note
    rule = await store.rules.propose(anna, "Sprich Anna mit Du an.")
    for data in (f"forget:{note.id}", f"rule:yes:{rule.id}", "rule:yes:999", "forget:abc", "deleteme:now",
                 "x" * 300, ""):
        pressed = await commands.press("mallory", data)
        assert pressed.notice == "Diese Auswahl gibt es nicht (mehr)."
    assert (await store.notes.get(anna, note.id)).text == "Anna hat Angst vor Hunden"
    assert (await store.rules.get(anna, rule.id)).status == "pending"


async def test_memories_pages_and_search(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    scope = await engine.scope_for("anna")
    for i in range(12):
        await store.notes.add(scope, f"Notiz Nummer {i} über Gartenpflanze{i}")
    first = await commands.run("anna", "/memories")
    assert first is not None and "1–10 von 12" in first.bubbles[0]
    assert [b.data for b in first.buttons[0]] == ["mem:10"]
    second = await commands.press("anna", "mem:10")
    assert second.text is not None and "11–12 von 12" in second.text
    found = await commands.run("anna", "/memories Gartenpflanze3")
    assert found is not None and "Gartenpflanze3" in found.bubbles[0].splitlines()[1]


async def test_forget_by_id_and_by_text_needs_a_press(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    scope = await engine.scope_for("anna")
    note = (await store.notes.add(scope, "Anna raucht")).note
    by_id = await commands.run("anna", f"/forget {note.id}")
    assert by_id is not None and "Anna raucht" in by_id.bubbles[0]
    assert (await store.notes.get(scope, note.id)).text == "Anna raucht"
    by_text = await commands.run("anna", "/forget raucht")
    assert by_text is not None and by_text.buttons[0][0].data == f"forget:{note.id}"
    pressed = await commands.press("anna", f"forget:{note.id}")
    assert pressed.text == "Vergessen: Anna raucht"
    assert await store.notes.list(scope) == []
    log = await store.audit_log(scope)
    assert (log[0].action, log[0].item_type, log[0].item_id) == ("erase", "note", note.id)
    assert [e.action for e in log] == ["erase", "create"], "the audit keeps that the note was there"
    assert "raucht" not in json.dumps([(e.before, e.after, e.reason) for e in log]), "but not what it said"


async def test_export_and_deleteme_touch_only_the_callers_data(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    chat.responder = lambda call: "Hallo!"
    await engine.handle(Incoming("anna", "Ich bin Anna"))
    await engine.handle(Incoming("ben", "Ich bin Ben"))
    await engine.drain()
    export = await commands.run("anna", "/export")
    assert export is not None and export.document is not None
    data = json.loads(export.document.content)
    assert [m["text"] for m in data["messages"]] == ["Ich bin Anna", "Hallo!"]
    confirm = await commands.run("anna", "/deleteme")
    assert confirm is not None and confirm.buttons[0][0].data == "deleteme:yes"
    await commands.press("anna", "deleteme:yes")
    anna, ben = await engine.scope_for("anna"), await engine.scope_for("ben")
    assert await store.messages.count(anna) == 0
    assert await store.messages.count(ben) == 2
    assert await store.search(anna, "Anna", ("message",)) == []


async def test_every_command_answers(setup) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    for name in ("start", "help", "memories", "forget", "diary", "rules", "profile", "thoughts", "topics",
                 "export", "deleteme", "think", "writediary", "nosuchcommand"):
        reply = await commands.run("anna", f"/{name}")
        assert reply is not None and reply.bubbles and all(b.strip() for b in reply.bubbles), name


async def test_a_stale_forget_button_never_hits_a_newer_note(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    scope = await engine.scope_for("anna")
    old = (await store.notes.add(scope, "Anna mag Jazz")).note
    await commands.press("anna", f"forget:{old.id}")
    new = (await store.notes.add(scope, "Anna mag Techno")).note
    assert new.id != old.id, "ids that buttons carry are never reused"
    assert (await commands.press("anna", f"forget:{old.id}")).notice == "Diese Auswahl gibt es nicht (mehr)."
    assert [n.text for n in await store.notes.list(scope)] == ["Anna mag Techno"]


async def test_keyword_commands_list_only_notes_about_the_word(store: MemoryStore) -> None:
    """/memories, /forget and /why with a word show what names it or is close in meaning, not the whole scope."""
    engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(relevance_floor=0.5))
    commands = Commands(engine)
    scope = await engine.scope_for("anna")
    for text in ("Anna mag Katzen sehr.", "Der Zahnarzttermin ist am Montag.", "Anna spielt Cello im Orchester."):
        await store.notes.add(scope, text)
    found = await commands.run("anna", "/memories Zahnarzt")
    assert found is not None and "Zahnarzttermin" in found.bubbles[0]
    assert "Katzen" not in found.bubbles[0] and "Cello" not in found.bubbles[0]
    pick = await commands.run("anna", "/forget Katzen")
    assert pick is not None and [b.data for row in pick.buttons for b in row if b.data != "cancel"] == [
        b.data for row in pick.buttons for b in row if b.data.startswith("forget:")]
    assert len([b for row in pick.buttons for b in row if b.data.startswith("forget:")]) == 1
    assert "Katzen" in pick.bubbles[0] and "Zahnarzt" not in pick.bubbles[0]
    nothing = await commands.run("anna", "/memories Segelboot")
    assert nothing is not None and nothing.bubbles == ("Dazu habe ich nichts gefunden.",)
    await engine.close()
