"""People: a scripted conversation names 'meine Schwester', later 'Miriam', then links them; questions; /people."""
from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.llm.port import ToolCall
from memory.ledgers import audit
from memory.ledgers.undo import is_final, undo_latest
from memory.records.kinship import Known, PersonDraft, closeness, combine, is_description, keeper, name_key, resolve
from memory.records.people import closest
from memory.store import MemoryStore
from tests.fakes.llm import Call, ScriptedLLM

pytestmark = pytest.mark.both_backends("people, their links and merges")

SISTER = {"name": "meine Schwester", "relation": "Schwester", "facts": ["Annas Schwester hat am Samstag Geburtstag."]}
MIRIAM = {"name": "Miriam", "facts": ["Miriam kommt am Wochenende zu Besuch."]}
LINK = {"name": "Miriam", "relation": "Schwester", "same_as": "meine Schwester",
        "facts": ["Miriam arbeitet im Krankenhaus."]}
TOBIAS = {"name": "Miriam", "relations": [{"to": "Tobias", "relation": "Ehefrau"}]}
SCRIPT: dict[str, list[dict[str, Any]]] = {
    "Meine Schwester hat am Samstag Geburtstag.": [SISTER],
    "Miriam kommt am Wochenende zu Besuch.": [MIRIAM],
    "Miriam ist übrigens meine Schwester, sie arbeitet im Krankenhaus.": [LINK],
    "Miriam ist mit Tobias verheiratet.": [TOBIAS],
}


def extraction(call: Call) -> str:
    """The background model: the scripted people of each user message in the transcript."""
    people = []
    for msg_id, text in re.findall(r"^\[(\d+)\] user: (.*)$", call.messages[0].content, re.M):
        people += [{**item, "source_ids": [int(msg_id)]} for item in SCRIPT.get(text, [])]
    return json.dumps({"facts": [], "content": [], "profile": [], "people": people})


def chat_model(call: Call) -> str:
    """The chat model answers a question about a person from what the search tool returned."""
    last = call.messages[-1]
    if last.role == "tool":
        card = re.search(r"^- (.+)$", last.content, re.M)
        return f"Laut meinen Notizen: {card.group(1)}" if card else "Das weiß ich nicht."
    return "Schön!"


@pytest.fixture
async def world(store: MemoryStore) -> AsyncIterator[tuple[Engine, Commands, ScriptedLLM]]:
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = chat_model  # type: ignore[assignment]
    background.responder = extraction  # type: ignore[assignment]
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
    yield engine, Commands(engine), chat
    await engine.close()


async def say(engine: Engine, text: str, user: str = "anna") -> tuple[str, ...]:
    reply = await engine.handle(Incoming(user, text))
    assert reply is not None
    await engine.drain()
    return reply.bubbles


