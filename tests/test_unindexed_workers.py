"""Messages logged while the embedder was down are indexed later, once, even when two workers do it at once."""
from __future__ import annotations

import asyncio

import pytest

from memory.store import MemoryStore

pytestmark = pytest.mark.both_backends("two workers on one database")


async def test_two_workers_indexing_the_same_waiting_messages_index_each_once(
        store: MemoryStore, second_store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    for n in range(12):  # logged without their search entry, as while the embedding server was down
        await store.messages.add(scope, "user", f"Heute war Probe Nummer {n} mit dem Orchester.", index=False)
    done = await asyncio.gather(store.messages.index_unindexed(scope.id),
                                second_store.messages.index_unindexed(scope.id))
    assert sum(done) == 12, f"each message indexed by one of the two: {done}"
    async with store.db.reading() as tx:
        entries = await tx.fetchall("SELECT item_id, count(*) FROM docs WHERE scope_id = ? AND source = 'message'"
                                    " GROUP BY item_id", (scope.id,))
        waiting = await tx.fetchone("SELECT count(*) FROM messages WHERE scope_id = ? AND doc_id IS NULL", (scope.id,))
    assert len(entries) == 12 and all(count == 1 for _, count in entries), f"search entries per message: {entries}"
    assert tuple(waiting) == (0,)
    found = await store.search(scope, "Probe Nummer 7", ("message",), k=3)
    # Each is read after the one before (memory.search.turn_context): number 8's vector holds number 7's words too.
    assert "Heute war Probe Nummer 7 mit dem Orchester." in [hit.text for hit in found[:2]]

