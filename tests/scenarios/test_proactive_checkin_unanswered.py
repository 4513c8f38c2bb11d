"""'Never twice in a row without your answer' holds when a reminder and a diary push come after the check-in."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memory.store import MemoryStore
from tests.scenarios.proactive import BERLIN, World

MONDAY = datetime(2026, 11, 23, tzinfo=BERLIN)

pytestmark = [pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
              pytest.mark.both_backends("the outbox's check-in ledger")]


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return MONDAY + timedelta(days=day, hours=hour, minutes=minute)


async def test_a_reminder_and_a_diary_push_after_an_unanswered_checkin_do_not_clear_the_block(
    store: MemoryStore, tmp_path: Path,
) -> None:
    async with World(store, tmp_path, at(0, 8), topic="Wie lief das Vorstellungsgespräch?", due=at(0, 12)) as world:
        await world.anna_writes("Heute um 11 habe ich ein Vorstellungsgespräch.", at(0, 8))
        scope = await world.scope()
        await store.reminders.add(scope, "Bewerbungsmappe abheften", at(0, 14).timestamp())
        await store.preferences.set(scope, "diary_push", True)

        await world.drive(at(2, 9, 30))  # Monday noon to Wednesday morning; Anna does not answer
        assert [(when, text.split("\n")[0]) for when, text in await world.pushed()] == [
            ("23. 12:00", "Na, wie geht es dir? (1)"),  # the check-in, about the due topic
            ("23. 14:00", "⏰ Bewerbungsmappe abheften"),  # her reminder
            ("23. 23:45", "📔 2026-11-23"),  # the diary push she asked for
        ], "no second check-in on Tuesday: the first one is still unanswered, whatever came after it"

        await world.anna_writes("Es lief gut, danke!", at(2, 9, 30))  # her answer clears the block
        await world.drive(at(3, 12))
        checkins = [when for when, text in await world.pushed() if text.startswith("Na, wie geht es dir?")]
        assert checkins == ["23. 12:00", "25. 12:30"], "after her answer the companion may write first again"
        reflections = [th.created_at.astimezone(BERLIN).strftime("%d. %H:%M")
                       for th in await store.thoughts.latest(scope, 10) if th.origin == "reflection"]
        assert reflections == ["25. 22:00", "23. 22:00"], "the companion's own pushes are no news to reflect on"
        assert world.shown()[1:4] == [text for _, text in (await world.pushed())[:3]], "the chat shows what is stored"
