"""/memories WORD and /forget WORD against a real store with the bundled embedder: only notes about the word, in
the commands, on Telegram (the fake Bot API) and in the terminal; a word nothing is about finds nothing."""
from __future__ import annotations

import io
import time
from collections.abc import Sequence

import numpy as np
import pytest

from bot.channels.console import CONSOLE_USER, ConsoleChannel
from bot.channels.telegram.channel import TelegramChannel
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.texts import t
from memory.models import Scope
from memory.search.embedder import Embedder, Purpose, make_embedder
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram import (
    USER,
    buttons,
    channel,  # noqa: F401  (the fixture)
    exchange,
    press,
)

NOTES = (
    "Christian hat einen Hund namens Bruno.",
    "Meine Schwester Miriam wohnt in Hamburg.",
    "Oma Gertrud wird im März 90 Jahre alt.",
    "Meine Großmutter hat mir das Stricken beigebracht.",
    "Mein Auto ist kaputt, der Auspuff klappert.",
    "Die Autowerkstatt in der Lindenstraße hat am Montag einen Termin frei.",
    "Die Steuererklärung für 2023 muss bis Ende Juli beim Finanzamt sein.",
    "Der Autor meines Lieblingsromans lebt in Lissabon.",
    "My dog Max loves chasing squirrels.",
)
UNRELATED_TO_AUTO = ("Schwester", "Oma", "Großmutter", "Hund", "Autor", "Steuer")


class Remembering:
    """The bundled model, each text embedded once for the whole module (every store embeds the model's centre)."""

    def __init__(self, model: Embedder) -> None:
        self.model, self.name, self.dim = model, model.name, model.dim
        self.known: dict[tuple[str, str], np.ndarray] = {}

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """The model's vectors, from memory where the text was embedded before."""
        missing = list(dict.fromkeys(t for t in texts if (t, purpose) not in self.known))
        if missing:
            self.known.update({(t, purpose): v for t, v in zip(missing, self.model.embed(missing, purpose))})
        return np.stack([self.known[(t, purpose)] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """The bundled model: the similarity a keyword search allows is calibrated on it."""
    return Remembering(make_embedder())


async def seeded(engine: Engine, user: str) -> tuple[Scope, dict[str, int]]:
    """The notes of the report, stored for the user; each note's number by its first words."""
    store = engine.store
    scope = await engine.scope_for(user)
    for text in NOTES:
        await store.notes.add(scope, text)
    notes = await store.notes.list(scope, limit=100)
    numbers = await store.numbers.of_many(scope, "note", [n.id for n in notes])
    return scope, {n.text: numbers[n.id] for n in notes}


def offered(reply_text: str) -> list[str]:
    """The notes a listing shows (its lines after the heading), without their numbers."""
    return [line.split(" ", 1)[1] for line in reply_text.splitlines()[1:]]


async def test_memories_auto_lists_the_car_notes_and_no_sister_or_grandmother(engine: Engine) -> None:
    await seeded(engine, "anna")
    found = await Commands(engine).run("anna", "/memories Auto")
    assert found is not None
    assert set(offered(found.bubbles[0])) == {NOTES[4], NOTES[5]}
    assert not any(word in found.bubbles[0] for word in UNRELATED_TO_AUTO)


async def test_forget_steuererklaerung_offers_only_that_note_and_a_press_deletes_it(engine: Engine,
                                                                                    store: MemoryStore) -> None:
    scope, numbers = await seeded(engine, "anna")
    commands = Commands(engine)
    pick = await commands.run("anna", "/forget Steuererklärung")
    assert pick is not None and offered(pick.bubbles[0]) == [NOTES[6]]
    assert "Hund" not in pick.bubbles[0]
    presses = [b.data for row in pick.buttons for b in row if b.data != "cancel"]
    assert presses == [f"forget:{numbers[NOTES[6]]}"]
    await commands.press("anna", presses[0])
    assert NOTES[6] not in [n.text for n in await store.notes.list(scope, limit=100)]
    assert await store.notes.count(scope) == len(NOTES) - 1


async def test_stems_and_compounds_through_the_commands(engine: Engine) -> None:
    await seeded(engine, "anna")
    commands = Commands(engine)
    for query, expected in (("Hunde", {NOTES[0]}), ("dogs", {NOTES[8]}), ("Werkstatt", {NOTES[5]}),
                            ("Steuer", {NOTES[6]}), ("Lindenstrasse", {NOTES[5]})):
        found = await commands.run("anna", f"/memories {query}")
        assert found is not None and set(offered(found.bubbles[0])) == expected, query
    pick = await commands.run("anna", "/forget mein Auto")
    assert pick is not None and set(offered(pick.bubbles[0])) == {NOTES[4], NOTES[5]}


async def test_a_gibberish_word_finds_nothing_in_german_and_english(store: MemoryStore) -> None:
    for lang, word in (("de", "xqzt"), ("en", "zorblat")):
        engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(language=lang))
        await seeded(engine, f"user-{lang}")
        commands = Commands(engine)
        for command in ("memories", "forget", "why"):
            reply = await commands.run(f"user-{lang}", f"/{command} {word}")
            nothing = t(lang, "memories_none_found") if command != "why" else None
            assert reply is not None and not reply.buttons, command
            if nothing:
                assert reply.bubbles == (nothing,), command
        await engine.close()
    assert t("en", "memories_none_found") == "I found nothing about that."


async def test_on_telegram_forget_offers_only_the_note_about_the_word(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,  # noqa: F811
) -> None:
    scope, numbers = await seeded(engine, f"tg:{USER}")
    (pick,) = await exchange(tg, "/forget Steuererklärung")
    assert "Hund" not in pick["text"] and NOTES[6] in pick["text"]
    forget = [data for row in buttons(pick) for _, data in row if data != "cancel"]
    assert forget == [f"forget:{numbers[NOTES[6]]}"]
    await press(tg, pick["message_id"], forget[0], edits=1)
    assert await store.notes.count(scope) == len(NOTES) - 1
    (nothing,) = await exchange(tg, "/memories xqzt")
    assert nothing["text"] == t("de", "memories_none_found")


async def test_in_the_terminal_memories_auto_lists_no_sister(engine: Engine) -> None:
    await seeded(engine, CONSOLE_USER)
    out = io.StringIO()
    await ConsoleChannel(engine, stdin=io.StringIO("/memories Auto\n/forget Blorfung\n"), stdout=out,
                         commands=Commands(engine)).run()
    printed = out.getvalue()
    assert NOTES[4] in printed and NOTES[5] in printed
    assert "Schwester" not in printed and "Großmutter" not in printed and "Oma" not in printed
    assert t("de", "memories_none_found") in printed


async def test_forget_offers_a_note_that_faded_from_lack_of_use(engine: Engine, store: MemoryStore) -> None:
    """A note the chat no longer brings up is still one the person may want gone: /forget finds it."""
    scope = await engine.scope_for("anna")
    old = (await store.notes.add(scope, "Anna mochte früher Origami.", importance=1,
                                 created_at=time.time() - 400 * 86400)).note
    assert await store.search(scope, "Origami") == []  # faded from the chat's search
    pick = await Commands(engine).run("anna", "/forget Origami")
    number = await store.numbers.of_many(scope, "note", [old.id])
    assert pick is not None and [b.data for row in pick.buttons for b in row if b.data != "cancel"] == [
        f"forget:{number[old.id]}"]
