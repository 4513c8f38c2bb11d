"""The second signal through the product's own search: USE on and off, and each retriever alone, fold by fold.

Usage: bench/second_signal_search.py [--locomo PATH] [--german PATH] [--heldout] [--no-locomo] [--json]

bench/second_signal.py chose the way (USE at 0.75 beside e5 on German queries) from the signals of a search it
rebuilt; this runs what shipped: a store opened with the bundled e5 and the bundled USE (`MemoryStore.open(...,
second=...)`), every document written with both vectors through the store, and every question asked through
`MemoryStore.search` (LoCoMo 0-4 with notes, as bench/locomo.py; mnemo's own German set, its notes searched as if
used, as bench/tune.py). Per question the same search runs with the store's weights set to each variant: the
signal on (the default), off (`use` 0: the product with MNEMO_SECOND_SIGNAL=off), e5, words and trigram alone (the
others weighted 0, as bench/metrics.py's retrievers). "USE alone" is not a product setting (the gate keeps USE
off English queries): it ranks the scope's documents by their stored USE vectors for every query, the retriever
bench/second_signal.py set beside the hybrid. The held-out split of the German set is scored only with --heldout.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import locomo  # noqa: E402
from bench.german import day  # noqa: E402
from bench.german_set import HELDOUT  # noqa: E402
from bench.german_set import load as load_own  # noqa: E402
from bench.metrics import dedupe  # noqa: E402
from memory.models import Scope, Source  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.search.language import is_german  # noqa: E402
from memory.search.ranking import Weights, faded  # noqa: E402
from memory.search.retrievers import documents  # noqa: E402
from memory.search.use_signal import make_use_embedder  # noqa: E402
from memory.search.vectors import from_half  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

METRICS = ("any@1", "any@5", "any@10", "mrr")
BASE = Weights()
VARIANTS = {
    "on": BASE,
    "off": dataclasses.replace(BASE, use=0.0),
    "e5": dataclasses.replace(BASE, words=0.0, trigram=0.0, use=0.0),
    "words": dataclasses.replace(BASE, vector=0.0, trigram=0.0, use=0.0),
    "trigram": dataclasses.replace(BASE, vector=0.0, words=0.0, use=0.0),
}
SINGLES = ("e5", "use", "words", "trigram")
HITS = 100


def figures(ranked: list[str], gold: frozenset[str]) -> np.ndarray:
    """any@1, any@5, any@10, MRR of one question from its ranked labels."""
    first = next((rank for rank, label in enumerate(ranked, 1) if label in gold), None)
    return np.zeros(4) if first is None else np.array([first <= 1, first <= 5, first <= 10, 1.0 / first])


class Corpus:
    """One scope's documents with what each stands for, and their USE vectors (for USE alone)."""

    def __init__(self, store: MemoryStore, scope: Scope, sources: tuple[Source, ...],
                 labels: dict[tuple[str, int], tuple[str, ...]], keep_faded: bool) -> None:
        self.store, self.scope, self.sources, self.labels, self.keep_faded = store, scope, sources, labels, keep_faded

    async def load(self) -> None:
        async with self.store.db.reading() as tx:
            marks = ",".join("?" * len(self.sources))
            rows = await tx.fetchall(f"SELECT d.id, u.vector FROM docs d JOIN use_vectors u ON u.doc_id = d.id"
                                     f" WHERE d.scope_id = ? AND d.source IN ({marks}) ORDER BY d.id",
                                     (self.scope.id, *self.sources))
            self.docs = await documents(tx, {r[0] for r in rows})
        self.ids = [r[0] for r in rows]
        self.use = np.stack([from_half(r[1]) for r in rows])

    async def ask(self, text: str, gold: frozenset[str], now: float) -> dict[str, np.ndarray]:
        """The question's figures under every variant and USE alone."""
        out = {}
        for name, weights in VARIANTS.items():
            self.store.index.weights = weights
            hits = await self.store.search(self.scope, text, sources=self.sources, k=HITS, now=now,
                                           include_faded=self.keep_faded)
            out[name] = figures(dedupe(label for h in hits for label in self.labels[(h.source, h.item_id)]), gold)
        self.store.index.weights = BASE
        assert self.store.index.second is not None
        q = (await self.store.index.second.vectors([text]))[0]
        order = np.argsort(-(self.use @ q), kind="stable")
        kept = [self.docs[self.ids[i]] for i in order[:HITS * 3]]
        kept = [d for d in kept if self.keep_faded or d.source != "note" or not faded(d.days_unused(now), d.importance)]
        out["use"] = figures(dedupe(label for d in kept[:HITS] for label in self.labels[(d.source, d.item_id)]), gold)
        return out


