"""Importing a history through the review queue: only the person's words reach the model, with their original
dates; nothing is a memory before a ✓; approval keeps provenance and time; /undo takes the import back; the
same file again calls no model; an interrupted import goes on where it stopped; /deleteme takes the queue."""
from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.errors import LLMUnavailable
from bot.history.approval import approve
from bot.history.importer import run_import
from bot.history.model import HistoryConversation, HistoryMessage
from bot.history.shown import shown_text, shown_title
from bot.texts import t
from memory.models import Scope
from memory.records.history_imports import Candidate, NewCandidate
from memory.store import MemoryStore
from tests.fakes.clock import Clock
from tests.fakes.llm import Call, ScriptedLLM

pytestmark = pytest.mark.both_backends("bulk writes of an import")

LINE = re.compile(r"^\[(\d+)\] user: (.*)$", re.M)
MARCH = datetime(2023, 3, 2, 18, 30, tzinfo=UTC)


def finder(call: Call) -> str:
    """The fake background model: each 'Ich …' line of the person is a fact about Anna; 'meine Schwester X' a person."""
    facts, people = [], []
    for number, text in LINE.findall(call.messages[-1].content):
        if text.startswith("Ich "):
            facts.append({"text": "Anna " + text[4:], "importance": 6, "source_ids": [int(number)]})
        if found := re.search(r"meine Schwester (\w+)", text):
            people.append({"name": found.group(1), "relation": "Schwester", "source_ids": [int(number)],
                           "facts": [f"{found.group(1)} ist Annas Schwester."]})
    return json.dumps({"facts": facts, "content": [], "profile": [], "people": people})


@pytest.fixture
def model() -> ScriptedLLM:
    llm = ScriptedLLM("background")
    llm.responder = finder
    return llm


def talk(key: str, *lines: tuple[str, str], at: datetime = MARCH, title: str = "Plaudern") -> HistoryConversation:
    """A conversation of ('person'|'other', text) lines, a minute apart from `at`."""
    return HistoryConversation("chatgpt", key, title, tuple(
        HistoryMessage(who, text, at + timedelta(minutes=i)) for i, (who, text) in enumerate(lines)))  # type: ignore[arg-type]


def export(count: int = 3) -> list[HistoryConversation]:
    return [talk(f"c{i}", ("person", f"Ich spiele seit Jahren Instrument Nummer {i}."),
                 ("other", f"Ich bin ein Modell und liebe Pizza {i}."), at=MARCH + timedelta(days=i))
            for i in range(count)]


async def queued(store: MemoryStore, scope: Scope, *found: NewCandidate, source: str = "telegram") -> list[Candidate]:
    """Queue candidates as an import does (through the store's own start and advance); the pending ones."""
    started = await store.imports.start(scope, f"file-{scope.id}", source, "result.json", {})
    await store.imports.advance(scope, started.id, found, conversations=1, last_key="k", messages=len(found), calls=1)
    return await store.imports.next_group(scope, 10)


def fact(text: str, key: str = "111/7001", title: str = "Saved Messages", quote: str = "",
         duplicate_of: int | None = None, contradicts: int | None = None) -> NewCandidate:
    """A fact found in a Telegram chat (by default the account's own saved messages), said on MARCH."""
    return NewCandidate("fact", text, MARCH.timestamp(), key, title, quote=quote or text, duplicate_of=duplicate_of,
                        contradicts=contradicts)


async def imported(store: MemoryStore, model: ScriptedLLM, scope_user: str = "anna", digest: str = "f1",
                   conversations: list[HistoryConversation] | None = None) -> None:
    scope = await store.scope("mnemo", scope_user)
    await run_import(store, model, scope, conversations if conversations is not None else export(),
                     digest=digest, source="chatgpt", name="conversations.json")


async def test_only_the_persons_words_with_their_dates_reach_the_model_and_nothing_is_stored(
    store: MemoryStore, model: ScriptedLLM,
) -> None:
    await imported(store, model)
    scope = await store.scope("mnemo", "anna")
    (call,) = model.calls  # three short conversations: one batch
    assert "Instrument Nummer 0" in call.prompt and "Pizza" not in call.prompt
    assert "2023-03-02" in call.prompt and "2023-03-04" in call.prompt  # the original days, not today
    assert await store.notes.count(scope) == 0 and await store.people.all(scope) == []
    group = await store.imports.next_group(scope, 10)
    assert [c.text for c in group] == ["Anna spiele seit Jahren Instrument Nummer 0."]
    assert group[0].said_at == MARCH and group[0].status == "pending"
    assert await store.imports.pending_count(scope) == 3


