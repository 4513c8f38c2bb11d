"""The saved notice: '💾 gemerkt: …' after an extraction run, and its button that takes back exactly that run."""
from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.saved_notices import NOTICE_FRESH, silent_because
from bot.llm.port import ToolCall
from memory.ledgers.outbox import ButtonRows
from memory.models import Message, Scope
from memory.store import MemoryStore
from scheduler.delivery import OutboxSender, verdict
from tests.fakes.llm import Call, ScriptedLLM
from tests.test_scheduler import BERLIN, DAY1, Clock, on_telegram
from tests.test_telegram_choices import pressed

pytestmark = pytest.mark.both_backends("extraction runs and their undo")

# What the background model learns from a user message with this text: facts, and profile entries as (key, value).
LEARNED: dict[str, dict[str, Any]] = {
    "Ich trinke am liebsten Tee.": {"facts": ["Anna trinkt am liebsten Tee."]},
    "Meine Schwester Miriam ist Ärztin.": {"facts": ["Anna hat eine Schwester, Miriam."],
                                           "profile": [("work", "Lehrerin")]},
    "Ich habe viel vor.": {"facts": [f"Anna plant Projekt {n}." for n in range(1, 6)]},
    "Ich will nicht mehr leben. Ich trinke am liebsten Tee.": {"facts": ["Anna trinkt am liebsten Tee."]},
}


def learning_model(call: Call) -> str:
    """The extraction of LEARNED, from every user message of the batch."""
    facts, profile = [], []
    for i, text in re.findall(r"^\[(\d+)\] user: (.*)$", call.messages[0].content, re.M):
        found = LEARNED.get(text, {})
        facts += [{"text": f, "source_ids": [int(i)]} for f in found.get("facts", [])]
        profile += [{"category": "facts", "key": k, "value": v, "source_ids": [int(i)]}
                    for k, v in found.get("profile", [])]
    return json.dumps({"facts": facts, "content": [], "profile": profile})


