"""A 👍 that decides a question on Telegram, killed (SIGKILL) after the decision and before its message showed it:
the restart replays the reaction from the inbox, decides nothing twice and shows the decision once."""
from __future__ import annotations

from pathlib import Path

import pytest

from bot.conversation.engine import Engine
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.test_channels_crashes import USER, Writer, child, count, restarted, settled, until

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


async def test_a_reaction_killed_after_it_decided_is_shown_once_after_the_restart(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, tmp_path: Path,
) -> None:
    scope = await engine.scope_for(f"tg:{USER}")
    rule = await store.rules.propose(scope, "Antworte kürzer.")
    async with child(tg, store, "normal"):
        tg.send_text(USER, "/rules")
        (listing,) = await tg.wait_for_sent(1)
        await until(lambda: _choices(store), "the question's buttons to be recorded")
        tg.hangs["editmessagetext"] = 1  # the rule is decided, the answer recorded, then the process hangs
        tg.send_reaction(USER, listing["message_id"], new=("👍",))
        await until(lambda: _decided(store), "the reaction to decide the rule")
        await tg.wait_until(lambda: tg.hangs["editmessagetext"] == 0, what="the child to hang editing")
    assert tg.edits == []
    async with restarted(tg, engine, Writer(), tmp_path):
        await tg.wait_until(lambda: bool(tg.edits), what="the replayed reaction")
        await settled(tg)
    saved = t("de", "rule_saved", rule="Antworte kürzer.")
    assert [e["text"] for e in tg.edits] == [saved] and "reply_markup" not in tg.messages[listing["message_id"]]
    assert (await store.rules.get(scope, rule.id)).status == "active"
    assert await count(store, "SELECT count(*) FROM audit_log WHERE item_type = 'rule' AND action = 'update'") == 1
    assert len(tg.sent) == 1 and await store.reactions.feedback(scope, 0) == []


async def _choices(store: MemoryStore) -> bool:
    return await count(store, "SELECT count(*) FROM choices") > 0


async def _decided(store: MemoryStore) -> bool:
    return await count(store, "SELECT count(*) FROM command_runs WHERE state = 'answered'") > 0