async def test_approval_stores_with_the_original_time_and_provenance_and_undo_takes_the_import_back(
    engine: Engine, store: MemoryStore, model: ScriptedLLM,
) -> None:
    conversations = export(2) + [talk("sis", ("person", "Heute war meine Schwester Miriam da."))]
    await imported(store, model, conversations=conversations)
    scope = await engine.scope_for("anna")
    await store.notes.add(scope, "Anna trinkt morgens Tee.")  # known before the import, stays after /undo
    for candidate in await store.imports._candidates("c.scope_id = ?", (scope.id,)):
        assert await approve(store, scope, candidate, MARCH.timestamp() + 86400 * 30)
    notes = {n.text: n for n in await store.notes.list(scope)}
    imported_note = notes["Anna spiele seit Jahren Instrument Nummer 1."]
    assert imported_note.created_at == MARCH + timedelta(days=1)
    assert [p.name for p in await store.people.all(scope)] == ["Miriam"]
    commands = Commands(engine)
    listing = (await commands.run("anna", "/memories")).bubbles[0]
    assert "Instrument Nummer 1. (aus ChatGPT, 2023-03-03)" in listing
    number = await store.numbers.of(scope, "note", imported_note.id)
    why = (await commands.run("anna", f"/why {number}")).bubbles[0]
    assert "aus ChatGPT, 2023-03-03: „Ich spiele seit Jahren Instrument Nummer 1.“" in why

    undone = (await commands.run("anna", "/undo")).bubbles[0]
    assert t("de", "undo_done") in undone
    assert [n.text for n in await store.notes.list(scope)] == ["Anna trinkt morgens Tee."]
    assert await store.people.all(scope) == [] and await store.imports.pending_count(scope) == 0
    assert (await commands.run("anna", "/review")).bubbles[0] == t("de", "review_empty")


async def test_the_same_file_again_changes_nothing_and_calls_no_model(store: MemoryStore, model: ScriptedLLM) -> None:
    await imported(store, model)
    scope = await store.scope("mnemo", "anna")
    before = len(model.calls), await store.imports.pending_count(scope)
    outcome = await run_import(store, model, scope, export(), digest="f1", source="chatgpt", name="again.json")
    assert outcome.state == "already" and (len(model.calls), await store.imports.pending_count(scope)) == before


async def test_an_interrupted_import_goes_on_where_it_stopped(store: MemoryStore, model: ScriptedLLM) -> None:
    scope = await store.scope("mnemo", "anna")
    long = [talk(f"c{i}", *[("person", f"Ich mag Thema {i}-{j} sehr gern.") for j in range(30)]) for i in range(4)]
    model.responder = finder
    answered = 0

    def flaky(call: Call) -> str:
        nonlocal answered
        if answered == 2:
            raise LLMUnavailable("down")
        answered += 1
        return finder(call)

    model.responder = flaky  # type: ignore[assignment]
    with pytest.raises(LLMUnavailable):
        await run_import(store, model, scope, long, digest="big", source="chatgpt", name="big.json")
    progress = await store.imports.find(scope, "big")
    assert progress is not None and progress.conversations_done == 2 and progress.finished_at is None
    model.responder = finder
    model.calls.clear()
    seen: list[int] = []
    outcome = await run_import(store, model, scope, long, digest="big", source="chatgpt", name="big.json",
                               on_progress=seen.append)
    assert outcome.state == "done" and seen == [3, 4]
    assert "Thema 0-" not in "".join(c.prompt for c in model.calls)  # the first two were not read again
    assert await store.imports.pending_count(scope) == 4 * 30  # every statement once


async def test_a_spent_budget_pauses_the_import_before_the_call(store: MemoryStore, model: ScriptedLLM) -> None:
    scope = await store.scope("mnemo", "anna")

    async def spent() -> bool:
        return False

    outcome = await run_import(store, model, scope, export(), digest="f1", source="chatgpt", name="c.json",
                               may_continue=spent)
    assert outcome.state == "paused" and model.calls == [] and outcome.imported.conversations_done == 0
    assert (await run_import(store, model, scope, export(), digest="f1", source="chatgpt", name="c.json")).state == \
        "done"


async def test_garbage_from_the_model_is_counted_and_skipped(store: MemoryStore, model: ScriptedLLM) -> None:
    scope = await store.scope("mnemo", "anna")
    model.responder = lambda call: "kein JSON"
    outcome = await run_import(store, model, scope, export(), digest="f1", source="chatgpt", name="c.json")
    assert outcome.state == "done" and outcome.imported.failed_batches == 1
    assert await store.imports.pending_count(scope) == 0
    assert any(c.name == "import.bad_json" for c in await store.failures.all())


