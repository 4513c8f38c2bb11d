"""An edit on Matrix (m.replace) that shows a crisis gets the help line first; an everyday edit is still ignored
(matrix-nio against a real Synapse on 127.0.0.1, the layered detector with its classifier)."""
from __future__ import annotations

import dataclasses

from nio import RoomSendResponse

from bot.conversation.help_lines import crisis_help
from tests.safety_kit import real_detector
from tests.test_matrix import Human, World, running, texts, world  # noqa: F401  (the fixture)
from tests.test_safety_channels import UNSEEN

HELP = crisis_help("DE", "de")


async def edit(anna: Human, room: str, event_id: str, text: str) -> None:
    """Anna edits her message, as Element sends an edit."""
    content = {"msgtype": "m.text", "body": f"* {text}", "m.new_content": {"msgtype": "m.text", "body": text},
               "m.relates_to": {"rel_type": "m.replace", "event_id": event_id}}
    sent = await anna.client.room_send(room, "m.room.message", content, ignore_unverified_devices=True)
    assert isinstance(sent, RoomSendResponse), sent


async def test_an_edit_that_shows_a_crisis_gets_the_help_line(world: World) -> None:  # noqa: F811
    world.engine.config = dataclasses.replace(world.engine.config, crisis_detector=real_detector())
    anna = world.anna
    async with running(world.channel()):
        room = await anna.open_dm(world.bot_id)
        await anna.wait_for(room, world.bot_joined)
        world.chat.enqueue("Oh, erzähl!")
        said = await anna.say(room, "Heute war ein langer Tag.")
        assert texts(await anna.wait_for(room, world.from_bot)) == ["Oh, erzähl!"]

        await edit(anna, room, said, "Heute war ein sehr langer Tag.")  # everyday: no answer
        world.chat.enqueue("Ich bin für dich da. Was ist passiert?")
        await edit(anna, room, said, UNSEEN)
        answer = texts(await anna.wait_for(room, world.from_bot, count=2))
        assert answer == [HELP, "Ich bin für dich da. Was ist passiert?"]  # help first, as for any crisis
