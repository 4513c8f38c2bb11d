"""Importance and lifecycle: unused notes fade (faster when unimportant), stay findable, and come back."""
from __future__ import annotations

import time

import pytest

from memory.search.ranking import FADED, faded, note_strength
from memory.store import MemoryStore

pytestmark = pytest.mark.both_backends("ranking columns and their updates")

DAY = 86400.0


@pytest.mark.parametrize("days, importance, gone", [
    (0, 1, False), (110, 1, True), (30, 1, False), (200, 5, False), (310, 5, True),
    (310, 10, False), (1000, 10, False), (1300, 10, True),
])
def test_fading_depends_on_importance(days: float, importance: int, gone: bool) -> None:
    assert faded(days, importance) is gone


def test_important_notes_fade_slower() -> None:
    assert note_strength(60, 9) > note_strength(60, 5) > note_strength(60, 2)
    assert note_strength(0, 1) == 1.0 and FADED < 1.0


async def test_a_faded_note_leaves_the_default_search_and_comes_back_when_recalled(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    now = time.time()
    old = (await store.notes.add(scope, "Anna mochte früher Origami", importance=2, created_at=now - 200 * DAY)).note
    kept = (await store.notes.add(scope, "Anna mochte früher Origami und Kraniche", importance=9,
                                  created_at=now - 200 * DAY, dedupe=False)).note
    default = await store.search(scope, "Origami", now=now)
    assert [h.item_id for h in default] == [kept.id], "the unimportant old note faded"
    recalled = await store.search(scope, "Origami", now=now, include_faded=True, use=True)
    assert {h.item_id for h in recalled} == {old.id, kept.id}, "faded notes stay findable"
    again = await store.search(scope, "Origami", now=now + 1)
    assert {h.item_id for h in again} == {old.id, kept.id}, "a recall brings it back"