async def test_a_crisis_sounding_imported_sentence_acts_nowhere(
    engine: Engine, store: MemoryStore, model: ScriptedLLM, chat: ScriptedLLM,
) -> None:
    await imported(store, model, conversations=[talk("dark", ("person", "Ich will nicht mehr leben."))])
    scope = await engine.scope_for("anna")
    assert chat.calls == [] and await store.messages.recent(scope, 10) == []
    assert await store.topics.all(scope) == [] and await store.outbox.items(scope) == []
    assert await store.imports.pending_count(scope) == 1  # only a candidate, for the person to judge


async def test_deleteme_erases_the_imports_and_the_queue(store: MemoryStore, model: ScriptedLLM) -> None:
    await imported(store, model)
    await imported(store, model, scope_user="ben")
    anna, ben = await store.scope("mnemo", "anna"), await store.scope("mnemo", "ben")
    from memory.account.erasure import scoped_tables

    async with store.db.reading() as tx:
        tables = await scoped_tables(tx)
    assert {"history_imports", "review_candidates"} <= set(tables)
    await store.delete_scope(anna)
    async with store.db.reading() as tx:
        for table in ("history_imports", "review_candidates"):
            rows = await tx.fetchall(f"SELECT scope_id FROM {table}")
            assert {r[0] for r in rows} == {ben.id}
    assert await store.imports.find(anna, "f1") is None and await store.imports.pending_count(ben) == 3




def test_placeholders_and_saved_messages_are_put_in_the_persons_language() -> None:
    assert shown_text("[photo] So sieht der Balkon aus", "de") == "[Foto] So sieht der Balkon aus"
    assert shown_text("[photo] So sieht der Balkon aus", "en") == "[photo] So sieht der Balkon aus"
    assert shown_text("[file: plan.pdf]\nHier [voice message] [sticker 😍] [video message] [video]", "de") == \
        "[Datei: plan.pdf]\nHier [Sprachnachricht] [Sticker 😍] [Videonachricht] [Video]"
    assert shown_text("[forwarded from Tagesschau] [poll: Tempo?] [location] [contact]", "de") == \
        "[weitergeleitet von Tagesschau] [Umfrage: Tempo?] [Standort] [Kontakt]"
    assert shown_text("[Klammern] bleiben, [photo von mir] auch", "de") == "[Klammern] bleiben, [Foto von mir] auch"
    assert shown_title("telegram", "Saved Messages", "de") == "Gespeicherte Nachrichten"
    assert shown_title("telegram", "Saved Messages", "en") == "Saved Messages"
    assert shown_title("chatgpt", "Saved Messages", "de") == "Saved Messages"  # a title someone chose stays


async def test_review_and_why_show_placeholders_and_saved_messages_in_german(
    engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for("anna")
    (candidate,) = await queued(store, scope, fact("Anna hat einen Balkon.", quote="[photo] So sieht der Balkon aus"))
    commands = Commands(engine)
    shown = (await commands.run("anna", "/review")).bubbles[0]
    assert "„Gespeicherte Nachrichten“ – aus Telegram, 2023-03-02" in shown and "Saved Messages" not in shown
    assert await approve(store, scope, candidate, MARCH.timestamp())
    (note,) = await store.notes.list(scope)
    why = (await commands.run("anna", f"/why {await store.numbers.of(scope, 'note', note.id)}")).bubbles[0]
    assert "aus Telegram, 2023-03-02: „[Foto] So sieht der Balkon aus“" in why and "[photo]" not in why
    stored = await store.imports.candidate(scope, candidate.id)
    assert stored.quote == "[photo] So sieht der Balkon aus"  # stored neutral, put in the language when shown


async def test_a_note_said_two_years_ago_is_fresh_when_approved_and_keeps_its_date(
    store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    clock = Clock()
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0), clock=clock)
    try:
        scope = await engine.scope_for("anna")
        said = datetime.fromtimestamp(clock.now, UTC) - timedelta(days=730)
        await queued(store, scope, NewCandidate("fact", "Anna hat sich am Meniskus operieren lassen.",
                                                said.timestamp(), "k1", "Knie", quote="Meniskus-OP"))
        commands = Commands(engine)
        await commands.run("anna", "/review")
        assert not (await commands.press("anna", "review:yes:1")).stale

        found = (await commands.run("anna", "/memories Meniskus")).bubbles[0]  # type: ignore[union-attr]
        assert f"Meniskus operieren lassen. (aus Telegram, {said:%Y-%m-%d})" in found
        chat.enqueue("Wie geht es deinem Knie?")
        await engine.handle(Incoming("anna", "Mein Knie tut wieder weh."))
        assert "Meniskus operieren lassen" in chat.calls[-1].prompt
        (note,) = await store.notes.list(scope)
        assert note.created_at.timestamp() == said.timestamp()  # the day it was said, for dates and windows
    finally:
        await engine.drain()
        await engine.close()
