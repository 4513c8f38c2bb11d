"""Simulated weeks through the real scheduler and Telegram: check-ins follow the learned rhythm and back off.

Anna writes only in the evenings; the companion's silence threshold is 36 hours, so without the rhythm its
check-ins would land at 9:00. The back-off, /checkins warum, /settings, a group chat and /deleteme on top.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.texts import t
from memory.store import MemoryStore
from scheduler.checkin import LAST_DECISION
from tests.scenarios.proactive import BERLIN, USER, World

MONDAY = datetime(2026, 11, 23, tzinfo=BERLIN)
QUARTER = 15 * 60  # the planner's cadence: every job here falls on a quarter hour

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return MONDAY + timedelta(days=day, hours=hour, minutes=minute)


async def two_weeks_of_evenings(world: World) -> None:
    for day in range(14):  # Monday 23 November to Sunday 6 December, 20:00 each evening
        await world.anna_writes(f"Feierabend, Tag {day + 1}.", at(day, 20))


async def checkins(world: World) -> list[str]:
    return [when for when, text in await world.pushed() if text.startswith("Na, wie geht es dir?")]


async def command(world: World, text: str, now: datetime) -> str:
    await world.anna_writes(text, now)
    return str(world.tg.sent[-1]["text"])


async def test_an_evening_person_gets_checkins_in_the_evening_and_the_companion_says_why(
    store: MemoryStore, tmp_path: Path,
) -> None:
    async with World(store, tmp_path, at(0, 20), silence=timedelta(hours=36)) as world:
        await two_weeks_of_evenings(world)
        await world.drive(at(15, 12), QUARTER)  # 36 h after Sunday 20:00 is Tuesday 8:00
        assert await checkins(world) == [], "not at 9:00 on Tuesday: she does not read in the mornings"

        why = await command(world, "/checkins warum", at(15, 12))  # on the quarter hour: the planner's clock goes on
        assert why.splitlines() == [
            "Zuletzt geprüft: Di 08.12. um 12:00.",
            "Um diese Zeit liest du meistens nicht; an diesem Tag eher 19–21 Uhr.",
            "Frühestens schreibe ich dir Di 08.12. um 19:00.",
        ]
        settings = await command(world, "/settings", at(15, 12))
        assert "Wann du meist liest (gelernt): Mo–So 19–21 Uhr" in settings.splitlines()

        await world.drive(at(15, 23), QUARTER)
        assert await checkins(world) == ["08. 19:00"]
        later = (await command(world, "/checkins warum", at(15, 23))).splitlines()
        assert later == ["Zuletzt geprüft: Di 08.12. um 23:00.", "Es war außerhalb deiner Zeiten (9–21 Uhr).",
                         t("de", "checkins_next_after_answer")], "the check-in waits for her answer"
        scope = await world.scope()
        await world.store.state.put(scope, LAST_DECISION, {**await world.store.state.get(scope, LAST_DECISION),
                                                           "send": True, "reason": "silence"})
        sent = await command(world, "/checkins why", at(15, 23))
        assert sent.splitlines()[1:] == [t("de", "checkins_rule_sent"), t("de", "checkins_after_sent")]


async def test_two_ignored_checkins_double_the_wait_and_an_answer_resets_it(store: MemoryStore, tmp_path: Path) -> None:
    async with World(store, tmp_path, at(0, 20), silence=timedelta(hours=36)) as world:
        await two_weeks_of_evenings(world)
        await world.drive(at(16, 20), QUARTER)
        await world.anna_writes("Sorry, war unterwegs.", at(16, 20))  # Wednesday: 25 h after Tuesday's check-in
        await world.drive(at(19, 20), QUARTER)  # 36 h later: Friday 8:00, so Friday evening
        await world.anna_writes("Hab's erst jetzt gesehen.", at(19, 20))  # Saturday: late again, the second
        assert await checkins(world) == ["08. 19:00", "11. 19:00"]

        await world.drive(at(22, 21), QUARTER)  # twice 36 h after Saturday 20:00: Tuesday 20:00
        assert await checkins(world) == ["08. 19:00", "11. 19:00", "15. 20:00"], "72 h, not 36"
        scope = await world.scope()
        decision = await store.state.get(scope, LAST_DECISION)
        assert (decision["streak"], decision["factor"]) == (2, 2)
        why = await command(world, "/checkins warum", at(22, 20, 30))
        assert "Auf meine letzten 2 Nachrichten hast du nicht innerhalb von 12 Stunden geantwortet" in why

        await world.anna_writes("Danke der Nachfrage, alles gut!", at(22, 21))  # in time: the streak ends
        await world.drive(at(24, 23), QUARTER)  # 36 h after Tuesday 21:00: Thursday 9:00, so Thursday evening
        assert (await checkins(world))[3:] == ["17. 19:00"]
        assert (await store.state.get(scope, LAST_DECISION))["factor"] == 1


async def test_a_group_gets_nothing_and_deleteme_takes_the_rhythm(store: MemoryStore, tmp_path: Path) -> None:
    async with World(store, tmp_path, at(0, 20), silence=timedelta(hours=36)) as world:
        group = await store.scope("mnemo", "tg:group:-100")
        for day in range(14):  # the group talks every evening too
            await store.messages.add(group, "user", "Anna: Hallo zusammen", created_at=at(day, 20).timestamp())
            await store.rhythm.observe(group, at(day, 20).timestamp(), BERLIN, answered=False)
        await two_weeks_of_evenings(world)
        await world.drive(at(17, 23), QUARTER)
        assert await store.messages.last_proactive(group) is None
        assert await store.state.get(group, LAST_DECISION) is None
        assert {m["chat_id"] for m in world.tg.sent} == {USER}, "nothing went to the group"

        scope = await world.scope()
        assert (await store.rhythm.histogram(scope, world.clock.now)).total() > 6
        before = len(world.tg.sent)
        world.tg.send_text(USER, "/deleteme")
        await world.tg.wait_for_sent(before + 1)
        confirm = world.tg.sent[-1]["message_id"]
        answers = len(world.tg.callback_answers)
        world.tg.press_button(USER, confirm, "deleteme:yes")
        await world.tg.wait_until(lambda: len(world.tg.callback_answers) > answers, what="the deleteme answer")
        assert (await store.rhythm.histogram(scope, world.clock.now)).total() == 0
        assert await store.state.get(scope, LAST_DECISION) is None
        assert (await store.rhythm.histogram(group, world.clock.now)).total() > 6, "the group's own stays"
        await world.drive(at(20, 23), QUARTER)
        assert await store.state.get(scope, LAST_DECISION) is None, "a deleted person is no longer planned for"