async def collect(args: argparse.Namespace, store: MemoryStore) -> list[dict[str, Any]]:
    """Every question of both sets with its figures per variant."""
    rows: list[dict[str, Any]] = []
    for conv in [] if args.no_locomo else locomo.load(args.locomo):
        indexed = await locomo.index(store, conv, with_notes=True)
        labels = {("message", m): (dia,) for m, dia in indexed.message_dia.items()}
        labels |= {("note", n): dias for n, dias in indexed.note_dia.items()}
        corpus = Corpus(store, indexed.scope, ("message", "note"), labels, keep_faded=False)
        await corpus.load()
        for q in conv.questions:
            rows.append({"corpus": "locomo", "fold": conv.sample_id, "german": is_german(q.text),
                         **await corpus.ask(q.text, q.gold, conv.last_time)})
        print(f"{conv.sample_id}: {len(conv.questions)} questions", flush=True)
    own = load_own(args.german)
    scope = await store.scope("mnemo", "tobias")
    stored = await store.notes.add_many(scope, [NewNote(n.text, kind="fact", created_at=day(n.date))
                                                for n in own.notes])
    corpus = Corpus(store, scope, ("note",), {("note", s.id): (n.id,) for s, n in zip(stored, own.notes)}, True)
    await corpus.load()
    latest = max(day(n.date) for n in own.notes) + 86400.0
    for q in own.questions:
        if q.split == HELDOUT and not args.heldout:
            continue  # not even searched while the ways are looked at
        rows.append({"corpus": "german", "fold": q.split, "german": is_german(q.q),
                     **await corpus.ask(q.q, frozenset(q.gold), day(q.asked) if q.asked else latest)})
    return rows


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per fold: the signal on and off, each single retriever, the best single, where on loses to it."""
    out: dict[str, Any] = {}
    for corpus in ("locomo", "german"):
        for fold in sorted({r["fold"] for r in rows if r["corpus"] == corpus}):
            part = [r for r in rows if r["corpus"] == corpus and r["fold"] == fold]
            mean = {v: dict(zip(METRICS, np.round(np.mean([r[v] for r in part], axis=0), 3).tolist()))
                    for v in (*VARIANTS, "use")}
            best = {m: max(SINGLES, key=lambda s: mean[s][m]) for m in ("any@1", "any@5", "mrr")}
            out[f"{corpus}/{fold}"] = {"n": len(part), "german_queries": sum(r["german"] for r in part), **mean,
                                      "best_single": {m: (s, mean[s][m]) for m, s in best.items()},
                                      "on_loses": [m for m, s in best.items() if mean["on"][m] < mean[s][m] - 1e-9],
                                      "on_changed": sum(not np.array_equal(r["on"], r["off"]) for r in part)}
    return out


def show(out: dict[str, Any]) -> None:
    print("\nfold (n, German queries) | on any@1/any@5/any@10/MRR | off | best single | on loses | changed")
    for fold, r in out.items():
        row = " ".join(f"{r['on'][m]:.3f}" for m in METRICS)
        off = " ".join(f"{r['off'][m]:.3f}" for m in METRICS)
        best = " ".join(f"{m} {s} {v:.3f}" for m, (s, v) in r["best_single"].items())
        print(f"{fold:<16} ({r['n']}, {r['german_queries']}) | {row} | {off} | {best} | {r['on_loses']} |"
              f" {r['on_changed']}")
        print("    alone: " + "; ".join(f"{s} " + "/".join(f"{r[s][m]:.3f}" for m in METRICS) for s in SINGLES))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_PATH)
    parser.add_argument("--german", type=Path, default=ROOT / "bench" / "data" / "german_memories.json")
    parser.add_argument("--heldout", action="store_true", help="score the German held-out split too (once, at the end)")
    parser.add_argument("--no-locomo", action="store_true", help="the German set only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    start, load = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mnemo-use-search-") as tmp:
        store = await MemoryStore.open(Path(tmp) / "mnemo.sqlite3", make_embedder(), second=make_use_embedder())
        try:
            rows = await collect(args, store)
        finally:
            await store.close()
    out = report(rows)
    show(out)
    print(f"\n{len(rows)} questions in {time.perf_counter() - start:.0f} s; load average {load:.1f} at the start,"
          f" {os.getloadavg()[0]:.1f} at the end")
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
