"""Admission control: small talk is dropped and counted, a specific fact passes, a contradiction replaces."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.admin import ops
from bot.learning import extraction
from bot.settings import Settings
from memory.ledgers.undo import undo_latest
from memory.search.admission import Neighbour, Thresholds, assess, contradicts, novelty, specificity
from memory.search.embedder import make_embedder
from memory.store import MemoryStore
from tests.fakes.llm import Call, ScriptedLLM

pytestmark = pytest.mark.both_backends("dedupe and replacement at admission")

SMALL_TALK = "Anna findet das Wetter schön."
SPECIFIC = "Anna arbeitet seit 2019 als Pflegerin im Klinikum Nord."


def facts_model(*facts: str) -> ScriptedLLM:
    """A background model whose extraction yields these facts from the first user message."""
    llm = ScriptedLLM("background")

    def respond(call: Call) -> str:
        first = int(re.findall(r"^\[(\d+)\] user:", call.messages[0].content, re.M)[0])
        return json.dumps({"facts": [{"text": f, "source_ids": [first]} for f in facts], "content": [], "profile": []})

    llm.responder = respond  # type: ignore[assignment]
    return llm


@pytest.mark.parametrize("text", [SMALL_TALK, "Anna sagt hallo.", "Anna chatted about the weather today."])
def test_small_talk_is_not_specific(text: str) -> None:
    assert specificity(text) == 0.0
    assert assess(text, [], Thresholds(), related=0.3, duplicate=0.82).verdict == "drop"


@pytest.mark.parametrize("text", [SPECIFIC, "Miriam arbeitet im Krankenhaus.", "Anna is allergic to peanuts."])
def test_specific_facts_pass(text: str) -> None:
    result = assess(text, [], Thresholds(), related=0.3, duplicate=0.82)
    assert result.verdict == "admit" and result.score >= 0.7


def test_novelty_repeats_and_contradictions() -> None:
    assert novelty(0.2, 0.3, 0.82) == 1.0 and novelty(0.9, 0.3, 0.82) == 0.0 and 0 < novelty(0.6, 0.3, 0.82) < 1
    near = [Neighbour(7, "Anna arbeitet als Pflegerin im Klinikum Nord.", 0.9)]
    repeat = assess("Anna arbeitet als Pflegerin im Klinikum Nord!", near, Thresholds(), related=0.3, duplicate=0.82)
    assert (repeat.verdict, repeat.reason, repeat.other) == ("drop", "duplicate", 7)
    old = [Neighbour(3, "Anna trinkt Kaffee.", 0.8)]
    flipped = assess("Anna trinkt keinen Kaffee mehr.", old, Thresholds(), related=0.3, duplicate=0.82)
    assert (flipped.verdict, flipped.other) == ("contradiction", 3)
    assert not contradicts("Anna trinkt Tee.", "Anna trinkt Kaffee.")
    assert contradicts("Anna does not like jazz.", "Anna likes jazz.")
    assert assess(SMALL_TALK, [], Thresholds(min_score=0.0), related=0.3, duplicate=0.82).verdict == "admit"


async def test_extraction_drops_small_talk_and_keeps_the_fact(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.messages.add(scope, "user", "Schönes Wetter heute! Ich arbeite übrigens seit 2019 im Klinikum Nord.")
    stored = await extraction.extract(store, facts_model(SMALL_TALK, SPECIFIC), scope, admission=Thresholds())
    assert stored == 1
    assert [n.text for n in await store.notes.list(scope)] == [SPECIFIC]
    assert await store.admission.counts(scope) == {"admitted": 1, "dropped": 1, "contradictions": 0}


async def test_without_admission_everything_is_stored(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    await store.messages.add(scope, "user", "Schönes Wetter heute!")
    assert await extraction.extract(store, facts_model(SMALL_TALK), scope, admission=None) == 1
    assert await store.admission.counts(scope) == {"admitted": 0, "dropped": 0, "contradictions": 0}


async def test_a_contradiction_replaces_the_old_note_instead_of_storing_both(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    old = (await store.notes.add(scope, "Anna trinkt morgens Kaffee.")).note
    await store.messages.add(scope, "user", "Ich trinke keinen Kaffee mehr.")
    await extraction.extract(store, facts_model("Anna trinkt morgens keinen Kaffee mehr."), scope,
                             admission=Thresholds())
    assert [n.text for n in await store.notes.list(scope)] == ["Anna trinkt morgens keinen Kaffee mehr."]
    closed = await store.notes.get(scope, old.id)
    assert closed.valid_to is not None and closed.superseded_by is not None
    assert (await store.admission.counts(scope))["contradictions"] == 1
    await undo_latest(store, scope)
    assert [n.text for n in await store.notes.list(scope)] == ["Anna trinkt morgens Kaffee."], "undoable"


async def test_mnemo_stats_shows_admitted_and_dropped(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    async with await MemoryStore.open(settings.data_dir, make_embedder()) as store:
        scope = await store.scope(settings.companion_id, "tg:42")
        await store.messages.add(scope, "user", "Schönes Wetter! Ich arbeite seit 2019 im Klinikum Nord.")
        await extraction.extract(store, facts_model(SMALL_TALK, SPECIFIC), scope, admission=Thresholds())
    [row] = await ops.stats(settings)
    assert (row["admitted"], row["dropped"], row["contradictions"], row["notes"]) == (1, 1, 0, 1)


async def test_mnemo_stats_lists_no_one_who_asked_deleteme_until_they_write_again(tmp_path: Path) -> None:
    """Issue 53: after /deleteme `mnemo stats` still listed the user id with zeros."""
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    async with await MemoryStore.open(settings.data_dir, make_embedder()) as store:
        gone, stays = (await store.scope(settings.companion_id, "tg:42"),
                       await store.scope(settings.companion_id, "tg:7"))
        await store.messages.add(gone, "user", "Ich heiße Anna.")
        await store.messages.add(stays, "user", "Ich heiße Ben.")
        await store.delete_scope(gone)
    assert [row["user"] for row in await ops.stats(settings)] == ["tg:7"]
    async with await MemoryStore.open(settings.data_dir, make_embedder()) as store:
        await store.messages.add(await store.scope(settings.companion_id, "tg:42"), "user", "Hallo, ich bin wieder da.")
    assert [(row["user"], row["messages"]) for row in await ops.stats(settings)] == [("tg:42", 1), ("tg:7", 1)]
