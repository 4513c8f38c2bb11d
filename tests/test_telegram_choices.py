"""Buttons on Telegram: whose choice a press is; a decided question loses its buttons everywhere; no edit changes
nothing.

The unmodified python-telegram-bot Application against the local fake Bot API.
"""
from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.channels.telegram.choices import refusal
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.llm.port import ToolCall
from bot.texts import t
from memory.ledgers.choices import Choice
from memory.models import LearnedRule
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

JSON = dict[str, Any]
ANNA, BEN, EVE = 42, 43, 777  # Anna is an admin; Eve is a member of the group, no admin
GROUP = -1001


def make_channel(tg: FakeTelegram, engine: Engine, **config: Any) -> TelegramChannel:
    """Anna (42, admin) and Ben (43) are allowed; the group is allowed; replies are not streamed unless asked."""
    settings = TelegramConfig(token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(ANNA), str(BEN)}),
                              admins=frozenset({f"tg:{ANNA}"}), allowed_groups=frozenset({str(GROUP)}),
                              streaming=False)
    return TelegramChannel(engine, Commands(engine), dataclasses.replace(settings, **config))


@pytest.fixture
async def channel(tg: FakeTelegram, engine: Engine) -> AsyncIterator[TelegramChannel]:
    ch = make_channel(tg, engine)
    await ch.start()
    yield ch
    await ch.stop()


async def said(tg: FakeTelegram, user: int, text: str, replies: int = 1, **options: Any) -> list[JSON]:
    """Send a text and return the bot's next `replies` messages."""
    before = len(tg.sent)
    tg.send_text(user, text, **options)
    return (await tg.wait_for_sent(before + replies))[before:]


async def pressed(tg: FakeTelegram, user: int, message_id: int, data: str) -> str:
    """Press a button and return the notice the presser sees, once the press is done."""
    answers = len(tg.callback_answers)
    tg.press_button(user, message_id, data)
    await tg.wait_until(lambda: len(tg.callback_answers) > answers, what=f"the answer to {data!r}")
    await calm(tg)  # the edits that follow the answer
    return str(tg.callback_answers[-1].get("text") or "")


async def calm(tg: FakeTelegram, quiet: float = 0.15, timeout: float = 5) -> None:
    """Wait until the bot has made no call but polling for `quiet` seconds."""
    def busy() -> int:
        return sum(1 for call in tg.calls if call != "getUpdates")
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        before = busy()
        await asyncio.sleep(quiet)
        if busy() == before:
            return


def shows_buttons(tg: FakeTelegram, message_id: int) -> list[str]:
    """The data of the buttons a message shows now."""
    markup = tg.messages[message_id].get("reply_markup") or {}
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row]


async def rule_asked(tg: FakeTelegram, engine: Engine, store: MemoryStore,
                     chat: ScriptedLLM) -> tuple[LearnedRule, JSON]:
    """Anna asks for shorter answers and the model proposes it as a rule: the rule, and the message asking about it
    (with its yes and no buttons)."""
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kürzer."})])
    chat.enqueue("Gern.")
    _, question = await said(tg, ANNA, "Fass dich bitte kürzer.", replies=2)
    rule = await store.rules.pending(await engine.scope_for(f"tg:{ANNA}"))
    assert rule is not None
    assert shows_buttons(tg, question["message_id"]) == [f"rule:yes:{rule.id}", f"rule:no:{rule.id}"]
    return rule, question


# --- old buttons go when their question is decided ---------------------------------------------------------


