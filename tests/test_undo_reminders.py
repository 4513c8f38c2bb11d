"""/undo and reminders: the creation (or an edit) of a reminder that has fired since is not taken back, and the person
is told so in their language; one that has not fired is taken back as before (issue 52, the smaller ones)."""
from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.texts import t
from memory.store import MemoryStore
from scheduler.reminder_times import next_due
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler import BERLIN, Clock

pytestmark = pytest.mark.both_backends("reminders fired, audit entries undone")

WEDNESDAY = datetime(2026, 11, 25, 14, 30, tzinfo=BERLIN)


@pytest.fixture
async def world(store: MemoryStore) -> AsyncIterator[tuple[Engine, Commands, Clock]]:
    clock = Clock(WEDNESDAY.timestamp())
    engine = Engine(store, ScriptedLLM("chat"), ScriptedLLM("background"), EngineConfig(zone=BERLIN), clock=clock)
    yield engine, Commands(engine), clock
    await engine.close()


async def fire_due(store: MemoryStore, engine: Engine, user: str, now: float) -> int:
    """Fire every reminder of the user due by `now`, as the scheduler does (its message recorded, not sent)."""
    scope = await engine.scope_for(user)
    due = await store.reminders.due(scope, now)
    for reminder in due:
        following = next_due(reminder.due_at, reminder.repeat, datetime.fromtimestamp(now, BERLIN), BERLIN)
        assert await store.reminders.fire(scope, reminder, following.timestamp() if following else None, now,
                                          f"⏰ {reminder.text}", (), None) is not None
    return len(due)


async def undone(commands: Commands, user: str) -> str:
    reply = await commands.run(user, "/undo")
    assert reply is not None
    return "\n".join(reply.bubbles)


async def test_undo_does_not_take_back_a_reminder_that_already_fired(
        world: tuple[Engine, Commands, Clock], store: MemoryStore) -> None:
    engine, commands, clock = world
    await engine.handle(Incoming("anna", "Erinnere mich in 10 Minuten an die Tabletten"))
    clock.now += 11 * 60
    assert await fire_due(store, engine, "anna", clock.now) == 1
    assert await undone(commands, "anna") == t("de", "undo_reminder_fired", text="Tabletten")
    scope = await engine.scope_for("anna")
    kept = await store.reminders.get(scope, await store.numbers.item(scope, "reminder", 1))
    assert kept.status == "done", "it came: it stays as it was, not 'cancelled' after the fact"

    await engine.meet(Incoming("ben", "", language="en"))  # his messenger says English
    await engine.handle(Incoming("ben", "Every day at 9 remind me to stretch"))
    clock.now += 86400
    assert await fire_due(store, engine, "ben", clock.now) == 1
    assert await undone(commands, "ben") == t("en", "undo_reminder_fired", text="stretch")
    assert [r.text for r in await store.reminders.active(await engine.scope_for("ben"))] == ["stretch"]


async def test_undo_still_takes_back_a_reminder_that_has_not_fired(
        world: tuple[Engine, Commands, Clock], store: MemoryStore) -> None:
    engine, commands, clock = world
    await engine.handle(Incoming("anna", "Erinnere mich morgen um 9 an den Zahnarzt"))
    assert await fire_due(store, engine, "anna", clock.now) == 0
    assert (await undone(commands, "anna")).startswith(t("de", "undo_done"))
    assert await store.reminders.active(await engine.scope_for("anna")) == []
