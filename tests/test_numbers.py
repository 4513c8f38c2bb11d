"""Each user's own numbers: #1, #2, … per user for notes, rules, reminders and people, never the shared ids."""
from __future__ import annotations

import asyncio
import re
import time

import pytest

from bot.commands.people_views import find
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, Incoming
from memory.errors import NotFound
from memory.records.kinship import PersonDraft
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.both_backends("each person's numbering, a row lock on PostgreSQL")

UNKNOWN = "Diese Auswahl gibt es nicht (mehr)."


@pytest.fixture
def setup(engine: Engine, chat: ScriptedLLM) -> tuple[Engine, Commands, ScriptedLLM]:
    return engine, Commands(engine), chat


def numbers_in(text: str) -> list[int]:
    """The #numbers a text shows, in order."""
    return [int(n) for n in re.findall(r"#(\d+)", text)]


async def shown(commands: Commands, user: str, command: str) -> str:
    reply = await commands.run(user, command)
    assert reply is not None
    return "\n".join(reply.bubbles) + "\n" + " ".join(f"{b.label}|{b.data}" for row in reply.buttons for b in row)


async def interleave(engine: Engine, store: MemoryStore) -> None:
    """Anna and Ben each make notes, rules, reminders and people, one after the other (shared ids interleave)."""
    for i in range(3):
        for user in ("anna", "ben"):
            scope = await engine.scope_for(user)
            await store.notes.add(scope, f"{user} Notiz {i} über Gartenpflanze{i}")
            rule = await store.rules.propose(scope, f"{user} Regel {i}")
            await store.rules.decide(scope, rule.id, "active", reason="test")
            await store.reminders.add(scope, f"{user} Termin {i}", time.time() + 3600 * (i + 1))
            await store.people.observe(scope, PersonDraft(name=f"{user.title()}freund{i}"), processing=f"p-{user}-{i}")


