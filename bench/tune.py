"""Choose the fusion weights by cross-validation and report what holds on data the choice never saw.

Usage: bench/tune.py [--locomo PATH] [--german PATH] [--shared-german PATH] [--cache FILE] [--json]

Every question is searched once through the real store (the default bundled embedder, the real SearchIndex),
and each retriever's raw signals for its candidates are kept (`SearchIndex.candidates`). A weight setting is then
only `memory.search.ranking.fuse` over those signals, so a grid of settings costs seconds. Per question and setting the
figures (any@1, any@5, any@10, MRR) are computed once; cross-validation picks, for each held-out fold, the setting
that was best on the other folds, and reports the held-out fold's figures:

- LoCoMo 0-4 (turns + notes, as bench/locomo.py): leave one conversation out;
- mnemo's own German set (bench/data/german_memories.json): its four dev folds, one left out at a time; its
  held-out split is looked at once, at the end, with the setting chosen on all dev folds of both sets;
- the shared German development set: evaluation only (never chosen on), as a check that nothing fell.

The objective is any@k + MRR (k = 10 for LoCoMo, 5 for German), the mean of both sets' dev folds. A setting
replaces the default only if its held-out figures are better than the default's on both sets: a better fit on the
development folds alone does not count.
On mnemo's own set the notes are searched as if they had been used (faded notes included): the set measures
finding, not forgetting; a question with an "asked" date is searched at that date.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import pickle
import sys
import tempfile
import time
from collections.abc import Sequence
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
from memory.models import Source  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.search.ranking import Candidate, Weights, faded, fuse  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

SHARED_GERMAN = ROOT.parent / "shared" / "data" / "german" / "memories_de_dev.json"
METRICS = ("any@1", "any@5", "any@10", "mrr")
# The grid: each field of Weights tried at these values (the default's value is always among them).
GRID: dict[str, tuple[float, ...]] = {
    "words": (0.25, 0.5, 0.75, 1.0),
    "trigram": (0.0, 0.15, 0.3),
    "context": (0.0, 0.1, 0.2, 0.3),
    "dated": (0.0, 0.2),
    "recency_floor": (0.95, 1.0),
    "importance": (0.0, 0.05),
}


@dataclass(frozen=True)
class Case:
    """One question with its candidates' raw signals: its set, its fold, what answers it."""

    corpus: str  # 'locomo', 'german' (mnemo's own), 'shared' (the shared German development set)
    fold: str  # a LoCoMo conversation, a split of the own set
    kind: str
    candidates: tuple[Candidate, ...]
    labels: dict[int, tuple[str, ...]]  # doc id -> what it stands for (turn dia_ids, note ids)
    gold: frozenset[str]


def figures(case: Case, weights: Weights) -> np.ndarray:
    """any@1, any@5, any@10 and MRR of one question under one setting."""
    ranked = dedupe(label for doc, _ in fuse(list(case.candidates), weights) for label in case.labels[doc])
    first = next((rank for rank, label in enumerate(ranked, 1) if label in case.gold), None)
    if first is None:
        return np.zeros(4)
    return np.array([first <= 1, first <= 5, first <= 10, 1.0 / first], dtype=float)


async def _cases(store: MemoryStore, scope_id: int, questions: Sequence[tuple[str, str, str, frozenset[str], float]],
                 sources: tuple[Source, ...], labels_of: dict[int, tuple[str, ...]], corpus: str,
                 keep_faded: bool) -> list[Case]:
    """Search each (fold, kind, text, gold, moment) and keep its candidates (labels_of: (source, item) -> labels)."""
    out = []
    for fold, kind, text, gold, now in questions:
        qvec = (await store.index.embed([text], "query"))[0]
        found = await store.index.candidates(scope_id, qvec, text, sources, now=now)
        kept = [c for c in found.candidates if keep_faded or found.docs[c.doc_id].source != "note"
                or not faded(found.docs[c.doc_id].days_unused(now), found.docs[c.doc_id].importance)]
        labels = {c.doc_id: labels_of[_key(found.docs[c.doc_id].source, found.docs[c.doc_id].item_id)] for c in kept}
        out.append(Case(corpus, fold, kind, tuple(kept), labels, gold))
    return out


def _key(source: str, item_id: int) -> int:
    return item_id * 2 + (source == "note")


