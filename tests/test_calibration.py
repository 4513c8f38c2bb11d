"""Floors that fit the model: the thresholds of a model other than the bundled e5 measured on its own cosines, kept
beside its name, and used by the prompt's relevance floor and the duplicate check; on SQLite and PostgreSQL, against
a fake embedding server over HTTP whose vectors are the bundled e5's shifted (tests/fakes/shifted_embedder.py)."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from bot.admin.ops import doctor, open_store
from bot.conversation.engine import Engine, EngineConfig, Incoming
from memory.search.admission import Thresholds
from memory.search.calibration import (
    ANCHORS,
    SHIPPED,
    PairCosines,
    anchors,
    calibrate,
    measure,
)
from memory.search.embedder import BUNDLED, DEFAULT_CALIBRATION, Calibration, Embedder
from memory.search.embedding_server import PROBE
from memory.store import MemoryStore
from tests.engine_kit import nothing_learned, settings_for
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.embedding_api import FakeEmbeddingServer
from tests.fakes.llm import ScriptedLLM
from tests.fakes.shifted_embedder import LIFT, NOISE, Shift, ShiftedEmbedder
from tests.test_embedding_server import server_embedder
from tests.test_reindex_server import reindex_process

pytestmark = pytest.mark.both_backends("the calibration kept in its own table (migration m052)")

QUESTION = "Was backe ich sonntags?"
BAKING = "Am Wochenende mache ich immer Zimtschnecken."
UNRELATED = "Die Heizung im Bad ist kaputt."  # e5: 0.777 to the question, below its 0.79
SAME_AGAIN = "Am Wochenende backe ich immer Zimtschnecken."  # e5: 0.992 to BAKING
OTHER_FACT = "Unter der Woche koche ich Nudeln."  # e5: 0.934 to BAKING, below its 0.95


def moved(value: float, shift: Shift) -> float:
    """Where a cosine of two different texts lands on the shifted model."""
    return (value + LIFT**2) / (1 + LIFT**2) if shift == "high" else value / (1 + NOISE**2)


def test_the_calibration_of_the_bundled_e5_gives_back_its_shipped_thresholds(real_embedder: Embedder) -> None:
    cosines = measure(real_embedder)
    assert cosines.pairs == 1824
    found = calibrate(cosines)
    assert abs(found.duplicate - SHIPPED.duplicate) < 1e-3
    assert abs(found.relevant - SHIPPED.relevant) < 1e-3
    assert found.keyword is not None and SHIPPED.keyword is not None and abs(found.keyword - SHIPPED.keyword) < 1e-3
    kept = anchors(cosines)
    assert kept.keyword is not None and ANCHORS.keyword is not None
    assert np.allclose([kept.duplicate, kept.relevant, kept.keyword],
                       [ANCHORS.duplicate, ANCHORS.relevant, ANCHORS.keyword], atol=1e-4)


def test_calibrate_moves_each_threshold_with_the_models_cosines() -> None:
    rng = np.random.default_rng(7)

    def draw(centre: float, n: int) -> tuple[float, ...]:
        return tuple(float(x) for x in rng.normal(centre, 0.02, n))

    e5 = PairCosines(draw(0.97, 30), draw(0.88, 30), draw(0.83, 30), draw(0.77, 800), draw(0.83, 30), draw(0.78, 800))
    at = anchors(e5)
    other = PairCosines(*(tuple(x**3 - 0.5 for x in getattr(e5, f)) for f in e5.__dataclass_fields__))
    found = calibrate(other, at)
    assert SHIPPED.keyword is not None and found.keyword is not None
    assert found.duplicate == pytest.approx(SHIPPED.duplicate**3 - 0.5, abs=2e-4)
    assert found.relevant == pytest.approx(SHIPPED.relevant**3 - 0.5, abs=2e-4)
    assert found.keyword == pytest.approx(SHIPPED.keyword**3 - 0.5, abs=2e-4)


@pytest.fixture
async def served(real_embedder: Embedder, request: pytest.FixtureRequest) -> AsyncIterator[FakeEmbeddingServer]:
    """A fake server whose model is the bundled e5 shifted by the test's `shift` parameter."""
    async with FakeEmbeddingServer(model="shifted-model") as fake:
        fake.vectors = ShiftedEmbedder(real_embedder, request.param)  # type: ignore[assignment]
        yield fake


