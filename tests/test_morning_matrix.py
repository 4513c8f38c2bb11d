"""The morning brief arrives on Matrix too: the real scheduler pushes it through the channel to a real Synapse."""
from __future__ import annotations

import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.channels.push import ChannelSender
from bot.llm.writer import LLMWriter
from memory import audit
from memory.kinship import PersonDraft
from memory.person_dates import YearlyDate
from scheduler.service import Scheduler
from tests.test_matrix import World, running, texts, world  # noqa: F401  (the fixture)


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