async def test_sister_and_miriam_become_one_person_once_linked(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = world
    scope = await engine.scope_for("anna")
    await say(engine, "Meine Schwester hat am Samstag Geburtstag.")
    await say(engine, "Miriam kommt am Wochenende zu Besuch.")
    assert sorted(p.name for p in await store.people.all(scope)) == ["Miriam", "meine Schwester"]

    await say(engine, "Miriam ist übrigens meine Schwester, sie arbeitet im Krankenhaus.")

    [miriam] = await store.people.all(scope)
    assert (miriam.name, miriam.aliases, miriam.relation) == ("Miriam", ("meine Schwester",), "Schwester")
    assert sorted(n.text for n in await store.people.facts(scope, miriam.id)) == [
        "Annas Schwester hat am Samstag Geburtstag.", "Miriam arbeitet im Krankenhaus.",
        "Miriam kommt am Wochenende zu Besuch."]
    merged = [p for p in await store.people.all(scope, include_closed=True) if p.merged_into == miriam.id]
    assert len(merged) == 1 and merged[0].valid_to is not None, "the other record is closed, kept for history"
    assert "merge" in {e.action for e in await store.audit_log(scope, 30) if e.item_type == "person"}

    chat.calls.clear()
    await say(engine, "Hallo!")
    assert "People in the person's life" in chat.calls[0].system[1].text
    assert "Miriam – Schwester (also: meine Schwester)" in chat.calls[0].system[1].text


async def test_who_is_miriam_is_answered_from_the_records(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = world
    for text in SCRIPT:
        await say(engine, text)
    chat.enqueue("", [ToolCall("c1", "search_memory", {"query": "Wer ist Miriam?"})])
    answer = await say(engine, "Wer ist Miriam?")
    tool_result = chat.calls[-1].messages[-1]
    assert tool_result.role == "tool"
    assert "Miriam – Schwester (also: meine Schwester): Miriam is Ehefrau of Tobias" in tool_result.content
    assert "Miriam arbeitet im Krankenhaus." in tool_result.content
    assert answer[0].startswith("Laut meinen Notizen: Miriam – Schwester")

    chat.enqueue("", [ToolCall("c2", "search_memory", {"query": "Wer arbeitet im Krankenhaus?"})])
    answer = await say(engine, "Wer arbeitet im Krankenhaus?")
    assert answer[0].startswith("Laut meinen Notizen: Miriam – Schwester"), "found through a note linked to her"


async def test_relations_between_people_are_recorded(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = world
    await say(engine, "Miriam kommt am Wochenende zu Besuch.")
    await say(engine, "Miriam ist mit Tobias verheiratet.")
    scope = await engine.scope_for("anna")
    people = {p.name: p for p in await store.people.all(scope)}
    assert set(people) == {"Miriam", "Tobias"}
    [link] = await store.people.links(scope, people["Tobias"].id)
    assert (link.a, link.relation, link.b) == ("Miriam", "Ehefrau", "Tobias")
    shown = await commands.run("anna", "/people Miriam")
    assert shown is not None and "Miriam ist Ehefrau von Tobias" in shown.bubbles[0]


async def test_relation_to_the_user_is_bitemporal(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    processing = audit.new_processing("test")
    jana = await store.people.observe(scope, PersonDraft("Jana", relation="Freundin"), processing=processing,
                                      now=1000.0)
    again = await store.people.observe(scope, PersonDraft("Jana", relation="Partnerin"), processing=processing,
                                       now=2000.0)
    assert again.id == jana.id and again.relation == "Partnerin"
    history = await store.people.history(scope, jana.id)
    assert [(rel, start.timestamp() if start else None, end.timestamp() if end else None)
            for rel, start, end in history] == [("Freundin", 1000.0, 2000.0), ("Partnerin", 2000.0, None)]


async def test_undo_takes_the_link_back(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = world
    for text in list(SCRIPT)[:3]:
        await say(engine, text)
    scope = await engine.scope_for("anna")
    assert len(await store.people.all(scope)) == 1
    await undo_latest(store, scope)
    people = {p.name: p for p in await store.people.all(scope)}
    assert set(people) == {"Miriam", "meine Schwester"}
    assert [n.text for n in await store.people.facts(scope, people["meine Schwester"].id)] == [
        "Annas Schwester hat am Samstag Geburtstag."]
    assert [n.text for n in await store.people.facts(scope, people["Miriam"].id)] == [
        "Miriam kommt am Wochenende zu Besuch."]
    hits = await store.search(scope, "Miriam", ("person",))
    assert {h.item_id: h.text for h in hits} == {people["Miriam"].id: "Miriam",
                                                 people["meine Schwester"].id: "Schwester: meine Schwester"}


async def test_people_command_lists_renames_merges_and_forgets_after_a_yes(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = world
    await say(engine, "Meine Schwester hat am Samstag Geburtstag.")
    await say(engine, "Miriam kommt am Wochenende zu Besuch.")
    scope = await engine.scope_for("anna")
    people = {p.name: p for p in await store.people.all(scope)}
    sister, miriam = people["meine Schwester"], people["Miriam"]

    listed = await commands.run("anna", "/people")
    assert listed is not None
    assert f"#{sister.id} (Name unbekannt) – Schwester" in listed.bubbles[0]
    assert f"#{miriam.id} Miriam" in listed.bubbles[0]

    renamed = await commands.run("anna", f"/people rename {miriam.id} Mia")
    assert renamed is not None and renamed.bubbles == ("Umbenannt: Miriam heißt jetzt Mia.",)
    assert (await store.people.get(scope, miriam.id)).aliases == ("Miriam",)

    merged = await commands.run("anna", f"/people merge {miriam.id} {sister.id}")
    assert merged is not None and merged.bubbles == ("Zusammengeführt: Mia (Miriam, meine Schwester).",)
    [mia] = await store.people.all(scope)
    assert mia.relation == "Schwester" and len(await store.people.facts(scope, mia.id)) == 2

    asked = await commands.run("anna", f"/people forget {mia.id}")
    assert asked is not None and "Soll ich Mia vergessen" in asked.bubbles[0] and "(2 Notizen)" in asked.bubbles[0]
    yes = asked.buttons[0][0]
    assert (await commands.press("bob", yes.data)).notice == "Diese Auswahl gibt es nicht (mehr)."
    assert await store.people.all(scope), "another user's press changes nothing"

    done = await commands.press("anna", yes.data)
    assert done.notice == "Vergessen: Mia und 2 Notizen."
    assert await store.people.all(scope) == [] and await store.notes.count(scope) == 0
    assert await store.search(scope, "Mia Miriam Schwester", ("person", "note")) == []
    erased = [e for e in await store.audit_log(scope, 50) if e.action == "erase"]
    assert sorted(e.item_type for e in erased) == ["note", "note", "person"]
    assert not {"Mia", "Miriam"} & set(
        json.dumps([(e.before, e.after) for e in await store.audit_log(scope, 200)]).split('"'))
    assert (await commands.press("anna", yes.data)).notice == "Diese Auswahl gibt es nicht (mehr)."

    assert all(is_final(e) for e in await undo_latest(store, scope)), "forgetting is final"
    assert (await store.people.all(scope, include_closed=True) == []
            and await store.notes.count(scope, include_closed=True) == 0)


async def test_deleteme_removes_people_and_their_history(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = world
    for text in SCRIPT:
        await say(engine, text)
    scope = await engine.scope_for("anna")
    assert (await commands.press("anna", "deleteme:yes")).notice.startswith("Erledigt.")
    assert await store.people.all(scope, include_closed=True) == []
    async with store.db.reading() as tx:
        assert (await tx.fetchone("SELECT count(*) FROM person_relations"))[0] == 0


async def test_closest_people_go_first_and_the_block_is_bounded(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    processing = audit.new_processing("test")
    for i in range(6):
        await store.people.observe(scope, PersonDraft(f"Kollege{i}", relation="Kollege"), processing=processing)
    await store.people.observe(scope, PersonDraft("Tom", relation="Nachbar"), processing=processing)
    await store.people.observe(scope, PersonDraft("Mama"), processing=processing)
    await store.people.observe(scope, PersonDraft("Jonas", relation="Partner"), processing=processing)
    await store.people.observe(scope, PersonDraft("Lea", relation="beste Freundin"), processing=processing)
    cards = await store.people.cards(scope)
    assert [c.person.name for c in cards][:3] == ["Jonas", "Mama", "Lea"]
    assert len(cards) == 8 and "Tom" not in [c.person.name for c in cards]


async def test_forgetting_takes_the_note_history_along(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    processing = audit.new_processing("test")
    jana = await store.people.observe(scope, PersonDraft("Jana", relation="Kollegin"), processing=processing)
    old = (await store.notes.add(scope, "Jana arbeitet in Köln.")).note
    new = (await store.notes.add(scope, "Jana arbeitet jetzt in Bonn.")).note
    await store.people.link_notes(scope, jana.id, [old.id, new.id], processing=processing)
    await store.notes.close(scope, old.id, superseded_by=new.id)
    assert [n.text for n in await store.people.facts(scope, jana.id)] == ["Jana arbeitet jetzt in Bonn."]
    assert (await store.people.forget(scope, jana.id))[1] == 2
    assert await store.notes.count(scope, include_closed=True) == 0


def test_names_and_descriptions() -> None:
    assert name_key("meine Schwester") == "schwester" and name_key("Miriam") == "miriam"
    assert is_description("meine Schwester") and is_description("Mama") and is_description("my boss")
    assert not is_description("Miriam") and not is_description("Tobias Meier")
    assert closeness("Ehefrau") == 0 < closeness("Schwester") < closeness("Kollegin") < closeness("Zahnärztin")


def test_resolve_links_a_description_and_a_name() -> None:
    sister, miriam, lea = (Known(1, "meine Schwester", (), "Schwester"), Known(2, "Miriam"),
                           Known(3, "Lea", (), "Kollegin"))
    people = [sister, miriam, lea]
    assert resolve(PersonDraft("Miriam", relation="Schwester", same_as="meine Schwester"), people) == [2, 1]
    assert resolve(PersonDraft("Schwester"), people) == [1], "the one person with that relation"
    assert resolve(PersonDraft("Miriam", relation="Schwester"), people) == [2, 1], "the one unnamed sister"
    assert resolve(PersonDraft("Jana", relation="Kollegin"), people) == [], "Lea has a name: Jana is someone else"
    assert resolve(PersonDraft("Tobias"), people) == []
    assert keeper([sister, miriam]) == miriam
    assert combine(miriam, [sister], PersonDraft("Miriam", relation="Schwester")) == Known(
        2, "Miriam", ("meine Schwester",), "Schwester")


def test_two_sisters_are_not_guessed() -> None:
    people = [Known(1, "Lea", (), "Schwester"), Known(2, "Miriam", (), "Schwester")]
    assert resolve(PersonDraft("meine Schwester"), people) == []
    assert closest([], {}) == []