async def test_a_question_decided_under_one_message_loses_its_buttons_under_every_other(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    rule, question = await rule_asked(tg, engine, store, chat)
    scope = await engine.scope_for(f"tg:{ANNA}")
    (listing,) = await said(tg, ANNA, "/rules")
    assert f"rule:yes:{rule.id}" in shows_buttons(tg, listing["message_id"])

    notice = await pressed(tg, ANNA, listing["message_id"], f"rule:yes:{rule.id}")
    assert notice == t("de", "rule_saved", rule="Antworte kürzer.")
    assert shows_buttons(tg, question["message_id"]) == []  # the same question's buttons under the earlier message
    assert tg.messages[question["message_id"]]["text"] == question["text"]  # its text stays
    assert (await store.rules.get(scope, rule.id)).status == "active"
    assert await pressed(tg, ANNA, question["message_id"], f"rule:no:{rule.id}") == t("de", "button_stale")
    assert (await store.rules.get(scope, rule.id)).status == "active"


async def test_a_press_on_buttons_that_are_no_longer_valid_takes_them_away(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for(f"tg:{ANNA}")
    note = (await store.notes.add(scope, "Anna mag Parks.")).note
    other = (await store.notes.add(scope, "Anna hat einen Hund.")).note
    (first,) = await said(tg, ANNA, f"/forget {note.id}")
    (second,) = await said(tg, ANNA, f"/forget {note.id}")
    assert await pressed(tg, ANNA, second["message_id"], f"forget:{note.id}") == t("de", "forget_done", text=note.text)
    assert shows_buttons(tg, first["message_id"]) == [f"forget:{note.id}", "cancel"]

    assert await pressed(tg, ANNA, first["message_id"], f"forget:{note.id}") == t("de", "button_unknown")
    assert shows_buttons(tg, first["message_id"]) == []  # the note is gone: its buttons go too
    assert await pressed(tg, ANNA, first["message_id"], "cancel") == t("de", "button_stale")
    assert [n.id for n in await store.notes.list(scope)] == [other.id]


async def test_a_press_with_data_the_message_never_offered_changes_nothing(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for(f"tg:{ANNA}")
    kept, target = [(await store.notes.add(scope, text)).note for text in ("Anna mag Parks.", "Anna hat einen Hund.")]
    (confirm,) = await said(tg, ANNA, f"/forget {kept.id}")
    assert await pressed(tg, ANNA, confirm["message_id"], f"forget:{target.id}") == t("de", "button_unknown")
    assert await store.notes.count(scope) == 2 and shows_buttons(tg, confirm["message_id"]) == [f"forget:{kept.id}",
                                                                                                  "cancel"]


# --- in a group, a choice belongs to the person who asked, and only admins change memory ----------------------------


async def test_in_a_group_a_member_cannot_press_the_admins_buttons(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    group = await engine.scope_for(f"tg:group:{GROUP}")
    rule = await store.rules.propose(group, "Sprich uns mit ihr an.")
    await store.rules.decide(group, rule.id, "active")
    await store.notes.add(group, "Die Gruppe plant ein Picknick.")
    options: dict[str, Any] = {"chat_id": GROUP, "chat_type": "supergroup"}
    (listing,) = await said(tg, ANNA, "/rules@mnemo_bot", **options)

    not_yours = t("de", "choice_not_yours")
    assert await pressed(tg, EVE, listing["message_id"], f"rule:del:{rule.id}") == not_yours
    assert await pressed(tg, EVE, listing["message_id"], f"rule:off:{rule.id}") == not_yours
    assert [r.status for r in await store.rules.list(group)] == ["active"] and await store.notes.count(group) == 1

    assert await pressed(tg, ANNA, listing["message_id"], f"rule:del:{rule.id}") == t("de", "rule_deleted", id=rule.id)
    assert await store.rules.list(group) == []


async def test_in_a_group_deleteme_deletes_nothing_and_says_it_works_in_the_private_chat(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    group = await engine.scope_for(f"tg:group:{GROUP}")
    await store.notes.add(group, "Die Gruppe plant ein Picknick.")
    anna = await engine.scope_for(f"tg:{ANNA}")
    await store.notes.add(anna, "Anna mag Jazz.")
    options: dict[str, Any] = {"chat_id": GROUP, "chat_type": "supergroup"}
    (answer,) = await said(tg, ANNA, "/deleteme@mnemo_bot", **options)
    assert answer["text"] == t("de", "deleteme_private_only") and shows_buttons(tg, answer["message_id"]) == []
    assert "alles über dich gelöscht" not in answer["text"]
    assert await store.notes.count(group) == 1 and await store.notes.count(anna) == 1, "nothing deleted"
    commands = Commands(engine)  # a button an older version offered in the group deletes nothing either
    pressed_old = await commands.press(f"tg:group:{GROUP}", "deleteme:yes", admin=True)
    assert pressed_old is not None and pressed_old.notice == t("de", "deleteme_private_only")
    assert await store.notes.count(group) == 1

    (private,) = await said(tg, ANNA, "/deleteme")  # in the private chat it asks, as before
    assert private["text"] == t("de", "deleteme_confirm")


async def test_an_admins_bare_memories_in_a_group_shows_the_groups_memories(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    group = await engine.scope_for(f"tg:group:{GROUP}")
    await store.notes.add(group, "Die Gruppe plant ein Picknick.")
    await store.notes.add(await engine.scope_for(f"tg:{ANNA}"), "Anna mag Jazz.")
    options: dict[str, Any] = {"chat_id": GROUP, "chat_type": "supergroup"}
    (listing,) = await said(tg, ANNA, "/memories", **options)
    assert listing["chat_id"] == GROUP and "Picknick" in listing["text"] and "Jazz" not in listing["text"]
    before = len(tg.sent)
    tg.send_text(EVE, "/memories", first_name="Eve", **options)  # a member who is no admin: left alone, as before
    tg.send_text(ANNA, "/weather", **options)  # another bot's command: not mnemo's business
    await calm(tg)
    assert len(tg.sent) == before


async def test_in_a_group_only_an_admin_answers_a_question_that_came_from_a_members_message(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte der Gruppe auf Deutsch."})])
    chat.enqueue("Mache ich.")
    _, question = await said(tg, EVE, "@mnemo_bot antworte bitte immer auf Deutsch", replies=2, chat_id=GROUP,
                             chat_type="supergroup", first_name="Eve")
    group = await engine.scope_for(f"tg:group:{GROUP}")
    rule = await store.rules.pending(group)
    assert rule is not None
    assert await pressed(tg, EVE, question["message_id"], f"rule:yes:{rule.id}") == t("de", "group_admins_only")
    assert (await store.rules.get(group, rule.id)).status == "pending"
    assert shows_buttons(tg, question["message_id"]) == [f"rule:yes:{rule.id}", f"rule:no:{rule.id}"]
    saved = t("de", "rule_saved", rule="Antworte der Gruppe auf Deutsch.")
    assert await pressed(tg, ANNA, question["message_id"], f"rule:yes:{rule.id}") == saved
    assert (await store.rules.get(group, rule.id)).status == "active"


def test_refusal_is_a_pure_decision() -> None:
    offered = Choice(1, 1, "telegram", "-1:5", "tg:42", {"rule:del:3": "rule:del:3", "mem:10": "mem:10"})
    assert refusal(None, "tg:42", "rule:del:3") == "button_unknown"
    assert refusal(dataclasses.replace(offered, options={}), "tg:42", "rule:del:3") == "button_stale"
    assert refusal(offered, "tg:42", "rule:del:4") == "button_unknown"  # never offered here
    assert refusal(offered, "tg:42", "mem:20") is None  # paging: a second tap on a page that moved on is harmless
    assert refusal(offered, "tg:777", "rule:del:3") == "choice_not_yours"
    assert refusal(dataclasses.replace(offered, owner=None), "tg:777", "rule:del:3") is None
    assert refusal(offered, "tg:42", "rule:del:3") is None


# --- no edit that changes nothing ---------------------------------------------------------------------------------


async def test_a_streamed_reply_sends_no_edit_that_telegram_would_reject(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM,
) -> None:
    chat.chunks, chat.chunk_delay = 3, 0.8  # slower than the preview's pace: it shows every piece, the last too
    chat.enqueue("Das klingt schön. Was hast du im Park gemacht?")
    channel = make_channel(tg, engine, streaming=True)
    await channel.start()
    try:
        tg.send_text(ANNA, "Ich war heute im Park.")
        await tg.wait_until(lambda: bool(tg.sent) and tg.messages[tg.sent[0]["message_id"]]["text"].endswith("?"),
                            timeout=10, what="the whole reply")
        await asyncio.sleep(0.5)
    finally:
        await channel.stop()
    assert len(tg.sent) == 1 and len(tg.edits) >= 1
    assert tg.calls.count("editMessageText") == len(tg.edits)  # every edit was accepted: none changed nothing
