"""The terminal shows choices as numbered lines and takes the number as the next input, like a button press."""
from __future__ import annotations

import io

from bot.channels.console import CONSOLE_USER, ConsoleChannel, number_picked
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.exchange import Button
from bot.llm.port import ToolCall
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM


async def console(engine: Engine, *lines: str) -> str:
    """Type the lines into the terminal channel; everything it printed."""
    out = io.StringIO()
    await ConsoleChannel(engine, stdin=io.StringIO("".join(f"{line}\n" for line in lines)), stdout=out,
                         commands=Commands(engine)).run()
    return out.getvalue()


async def test_a_proposed_rule_is_confirmed_by_typing_its_number(
    engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kürzer."})])
    chat.enqueue("Gern.")
    out = await console(engine, "Fass dich bitte kürzer.", "1")
    assert f"{t('de', 'choose_number')}\n  1) Ja\n  2) Nein\n" in out
    assert f"Mnemo: {t('de', 'rule_saved', rule='Antworte kürzer.')}" in out
    scope = await engine.scope_for(CONSOLE_USER)
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Antworte kürzer."]
    assert len(chat.calls) == 2  # the proposal (a tool round and the answer); the number never reached the model
    assert await store.choices.latest(scope, "console") is None  # answered: closed


async def test_forget_and_deleteme_are_confirmed_by_number(engine: Engine, store: MemoryStore) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    note = (await store.notes.add(scope, "Anna mag Parks.")).note
    await store.notes.add(scope, "Anna hat einen Hund.")
    out = await console(engine, f"/forget {note.id}", "1")
    assert f"  1) {t('de', 'forget')}\n  2) {t('de', 'cancel')}" in out
    assert t("de", "forget_done", text="Anna mag Parks.") in out and await store.notes.count(scope) == 1

    out = await console(engine, "/deleteme", "2")  # cancel
    assert t("de", "cancelled") in out and await store.notes.count(scope) == 1
    out = await console(engine, "/deleteme", "1")
    assert t("de", "deleteme_done") in out and await store.notes.count(scope) == 0


async def test_a_number_not_offered_gets_one_sentence_and_the_choice_stays_open(
    engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    note = (await store.notes.add(scope, "Anna mag Parks.")).note
    out = await console(engine, f"/forget {note.id}", "7", "1")
    assert t("de", "choice_out_of_range", last=2) in out
    assert await store.notes.count(scope) == 0 and chat.calls == []


async def test_other_input_moves_on_and_a_later_number_is_a_message(
    engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    note = (await store.notes.add(scope, "Anna mag Parks.")).note
    chat.responder = lambda call: "Verstehe."
    await console(engine, f"/forget {note.id}", "Ach, lass mal.", "1")
    assert await store.notes.count(scope) == 1  # the "1" went to the model, after the choice was dropped
    assert [c.messages[-1].content.splitlines()[-1] for c in chat.calls][-1].endswith("1")


async def test_a_new_page_comes_with_its_own_numbers(engine: Engine, store: MemoryStore) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    for i in range(12):
        await store.notes.add(scope, f"Notiz Nummer {i} über Thema{i}", dedupe=False)
    out = await console(engine, "/memories", "1", "1")
    assert t("de", "memories_head", first=11, last=12, total=12) in out
    assert f"  1) {t('de', 'back')}" in out
    assert out.count(t("de", "memories_head", first=1, last=10, total=12)) == 2  # forward, then back


async def test_a_pushed_message_with_buttons_is_answered_by_number(engine: Engine, store: MemoryStore) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    note = (await store.notes.add(scope, "Anna mag Parks.")).note
    out = io.StringIO()
    channel = ConsoleChannel(engine, stdin=io.StringIO("1\n"), stdout=out, commands=Commands(engine))
    await channel.send(CONSOLE_USER, "Soll ich das vergessen?", [[Button("Vergessen", f"forget:{note.id}")]])
    await channel.run()
    assert "  1) Vergessen" in out.getvalue() and await store.notes.count(scope) == 0


def test_number_picked_reads_a_bare_number_only() -> None:
    assert number_picked("2") == 2 and number_picked(" 2. ") == 2 and number_picked("2)") == 2
    assert number_picked("2 Kinder") is None and number_picked("٢") is None and number_picked("") is None
