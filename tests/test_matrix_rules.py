"""!rules on a real Synapse: paged like !memories, `!rules aus 7` / `!rules löschen 9` (and the English words) acting
on rules beyond the first page, and in a group the texts that speak to the group and the legend under its question."""
from __future__ import annotations

import pytest
from nio import Event, ReactionEvent, RoomMessageText

from bot.channels.matrix.messages import KEYCAPS, reaction_choices
from bot.commands.learned import rule_words
from bot.conversation.questions import rule_buttons
from bot.llm.port import ToolCall
from bot.texts import TEXTS, addressed, t
from memory.models import Scope
from tests import test_matrix_polish as polish
from tests.test_matrix import Human, running
from tests.test_matrix_polish import Bot
from tests.test_matrix_seams import question_with_reactions, react

ON_ONE_SYNAPSE = pytest.mark.asyncio(loop_scope="module")  # one homeserver for the whole module
syn, store, bot = polish.syn, polish.store, polish.bot  # the same fixtures: a Synapse for this module


# --- pure parts -------------------------------------------------------------------------------------


def test_a_group_is_spoken_to_as_a_group_where_a_text_has_a_group_form() -> None:
    assert addressed("rules_head", group=True) == "rules_head_group"
    assert addressed("rules_head", group=False) == "rules_head"
    assert addressed("rule_off", group=True) == "rule_off"  # no group form: the same words
    for key in ("rules_head", "rule_pending", "memories_empty", "rules_empty", "profile_question", "profile_head"):
        german = t("de", addressed(key, True), first=1, last=2, total=2, fact="x")
        assert not {"du", "dich", "dein", "hast"} & set(german.lower().replace(":", " ").split()), german
        assert set(TEXTS[addressed(key, True)]) == {"de", "en"}
    assert "ihr" in t("de", "rules_head_group", first=1, last=4, total=9).split()
    assert t("de", "rule_pending_group") == "wartet auf euer Ja"


def test_rules_take_a_word_and_a_number_in_german_and_english() -> None:
    assert rule_words("aus 7") == ("off", 7) and rule_words("off 7") == ("off", 7)
    assert rule_words("an 7") == ("on", 7) and rule_words("On 7") == ("on", 7)
    assert rule_words("löschen #9") == ("del", 9) and rule_words("delete 9") == ("del", 9)
    for wrong in ("aus", "7", "aus sieben", "weg 7", "aus 7 8", ""):
        assert rule_words(wrong) is None, wrong


def test_a_dm_rule_question_shows_the_same_legend_as_a_group() -> None:
    row = rule_buttons(3, "de")
    pairs, legend = reaction_choices((row,), "de")  # a direct room and a group: one legend (issue 52)
    assert pairs == [("👍", "rule:yes:3"), ("👎", "rule:no:3")] and legend == "Reagiere mit: 👍 Ja · 👎 Nein"
    assert reaction_choices((rule_buttons(3, "en"),), "en")[1] == "React with: 👍 Yes · 👎 No"


# --- helpers ------------------------------------------------------------------------------------------


async def taught(bot: Bot, scope: Scope, count: int, pending: int = 0) -> None:
    """`count` rules the scope taught, numbered #1 … #count in that order; the last `pending` still asked."""
    for n in range(1, count + 1):
        rule = await bot.store.rules.propose(scope, f"Regel Nummer {n}")
        if n <= count - pending:
            await bot.store.rules.decide(scope, rule.id, "active", reason="test")


async def answer(person: Human, room: str, bot: Bot, text: str) -> str:
    await person.say(room, text)
    [reply] = await person.wait_for(room, bot.said)
    assert isinstance(reply, RoomMessageText)
    return reply.body


def bot_reactions(bot: Bot, under: str) -> object:
    return lambda e: isinstance(e, ReactionEvent) and e.sender == bot.bot_id and e.reacts_to == under


