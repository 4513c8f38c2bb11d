"""A Telegram group where access meets buttons and questions: a member who is no admin presses and types yes.

Anna is an admin, Eve a member. A choice belongs to the person who asked; the group's memory changes only by
an admin; a question decided anywhere loses its buttons everywhere.
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine
from bot.llm.port import ToolCall
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram_choices import ANNA, EVE, GROUP, make_channel, pressed, said, shows_buttons

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

IN_GROUP: dict[str, Any] = {"chat_id": GROUP, "chat_type": "supergroup"}

@pytest.fixture
async def channel(tg: FakeTelegram, engine: Engine) -> AsyncIterator[TelegramChannel]:
    ch = make_channel(tg, engine)
    await ch.start()
    yield ch
    await ch.stop()


async def ask_for_a_rule(tg: FakeTelegram, chat: ScriptedLLM, engine: Engine, store: MemoryStore) -> tuple[int, int]:
    """Eve's message makes mnemo propose a rule for the group; the question's message id and the rule id."""
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Begrüße neue Mitglieder."})])
    chat.enqueue("Gute Idee.")
    _, question = await said(tg, EVE, "@mnemo_bot begrüß doch neue Leute", replies=2, first_name="Eve", **IN_GROUP)
    rule = await store.rules.pending(await engine.scope_for(f"tg:group:{GROUP}"))
    assert rule is not None
    return question["message_id"], rule.id


async def test_a_member_presses_everywhere_and_changes_nothing_until_an_admin_decides(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    group = await engine.scope_for(f"tg:group:{GROUP}")
    question, rule = await ask_for_a_rule(tg, chat, engine, store)
    (listing,) = await said(tg, ANNA, "/rules@mnemo_bot", **IN_GROUP)  # the same question under Anna's listing
    assert f"rule:yes:{rule}" in shows_buttons(tg, listing["message_id"])

    assert await pressed(tg, EVE, listing["message_id"], f"rule:yes:{rule}") == t("de", "choice_not_yours")
    assert await pressed(tg, EVE, question, f"rule:yes:{rule}") == t("de", "group_admins_only")
    assert await pressed(tg, EVE, question, f"rule:no:{rule}") == t("de", "group_admins_only")
    assert (await store.rules.get(group, rule)).status == "pending"
    (refused,) = await said(tg, ANNA, "/deleteme@mnemo_bot", **IN_GROUP)  # in a group it deletes nothing (#42)
    assert refused["text"] == t("de", "deleteme_private_only") and shows_buttons(tg, refused["message_id"]) == []
    assert await pressed(tg, EVE, refused["message_id"], "deleteme:yes") == t("de", "button_unknown")  # forged
    assert await store.messages.count(group) > 0

    saved = t("de", "rule_saved", rule="Begrüße neue Mitglieder.")
    assert await pressed(tg, ANNA, question, f"rule:yes:{rule}") == saved
    assert (await store.rules.get(group, rule)).status == "active"
    assert shows_buttons(tg, question) == [] and shows_buttons(tg, listing["message_id"]) == []  # gone everywhere
    assert await pressed(tg, EVE, listing["message_id"], f"rule:no:{rule}") == t("de", "button_stale")
    assert (await store.rules.get(group, rule)).status == "active"


async def test_a_members_typed_yes_does_not_decide_and_an_admins_press_takes_the_buttons_away(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    group = await engine.scope_for(f"tg:group:{GROUP}")
    question, rule = await ask_for_a_rule(tg, chat, engine, store)
    chat.responder = lambda call: "Okay."
    await said(tg, EVE, "ja", first_name="Eve", reply_to=question, **IN_GROUP)
    assert (await store.rules.get(group, rule)).status == "pending"
    assert shows_buttons(tg, question) == [f"rule:yes:{rule}", f"rule:no:{rule}"]
    # the companion answered Eve in between: Anna's typed 'ja' may be for that, so only the buttons decide now
    await said(tg, ANNA, "ja", reply_to=question, **IN_GROUP)
    assert (await store.rules.get(group, rule)).status == "pending"
    assert await pressed(tg, ANNA, question, f"rule:yes:{rule}") == t(
        "de", "rule_saved", rule="Begrüße neue Mitglieder.")
    assert (await store.rules.get(group, rule)).status == "active"
    assert shows_buttons(tg, question) == []
