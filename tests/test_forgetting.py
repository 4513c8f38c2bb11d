"""Forgetting reaches the copies: diary, thoughts, summary, relationship and topics lose a forgotten fact."""
from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.errors import LLMUnavailable
from bot.learning import forgetting
from bot.llm.port import ToolCall
from memory.ledgers import audit
from memory.models import Scope
from memory.records.kinship import PersonDraft
from memory.records.relationship import Relationship
from memory.search import integrity
from memory.store import MemoryStore
from tests.fakes.llm import Call, ScriptedLLM

pytestmark = pytest.mark.both_backends("deletion across the tables that keep copies")

FACT = "Anna hat Angst vor Spinnen"
DIARY = ("Heute war ein ruhiger Tag. Anna hat mir erzählt, dass sie Angst vor Spinnen hat. Danach haben wir über "
         "ihren Garten geredet. Am Abend hat sie Tomaten geerntet und eine Suppe gekocht.")
DIARY_BY_MODEL = ("Heute war ein ruhiger Tag. Wir haben über Annas Garten geredet. Am Abend hat sie Tomaten geerntet "
                  "und eine Suppe gekocht.")
DIARY_IN_CODE = ("Heute war ein ruhiger Tag. Danach haben wir über ihren Garten geredet. Am Abend hat sie Tomaten "
                 "geerntet und eine Suppe gekocht.")
OTHER_DIARY = "Anna war im Kino und fand den Film zu lang."
THOUGHT = "Anna meidet den Keller wegen ihrer Angst vor Spinnen."
OTHER_THOUGHT = "Anna freut sich auf den Winter."
SUMMARY = "Anna plant eine Reise nach Wien. Sie hat Angst vor Spinnen und geht nie in den Keller."
NOTES = "Wir vertrauen uns mehr. Ich weiß jetzt von Annas Angst vor Spinnen."
REWRITES = {  # what a good model answers, by copy
    "thought": "Anna meidet den Keller.",
    "summary": "Anna plant eine Reise nach Wien. Sie geht nie in den Keller.",
    "relationship:notes": "Wir vertrauen uns mehr.",
    "relationship:in_jokes:0": "",
}


def texts_of(call: Call) -> list[dict[str, str]]:
    """The copies a rewrite request shows the model."""
    return json.loads(call.messages[0].content.split("Texts:\n", 1)[1])


def background(rewrites: dict[str, str]) -> object:
    """The background model: rewrites copies by id (others unchanged), judges corrections, extracts nothing."""
    def respond(call: Call) -> str:
        system = call.system[0].text
        if "asked their companion to forget" in system:
            return json.dumps({"rewrites": [{"id": c["id"], "text": rewrites.get(c["id"], c["text"])}
                                            for c in texts_of(call)]})
        if "You check a companion's memory" in system:
            found = re.findall(r'\[(\w+:\d+)\] "([^"]*)"', call.messages[0].content)
            return json.dumps({"verdicts": [{"id": i, "action": "delete" if "Spinnen" in text else "keep"}
                                            for i, text in found]})
        return json.dumps({"facts": [], "content": [], "profile": [], "people": [], "rule": ""})
    return respond


@dataclass
class Seeded:
    scope: Scope
    note: int
    diary: int
    other_diary: int
    thought: int
    other_thought: int
    topic: int


@pytest.fixture
async def world(store: MemoryStore) -> AsyncIterator[tuple[Engine, Commands, ScriptedLLM, ScriptedLLM]]:
    chat, model = ScriptedLLM("chat"), ScriptedLLM("background")
    engine = Engine(store, chat, model, EngineConfig(relevance_floor=0.0))
    yield engine, Commands(engine), chat, model
    await engine.close()


