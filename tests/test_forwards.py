"""Forwarded messages are someone else's words: a crisis in them gets the help text for someone the person knows, first;
the model is told whose words they are; a forwarded "ja" answers no open question and a forwarded "/…" runs no command.
Telegram (the unmodified python-telegram-bot against the fake Bot API, its forward_origin) and Matrix (matrix-nio
against the real Synapse, a forward marked by MSC2723's m.forwarded; Element's plain copies cannot be told)."""
from __future__ import annotations

import pytest
from nio import RoomSendResponse

from bot.channels.matrix.messages import forwarded
from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine, Incoming
from bot.conversation.help_lines import crisis_help, crisis_help_other
from bot.conversation.model_answer import CRISIS_MARK
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_matrix import World, running, texts, world  # noqa: F401  (the fixture)
from tests.test_telegram import USER, channel  # noqa: F401  (the fixture)

pytestmark = pytest.mark.both_backends("the logged origin and the open question live in the store")

FAREWELL = "Ich will nicht mehr leben. Sagt allen tschüss von mir."
OTHER, OWN = crisis_help_other("DE", "de"), crisis_help("DE", "de")


async def answers(tg: FakeTelegram, before: int, count: int) -> list[str]:
    """The texts of mnemo's messages after the first `before`, once there are `count` of them."""
    return [m["text"] for m in (await tg.wait_for_sent(before + count))[before:]]


def test_the_help_for_someone_else_names_the_same_numbers_and_speaks_of_them() -> None:
    for country in ("DE", "AT", "CH", "US", "XX"):
        for lang in ("de", "en"):
            other, own = crisis_help_other(country, lang), crisis_help(country, lang)
            assert other != own and ("jemand, den du kennst" in other or "someone you know" in other)
            numbers = {word.strip(".,()") for word in own.split() if word.strip(".,()").isdigit()}
            assert numbers and all(number in other for number in numbers), (country, lang)


def test_a_matrix_forward_is_known_only_where_the_client_marks_it() -> None:
    assert forwarded({"msgtype": "m.text", "body": "hi", "m.forwarded": {"event_id": "$x", "sender": "@ben:x"}})
    assert not forwarded({"msgtype": "m.text", "body": "hi"})  # Element's forward: a plain copy
    assert not forwarded({"msgtype": "m.text", "body": "hi", "m.forwarded": "yes"})


async def test_a_forwarded_crisis_gets_the_help_for_someone_you_know_first_and_the_model_knows_whose_words(
        tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, store: MemoryStore,  # noqa: F811
        engine: Engine) -> None:
    chat.enqueue("Das klingt sehr ernst. Weißt du, ob Ben gerade in Sicherheit ist?")
    tg.send_text(USER, FAREWELL, forwarded_from="Ben")
    said = await answers(tg, 0, 2)
    assert said == [OTHER, "Das klingt sehr ernst. Weißt du, ob Ben gerade in Sicherheit ist?"]
    prompt = chat.calls[-1].prompt
    assert "SAFETY FIRST" in prompt and "someone else's" in prompt and "someone the person knows" in prompt
    scope = await engine.scope_for(f"tg:{USER}")
    [logged] = [m for m in await store.messages.recent(scope) if m.role == "user"]
    assert logged.text == FAREWELL and logged.origin == "forwarded"
    assert await store.state.get(scope, CRISIS_MARK) is not None  # the person's check-ins are careful too

    chat.enqueue("Erzähl mir mehr.")  # the person's own words next: their own help text, if it comes to that
    tg.send_text(USER, "Ich will auch nicht mehr leben.")
    assert (await answers(tg, 2, 2))[0] == OWN
    assert "someone else's" not in chat.calls[-1].messages[-1].content.split("</context>")[-1]


async def test_a_forwarded_ja_answers_no_question_and_a_forwarded_command_runs_none(
        tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, store: MemoryStore,  # noqa: F811
        engine: Engine) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    chat.enqueue("Mach ich. [RULE: Keine Emojis verwenden]")
    tg.send_text(USER, "Hör auf mit den Emojis")
    asked = len(await tg.wait_for_sent(2))  # the answer, and the question under it
    assert await engine.open_question(scope) is not None

    chat.enqueue("Ben sagt ja – wozu denn?")
    tg.send_text(USER, "ja", forwarded_from="Ben")
    assert await answers(tg, asked, 1) == ["Ben sagt ja – wozu denn?"]
    assert await store.rules.list(scope, "active") == []
    assert await engine.open_question(scope) is not None, "only the buttons decide it now"

    chat.enqueue("Das hat Ben dir geschickt? Soll ich etwas damit machen?")
    tg.send_text(USER, "/incognito", forwarded_from="Ben")
    assert await answers(tg, asked + 1, 1) == ["Das hat Ben dir geschickt? Soll ich etwas damit machen?"]
    assert await store.incognito.current(scope) is None, "no command ran"


async def test_an_engine_turn_with_a_forward_without_a_crisis_is_answered_as_someone_elses_words(
        engine: Engine, chat: ScriptedLLM, store: MemoryStore) -> None:
    chat.enqueue("Ben freut sich auf Samstag, wie schön.")
    reply = await engine.handle(Incoming("anna", "Ich freu mich so auf Samstag!", forwarded=True))
    assert reply is not None and reply.bubbles == ("Ben freut sich auf Samstag, wie schön.",)
    assert "someone else's" in chat.calls[-1].prompt and "SAFETY FIRST" not in chat.calls[-1].prompt
    chat.enqueue("Gern.")
    await engine.handle(Incoming("anna", "Danke"))
    window = chat.calls[-1].messages[0].content
    assert "(forwarded by the person: someone else's words) Ich freu mich so auf Samstag!" in window


async def test_a_forward_marked_on_matrix_gets_the_help_for_someone_you_know(world: World) -> None:  # noqa: F811
    anna = world.anna
    async with running(world.channel()):
        room = await anna.open_dm(world.bot_id)
        await anna.wait_for(room, world.bot_joined)
        world.chat.enqueue("Das klingt sehr ernst. Ist Ben gerade in Sicherheit?")
        content = {"msgtype": "m.text", "body": FAREWELL,
                   "m.forwarded": {"event_id": "$original", "room_id": "!other:x", "sender": "@ben:x"}}
        sent = await anna.client.room_send(room, "m.room.message", content, ignore_unverified_devices=True)
        assert isinstance(sent, RoomSendResponse), sent
        said = texts(await anna.wait_for(room, world.from_bot, count=2))
        assert said == [OTHER, "Das klingt sehr ernst. Ist Ben gerade in Sicherheit?"]
        scope = await world.store.scope("mnemo", anna.user_id)
        logged = await world.store.messages.by_channel_id(scope, "matrix", str(sent.event_id))
        assert logged is not None and logged.origin == "forwarded"