# --- the real thing -----------------------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_nine_rules_are_paged_and_seven_and_nine_are_reached_by_words(bot: Bot) -> None:
    anna = await bot.person("Anna")
    scope = await bot.engine.scope_for(anna.user_id)
    await taught(bot, scope, 9)
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)

        await anna.say(room, "!rules")
        events: list[Event] = await anna.wait_for(
            room, lambda e: bot.said(e) or (isinstance(e, ReactionEvent) and e.sender == bot.bot_id), count=10)
        [first] = [e for e in events if bot.said(e)]
        assert isinstance(first, RoomMessageText)
        lines = first.body.splitlines()
        assert lines[0] == "Regeln, die du mir beigebracht hast (1–4 von 9):"
        assert lines[1:5] == [f"#{n} Regel Nummer {n} (aktiv)" for n in range(1, 5)]
        assert "!rules aus 7" in first.body  # the words for the rules beyond the buttons, with Matrix's '!'
        assert f"{KEYCAPS[8]} Weiter ▶" in first.body  # four rules' two buttons each, then the next page
        assert len([e for e in events if isinstance(e, ReactionEvent)]) == 9

        assert await answer(anna, room, bot, "!rules aus 7") == "Regel #7 ist aus."
        assert await answer(anna, room, bot, "!rules delete #9") == "Regel #9 ist gelöscht."
        assert await answer(anna, room, bot, "!rules aus 7") == "Regel #7 ist aus – daran ändert das nichts."
        assert await answer(anna, room, bot, "!rules löschen 42") == "Eine Regel #42 gibt es nicht – !rules zeigt alle."
        assert await answer(anna, room, bot, "!rules weg 3") == bang_usage()
        assert {r.text: r.status for r in await bot.store.rules.list(scope)} == {
            **{f"Regel Nummer {n}": "active" for n in (1, 2, 3, 4, 5, 6, 8)}, "Regel Nummer 7": "disabled"}

        await react(anna, room, first.event_id, KEYCAPS[8])  # Weiter ▶ under the first page
        page_two = await answer_to_press(anna, room, bot)
        assert page_two.splitlines()[:5] == ["Regeln, die du mir beigebracht hast (5–8 von 8):",
                                             "#5 Regel Nummer 5 (aktiv)", "#6 Regel Nummer 6 (aktiv)",
                                             "#7 Regel Nummer 7 (aus)", "#8 Regel Nummer 8 (aktiv)"]
        assert f"{KEYCAPS[8]} ◀ Zurück" in page_two and "Weiter" not in page_two


def bang_usage() -> str:
    return t("de", "rules_usage").replace("/rules", "!rules")


async def answer_to_press(person: Human, room: str, bot: Bot) -> str:
    [shown] = await person.wait_for(room, bot.said)
    assert isinstance(shown, RoomMessageText)
    return shown.body


@ON_ONE_SYNAPSE
async def test_in_a_group_the_texts_speak_to_the_group_and_its_question_has_a_legend(bot: Bot) -> None:
    anna, eve = await bot.person("Anna"), await bot.person("Eve")
    family = await anna.open_group(bot.bot_id, eve.user_id)
    await eve.client.join(family)
    group = await bot.engine.scope_for(f"mx:group:{family}")
    await taught(bot, group, 2, pending=1)
    settings = {"allowed_users": frozenset({anna.user_id}), "admins": frozenset({anna.user_id}),
                "allowed_rooms": frozenset({family})}
    async with running(bot.channel(**settings)):
        await anna.wait_for(family, bot.joined)
        shown = await answer(anna, family, bot, "Mnemo: !rules")  # addressed, as in any room
        assert shown.splitlines()[:3] == ["Regeln, die ihr mir beigebracht habt (1–2 von 2):",
                                          "#1 Regel Nummer 1 (aktiv)", "#2 Regel Nummer 2 (wartet auf euer Ja)"]
        assert await answer(anna, family, bot, "Mnemo: !memories") == "Ich habe mir noch nichts über euch gemerkt."

        bot.chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Immer kurz antworten."})])
        bot.chat.enqueue("Gut.")
        await anna.say(family, "Mnemo: antworte uns immer kurz")
        question, _ = await question_with_reactions(anna, family, bot)
        assert question.body == t("de", "rule_question", rule="Immer kurz antworten.") + \
            "\n\nReagiere mit: 👍 Ja · 👎 Nein"
        await react(anna, family, question.event_id, "👍")
        [saved] = await anna.wait_for(family, bot.said)
        assert getattr(saved, "body", "") == "📌 Gemerkt: Immer kurz antworten."
    assert "Immer kurz antworten." in [r.text for r in await bot.store.rules.list(group, "active")]

    dm_anna = await bot.engine.scope_for(anna.user_id)  # in her own room she is spoken to as one person
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        assert await answer(anna, room, bot, "!memories") == "Ich habe mir noch nichts über dich gemerkt."
    assert await bot.store.rules.list(dm_anna) == []