async def seed(store: MemoryStore, scope: Scope) -> Seeded:
    """A note and what the companion wrote from it, beside things that have nothing to do with it."""
    note = (await store.notes.add(scope, FACT)).note
    diary = await store.diary.add(scope, "2026-11-24", DIARY)
    other_diary = await store.diary.add(scope, "2026-11-23", OTHER_DIARY)
    thought = await store.thoughts.add(scope, THOUGHT, origin="reflection")
    other_thought = await store.thoughts.add(scope, OTHER_THOUGHT, origin="reflection")
    await store.conversations.set_summary(scope, SUMMARY, 1)
    await store.relationships.save(scope, Relationship(notes=NOTES, rituals=("Sonntags Kaffee",),
                                                       in_jokes=("Die Spinne im Keller",)), [], "p-seed")
    topic = await store.topics.add(scope, "Wie geht es Anna mit ihrer Spinnenangst?")
    return Seeded(scope, note.id, diary.id, other_diary.id, thought.id, other_thought.id, topic.id)


def good_model(s: Seeded) -> dict[str, str]:
    return {f"diary:{s.diary}": DIARY_BY_MODEL, f"thought:{s.thought}": REWRITES["thought"],
            **{k: v for k, v in REWRITES.items() if k != "thought"}}


async def audit_texts(store: MemoryStore, scope: Scope) -> str:
    """Everything the audit log keeps about copies (the note's and person's own entries are a different promise)."""
    marks = ",".join("?" * len(forgetting.COPY_TYPES))
    async with store.db.reading() as tx:
        rows = await tx.fetchall("SELECT before, after, reason FROM audit_log WHERE scope_id = ?"
                                 f" AND item_type IN ({marks})", (scope.id, *forgetting.COPY_TYPES))
    return " ".join(str(v) for row in rows for v in row)


