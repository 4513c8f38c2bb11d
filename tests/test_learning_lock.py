"""The learning lock across workers: an erasure on one worker while another learns from the same person leaves
nothing of them, a waiting or cut-off learning run writes nothing back, and a dead holder's lock is taken over.
Two stores on one database stand for two worker processes (both backends)."""
from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from memory.ledgers.journal import NewMessage
from memory.models import Scope
from memory.search.embedder import Embedder
from memory.storage.db import Database
from memory.storage.learning_locks import LEASE_SECONDS, LearningLocks, holder_is_gone, lease_name, process_runs
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


async def as_far_as_it_goes(task: asyncio.Future[Any], seconds: float = 0.3) -> None:
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


async def test_a_learning_lock_left_by_a_dead_worker_on_another_host_holds_a_person_up_at_most_15_s(
    store: MemoryStore, second_store: MemoryStore,
) -> None:
    """Issue 53: a worker on another host that died holding a person's learning lock delayed their learning by 60 s
    (nothing here can see whether a process of another host runs, so its lease has to run out)."""
    scope = await store.scope("mnemo", "anna")
    now = T0
    elsewhere = LearningLocks(second_store.leases, "other-host:4026531836:4242:abcd1234")
    left = elsewhere.hold(scope, lambda: now)  # kept referenced: a collected hold would release the lock
    await left.__aenter__()  # taken, then the host went away: never renewed, never released

    async def take() -> str | None:
        async with store.learning_locks.hold(scope, lambda: now):
            return await store.learning_locks.holder(scope, now)

    waiting = asyncio.ensure_future(take())
    now = T0 + 14.0
    await asyncio.sleep(0.2)
    assert not waiting.done()
    now = T0 + 15.0
    taken = await asyncio.wait_for(waiting, 2)
    assert (taken or "").startswith(store.learning_locks.worker)


def files_holding(folder: Path, word: str) -> list[str]:
    """Every file under folder whose bytes hold the word (UTF-8, any case the test wrote it in), by name."""
    pieces = (word.encode(), word.lower().encode())
    return [p.name for p in folder.rglob("*") if p.is_file() and any(piece in p.read_bytes() for piece in pieces)]


async def test_deleteme_with_three_workers_each_cut_off_while_learning_leaves_no_byte_of_the_person(
    store: MemoryStore, second_store: MemoryStore, tmp_path: Path, embedder: Embedder, database_url: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The figure of issue 40: three workers each have a learning run of the person in flight when /deleteme comes:
    worker A in its model call, worker B waiting for the lock and then killed, worker C waiting beside its own
    /deleteme. Afterwards no row of any worker's database, no file, no log line at INFO or above holds a word."""
    caplog.set_level(logging.INFO)  # what a server's log keeps
    third_store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, semantic_dedupe=0.97,
                                         database_url=database_url)
    stores = (store, second_store, third_store)
    backgrounds = [GatedLLM("background", held=is_extraction) for _ in stores]
    config = EngineConfig(relevance_floor=0.0, recent_messages=4)
    workers = [Engine(s, ScriptedLLM("chat"), b, config) for s, b in zip(stores, backgrounds)]
    for background in backgrounds:
        background.responder = answer
    a, b, c = workers
    scope = await a.scope_for("anna")
    await history(store, scope, 8)
    for n, worker in enumerate(workers):
        worker.chat.enqueue(f"Oh nein, der {WORD}!")  # type: ignore[attr-defined]
        await worker.handle(Incoming("anna", f"Der {WORD} im Baggersee macht mir Angst ({n})"))
    await asyncio.wait_for(backgrounds[0].waiting.wait(), 5)  # A learns; B's and C's runs wait for A's lock
    assert (await store.learning_locks.holder(scope, time.time()) or "").startswith(store.learning_locks.worker)
    assert not backgrounds[1].waiting.is_set() and not backgrounds[2].waiting.is_set()

    deleting = asyncio.ensure_future(Commands(c).press("anna", "deleteme:yes"))
    await as_far_as_it_goes(deleting)
    assert not deleting.done()  # C's erasure waits for A's run
    await b.close()  # worker B is killed while its run waits for the lock
    for background in backgrounds:
        background.gate.set()
    await asyncio.wait_for(deleting, 10)
    await a.drain()
    await c.drain()

    assert [call for call in backgrounds[0].calls if is_extraction(call)]  # A's run got as far as its model call
    for s in stores:
        await nothing_left(s, scope)
    if database_url is None:  # on PostgreSQL the files are the server's; the rows above are what it holds
        for s in stores:
            await s.db.checkpoint()
        assert files_holding(tmp_path, WORD) == []
    lines = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert lines  # the workers did log (erasure, extraction), only not the words
    assert [r.getMessage() for r in lines if WORD.lower() in (r.getMessage() + (r.exc_text or "")).lower()] == []
    await a.close()
    await c.close()
    await third_store.close()


HERE = ("box", "4026531836", 500)


def test_a_holder_counts_as_gone_only_when_it_was_a_process_of_this_host_and_namespace_that_no_longer_runs() -> None:
    def runs(pid: int) -> bool:
        return pid == 600

    assert holder_is_gone("box:4026531836:700:1a2b3c4d/9f8e7d6c5b4a", HERE, runs)  # ours, ended
    assert not holder_is_gone("box:4026531836:600:1a2b3c4d/9f8e7d6c5b4a", HERE, runs)  # ours, running
    assert not holder_is_gone("box:4026531836:500:1a2b3c4d/9f8e7d6c5b4a", HERE, runs)  # this very process
    assert not holder_is_gone("other:4026531836:700:1a2b3c4d/9f8e7d6c5b4a", HERE, runs)  # another host
    assert not holder_is_gone("box:4026532000:700:1a2b3c4d/9f8e7d6c5b4a", HERE, runs)  # another container
    assert not holder_is_gone("box::700:1a2b3c4d/9f8e7d6c5b4a", ("box", "", 500), runs)  # no namespace known
    for odd in ("worker-b/9f8e7d6c5b4a", "box:4026531836:x:1a2b/1", "", "box:4026531836:700"):
        assert not holder_is_gone(odd, HERE, runs), odd


async def test_a_lock_left_by_a_killed_process_of_this_host_is_taken_at_once_a_running_ones_is_waited_for(
    store: MemoryStore,
) -> None:
    """A worker killed while it held a person's learning lock and started again (the diary cut off by a kill, then
    asked for again) does not wait the lease's minute; a holder that still runs keeps its lock."""
    scope = await store.scope("mnemo", "anna")
    host, namespace, _ = store.learning_locks.here
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as running:
        try:
            for pid, gone in ((running.pid, False), (await ended_pid(), True)):
                holder = f"{host}:{namespace}:{pid}:0badc0de/0123456789ab"
                assert process_runs(pid) is not gone
                assert await store.leases.take(lease_name(scope.id), holder, time.time(), LEASE_SECONDS)
                taking = asyncio.ensure_future(take_and_tell(store, scope))
                await as_far_as_it_goes(taking, 1.0)
                assert taking.done() is gone, holder
                if gone:
                    assert (await taking or "").startswith(store.learning_locks.worker)
                else:
                    taking.cancel()
                    await asyncio.gather(taking, return_exceptions=True)
                    await store.leases.release(lease_name(scope.id), holder)
        finally:
            running.kill()


async def ended_pid() -> int:
    """The id of a process that ran and was reaped."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await proc.wait()
    return proc.pid


async def take_and_tell(store: MemoryStore, scope: Scope) -> str | None:
    async with store.learning_locks.hold(scope):
        return await store.learning_locks.holder(scope, time.time())
