"""The command catalog: /help and the menus come from the declarations, who may run and press what in a group."""
from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.commands.catalog import BUTTONS, COMMANDS, DECLARED, READ_ONLY, changes_memory, changes_something, menu
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM

GROUP = "tg:group:-100"


@pytest.fixture
async def commands(store: MemoryStore) -> AsyncIterator[Commands]:
    engine = Engine(store, ScriptedLLM("chat"), ScriptedLLM("background"), EngineConfig(relevance_floor=0.0))
    yield Commands(engine)
    await engine.close()


async def test_help_lists_every_declared_command_in_the_menus_order(commands: Commands) -> None:
    reply = await commands.run("anna", "/help")
    assert reply is not None
    lines = reply.bubbles[0].splitlines()
    assert lines[0] == t("de", "help_head")
    assert lines[1:] == [f"/{c.name} – {c.de}" for c in DECLARED]
    assert [name for name, _ in menu("en")] == list(COMMANDS) == [c.name for c in DECLARED]


async def test_in_a_group_a_member_who_is_no_admin_may_run_no_command(commands: Commands) -> None:
    refused = await commands.run(GROUP, "/memories", admin=False)
    assert refused is not None and refused.bubbles == (t("de", "group_admins_only"),)
    answered = await commands.run(GROUP, "/memories", admin=True)
    assert answered is not None and answered.bubbles == (t("de", "memories_empty_group"),)  # "über euch"
    private = await commands.run("anna", "/memories", admin=False)  # no group: `admin` does not matter
    assert private is not None and private.bubbles == (t("de", "memories_empty"),)


def test_only_paging_showing_a_person_and_cancel_are_open_to_every_member() -> None:
    for data in ("mem:10", "mem:-10", "rules:4", "people:show:3", "cancel"):
        assert not changes_memory(data), data
    for data in ("cancel:x", "mem:a", "people:forget:3", "people:show:x", "forget:3", "rule:yes:3", "rem:cancel:1",
                 "deleteme:yes", "why:wrong:3", "profile:no:2", "unknown:1", "review:yes:1", "review:allyes:1:4",
                 "tool:yes:1", "tool:no:1", "saved:undo:extract:0123456789ab"):
        assert changes_memory(data), data
    assert set(BUTTONS) == {"mem", "forget", "rule", "rules", "why", "profile", "deleteme", "cancel", "rem", "people",
                            "review", "tool", "saved"}


def test_a_command_that_never_changes_anything_is_read_only() -> None:
    assert {"start", "help", "memories", "export", "why", "reminders"} <= READ_ONLY
    assert not changes_something("rules", "") and changes_something("rules", "aus 7")  # showing them, switching one
    assert not READ_ONLY & {"forget", "undo", "think", "writediary", "deleteme", "settings", "diary", "people"}
    assert all(not changes_something(name, "") for name in READ_ONLY)
    assert changes_something("nosuchcommand", "")