async def locomo_cases(store: MemoryStore, path: Path) -> list[Case]:
    """LoCoMo 0-4 with notes: every question of categories 1-4."""
    out = []
    for conv in locomo.load(path):
        indexed = await locomo.index(store, conv, with_notes=True)
        labels = {_key("message", m): (dia,) for m, dia in indexed.message_dia.items()}
        labels |= {_key("note", n): dias for n, dias in indexed.note_dia.items()}
        questions = [(conv.sample_id, str(q.category), q.text, q.gold, conv.last_time) for q in conv.questions]
        out += await _cases(store, indexed.scope.id, questions, ("message", "note"), labels, "locomo", False)
    return out


async def german_cases(store: MemoryStore, path: Path) -> list[Case]:
    """mnemo's own German set, every split (the held-out one is kept apart by the caller)."""
    own = load_own(path)
    scope = await store.scope("mnemo", "tobias")
    stored = await store.notes.add_many(scope, [NewNote(n.text, kind="fact", created_at=day(n.date))
                                                for n in own.notes])
    labels = {_key("note", s.id): (n.id,) for s, n in zip(stored, own.notes)}
    latest = max(day(n.date) for n in own.notes) + 86400.0
    questions = [(q.split, q.kind, q.q, frozenset(q.gold), day(q.asked) if q.asked else latest) for q in own.questions]
    return await _cases(store, scope.id, questions, ("note",), labels, "german", True)


async def shared_cases(store: MemoryStore, path: Path) -> list[Case]:
    """The shared German development set, as bench/german.py searches it."""
    data = json.loads(path.read_text(encoding="utf-8"))
    scope = await store.scope("mnemo", "anna")
    stored = await store.notes.add_many(scope, [NewNote(n["text"], kind="fact", created_at=day(n["date"]))
                                                for n in data["notes"]])
    labels = {_key("note", s.id): (n["id"],) for s, n in zip(stored, data["notes"])}
    now = max(day(n["date"]) for n in data["notes"]) + 86400.0
    questions = [("shared", "", q["q"], frozenset(q["gold"]), now) for q in data["questions"]]
    return await _cases(store, scope.id, questions, ("note",), labels, "shared", False)


async def collect(args: argparse.Namespace) -> list[Case]:
    """Every case of the sets that exist (cached in --cache when given)."""
    if args.cache and Path(args.cache).exists():
        cached: list[Case] = pickle.loads(Path(args.cache).read_bytes())
        return cached
    embedder = make_embedder()
    cases: list[Case] = []
    with tempfile.TemporaryDirectory(prefix="mnemo-tune-") as tmp:
        for name, path, make in (("locomo", args.locomo, locomo_cases), ("german", args.german, german_cases),
                                 ("shared", args.shared_german, shared_cases)):
            if not path.exists():
                print(f"{name}: {path} not found, left out")
                continue
            start = time.perf_counter()
            store = await MemoryStore.open(Path(tmp) / f"{name}.sqlite3", embedder)
            try:
                cases += await make(store, path)
            finally:
                await store.close()
            print(f"{name}: {sum(c.corpus == name for c in cases)} questions searched in "
                  f"{time.perf_counter() - start:.0f} s")
    if args.cache:
        Path(args.cache).write_bytes(pickle.dumps(cases))
    return cases


def settings() -> list[Weights]:
    """The grid's settings, the default first."""
    names = list(GRID)
    grid = [dataclasses.replace(Weights(), **dict(zip(names, values)))
            for values in itertools.product(*(GRID[n] for n in names))]
    return [Weights()] + [w for w in grid if w != Weights()]


def objective(scores: np.ndarray, corpus: str) -> float:
    """any@k + MRR of a block of questions' figures (k = 10 for LoCoMo, 5 for the German sets)."""
    k = METRICS.index("any@10" if corpus == "locomo" else "any@5")
    return float(scores[:, k].mean() + scores[:, 3].mean())


def table(cases: list[Case], grid: list[Weights]) -> np.ndarray:
    """figures[setting, question, metric] for every setting and question."""
    return np.stack([np.stack([figures(c, w) for c in cases]) for w in grid])


def choose(scores: np.ndarray, cases: list[Case], train: list[tuple[str, set[str]]]) -> int:
    """The setting with the best mean objective over the training folds of each corpus: (corpus, folds)."""
    best, chosen = -1.0, 0
    for s in range(scores.shape[0]):
        value = 0.0
        for corpus, folds in train:
            idx = [i for i, c in enumerate(cases) if c.corpus == corpus and c.fold in folds]
            value += objective(scores[s, idx], corpus)
        if value > best + 1e-12:
            best, chosen = value, s
    return chosen


def mean_of(scores: np.ndarray, cases: list[Case], corpus: str, folds: set[str]) -> dict[str, float]:
    """Mean figures of one setting's scores over a corpus's folds."""
    idx = [i for i, c in enumerate(cases) if c.corpus == corpus and c.fold in folds]
    return {m: round(float(scores[idx, j].mean()), 3) for j, m in enumerate(METRICS)} | {"n": len(idx)}


