"""Issue 38 as a person meets it, on Telegram (the real python-telegram-bot Application against the fake Bot API) and
in the terminal: a question under a reply that also asked "Wie geht es dir?", answered with "Nicht so gut." (a
message for the model; the question waits for its buttons), with "Na klar!" (a yes), or with a "ja" two messages
later (no longer an answer); and a rule that is already active is not proposed again."""
from __future__ import annotations

import pytest

from bot.channels.console import CONSOLE_USER
from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine
from bot.conversation.questions import KNOWN_RULE
from bot.llm.port import ToolCall
from bot.texts import t
from memory.models import LearnedRule
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_console_choices import console
from tests.test_telegram_choices import (
    ANNA,
    JSON,
    channel,  # noqa: F401  (the fixture)
    pressed,
    said,
    shows_buttons,
)

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

RULE = "Keine Emojis verwenden."
SAVED = t("de", "rule_saved", rule=RULE)


def proposes(chat: ScriptedLLM, rule: str = RULE) -> None:
    """The model proposes the rule and asks how the person is."""
    chat.enqueue("", [ToolCall("r1", "propose_rule", {"rule": rule})])
    chat.enqueue("Mach ich. Wie geht es dir heute?")


async def asked(tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM) -> tuple[LearnedRule, JSON]:
    """Anna objects to the emojis; the reply asks how she is, the rule question goes under it."""
    proposes(chat)
    _, question = await said(tg, ANNA, "Hör bitte auf mit den Emojis", replies=2)
    rule = await store.rules.pending(await engine.scope_for(f"tg:{ANNA}"))
    assert rule is not None and shows_buttons(tg, question["message_id"]) == [f"rule:yes:{rule.id}",
                                                                             f"rule:no:{rule.id}"]
    return rule, question


async def test_on_telegram_nicht_so_gut_is_answered_by_the_model_and_the_question_waits_for_its_buttons(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,  # noqa: F811
) -> None:
    rule, question = await asked(tg, engine, store, chat)
    chat.enqueue("Das tut mir leid. Was ist los?")
    (answer,) = await said(tg, ANNA, "Nicht so gut.")
    assert answer["text"] == "Das tut mir leid. Was ist los?"  # no "In Ordnung, das merke ich mir nicht."
    scope = await engine.scope_for(f"tg:{ANNA}")
    assert (await store.rules.get(scope, rule.id)).status == "pending"
    assert shows_buttons(tg, question["message_id"]) == [f"rule:yes:{rule.id}", f"rule:no:{rule.id}"]
    chat.enqueue("Okay.")
    (later,) = await said(tg, ANNA, "ja")  # no longer the very next message: an ordinary one
    assert later["text"] == "Okay." and (await store.rules.get(scope, rule.id)).status == "pending"
    assert await pressed(tg, ANNA, question["message_id"], f"rule:yes:{rule.id}") == SAVED  # its button decides
    assert (await store.rules.get(scope, rule.id)).status == "active"


async def test_on_telegram_na_klar_as_the_next_message_accepts(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,  # noqa: F811
) -> None:
    rule, question = await asked(tg, engine, store, chat)
    (answer,) = await said(tg, ANNA, "Na klar!")
    assert answer["text"] == SAVED
    assert (await store.rules.get(await engine.scope_for(f"tg:{ANNA}"), rule.id)).status == "active"
    assert shows_buttons(tg, question["message_id"]) == []
    assert len(chat.calls) == 2  # the proposal's two rounds; the yes never reached the model


async def test_on_telegram_a_ja_two_messages_later_does_not_decide(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,  # noqa: F811
) -> None:
    rule, question = await asked(tg, engine, store, chat)
    chat.enqueue("Erzähl!")
    await said(tg, ANNA, "Ich war heute im Kino")
    chat.enqueue("Schön, dass er dir gefallen hat.")
    chat.enqueue("Gern.")
    await said(tg, ANNA, "Der Film war toll")
    (answer,) = await said(tg, ANNA, "ja gerne")
    assert answer["text"] == "Gern."
    assert (await store.rules.get(await engine.scope_for(f"tg:{ANNA}"), rule.id)).status == "pending"


async def test_on_telegram_an_active_rule_is_not_proposed_again(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,  # noqa: F811
) -> None:
    rule, _ = await asked(tg, engine, store, chat)
    await said(tg, ANNA, "Na klar!")
    proposes(chat, "Verwende keine Emojis")  # the same rule in other words
    (reply,) = await said(tg, ANNA, "Und wieder ein Smiley!")
    assert reply["text"] == "Mach ich. Wie geht es dir heute?" and not reply.get("reply_markup")
    assert chat.calls[-1].messages[-1].content == KNOWN_RULE
    scope = await engine.scope_for(f"tg:{ANNA}")
    assert [r.text for r in await store.rules.list(scope)] == [RULE] and await engine.open_question(scope) is None


async def test_in_the_terminal_nicht_so_gut_goes_to_the_model_and_na_klar_next_accepts(
    engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    proposes(chat)
    chat.enqueue("Das tut mir leid. Was ist los?")
    out = await console(engine, "Hör bitte auf mit den Emojis", "Nicht so gut.")
    assert "Mnemo: Das tut mir leid. Was ist los?" in out and t("de", "rule_dropped") not in out
    assert (await store.rules.pending(scope)) is not None and await engine.open_question(scope) is not None

    proposes(chat, "Antworte kürzer.")
    out = await console(engine, "Deine Antworten sind zu lang", "Na klar!")
    assert f"Mnemo: {t('de', 'rule_saved', rule='Antworte kürzer.')}" in out
    proposes(chat, "antworte kürzer")
    out = await console(engine, "Immer noch zu lang")
    assert "1) Ja" not in out and chat.calls[-1].messages[-1].content == KNOWN_RULE
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Antworte kürzer."]


async def test_in_the_terminal_a_reminder_asked_back_is_completed_only_by_the_very_next_message(
    engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    scope = await engine.scope_for(CONSOLE_USER)
    out = await console(engine, "Erinnere mich morgen")
    assert t("de", "reminder_ask_time") in out
    chat.enqueue("Ich bin da. Magst du erzählen, was los ist?")
    await console(engine, "Ich will nicht mehr leben")  # answered as a crisis, before any reminder is looked at
    chat.enqueue("Gern, erzähl.")
    out = await console(engine, "um 9 an die Probe")
    assert await store.reminders.active(scope) == [] and "Mnemo: Gern, erzähl." in out

    out = await console(engine, "Erinnere mich morgen", "um 9 an die Probe")
    assert [r.text for r in await store.reminders.active(scope)] == ["Probe"]
