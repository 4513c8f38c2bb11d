"""The planner's slots across workers (memory.storage.job_slots): one run per slot, never an older slot after a newer
one, none while another worker holds the scheduler lease, and a slot cut off by a dead worker run again by the next.
Every test runs on SQLite and on PostgreSQL, the competing workers on two connections to one database."""
from __future__ import annotations

import asyncio

import pytest

from memory.storage.leases import SCHEDULER
from memory.store import MemoryStore

pytestmark = pytest.mark.both_backends("the planner's slots across workers")

T0 = 1_800_000_000.0
HOLD = 60.0
QUARTER = 900.0


async def test_a_slot_runs_once_and_never_after_a_later_one(store: MemoryStore, second_store: MemoryStore) -> None:
    assert await store.leases.take(SCHEDULER, "w1", T0, HOLD)
    assert await store.job_slots.claim("planner", T0, "w1", T0)
    assert not await second_store.job_slots.claim("planner", T0, "w2", T0 + 1)  # w1 leads and runs it
    await store.job_slots.done("planner", T0, "w1", T0 + 2)
    assert not await store.job_slots.claim("planner", T0, "w1", T0 + 3)  # a stale job store fires it again: done

    assert await store.leases.take(SCHEDULER, "w1", T0 + QUARTER, HOLD)
    assert await store.job_slots.claim("planner", T0 + QUARTER, "w1", T0 + QUARTER)
    await store.job_slots.done("planner", T0 + QUARTER, "w1", T0 + QUARTER + 1)
    await store.leases.release(SCHEDULER, "w1")
    assert not await second_store.job_slots.claim("planner", T0 - QUARTER, "w2", T0 + QUARTER + 2)  # older: never
    slots = await second_store.job_slots.since("planner", T0 - QUARTER)
    assert [(s.slot, s.worker, s.done_at) for s in slots] == [(T0, "w1", T0 + 2),
                                                              (T0 + QUARTER, "w1", T0 + QUARTER + 1)]


async def test_a_slot_cut_off_by_a_dead_worker_runs_again_on_the_next_leader_once(
        store: MemoryStore, second_store: MemoryStore) -> None:
    assert await store.leases.take(SCHEDULER, "w1", T0, HOLD)
    assert await store.job_slots.claim("planner", T0, "w1", T0 + 1)  # w1 dies in the middle of the run
    assert not await second_store.job_slots.claim("planner", T0, "w2", T0 + 30)  # its lease still stands
    assert await second_store.leases.take(SCHEDULER, "w2", T0 + HOLD, HOLD)
    got = await asyncio.gather(second_store.job_slots.claim("planner", T0, "w2", T0 + HOLD),
                               store.job_slots.claim("planner", T0, "w1", T0 + HOLD))  # w1 was only stalled
    assert got == [True, False]
    assert not await store.job_slots.holds("planner", T0, "w1")  # w1's run stops at its next user
    assert await second_store.job_slots.holds("planner", T0, "w2")
    await store.job_slots.done("planner", T0, "w1", T0 + HOLD + 1)  # w1's run ends: the slot is not its any more
    assert (await store.job_slots.latest("planner")).done_at is None  # type: ignore[union-attr]
    await second_store.job_slots.done("planner", T0, "w2", T0 + HOLD + 2)
    latest = await store.job_slots.latest("planner")
    assert latest is not None and (latest.worker, latest.done_at) == ("w2", T0 + HOLD + 2)
    assert not await second_store.job_slots.claim("planner", T0, "w2", T0 + HOLD + 3)


async def test_one_process_reruns_its_own_slot_cut_off_and_forgets_slots_after_a_week(store: MemoryStore) -> None:
    assert await store.job_slots.claim("planner", T0, "main", T0)  # SQLite's one process: nobody holds a lease
    assert await store.job_slots.claim("planner", T0, "main", T0 + 5)  # restarted after a crash in the run
    await store.job_slots.done("planner", T0, "main", T0 + 6)
    week = 7 * 24 * 3600.0
    assert await store.job_slots.claim("planner", T0 + week + QUARTER, "main", T0 + week + QUARTER)
    await store.job_slots.done("planner", T0 + week + QUARTER, "main", T0 + week + QUARTER)
    assert [s.slot for s in await store.job_slots.since("planner", 0.0)] == [T0 + week + QUARTER]