class Pushed:
    """The channel behind the outbox: records what it delivered, with the buttons."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, ButtonRows]] = []
        self.down = False  # the messenger does not accept messages (a send fails)

    async def deliver(self, scope: Scope, text: str, *, buttons: ButtonRows = ()) -> bool:
        if self.down:
            return False
        self.sent.append((scope.user_id, text, buttons))
        return True


@pytest.fixture
def clock() -> Clock:
    return Clock((DAY1 + timedelta(hours=10)).timestamp())


@pytest.fixture
async def world(store: MemoryStore, clock: Clock) -> AsyncIterator[tuple[Engine, Commands, Pushed]]:
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = lambda call: "Schön!"
    background.responder = learning_model  # type: ignore[assignment]
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN, relevance_floor=0.0), clock=clock)
    pushed = Pushed()
    engine.learning.notices.outbox = OutboxSender(store, pushed, clock, BERLIN)
    yield engine, Commands(engine), pushed
    await engine.drain()
    await engine.close()


async def say(engine: Engine, text: str, user: str = "anna") -> None:
    """A message and the learning after it."""
    await engine.handle(Incoming(user, text))
    await engine.drain()


async def notices_on(commands: Commands, user: str = "anna") -> None:
    reply = await commands.run(user, "/settings hinweise an")
    assert reply is not None and reply.bubbles[0].startswith("Gespeichert.")


async def note_texts(store: MemoryStore, scope: Scope) -> list[str]:
    return sorted(n.text for n in await store.notes.list(scope, limit=50))


async def test_one_notice_per_run_and_its_button_undoes_exactly_that_run(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    await notices_on(commands)
    await say(engine, "Ich trinke am liebsten Tee.")
    await say(engine, "Meine Schwester Miriam ist Ärztin.")
    scope = await engine.scope_for("anna")
    assert [(user, text) for user, text, _ in pushed.sent] == [
        ("anna", "💾 gemerkt: Anna trinkt am liebsten Tee."),
        ("anna", "💾 gemerkt: Anna hat eine Schwester, Miriam.; work: Lehrerin")]
    (label, data), = pushed.sent[0][2][0]
    assert label == "Rückgängig" and re.fullmatch(r"saved:undo:extract:[0-9a-f]{12}", data)
    assert [m.text for m in await store.messages.recent(scope, 10)
            if m.text.startswith("💾")] == []  # not logged as the companion's words

    first = await commands.press("anna", data)  # the older run, though a newer one stands
    assert first.notice == "Zurückgenommen."
    assert first.text == "↩️ zurückgenommen: Anna trinkt am liebsten Tee."
    assert await note_texts(store, scope) == ["Anna hat eine Schwester, Miriam."]  # the later run untouched
    assert [(e.key, e.value) for e in await store.profile.list(scope)] == [("work", "Lehrerin")]

    again = await commands.press("anna", data)
    assert again.notice == "Das ist schon erledigt." and again.stale
    assert await note_texts(store, scope) == ["Anna hat eine Schwester, Miriam."]
    undo = await commands.run("anna", "/undo")  # /undo now takes back the newest standing run, not the undone one
    assert undo is not None and "Anna hat eine Schwester, Miriam." in undo.bubbles[0]
    assert await note_texts(store, scope) == [] and await store.profile.list(scope) == []


async def test_a_pending_question_stays_open_beside_the_notice_and_a_typed_yes_after_it_leaves_it_to_its_buttons(  # type: ignore[no-untyped-def]
        world, store: MemoryStore) -> None:
    engine, commands, pushed = world
    await notices_on(commands)
    engine.chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kurz."})])  # type: ignore[attr-defined]
    engine.chat.enqueue("Verstanden.")  # type: ignore[attr-defined]
    reply = await engine.handle(Incoming("anna", "Ich trinke am liebsten Tee."))
    await engine.drain()
    assert reply is not None and "Soll ich mir das merken?" in reply.bubbles[-1]
    assert [text for _, text, _ in pushed.sent] == ["💾 gemerkt: Anna trinkt am liebsten Tee."]
    # a 'ja' after the notice may be about the notice: with something of the companion's between question and
    # answer only the question's buttons decide it (issue 52), and the notice stands
    await say(engine, "ja")
    scope = await engine.scope_for("anna")
    assert await store.rules.list(scope, "active") == [] and await engine.open_question(scope) is not None
    assert await note_texts(store, scope) == ["Anna trinkt am liebsten Tee."]


async def test_a_long_run_is_clipped_to_three_items(world) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    await notices_on(commands)
    await say(engine, "Ich habe viel vor.")
    assert [text for _, text, _ in pushed.sent] == [
        "💾 gemerkt: Anna plant Projekt 1.; Anna plant Projekt 2.; Anna plant Projekt 3.; +2"]


async def test_off_by_default_and_shown_in_settings(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    shown = await commands.run("anna", "/settings")
    assert shown is not None and "Gemerkt-Hinweise im Chat: aus" in shown.bubbles[0]
    await say(engine, "Ich trinke am liebsten Tee.")
    assert pushed.sent == []
    assert await note_texts(store, await engine.scope_for("anna")) == ["Anna trinkt am liebsten Tee."]

    bad = await commands.run("anna", "/settings notices vielleicht")
    assert bad is not None and bad.bubbles[0] == "Das verstehe ich nicht – erwartet: an oder aus"
    assert not (await store.preferences.get(await engine.scope_for("anna"))).notices
    on = await commands.run("anna", "/settings notices on")
    assert on is not None and "Gemerkt-Hinweise im Chat: an" in on.bubbles[0]
    off = await commands.run("anna", "/settings notices aus")
    assert off is not None and "Gemerkt-Hinweise im Chat: aus" in off.bubbles[0]


async def test_no_notice_in_a_crisis_nor_in_the_days_after(world, store: MemoryStore, clock: Clock) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    await notices_on(commands)
    await say(engine, "Ich will nicht mehr leben. Ich trinke am liebsten Tee.")
    scope = await engine.scope_for("anna")
    assert await note_texts(store, scope) == ["Anna trinkt am liebsten Tee."]  # learnt, but no notice
    assert pushed.sent == []
    clock.now += 2 * 86400  # two days later: still careful
    await say(engine, "Meine Schwester Miriam ist Ärztin.")
    assert pushed.sent == []
    clock.now += 2 * 86400  # four days after the crisis: notices again
    await say(engine, "Ich habe viel vor.")
    assert len(pushed.sent) == 1 and pushed.sent[0][1].startswith("💾 gemerkt: Anna plant Projekt 1.")


async def test_model_garbage_stores_nothing_and_sends_nothing(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    await notices_on(commands)
    engine.background.responder = lambda call: "Ich habe Tee gefunden!"  # type: ignore[attr-defined]
    await say(engine, "Ich trinke am liebsten Tee.")
    assert pushed.sent == []
    assert await note_texts(store, await engine.scope_for("anna")) == []
    assert await store.failures.get("extraction.bad_json") == 1


async def test_a_later_change_on_its_items_refuses_the_button(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    await notices_on(commands)
    await say(engine, "Ich trinke am liebsten Tee.")
    scope = await engine.scope_for("anna")
    note = (await store.notes.list(scope))[0]
    await store.notes.edit(scope, note.id, "Anna trinkt am liebsten grünen Tee.", processing="p-edit", reason="test")
    refused = await commands.press("anna", pushed.sent[0][2][0][0][1])
    assert refused.notice.startswith("Das kann ich allein nicht mehr zurücknehmen") and not refused.stale
    assert await note_texts(store, scope) == ["Anna trinkt am liebsten grünen Tee."]


async def test_after_deleteme_the_button_changes_nothing(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    await notices_on(commands)
    await say(engine, "Ich trinke am liebsten Tee.")
    assert (await commands.press("anna", "deleteme:yes")).notice.startswith("Erledigt.")
    late = await commands.press("anna", pushed.sent[0][2][0][0][1])
    assert late.notice == "Das ist schon erledigt." and late.stale
    scope = await engine.scope_for("anna")
    assert await note_texts(store, scope) == [] and await store.audit_log(scope) == []


async def test_forged_button_data_changes_nothing(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    await notices_on(commands)
    await say(engine, "Ich trinke am liebsten Tee.")
    data = pushed.sent[0][2][0][0][1]
    assert (await commands.press("mallory", data)).stale  # another scope has no such run
    for forged in ("saved:undo:forget:0123456789ab", "saved:undo", "saved:redo:" + data.split(":", 2)[2],
                   "saved:undo:extract:abc"):
        assert (await commands.press("anna", forged)).notice == "Diese Auswahl gibt es nicht (mehr)."
    assert await note_texts(store, await engine.scope_for("anna")) == ["Anna trinkt am liebsten Tee."]


async def test_groups_get_no_notices(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, pushed = world
    group = "tg:group:-100"
    refused = await commands.run(group, "/settings hinweise an")
    assert refused is not None and refused.bubbles == ("Gemerkt-Hinweise gibt es nur im privaten Chat.",)
    scope = await engine.scope_for(group)
    await store.preferences.set(scope, "notices", True)  # even when set some other way
    await say(engine, "Ich trinke am liebsten Tee.", user=group)
    assert pushed.sent == []
    assert await note_texts(store, scope) == ["Anna trinkt am liebsten Tee."]


async def test_a_failed_send_is_retried_within_the_hour_and_dropped_after(world, store: MemoryStore,  # type: ignore[no-untyped-def]
                                                                           clock: Clock) -> None:
    engine, commands, pushed = world
    await notices_on(commands)
    outbox = engine.learning.notices.outbox
    pushed.down = True
    await say(engine, "Ich trinke am liebsten Tee.")
    await say(engine, "Meine Schwester Miriam ist Ärztin.")
    assert pushed.sent == []
    pushed.down = False
    scope = await engine.scope_for("anna")
    clock.now += 60  # the outbox's next try (as after a restart): the first notice still fits its moment
    assert await outbox.flush([scope]) == 2
    assert [text for _, text, buttons in pushed.sent if buttons] == [
        "💾 gemerkt: Anna trinkt am liebsten Tee.", "💾 gemerkt: Anna hat eine Schwester, Miriam.; work: Lehrerin"]

    pushed.down = True
    await say(engine, "Ich habe viel vor.")
    pushed.down = False
    clock.now += 2 * 3600  # two hours later it is no news any more
    assert await outbox.flush([scope]) == 0
    assert len(pushed.sent) == 2


def test_when_a_notice_stays_silent() -> None:
    now = (DAY1 + timedelta(hours=3)).timestamp()  # 3 o'clock at night: a notice may still follow a message

    def message(text: str, minutes_ago: float, role: str = "user") -> Message:
        return Message(1, role, text, datetime.fromtimestamp(now - minutes_ago * 60, BERLIN))

    fresh = [message("Ich trinke Tee.", 2)]
    assert silent_because(fresh, fresh, now) == ""
    assert "crisis" in silent_because([message("I want to die", 2)], fresh, now)
    assert "last days" in silent_because(fresh, fresh + [message("Ich will nicht mehr leben", 60 * 24 * 2)], now)
    assert silent_because(fresh, fresh + [message("Ich will nicht mehr leben", 60 * 24 * 4)], now) == ""
    stale = [message("Ich trinke Tee.", NOTICE_FRESH / 60 + 1)]
    assert "too old" in silent_because(stale, stale, now)
    assert "too old" in silent_because(fresh, [message("Schön!", 1, role="assistant")], now)


def test_the_outbox_sends_a_notice_at_any_hour_but_not_late() -> None:
    night = DAY1 + timedelta(hours=3)
    assert verdict("notice", night, None, night + timedelta(minutes=5), (9, 21)).action == "send"
    assert verdict("notice", night, None, night + timedelta(hours=2), (9, 21)).action == "drop"


async def test_through_telegram_the_notice_arrives_with_its_button_and_the_press_undoes(
        store: MemoryStore, tmp_path: Path) -> None:
    clock = Clock((DAY1 + timedelta(hours=10)).timestamp())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = lambda call: "Schön!"
    background.responder = learning_model  # type: ignore[assignment]
    async with on_telegram(store, tmp_path, clock, chat, background) as (tg, engine, scheduler):
        engine.learning.notices.outbox = scheduler.outbox
        tg.send_text(42, "/settings notices an")
        await tg.wait_for_sent(1)
        tg.send_text(42, "Ich trinke am liebsten Tee.")
        sent = await tg.wait_for_sent(3)  # the reply and the notice (the background run may be the quicker one)
        await engine.drain()
        scope = await engine.scope_for("tg:42")
        assert sorted(m["text"] for m in sent[1:]) == ["Schön!", "💾 gemerkt: Anna trinkt am liebsten Tee."]
        notice = next(m for m in sent if m["text"].startswith("💾"))
        assert notice["text"] == "💾 gemerkt: Anna trinkt am liebsten Tee."
        (button,), = notice["reply_markup"]["inline_keyboard"]
        assert button["text"] == "Rückgängig" and button["callback_data"].startswith("saved:undo:extract:")
        assert await note_texts(store, scope) == ["Anna trinkt am liebsten Tee."]

        assert await pressed(tg, 42, notice["message_id"], button["callback_data"]) == "Zurückgenommen."
        assert await note_texts(store, scope) == []
        edited = [e for e in tg.edits if e.get("message_id") == notice["message_id"] and e["kind"] == "text"]
        assert edited and edited[-1]["text"] == "↩️ zurückgenommen: Anna trinkt am liebsten Tee."