def describe(w: Weights) -> str:
    """The fields of a setting that differ from the default."""
    default = Weights()
    changed = {f.name: getattr(w, f.name) for f in dataclasses.fields(w)
               if getattr(w, f.name) != getattr(default, f.name)}
    return ", ".join(f"{k}={v}" for k, v in changed.items()) or "the default"


def cross_validate(scores: np.ndarray, cases: list[Case], grid: list[Weights]) -> dict[str, Any]:
    """Leave-one-fold-out on each corpus (chosen on both corpora's other folds); then the held-out split."""
    folds = {corpus: sorted({c.fold for c in cases if c.corpus == corpus}) for corpus in ("locomo", "german")}
    folds["german"] = [f for f in folds["german"] if f != HELDOUT]
    report: dict[str, Any] = {}
    for corpus in ("locomo", "german"):
        other = "german" if corpus == "locomo" else "locomo"
        rows = []
        for fold in folds[corpus]:
            train = [(corpus, set(folds[corpus]) - {fold}), (other, set(folds[other]))]
            s = choose(scores, cases, train)
            rows.append({"fold": fold, "chosen": describe(grid[s]),
                         "held_out": mean_of(scores[s], cases, corpus, {fold}),
                         "default": mean_of(scores[0], cases, corpus, {fold})})
        report[corpus] = rows
    final = choose(scores, cases, [("locomo", set(folds["locomo"])), ("german", set(folds["german"]))])
    report["chosen_on_all_dev"] = describe(grid[final])
    report["final_index"] = final
    return report


def print_report(report: dict[str, Any], scores: np.ndarray, cases: list[Case], grid: list[Weights]) -> None:
    """The held-out figures per fold, their means against the default's, and the own set's held-out split."""
    for corpus, key in (("locomo", "any@10"), ("german", "any@5")):
        rows = report[corpus]
        print(f"\n{corpus}: each fold held out, the setting chosen on the other folds (and on the other corpus)")
        print(f"{'fold':<12} {'n':>4} {key + ' cv':>9} {'MRR cv':>7} {key + ' def':>10} {'MRR def':>8}  chosen")
        for r in rows:
            print(f"{r['fold']:<12} {r['held_out']['n']:>4} {r['held_out'][key]:>9.3f} {r['held_out']['mrr']:>7.3f}"
                  f" {r['default'][key]:>10.3f} {r['default']['mrr']:>8.3f}  {r['chosen']}")
        cv = {m: round(float(np.mean([r["held_out"][m] for r in rows])), 3) for m in METRICS}
        default = {m: round(float(np.mean([r["default"][m] for r in rows])), 3) for m in METRICS}
        report[f"{corpus}_cv_mean"], report[f"{corpus}_default_mean"] = cv, default
        print(f"{'mean':<12} {'':>4} {cv[key]:>9.3f} {cv['mrr']:>7.3f} {default[key]:>10.3f} {default['mrr']:>8.3f}")
    final = report["final_index"]
    print(f"\nchosen on every dev fold of both: {report['chosen_on_all_dev']}")
    for corpus, folds in (("german", {HELDOUT}), ("shared", {"shared"}), ("locomo", None)):
        fold_set = folds or {c.fold for c in cases if c.corpus == corpus}
        if not any(c.corpus == corpus for c in cases):
            continue
        chosen, default = mean_of(scores[final], cases, corpus, fold_set), mean_of(scores[0], cases, corpus, fold_set)
        report[f"{corpus}_final"], report[f"{corpus}_final_default"] = chosen, default
        print(f"{corpus:<7} {sorted(fold_set)[0] if folds else 'all':<8} chosen {chosen}  default {default}")


async def main(argv: list[str] | None = None) -> None:
    """Collect the cases, score the grid, cross-validate, print (with --json, the report as the last line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_PATH)
    parser.add_argument("--german", type=Path, default=ROOT / "bench" / "data" / "german_memories.json")
    parser.add_argument("--shared-german", type=Path, default=SHARED_GERMAN)
    parser.add_argument("--cache", default="", help="a file to keep the searched candidates in between runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cases = await collect(args)
    grid = settings()
    start = time.perf_counter()
    scores = table(cases, grid)
    print(f"{len(grid)} settings x {len(cases)} questions scored in {time.perf_counter() - start:.0f} s")
    report = cross_validate(scores, cases, grid)
    print_report(report, scores, cases, grid)
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "final_index"}))


if __name__ == "__main__":
    asyncio.run(main())
