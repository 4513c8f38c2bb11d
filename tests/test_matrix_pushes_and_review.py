"""Proactive messages and the review queue on Matrix: the brief and the welcome back pushed through the channel to a
real Synapse, and /review decided by reaction."""
from __future__ import annotations

import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from nio import ReactionEvent, RoomMessageText

from bot.channels.matrix.messages import KEYCAPS
from bot.channels.push import ChannelSender
from bot.llm.writer import LLMWriter
from bot.texts import t
from memory.ledgers import audit
from memory.records.kinship import PersonDraft
from memory.records.person_dates import YearlyDate
from scheduler.service import Scheduler
from tests.test_matrix import World, running, texts, world  # noqa: F401  (the fixture)
from tests.test_review_channels import queue


async def test_the_brief_with_a_birthday_arrives_on_matrix(world: World) -> None:  # noqa: F811
    anna, berlin = world.anna, ZoneInfo("Europe/Berlin")
    world.chat.responder = lambda call: "Guten Morgen, Anna!" if "morning brief" in call.prompt else "Hallo Anna."
    async with running(world.channel()) as channel:
        room = await anna.open_dm(world.bot_id)
        await anna.wait_for(room, world.bot_joined)
        await anna.say(room, "Hallo")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Hallo Anna."]
        scope = await world.store.scope("mnemo", anna.user_id)
        await world.store.preferences.set(scope, "morning", "07:30")
        await world.store.preferences.set(scope, "morning_days", "daily")
        p = audit.new_processing("test")
        miriam = await world.store.people.observe(scope, PersonDraft("Miriam", relation="Schwester"), processing=p)
        day = datetime.fromtimestamp(time.time(), berlin) + timedelta(days=1)
        await world.store.person_dates.note(scope, miriam.id, YearlyDate("birthday", day.month, day.day), processing=p)
        scheduler = Scheduler(world.store, "mnemo", LLMWriter(world.chat), world.engine,
                              ChannelSender({"matrix": channel}), berlin, world.tmp)
        await scheduler.run("morning", scope.id, time.time())
        [brief] = texts(await anna.wait_for(room, world.from_bot))
    assert brief == "Guten Morgen, Anna!\n\n🎂 Morgen: Geburtstag von Miriam (Schwester)"


async def test_a_holiday_said_on_matrix_holds_checkins_back_and_the_welcome_arrives_there(
    world: World,  # noqa: F811
) -> None:
    anna, berlin = world.anna, ZoneInfo("Europe/Berlin")
    world.chat.responder = lambda call: ("Willkommen zurück!" if "welcome back" in call.prompt else
                                         "Na, wie geht's?" if "Why you may write now" in call.prompt else "Gute Reise!")
    async with running(world.channel()) as channel:
        room = await anna.open_dm(world.bot_id)
        await anna.wait_for(room, world.bot_joined)
        await anna.say(room, "Ich bin zwei Wochen im Urlaub")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Gute Reise!"]
        scope = await world.store.scope("mnemo", anna.user_id)
        today = datetime.fromtimestamp(time.time(), berlin).date()
        noon = [datetime(today.year, today.month, today.day, 12, tzinfo=berlin) + timedelta(days=5)]
        scheduler = Scheduler(world.store, "mnemo", LLMWriter(world.chat), world.engine,
                              ChannelSender({"matrix": channel}), berlin, world.tmp, clock=lambda: noon[0].timestamp())
        await scheduler.run("planner", 0, noon[0].timestamp())  # five silent days: without the holiday, a check-in
        assert await world.store.messages.last_proactive(scope) is None, "no check-in while Anna is away"
        noon[0] += timedelta(days=9)  # the first day back
        await scheduler.run("planner", 0, noon[0].timestamp())
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Willkommen zurück!"]


async def test_review_on_matrix_keeps_a_suggestion_by_reaction(world: World) -> None:  # noqa: F811
    anna = world.anna
    async with running(world.channel()) as _:
        room = await anna.open_dm(world.bot_id)
        await anna.wait_for(room, world.bot_joined)
        scope = await world.store.scope("mnemo", anna.user_id)
        await queue(world.store, scope, 2)
        await anna.say(room, "!review")
        events = await anna.wait_for(
            room, lambda e: world.from_bot(e) or (isinstance(e, ReactionEvent) and e.sender == world.bot_id), count=5)
        [shown] = [e for e in events if isinstance(e, RoomMessageText)]
        assert "Anna spiele seit Jahren Instrument Nummer 0." in shown.body and "1️⃣" in shown.body
        offered = sorted(e.key for e in events if isinstance(e, ReactionEvent) and e.reacts_to == shown.event_id)
        assert offered == sorted(KEYCAPS[:4]), "✓, ✗ and the group's all ✓ / all ✗, one reaction each"
        await anna.react(room, shown.event_id, KEYCAPS[0])  # ✓ for the first suggestion
        [notice] = texts(await anna.wait_for(room, world.from_bot))
    assert notice.startswith(t("de", "review_kept", text="Anna spiele seit Jahren Instrument Nummer 0."))
    assert "Aus deinem Verlauf: ein Vorschlag wartet." in notice, "and the next page: the one suggestion left"
    assert [n.text for n in await world.store.notes.list(scope)] == ["Anna spiele seit Jahren Instrument Nummer 0."]