async def started(tmp_path: Path, fake: FakeEmbeddingServer, database_url: str | None) -> MemoryStore:
    """The store as mnemo opens it at start, with the fake server's model and e5's prefixes."""
    settings = settings_for(tmp_path, embedding_url=fake.base_url, embedding_model=fake.model,
                            embedding_query_prefix="query: ", embedding_document_prefix="passage: ",
                            database_url=database_url)
    return await open_store(settings)


async def prompt_notes(store: MemoryStore, notes: list[str], question: str) -> str:
    """The prompt the chat model gets for `question` with `notes` stored, the relevance floor the store's own."""
    scope = await store.scope("mnemo", "anna")
    for text in notes:
        await store.notes.add(scope, text, dedupe=False)
    chat = ScriptedLLM()
    engine = Engine(store, chat, nothing_learned(), EngineConfig())
    await engine.handle(Incoming("anna", question))
    await engine.drain()
    return next(call.prompt for call in chat.calls if question in call.prompt)


@pytest.mark.parametrize("served", ["high", "low"], indirect=True)
async def test_the_relevance_floor_fits_a_server_model_measured_at_start(
        tmp_path: Path, served: FakeEmbeddingServer, database_url: str | None) -> None:
    shift = served.vectors.shift  # type: ignore[attr-defined]
    store = await started(tmp_path, served, database_url)
    try:
        prompt = await prompt_notes(store, [BAKING, UNRELATED], QUESTION)
        assert BAKING in prompt and UNRELATED not in prompt
        assert store.calibration.relevant == pytest.approx(moved(SHIPPED.relevant, shift), abs=2e-4)
        async with store.db.reading() as tx:
            row = await tx.fetchone("SELECT model, relevant, pairs FROM embedding_calibrations")
        assert row[0] == store.index.embedder.name and row[0].startswith("server/shifted-model") and row[2] == 1824
        assert float(row[1]) == store.calibration.relevant
    finally:
        await store.close()
    asked = len(served.inputs)
    store = await started(tmp_path, served, database_url)  # measured once: the second start reads the numbers
    await store.close()
    assert served.inputs[asked:] == [PROBE]  # the length of its vectors, nothing of the calibration set


@pytest.mark.parametrize("served", ["high", "low"], indirect=True)
async def test_the_duplicate_threshold_fits_a_server_model(tmp_path: Path, served: FakeEmbeddingServer,
                                                          database_url: str | None) -> None:
    shift = served.vectors.shift  # type: ignore[attr-defined]
    store = await started(tmp_path, served, database_url)
    try:
        scope = await store.scope("mnemo", "anna")
        first = await store.notes.add(scope, BAKING)
        again = await store.notes.add(scope, SAME_AGAIN)
        other = await store.notes.add(scope, OTHER_FACT)
        assert first.created and (again.created, again.duplicate) == (False, "semantic")
        assert other.created and other.note.text == OTHER_FACT
        assert [n.text for n in await store.notes.list(scope)] == [OTHER_FACT, BAKING]
        assert store.notes.semantic_threshold == pytest.approx(moved(SHIPPED.duplicate, shift), abs=2e-4)
        assert store.admission.related == store.calibration.relevant  # admission's novelty runs between the two
        verdict = await store.admission.check(scope, "Am Wochenende backe ich immer Zimtschnecken!", "fact",
                                              Thresholds())
        assert (verdict.verdict, verdict.reason) == ("drop", "duplicate")
    finally:
        await store.close()