async def test_forget_rewrites_diary_thoughts_summary_relationship_and_topics(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat, model = world
    s = await seed(store, await engine.scope_for("anna"))
    model.responder = background(good_model(s))  # type: ignore[assignment]

    pressed = await commands.press("anna", f"forget:{s.note}")

    assert pressed.text == (f"Vergessen: {FACT}\nAuch umgeschrieben, damit nichts mehr davon darin steht: "
                            "1 Tagebucheintrag, 1 Gedanke, 1 offenes Thema, die Zusammenfassung unseres Gesprächs, "
                            "meine Notizen über uns beide.")
    assert {e.id: e.text for e in await store.diary.all(s.scope)} == {s.diary: DIARY_BY_MODEL,
                                                                      s.other_diary: OTHER_DIARY}
    assert {th.id: th.text for th in await store.thoughts.all(s.scope)} == {s.thought: REWRITES["thought"],
                                                                            s.other_thought: OTHER_THOUGHT}
    assert (await store.conversations.get(s.scope)).summary == REWRITES["summary"]
    rel = await store.relationships.get(s.scope)
    assert (rel.notes, rel.rituals, rel.in_jokes) == ("Wir vertrauen uns mehr.", ("Sonntags Kaffee",), ())
    assert await store.topics.all(s.scope) == []
    shown = " ".join(c["text"] for call in model.calls for c in texts_of(call))
    assert OTHER_DIARY not in shown and OTHER_THOUGHT not in shown and "Sonntags" not in shown
    assert all("Spinne" not in h.text for h in await store.search(s.scope, "Angst vor Spinnen", ("diary", "thought")))
    assert "Spinne" not in await audit_texts(store, s.scope), "final: the audit log keeps no copy's old text"
    erased = [e for e in await store.audit_log(s.scope, 20) if e.action == audit.ERASE]
    assert {(e.item_type, e.item_id) for e in erased} == {("diary", s.diary), ("thought", s.thought),
                                                          ("summary", s.scope.id), ("relationship", s.scope.id),
                                                          ("topic", s.topic), ("note", s.note)}
    assert all(e.before is None for e in erased)
    assert await integrity.check(store) == []


async def test_forgotten_copies_stay_forgotten_after_undo(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat, model = world
    s = await seed(store, await engine.scope_for("anna"))
    model.responder = background(good_model(s))  # type: ignore[assignment]
    processing = audit.new_processing("forget")
    await forgetting.forget(store, model, s.scope, forgetting.Forgotten((FACT,)), processing=processing,
                            reason="/forget", final=True)
    undone = await commands.run("anna", "/undo")
    final = "Das habe ich endgültig vergessen, da gibt es nichts wiederherzustellen."
    assert undone is not None and undone.bubbles == (final,)
    assert (await store.diary.latest(s.scope, 2))[1].text == DIARY_BY_MODEL
    assert (await store.conversations.get(s.scope)).summary == REWRITES["summary"]


@pytest.mark.parametrize("answer", [
    "Klar, das mache ich!",
    json.dumps({"rewrites": [{"id": "diary:1", "text": DIARY}]}),  # the fact still stands
    json.dumps({"rewrites": [{"id": "diary:1", "text": ""}]}),  # a long entry emptied
    json.dumps({"rewrites": [{"id": "diary:1", "text": DIARY_BY_MODEL + " Anna mag Spinnen nicht, sie hat Angst."}]}),
    json.dumps({"rewrites": []}),
    LLMUnavailable("down"),
])
async def test_a_model_that_fails_still_leaves_no_sentence_with_the_fact(world, store: MemoryStore, answer) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat, model = world
    scope = await engine.scope_for("anna")
    note = (await store.notes.add(scope, FACT)).note
    entry = await store.diary.add(scope, "2026-11-24", DIARY)
    assert entry.id == 1
    model.enqueue_error(answer) if isinstance(answer, LLMUnavailable) else model.enqueue(answer)
    before = sum(forgetting.failures.values())

    pressed = await commands.press("anna", f"forget:{note.id}")

    assert [e.text for e in await store.diary.all(scope)] == [DIARY_IN_CODE]
    assert pressed.text is not None and pressed.text.endswith("1 Tagebucheintrag.")
    assert sum(forgetting.failures.values()) == before + 1, "every unusable answer is counted"


async def test_a_correction_rewrites_the_copies_and_undo_brings_both_back(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat, model = world
    scope = await engine.scope_for("anna")
    note = (await store.notes.add(scope, FACT)).note
    entry = await store.diary.add(scope, "2026-11-24", DIARY)
    await store.conversations.set_summary(scope, SUMMARY, 0)
    model.responder = background({f"diary:{entry.id}": DIARY_BY_MODEL,  # type: ignore[assignment]
                                  "summary": REWRITES["summary"]})

    reply = await engine.handle(Incoming("anna", "Das stimmt nicht mehr, vor Spinnen fürchte ich mich nicht."))
    await engine.drain()

    assert reply is not None and FACT in " ".join(reply.bubbles)
    assert await store.notes.list(scope) == []
    assert [e.text for e in await store.diary.all(scope)] == [DIARY_BY_MODEL]
    assert (await store.conversations.get(scope)).summary == REWRITES["summary"]
    undone = await commands.run("anna", "/undo")
    assert (undone is not None and "• Tagebucheintrag geändert:" in undone.bubbles[0]
            and "• Zusammenfassung geändert:" in undone.bubbles[0])
    assert [n.id for n in await store.notes.list(scope)] == [note.id]
    assert [e.text for e in await store.diary.all(scope)] == [DIARY]
    assert (await store.conversations.get(scope)).summary == SUMMARY
    assert [h.item_id for h in await store.search(scope, "Spinnen Garten", ("diary",))] == [entry.id]
    assert await integrity.check(store) == []


async def test_the_companion_reads_only_the_rewritten_diary(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat, model = world
    s = await seed(store, await engine.scope_for("anna"))
    model.responder = background(good_model(s))  # type: ignore[assignment]
    await commands.press("anna", f"forget:{s.note}")
    chat.enqueue("", [ToolCall("c1", "read_diary", {"count": 5}), ToolCall("c2", "search_memory", {"query": "Keller"})])
    chat.enqueue("Ich habe über deinen Garten geschrieben.")

    await engine.handle(Incoming("anna", "Was hast du zuletzt in dein Tagebuch geschrieben?"))
    await engine.drain()

    seen = "\n".join(call.prompt for call in chat.calls)
    assert "Spinne" not in seen
    assert "Wir haben über Annas Garten geredet." in seen  # read_diary and the diary facts
    assert REWRITES["thought"] in seen  # search_memory
    assert REWRITES["summary"] in seen and "Wir vertrauen uns mehr." in seen  # the prompt's memory block
    diary = await commands.run("anna", "/diary 3")
    assert diary is not None and "Spinne" not in " ".join(diary.bubbles)


async def test_forgetting_a_person_rewrites_what_was_written_about_them(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat, model = world
    scope = await engine.scope_for("anna")
    processing = audit.new_processing("test")
    miriam = await store.people.observe(scope, PersonDraft("Miriam", ("Miri",), "Schwester"), processing=processing)
    fact = (await store.notes.add(scope, "Miriam arbeitet im Krankenhaus.")).note
    await store.people.link_notes(scope, miriam.id, [fact.id], processing=processing)
    await store.diary.add(scope, "2026-11-24", "Heute war Anna fröhlich. Miriams Besuch hat ihr gutgetan. "
                                               "Abends gab es Pizza.")
    await store.thoughts.add(scope, "Miri ruft Anna fast jeden Tag an.")
    await store.thoughts.add(scope, "Anna mag Pizza.")
    model.enqueue("Das kann ich nicht.")  # unusable: the sentences naming her go in code

    done = await commands.press("anna", f"people:forgetyes:{miriam.id}")

    assert done.notice == ("Vergessen: Miriam und 1 Notiz.\nAuch umgeschrieben, damit nichts mehr davon darin "
                           "steht: 1 Tagebucheintrag, 1 Gedanke.")
    assert [e.text for e in await store.diary.all(scope)] == ["Heute war Anna fröhlich. Abends gab es Pizza."]
    assert [th.text for th in await store.thoughts.all(scope)] == ["Anna mag Pizza."]
    assert "Miri" not in await audit_texts(store, scope)


def test_mentions_needs_the_fact_not_one_shared_word() -> None:
    m = forgetting.matcher(forgetting.Forgotten((FACT,)), forgetting.common_words([DIARY, OTHER_DIARY, THOUGHT,
                                                                                   OTHER_THOUGHT]))
    assert forgetting.mentions("Sie erzählte, dass sie Angst vor Spinnen hat.", m)
    assert forgetting.mentions("Wie geht es ihr mit der Spinnenangst?", m)
    assert not forgetting.mentions("Anna hatte heute Angst vor der Prüfung.", m)
    assert not forgetting.mentions(OTHER_DIARY, m)
    assert forgetting.without_mentions("Erster Satz.\nAnna hat Angst vor Spinnen!\n\nDritter Satz.", m) == \
        "Erster Satz.\n\nDritter Satz."
    person = forgetting.matcher(forgetting.Forgotten(names=("Miriam", "Miri")))
    assert forgetting.mentions("Miriams Geburtstag war schön.", person)
    assert not forgetting.mentions("Miriamne kam vorbei.", person)


def test_a_correction_keeps_what_is_true_instead() -> None:
    m = forgetting.matcher(forgetting.Forgotten(("Anna wohnt in Berlin",), instead=("Anna wohnt in Hamburg",)))
    assert forgetting.mentions("Sie erzählte von ihrer Wohnung in Berlin.", m)
    assert not forgetting.mentions("Anna wohnt in Hamburg und fährt gern Rad.", m)


async def test_a_note_called_wrong_under_why_leaves_its_copies_undoably(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat, model = world
    scope = await engine.scope_for("anna")
    note = (await store.notes.add(scope, FACT)).note
    entry = await store.diary.add(scope, "2026-11-24", DIARY)
    model.responder = background({f"diary:{entry.id}": DIARY_BY_MODEL})  # type: ignore[assignment]

    pressed = await commands.press("anna", f"why:wrong:{note.id}")

    assert pressed.text is not None and pressed.text.endswith("1 Tagebucheintrag.")
    assert [e.text for e in await store.diary.all(scope)] == [DIARY_BY_MODEL]
    await commands.run("anna", "/undo")
    assert [e.text for e in await store.diary.all(scope)] == [DIARY]
    assert [n.id for n in await store.notes.list(scope)] == [note.id]
