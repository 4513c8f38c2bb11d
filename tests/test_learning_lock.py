"""The learning lock across workers: an erasure on one worker while another learns from the same person leaves
nothing of them, a waiting or cut-off learning run writes nothing back, and a dead holder's lock is taken over.
Two stores on one database stand for two worker processes (both backends)."""
from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from memory.db import Database
from memory.journal import NewMessage
from memory.learning_locks import LEASE_SECONDS, LearningLocks
from memory.models import Scope
from memory.store import MemoryStore
from tests.fakes.llm import Call, GatedLLM, ScriptedLLM

pytestmark = pytest.mark.both_backends("the learning lock is a lease row two connections compete for")

WORD = "Zitteraal"  # the person's distinctive word: in their messages, the model's note and the summary
T0 = 1_800_000_000.0


def is_extraction(call: Call) -> bool:
    return bool(call.json_schema) and "facts" in call.json_schema.get("properties", {})  # type: ignore[union-attr]


def is_summary(call: Call) -> bool:
    return call.messages[-1].content.startswith("Current summary:")


def answer(call: Call) -> str:
    """What the background model finds: a note about the word, and a summary naming it."""
    if is_extraction(call):
        ids = [int(m) for m in re.findall(r"\[(\d+)\] user:", call.messages[-1].content)]
        return json.dumps({"facts": [{"text": f"Anna hat Angst vor dem {WORD} im Baggersee.", "source_ids": ids}],
                           "content": [], "profile": []})
    return f"Anna erzählte vom {WORD} im Baggersee."


async def history(store: MemoryStore, scope: Scope, exchanges: int) -> None:
    """Earlier exchanges about the word, enough that the summary folds some of them in."""
    await store.messages.add_many(scope, [NewMessage("user" if i % 2 == 0 else "assistant",
                                                     f"Nachricht {i} über den {WORD}", T0 + i)
                                          for i in range(2 * exchanges)])


async def dump(db: Database) -> str:
    """Every table of the database as text (on SQLite also the tables behind the full-text and vector tables)."""
    async with db.reading() as tx:
        parts = [repr(await tx.fetchall(f"SELECT * FROM {table}")) for table in sorted(await tx.table_names())]
    return "\n".join(parts).lower()


async def as_far_as_it_goes(task: asyncio.Future[object], seconds: float = 0.3) -> None:
    """Let a task run until it is done or has waited `seconds` (an erasure not held back is done well before)."""
    for _ in range(int(seconds / 0.005)):
        if task.done():
            return
        await asyncio.sleep(0.005)


async def nothing_left(store: MemoryStore, scope: Scope) -> None:
    assert await store.notes.list(scope) == []
    assert await store.messages.count(scope) == 0
    async with store.db.reading() as tx:
        assert await tx.fetchall("SELECT summary FROM conversation_state WHERE scope_id = ?", (scope.id,)) == []
    assert WORD.lower() not in await dump(store.db)


@pytest.mark.parametrize("in_flight", ["extraction", "summary"])
async def test_deleteme_on_one_worker_while_another_learns_leaves_nothing_of_the_person(
    store: MemoryStore, second_store: MemoryStore, in_flight: str,
) -> None:
    background = GatedLLM("background", held=is_extraction if in_flight == "extraction" else is_summary)
    background.responder = answer
    config = EngineConfig(relevance_floor=0.0, recent_messages=4)
    worker_a = Engine(store, ScriptedLLM("chat"), background, config)
    worker_b = Engine(second_store, ScriptedLLM("chat"), ScriptedLLM("background"), config)
    scope = await worker_a.scope_for("anna")
    await history(store, scope, 8)
    worker_a.chat.enqueue("Oh nein!")  # type: ignore[attr-defined]
    await worker_a.handle(Incoming("anna", f"Der {WORD} im Baggersee macht mir Angst"))
    await asyncio.wait_for(background.waiting.wait(), 5)  # worker A's learning run is in its model call

    deleting = asyncio.ensure_future(Commands(worker_b).press("anna", "deleteme:yes"))
    await as_far_as_it_goes(deleting)
    assert not deleting.done()  # worker B waits for worker A's run
    background.gate.set()
    await asyncio.wait_for(deleting, 5)
    await worker_a.drain()

    assert [c for c in background.calls if is_extraction(c)] and [c for c in background.calls if is_summary(c)]
    await nothing_left(store, scope)
    await nothing_left(second_store, scope)
    await worker_a.close()
    await worker_b.close()


async def test_a_learning_run_that_lost_its_lock_to_an_erasure_writes_nothing_back(
    store: MemoryStore, second_store: MemoryStore,
) -> None:
    background = GatedLLM("background", held=is_extraction)
    background.responder = answer
    worker_a = Engine(store, ScriptedLLM("chat"), background, EngineConfig(relevance_floor=0.0, recent_messages=4))
    scope = await worker_a.scope_for("anna")
    await history(store, scope, 8)
    worker_a.chat.enqueue("Oh nein!")  # type: ignore[attr-defined]
    await worker_a.handle(Incoming("anna", f"Der {WORD} im Baggersee macht mir Angst"))
    await asyncio.wait_for(background.waiting.wait(), 5)

    # worker A stalls past its lease; worker B takes the lock over and erases the person
    later = time.time() + LEASE_SECONDS + 1
    async with second_store.learning_locks.hold(scope, lambda: later):
        await second_store.delete_scope(scope)
    background.gate.set()
    await worker_a.drain()

    await nothing_left(store, scope)
    await worker_a.close()


async def test_a_dead_holders_learning_lock_is_taken_over_when_its_lease_runs_out(
    store: MemoryStore, second_store: MemoryStore,
) -> None:
    scope = await store.scope("mnemo", "anna")
    now = T0
    worker_b = LearningLocks(second_store.leases, "worker-b")
    dying = worker_b.hold(scope, lambda: now)
    dead = await dying.__aenter__()  # worker B takes the lock and dies: it neither renews nor releases it

    async def take() -> str | None:
        async with store.learning_locks.hold(scope, lambda: now):
            return await store.learning_locks.holder(scope, now)

    waiting = asyncio.ensure_future(take())
    await asyncio.sleep(0.01)
    assert not waiting.done() and await store.learning_locks.holder(scope, now) == dead.holder
    now = T0 + LEASE_SECONDS  # the dead holder's lease runs out
    taken = await asyncio.wait_for(waiting, 2)
    assert taken is not None and taken.startswith(store.learning_locks.worker) and taken != dead.holder

    async with store.learning_locks.hold(scope, lambda: now):
        await dying.__aexit__(None, None, None)  # the old holder coming back frees nothing that is not its own
        assert (await store.learning_locks.holder(scope, now) or "").startswith(store.learning_locks.worker)
    assert await store.learning_locks.holder(scope, now) is None
