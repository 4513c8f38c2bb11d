"""Outbox retries across the end of the active hours: a check-in that missed its window is dropped, a reminder
arrives late and says so, a diary push waits for the morning; on the real Telegram channel, with a simulated clock."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memory.store import MemoryStore
from tests.scenarios.proactive import BERLIN, World

MONDAY = datetime(2026, 11, 23, tzinfo=BERLIN)

pytestmark = [pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
              pytest.mark.both_backends("the outbox across active hours")]


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return MONDAY + timedelta(days=day, hours=hour, minutes=minute)


async def test_retries_after_the_active_hours_drop_the_checkin_mark_the_reminder_late_and_hold_the_diary(
    store: MemoryStore, tmp_path: Path,
) -> None:
    async with World(store, tmp_path, at(0, 17), topic="Wie war die Chorprobe?", due=at(0, 20, 30)) as world:
        await world.anna_writes("Heute Abend habe ich Chorprobe.", at(0, 17))
        scope = await world.scope()
        await store.reminders.add(scope, "Tabletten nehmen", at(0, 20, 50).timestamp())
        await store.preferences.set(scope, "diary_push", True)

        world.tg.fail_next("sendMessage", 500, count=3)  # the check-in at 20:30, its retry at 20:45, the reminder
        await world.drive(at(0, 23, 30))
        world.tg.fail_next("sendMessage", 500, count=4)  # the diary push at 23:45 and its retries until 01:30
        await world.drive(at(1, 18))

        assert await world.pushed() == [
            ("23. 21:00", "⏰ Tabletten nehmen\n(verspätet – fällig war 20:50)"),
            ("24. 09:00", "📔 2026-11-23\nEin Tag mit Anna."),  # held back at 01:30 until her hours begin
            ("24. 17:00", "Na, wie geht es dir? (2)"),  # the dropped one never reached her: it blocks nothing
        ]
        assert world.shown() == ["Danke, dass du es mir erzählst."] + [text for _, text in await world.pushed()]
        items = await store.outbox.items(scope)
        assert [(i.kind, i.status) for i in items] == [("checkin", "dropped"), ("reminder", "sent"), ("diary", "sent"),
                                                       ("checkin", "sent")]
        assert await store.outbox.reason(items[0].id) == \
            "dropped: missed its window: 21:00 is outside the active hours 9-21"
        tries = world.tg.calls.count("sendMessage")
        assert tries == 1 + 3 + 1 + 4 + 1 + 1, "the dropped check-in was not tried at 21:00"
