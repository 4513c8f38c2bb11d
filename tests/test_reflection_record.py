"""Reflection records that it ran without a fake thought, counts only the person's words as news, and /think and
/writediary say truly why they failed."""
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.errors import LLMUnavailable
from bot.texts import t
from memory.migrations.from_m013 import m024_reflections_failures_and_late_pushes
from memory.models import Scope
from memory.search import integrity
from memory.search.index import SearchIndex
from memory.store import MemoryStore
from scheduler.reflection import has_news, needs_reflection, reflect
from scheduler.service import Scheduler
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM
from tests.old_layouts import migrated_before

pytestmark = pytest.mark.both_backends("reflection runs recorded")

NIGHT = datetime(2026, 11, 24, 22, 0).timestamp()


class Writer:
    """The background writer: answers from a list (a text, or an error to raise) and records each call."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[str] = []

    async def __call__(self, instructions: str, material: str, *, max_tokens: int = 800) -> str:
        self.calls.append(instructions)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


NOTHING = json.dumps({"thoughts": [], "concern": ""})


@pytest.fixture
async def anna(store: MemoryStore) -> Scope:
    scope = await store.scope("mnemo", "tg:1")
    await store.messages.add(scope, "user", "Heute war ein ruhiger Tag.", created_at=NIGHT - 7200)
    await store.messages.add(scope, "assistant", "Schön, dass es ruhig war.", created_at=NIGHT - 7190)
    return scope


@pytest.fixture
async def commands(store: MemoryStore, tmp_path: Path) -> AsyncIterator[tuple[Commands, Writer]]:
    writer = Writer()
    engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(relevance_floor=0.0))
    scheduler = Scheduler(store, "mnemo", writer, engine, None, engine.config.zone, tmp_path)  # type: ignore[arg-type]
    yield Commands(engine, scheduler), writer
    await engine.close()


async def test_a_reflection_that_finds_nothing_stores_no_thought_but_records_that_it_ran(
    store: MemoryStore, anna: Scope, commands: tuple[Commands, Writer],
) -> None:
    assert await needs_reflection(store, anna)
    result = await reflect(store, Writer(NOTHING), anna, now=NIGHT)
    assert result is not None and result.thoughts == ()
    assert await store.thoughts.latest(anna, 10) == []
    assert await store.search(anna, "nichts Neues", ("thought",)) == []
    assert await store.state.get(anna, "reflected_at") == NIGHT
    assert not await needs_reflection(store, anna), "it ran: the same messages are no news tomorrow"
    reply = await commands[0].run("tg:1", "/thoughts")
    assert reply is not None and reply.bubbles == (t("de", "thoughts_empty"),)


async def test_the_companions_own_messages_are_no_news_to_reflect_on(store: MemoryStore, anna: Scope) -> None:
    await reflect(store, Writer(NOTHING), anna, now=NIGHT)
    await store.messages.add(anna, "assistant", "Wie geht es dir?", channel="proactive", proactive=True,
                             created_at=NIGHT + 3600 * 12)  # a check-in
    await store.messages.add(anna, "assistant", "⏰ Zahnarzt", channel="proactive", created_at=NIGHT + 3600 * 14)
    await store.messages.add(anna, "assistant", "📔 2026-11-25\nEin stiller Tag.", channel="proactive",
                             created_at=NIGHT + 3600 * 25.75)
    assert not await needs_reflection(store, anna)
    writer = Writer()
    scheduler = Scheduler(store, "mnemo", writer, None, None, None, Path("."))  # type: ignore[arg-type]
    await scheduler.run("reflect", anna.id, NIGHT + 86400)
    assert writer.calls == [], "no reflection on a night the person did not write"
    await store.messages.add(anna, "user", "Danke, gut!", created_at=NIGHT + 86400 + 60)
    assert await needs_reflection(store, anna)


def test_news_is_a_message_of_the_person_after_the_last_reflection() -> None:
    assert has_news(100.0, None) and has_news(100.0, 99.0)
    assert not has_news(100.0, 100.0) and not has_news(None, None) and not has_news(None, 5.0)


async def test_the_migration_removes_the_old_nothing_new_thoughts_with_their_index_entries(tmp_path: Path) -> None:
    path, embedder = tmp_path / "mnemo.sqlite3", FakeEmbedder()
    db = await migrated_before(path, m024_reflections_failures_and_late_pushes)  # as the code before m024 left it
    index = SearchIndex(db, embedder)
    await index.ensure_model()
    old = MemoryStore(db, index)
    scope = await old.scope("mnemo", "tg:1")
    kept = await old.thoughts.add(scope, "Anna wirkt müde.", origin="reflection", created_at=NIGHT - 86400)
    await old.thoughts.add(scope, "(nichts Neues)", origin="reflection", created_at=NIGHT)
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO outbox(id, scope_id, kind, text, next_try, created_at) VALUES (7, ?, 'checkin',"
                         " 'Hallo?', 0, 0)", (scope.id,))
    await db.close()

    async with await MemoryStore.open(path, embedder) as store:
        assert [th.text for th in await store.thoughts.latest(scope, 10)] == [kept.text]
        assert await store.state.get(scope, "reflected_at") == NIGHT, "when the last reflection ran is kept"
        assert await integrity.check(store) == [], "no document, vector or full-text entry is left behind"
        assert not [e for e in await store.audit_log(scope) if "nichts Neues" in json.dumps(e.after or {})]
        async with store.db.reading() as tx:
            assert (await tx.fetchone("SELECT count(*) FROM docs WHERE source = 'thought'"))[0] == 1
        [item] = await store.outbox.items(scope)
        assert (item.id, item.text, item.status) == (7, "Hallo?", "pending"), "the outbox keeps its rows"
        await store.outbox.drop(item.id, "missed its window")
        assert (await store.outbox.items(scope))[0].status == "dropped"
        added = await store.outbox.record(scope, "checkin", "Neu")
        assert added.id == 8


async def test_think_and_writediary_say_when_the_model_answered_with_something_unusable(
    anna: Scope, commands: tuple[Commands, Writer],
) -> None:
    cmds, writer = commands
    await cmds.store.messages.add(anna, "user", "Schreib doch heute Tagebuch.")  # now: /writediary has a day
    writer.answers = ["Ich denke, also bin ich.", LLMUnavailable("down"), "", RuntimeError("disk full")]
    assert (await cmds.run("tg:1", "/think")).bubbles == (t("de", "think_unusable"),)  # type: ignore[union-attr]
    assert (await cmds.run("tg:1", "/think")).bubbles == (t("de", "job_failed"),)  # type: ignore[union-attr]
    assert (await cmds.run("tg:1", "/writediary")).bubbles == (t("de", "diary_unusable"),)  # type: ignore[union-attr]
    assert (await cmds.run("tg:1", "/writediary")).bubbles == (t("de", "job_error"),)  # type: ignore[union-attr]
    assert t("en", "think_unusable") != t("de", "think_unusable") and "model" in t("en", "diary_unusable")
