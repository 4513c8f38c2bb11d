"""/review in the channels: Telegram inline buttons (the fake Bot API), numbered lines in the terminal; in a group
only admins decide; a stale or someone else's candidate gets a short answer and changes nothing."""
from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from bot.channels.console import CONSOLE_USER, ConsoleChannel
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.history.importer import run_import
from bot.texts import t
from memory.models import Scope
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_history_import import export, finder, talk
from tests.test_telegram_choices import (
    ANNA,
    EVE,
    GROUP,
    channel,  # noqa: F401 (the fixture: the Telegram channel on the fake Bot API)
    pressed,
    said,
    shows_buttons,
)

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


async def queue(store: MemoryStore, scope: Scope, count: int = 3) -> None:
    """Import `count` conversations of one statement each into the scope's review queue."""
    model = ScriptedLLM("background")
    model.responder = finder
    await run_import(store, model, scope, export(count), digest=f"file-{scope.id}", source="chatgpt", name="c.json")


@pytest.mark.usefixtures("channel")
async def test_review_on_telegram_keeps_and_drops_by_button(
    tg: FakeTelegram, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for(f"tg:{ANNA}")
    await queue(store, scope, 2)
    (shown,) = await said(tg, ANNA, "/review")
    assert "Instrument Nummer 0" in shown["text"] and "(aus ChatGPT, 2023-03-02)" not in shown["text"]
    assert shows_buttons(tg, shown["message_id"]) == ["review:yes:1", "review:no:1", "review:allyes:1:1",
                                                      "review:allno:1:1"]
    notice = await pressed(tg, ANNA, shown["message_id"], "review:yes:1")
    assert notice == t("de", "review_kept", text="Anna spiele seit Jahren Instrument Nummer 0.")
    assert [n.text for n in await store.notes.list(scope)] == ["Anna spiele seit Jahren Instrument Nummer 0."]
    assert "Instrument Nummer 1" in tg.messages[shown["message_id"]]["text"]  # the next group, in the same message
    assert await pressed(tg, ANNA, shown["message_id"], "review:no:2") == t(
        "de", "review_dropped", text="Anna spiele seit Jahren Instrument Nummer 1.")
    assert await store.notes.count(scope) == 1 and await store.imports.pending_count(scope) == 0


@pytest.mark.usefixtures("channel")
async def test_in_a_group_a_member_cannot_decide_and_an_admin_can(
    tg: FakeTelegram, engine: Engine, store: MemoryStore,
) -> None:
    group = await engine.scope_for(f"tg:group:{GROUP}")
    await queue(store, group, 1)
    options: dict[str, Any] = {"chat_id": GROUP, "chat_type": "supergroup"}
    (shown,) = await said(tg, ANNA, "/review@mnemo_bot", **options)
    assert await pressed(tg, EVE, shown["message_id"], "review:allyes:1:1") == t("de", "choice_not_yours")
    assert await store.notes.count(group) == 0 and await store.imports.pending_count(group) == 1
    assert await pressed(tg, ANNA, shown["message_id"], "review:allyes:1:1") == t(
        "de", "review_kept", text="Anna spiele seit Jahren Instrument Nummer 0.")
    assert await store.notes.count(group) == 1


async def test_review_in_the_terminal_by_number(engine: Engine, store: MemoryStore) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    await queue(store, scope, 2)
    out = io.StringIO()
    typed = "/review\n3\n/review\n2\n"  # 3) all ✓ of the first group; then 2) ✗ of the next
    await ConsoleChannel(engine, stdin=io.StringIO(typed), stdout=out, commands=Commands(engine)).run()
    text = out.getvalue()
    assert f"{t('de', 'choose_number')}\n  1) ✓ #1\n  2) ✗ #1\n  3) alle ✓\n  4) alle ✗" in text
    assert [n.text for n in await store.notes.list(scope)] == ["Anna spiele seit Jahren Instrument Nummer 0."]
    assert await store.imports.pending_count(scope) == 0


async def test_stale_forged_and_foreign_review_buttons_change_nothing(engine: Engine, store: MemoryStore) -> None:
    commands = Commands(engine)
    anna, ben = await engine.scope_for("anna"), await engine.scope_for("ben")
    await queue(store, anna, 1)
    await queue(store, ben, 1)
    assert (await commands.press("anna", "review:yes:1")).notice.startswith(t("de", "review_kept", text="")[:8])
    stale = await commands.press("anna", "review:yes:1")
    assert stale.notice == t("de", "button_stale") and stale.stale and await store.notes.count(anna) == 1
    for data in ("review:yes:99", "review:maybe:1", "review:yes", "review:allyes:1", "review:yes:-1"):
        assert (await commands.press("anna", data)).notice == t("de", "button_unknown")
    assert await store.notes.count(anna) == 1 and await store.imports.pending_count(ben) == 1
    assert await store.notes.count(ben) == 0


async def test_duplicates_are_marked_and_contradictions_shown_side_by_side(engine: Engine, store: MemoryStore) -> None:
    scope = await engine.scope_for("anna")
    await store.notes.add(scope, "Anna spiele seit Jahren Instrument Nummer 0.")
    await store.notes.add(scope, "Anna trinkt keinen Kaffee mehr.")
    model = ScriptedLLM("background")
    model.responder = finder
    await run_import(store, model, scope, export(1) + [talk("k", ("person", "Ich trinkt Kaffee jeden Morgen."))],
                     digest="d", source="chatgpt", name="c.json")
    shown = (await Commands(engine).run("anna", "/review")).bubbles[0]
    assert t("de", "review_duplicate", text="Anna spiele seit Jahren Instrument Nummer 0.") in shown
    await Commands(engine).press("anna", "review:no:1")
    shown = (await Commands(engine).run("anna", "/review")).bubbles[0]
    assert t("de", "review_contradicts", old="Anna trinkt keinen Kaffee mehr.",
             new="Anna trinkt Kaffee jeden Morgen.") in shown


async def test_one_conversations_suggestions_come_together_and_say_when_more_follow(
    engine: Engine, store: MemoryStore,
) -> None:
    scope, commands = await engine.scope_for("anna"), Commands(engine)
    model = ScriptedLLM("background")
    model.responder = finder  # facts, then people: one call's candidates of two conversations come mixed
    garden = talk("a", *[("person", f"Ich pflanze Beet Nummer {i}.") for i in range(4)],
                  ("person", "Heute kommt meine Schwester Mia vorbei."), title="Garten")
    await run_import(store, model, scope, [garden, talk("b", ("person", "Ich laufe gern."), title="Laufen")],
                     digest="d", source="chatgpt", name="c.json")
    assert len(model.calls) == 1
    pages = []
    while await store.imports.pending_count(scope):
        shown = (await commands.run("anna", "/review")).bubbles[0]
        pages.append(shown)
        numbers = [int(n) for n in re.findall(r"^#(\d+) ", shown, re.M)]
        await commands.press("anna", f"review:allno:{numbers[0]}:{numbers[-1]}")
    assert ["Garten" in p for p in pages] == [True, True, False] and "Laufen" in pages[2]
    assert t("de", "review_group_more", shown=4, total="5 Vorschläge") in pages[0]
    assert "Mia (Schwester)" in pages[1] and "aus diesem Gespräch" not in pages[1]


async def test_a_profile_suggestion_shows_its_key_in_the_persons_language(engine: Engine, store: MemoryStore) -> None:
    scope, commands = await engine.scope_for("anna"), Commands(engine)
    await store.profile.set(scope, "facts", "work", "Bäckerin in Halle")
    model = ScriptedLLM("background")
    model.responder = lambda call: json.dumps({"facts": [], "content": [], "people": [], "profile": [
        {"category": "facts", "key": "work", "value": "Tischler in Leipzig", "source_ids": [1]}]})
    await run_import(store, model, scope, [talk("w", ("person", "Ich bin Tischler in Leipzig."))], digest="p",
                     source="chatgpt", name="c.json")
    shown = (await commands.run("anna", "/review")).bubbles[0]
    assert "#1 [Profil] Arbeit: Tischler in Leipzig" in shown and "work" not in shown
    assert t("de", "review_contradicts", old="Arbeit: Bäckerin in Halle", new="Arbeit: Tischler in Leipzig") in shown
    assert (await commands.press("anna", "review:yes:1")).notice == t("de", "review_kept",
                                                                      text="Arbeit: Tischler in Leipzig")