async def test_two_users_see_their_own_numbers_from_one(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat = setup
    await interleave(engine, store)
    for user in ("anna", "ben"):
        memories = await shown(commands, user, "/memories")
        assert sorted(numbers_in(memories.splitlines()[1])) == [3] and numbers_in(memories)[:3] == [3, 2, 1]
        found = (await shown(commands, user, "/memories Gartenpflanze1")).splitlines()
        assert f"#2 {user} Notiz 1 über Gartenpflanze1" in found
        rules = await shown(commands, user, "/rules")
        assert rules.splitlines()[1:4] == [f"#{n} {user} Regel {n - 1} (aktiv)" for n in (1, 2, 3)]
        assert "rule:off:3" in rules and "rule:del:1" in rules
        reminders = await shown(commands, user, "/reminders")
        assert numbers_in(reminders.split("\n")[1]) == [1] and "rem:cancel:3" in reminders
        people = await shown(commands, user, "/people")
        assert [line.split()[0] for line in people.splitlines()[1:4]] == ["#1", "#2", "#3"]
        assert "people:show:3" in people
    # Typed numbers and buttons mean the caller's own items.
    forget = await commands.run("ben", "/forget 2")
    assert forget is not None and "#2 ben Notiz 1" in forget.bubbles[0]
    assert forget.buttons[0][0].data == "forget:2"
    pressed = await commands.press("ben", "forget:2")
    assert pressed.text == "Vergessen: ben Notiz 1 über Gartenpflanze1"
    anna, ben = await engine.scope_for("anna"), await engine.scope_for("ben")
    assert await store.notes.count(anna) == 3 and await store.notes.count(ben) == 2
    assert (await commands.press("anna", "rule:off:3")).notice == "Regel #3 ist aus."
    assert [r.text for r in await store.rules.list(anna, "disabled")] == ["anna Regel 2"]
    assert (await find(store, ben, "#3")).name == "Benfreund2"


async def test_another_users_number_finds_nothing(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat = setup
    anna, ben = await engine.scope_for("anna"), await engine.scope_for("ben")
    for i in range(4):
        await store.notes.add(anna, f"Anna Notiz {i}")
        await store.rules.propose(anna, f"Anna Regel {i}")
        await store.reminders.add(anna, f"Anna Termin {i}", time.time() + 3600)
        await store.people.observe(anna, PersonDraft(name=f"Annafreundin{i}"), processing=f"p{i}")
    await store.notes.add(ben, "Ben Notiz")
    await shown(commands, "anna", "/memories")  # Anna's #1-#4 exist
    await shown(commands, "ben", "/memories")
    anna_before = await store.export(anna)
    for data in ("forget:4", "why:wrong:4", "rule:yes:4", "rule:del:3", "rem:cancel:4", "rem:snooze:1h:2",
                 "people:show:4", "people:forgetyes:2"):
        assert (await commands.press("ben", data)).notice == UNKNOWN, data
    for command in ("/forget 4", "/why 3", "/people 4", "/people forget 3"):
        reply = await commands.run("ben", command)
        assert reply is not None and "Anna" not in "".join(reply.bubbles), command
    assert await store.export(anna) == anna_before
    with pytest.raises(NotFound):
        await store.numbers.item(ben, "rule", 1)
    with pytest.raises(NotFound):  # an id of another scope gets no number here
        await store.numbers.of(ben, "note", (await store.notes.list(anna))[0].id)


async def test_a_number_is_never_given_twice_and_undo_brings_back_the_same(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat = setup
    scope = await engine.scope_for("anna")
    texts = ("Anna mag Tee", "Anna spielt Cello", "Anna wohnt in Köln")
    notes = [(await store.notes.add(scope, text)).note for text in texts]
    assert numbers_in(await shown(commands, "anna", "/memories"))[:3] == [3, 2, 1]
    await store.notes.delete(scope, notes[1].id, reason="correction")  # as a correction in the conversation does
    undone = await commands.run("anna", "/undo")
    assert undone is not None and undone.bubbles == ("Rückgängig gemacht:\n• Notiz #2 gelöscht: Anna spielt Cello",)
    assert "#2 Anna spielt Cello" in await shown(commands, "anna", "/memories")
    assert (await commands.press("anna", "forget:2")).text == "Vergessen: Anna spielt Cello"
    await store.notes.add(scope, "Anna fährt Rad")
    listed = await shown(commands, "anna", "/memories")
    assert "#4 Anna fährt Rad" in listed and "#2" not in listed
    assert (await commands.press("anna", "forget:2")).notice == UNKNOWN


async def test_numbers_go_on_after_deleteme_so_old_buttons_hit_nothing(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat = setup
    scope = await engine.scope_for("anna")
    await store.notes.add(scope, "Anna mag Tee")
    old = await commands.run("anna", "/forget Tee")
    assert old is not None and old.buttons[0][0].data == "forget:1"
    await commands.press("anna", "deleteme:yes")
    async with store.db.reading() as tx:
        assert await tx.fetchall("SELECT * FROM item_numbers WHERE scope_id = ?", (scope.id,)) == []
    await store.notes.add(scope, "Anna mag Kaffee")
    assert (await commands.press("anna", "forget:1")).notice == UNKNOWN
    assert [n.text for n in await store.notes.list(scope)] == ["Anna mag Kaffee"]
    assert "#2 Anna mag Kaffee" in await shown(commands, "anna", "/memories")


async def test_the_rule_question_and_why_use_the_users_numbers(setup, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = setup
    ben = await engine.scope_for("ben")
    for i in range(3):
        await store.rules.propose(ben, f"Ben Regel {i}")
        await store.rules.decide(ben, (await store.rules.pending(ben)).id, "rejected")  # type: ignore[union-attr]
        await store.notes.add(ben, f"Ben Notiz {i}")
    anna = await engine.scope_for("anna")
    await store.notes.add(anna, "Anna hat einen Hund namens Bello")
    chat.enqueue("[RULE: Keine Emojis verwenden.] Alles klar.")
    reply = await engine.handle(Incoming("anna", "Hör auf mit den Emojis"))
    assert reply is not None and [b.data for b in reply.buttons[0]] == ["rule:yes:1", "rule:no:1"]
    assert (await commands.press("anna", "rule:yes:1")).text == "📌 Gemerkt: Keine Emojis verwenden."
    why = await commands.run("anna", "/why Hund")
    assert why is not None and why.bubbles[0].splitlines()[1] == "#1 Anna hat einen Hund namens Bello"
    assert [b.data for b in why.buttons[0]] == ["why:wrong:1", "why:old:1", "forget:1"]
    assert (await commands.press("anna", "why:old:1")).text == (
        "Erledigt – das nehme ich nicht mehr an: Anna hat einen Hund namens Bello")


async def test_two_connections_numbering_one_scope_at_once_give_distinct_numbers(
        store: MemoryStore, second_store: MemoryStore) -> None:
    """A chat's worker and the scheduler's may number the same person's reminders at the same moment."""
    scope = await store.scope("mnemo", "tg:7")
    ids = [(await store.reminders.add(scope, f"Erinnerung {n}", time.time() + 3600 * (n + 1))).id for n in range(6)]
    firsts = await asyncio.gather(*(each.numbers.of(scope, "reminder", item)
                                    for each, item in zip((store, second_store) * 3, ids)))
    assert sorted(firsts) == [1, 2, 3, 4, 5, 6]
    assert [await second_store.numbers.of(scope, "reminder", item) for item in ids] == firsts