@pytest.mark.parametrize("served", ["high"], indirect=True)
async def test_mnemo_reindex_measures_the_calibration_of_a_server_model(
        tmp_path: Path, served: FakeEmbeddingServer, database_url: str | None) -> None:
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", FakeEmbedder(), database_url=database_url) as old:
        scope = await old.scope("mnemo", "anna")
        for text in (BAKING, UNRELATED):
            await old.notes.add(scope, text)
    env = tmp_path / "reindex.env"
    env.write_text("\n".join([f"MNEMO_DATA_DIR={tmp_path}", f"MNEMO_EMBEDDING_URL={served.base_url}",
                              f"MNEMO_EMBEDDING_MODEL={served.model}", "MNEMO_EMBEDDING_QUERY_PREFIX='query: '",
                              "MNEMO_EMBEDDING_DOCUMENT_PREFIX='passage: '"]
                             + ([f"MNEMO_DATABASE_URL={database_url}"] if database_url else [])) + "\n")
    process = await reindex_process(env)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode == 0, err.decode()
    assert "the memory now uses server/shifted-model" in out.decode()
    embedder = await server_embedder(served, query_prefix="query: ", document_prefix="passage: ")
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url) as store:
        prompt = await prompt_notes(store, [], QUESTION)  # a library caller that measures nothing: what reindex kept
        assert BAKING in prompt and UNRELATED not in prompt
        async with store.db.reading() as tx:
            row = await tx.fetchone("SELECT duplicate, relevant, keyword FROM embedding_calibrations")
        assert row is not None and store.calibration == Calibration(*row)
        assert store.calibration.relevant == pytest.approx(moved(SHIPPED.relevant, "high"), abs=2e-4)
        assert store.calibration.duplicate == pytest.approx(moved(SHIPPED.duplicate, "high"), abs=2e-4)
    settings = settings_for(tmp_path, embedding_url=served.base_url, embedding_model=served.model,
                            embedding_query_prefix="query: ", embedding_document_prefix="passage: ",
                            database_url=database_url)
    shown = {check.name: check for check in await doctor(settings, check_model=False)}["thresholds"]
    assert shown.ok and " on 1824 pairs: duplicate 0.99, relevance floor 0.958, one-word keyword 0.969" in shown.detail


async def test_the_bundled_e5_is_not_measured_at_start(tmp_path: Path, database_url: str | None) -> None:
    bundled_name = FakeEmbedder(name=BUNDLED + "multilingual-e5-small-q4/original")
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", bundled_name, database_url=database_url,
                                      calibrate=True) as store:
        assert store.calibration == SHIPPED
        async with store.db.reading() as tx:
            assert (await tx.fetchone("SELECT count(*) FROM embedding_calibrations"))[0] == 0
    assert not any("Zimtschnecken" in " ".join(call) or "Moritz" in " ".join(call) for call in bundled_name.calls)


async def test_a_start_while_the_server_is_down_keeps_the_fixed_thresholds_and_measures_at_the_next(
        tmp_path: Path, database_url: str | None) -> None:
    async with FakeEmbeddingServer(model="other-model") as fake:
        embedder = await server_embedder(fake, dimensions=fake.dim)
        async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, database_url=database_url):
            pass  # the model recorded with its centre, nothing measured (a library caller)
        settings = settings_for(tmp_path, embedding_url=fake.base_url, embedding_model=fake.model,
                                embedding_dimensions=fake.dim, database_url=database_url)
        fake.status = 503
        async with await open_store(settings) as store:
            assert store.calibration == DEFAULT_CALIBRATION and await store.measured_calibration() is None
        fake.status = 200
        async with await open_store(settings) as store:
            found = await store.measured_calibration()
            assert found is not None and found.pairs == 1824 and store.calibration == found.calibration
            assert store.calibration != DEFAULT_CALIBRATION
