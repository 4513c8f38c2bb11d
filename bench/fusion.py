"""Fusion that never loses to its best part, chosen by cross-validation (issue 54).

Usage: bench/fusion.py [--cache FILE] [--heldout] [--json] [--locomo PATH] [--german PATH] [--shared PATH]

Every question's candidates and raw signals come from bench/fusion_cases.py (the real store, e5, USE, the two
full-text indexes, and e5 and USE on a turn read with the turn before it). A way of fusing is a pure function of
them: which dense signals join (e5 on the turn alone or in context, USE on German queries or every query), and how
sure each retriever is for this query (its score margin, its agreement with the others) moves its weight.
Each fold is held out in turn (a LoCoMo conversation, a dev fold of the German set) and the way chosen on all other
folds of both sets is judged on it, beside the best single retriever. The German held-out split and the shared
German set are scored only with --heldout, once, with the way chosen on every dev fold.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import german as shared_german  # noqa: E402
from bench import locomo  # noqa: E402
from bench.fusion_cases import Case, collect  # noqa: E402
from bench.german_set import HELDOUT  # noqa: E402
from bench.metrics import dedupe  # noqa: E402
from memory.search.ranking import Weights, agreement, min_max, recency_factor, scaled_by_best, sure_weights  # noqa: E402

METRICS = ("any@1", "any@5", "any@10", "mrr")
SINGLES = ("e5", "use", "words", "trigram", "e5ctx")
TOP = 10


@dataclass(frozen=True)
class Way:
    """A way of fusing: the dense signal standing for e5, USE's weight and gate, how far agreement moves a weight."""

    vector: str = "e5"  # e5 on the turn alone | e5ctx: on the turn read with the turn before it
    use: float = 0.0
    use_everywhere: bool = False  # USE on every query, not on German ones only
    agree: float = 0.0  # `memory.search.ranking.sure_weights`' strength
    alone: str = ""  # one retriever alone
    words: float = 0.5
    trigram: float = 0.15
    context: float = 0.2

    def describe(self) -> str:
        if self.alone:
            return f"{self.alone} alone"
        out = f"vector {self.vector}"
        if self.use:
            out += f", USE {self.use}" + (" everywhere" if self.use_everywhere else " on German")
        if self.agree:
            out += f", agree {self.agree}"
        return out + f", words {self.words}, trigram {self.trigram}, context {self.context}"

    def weights(self, centres: tuple[tuple[str, float], ...] = ()) -> Weights:
        return Weights(words=self.words, trigram=self.trigram, context=self.context, use=self.use,
                       agree=self.agree, centres=centres)


def columns(case: Case, way: Way) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The retrievers a way reads, under the product's names, scaled as `memory.search.ranking.columns`, and their
    weights; USE is read in context where e5 is, and `alone` keeps one retriever (e5ctx alone: the vector in
    context)."""
    context = way.vector == "e5ctx" or way.alone == "e5ctx"
    raw = {"vector": case.signals["e5ctx" if context else "e5"], "words": case.signals["words"],
           "trigram": case.signals["trigram"], "use": case.signals["usectx" if context else "use"]}
    scaled = {n: (min_max if n in ("vector", "use") else scaled_by_best)(v.astype(np.float64)) for n, v in raw.items()}
    weight = {"vector": 1.0, "words": way.words, "trigram": way.trigram,
              "use": way.use if way.use_everywhere or case.german else 0.0}
    if way.alone:
        name = {"e5": "vector", "e5ctx": "vector"}.get(way.alone, way.alone)
        weight = {n: float(n == name) for n in weight}
    return scaled, weight


def rank(case: Case, way: Way, centres: tuple[tuple[str, float], ...] = ()) -> list[int]:
    """Candidate positions best first: `memory.search.ranking.fuse` over the way's retrievers and weights."""
    weights = way.weights(centres)
    scaled, weight = columns(case, way)
    if not way.alone:
        weight = sure_weights(scaled, weight, case.ids, weights)
    base = sum(weight[n] * scaled[n] for n in weight) / sum(weight.values())
    context = np.array([max((base[r] for r in rel), default=0.0) for rel in case.related])
    score = base + way.context * context + weights.dated * case.dated
    score *= np.array([recency_factor(a, weights.recency_half_life_days, weights.recency_floor) for a in case.age_days])
    score *= 1.0 + weights.importance * (case.importance - 5) / 5
    return list(np.argsort(-score, kind="stable"))


def figures(case: Case, order: list[int]) -> np.ndarray:
    """any@1, any@5, any@10, MRR of one question."""
    ranked = dedupe(label for at in order for label in case.labels[at])
    first = next((r for r, label in enumerate(ranked, 1) if label in case.gold), None)
    return np.zeros(4) if first is None else np.array([first <= 1, first <= 5, first <= 10, 1.0 / first])


def centres_of(cases: list[Case], way: Way) -> tuple[tuple[str, float], ...]:
    """Each retriever's mean agreement over the training questions (agreement moves a weight from there)."""
    if not way.agree:
        return ()
    seen: dict[str, list[float]] = {}
    for case in cases:
        scaled, weight = columns(case, way)
        for name, w in weight.items():
            if w > 0:
                seen.setdefault(name, []).append(agreement(scaled, weight, name, case.ids))
    return tuple((name, round(float(np.mean(v)), 3)) for name, v in sorted(seen.items()))


def ways() -> list[Way]:
    out = [Way(), Way(use=0.75)]  # today without and with the second signal (the product: USE 0.75 on German)
    for vector, use, agree, words, trigram, context in itertools.product(
            ("e5", "e5ctx"), (0.75, 1.0), (0.0, 0.5, 1.0), (0.25, 0.3, 0.35, 0.5), (0.1, 0.15, 0.25), (0.1, 0.15, 0.2)):
        out.append(Way(vector, use, False, agree, words=words, trigram=trigram, context=context))
    return list(dict.fromkeys(out))


def objective(scores: np.ndarray, corpus: str) -> float:
    """any@k + MRR (k = 10 for LoCoMo, 5 for the German set), as bench/tune.py."""
    return float(scores[:, 2 if corpus == "locomo" else 1].mean() + scores[:, 3].mean())


def row(scores: np.ndarray) -> dict[str, float]:
    return {m: round(float(scores[:, j].mean()), 3) for j, m in enumerate(METRICS)} | {"n": len(scores)}


class Table:
    """Every way's figures on every question, with each way's confidence centres taken from its training folds."""

    def __init__(self, cases: list[Case], candidates: list[Way]) -> None:
        self.cases, self.ways = cases, candidates
        self.singles = {name: np.stack([figures(c, rank(c, Way(alone=name))) for c in cases]) for name in SINGLES}

    def scores(self, way: Way, train: list[Case]) -> np.ndarray:
        centres = centres_of(train, way)
        return np.stack([figures(c, rank(c, way, centres)) for c in self.cases])

    def pick(self, where: list[bool]) -> list[int]:
        return [i for i, w in enumerate(where) if w]


def evaluate(cases: list[Case], heldout: bool) -> dict[str, Any]:
    """Cross-validate the ways (each fold held out in turn); with `heldout`, score the held-out sets once."""
    candidates = ways()
    dev = [c for c in cases if c.fold != HELDOUT and c.corpus != "shared_de"]
    folds = {corpus: sorted({c.fold for c in dev if c.corpus == corpus}) for corpus in ("locomo", "german")}
    table = Table(cases, candidates)
    # Centres from all dev questions but the fold's own would be exact; from all dev questions they differ by a
    # fold's share of a mean, and the held-out sets never enter them.
    all_scores = [table.scores(w, dev) for w in candidates]
    mask = {(c.corpus, c.fold) for c in cases}

    def block(scores: np.ndarray, corpus: str, chosen_folds: set[str]) -> np.ndarray:
        return scores[[i for i, c in enumerate(cases) if c.corpus == corpus and c.fold in chosen_folds]]

    def choose(train: dict[str, set[str]]) -> int:
        values = [sum(objective(block(s, corpus, f), corpus) for corpus, f in train.items()) for s in all_scores]
        return int(np.argmax(values))

    def fold_report(corpus: str, fold: set[str], chosen: int) -> dict[str, Any]:
        alone = {n: row(block(s, corpus, fold)) for n, s in table.singles.items()}
        out: dict[str, Any] = {"today": row(block(all_scores[1], corpus, fold)),
                               "chosen": row(block(all_scores[chosen], corpus, fold)),
                               "way": candidates[chosen].describe(), "alone": alone}
        best = {m: max(alone.items(), key=lambda kv: kv[1][m]) for m in ("any@1", "any@5", "mrr")}
        out["best_single"] = {m: (name, r[m]) for m, (name, r) in best.items()}
        out["loses"] = [m for m in best if out["chosen"][m] < best[m][1][m] - 1e-9]
        return out

    report: dict[str, Any] = {"folds": {}}
    for corpus, names in folds.items():
        for fold in names:
            train = {corpus: set(names) - {fold}} | {o: set(f) for o, f in folds.items() if o != corpus}
            report["folds"][f"{corpus}/{fold}"] = fold_report(corpus, {fold}, choose(train))
    final = choose({corpus: set(f) for corpus, f in folds.items()})
    report["chosen_on_all_dev"] = candidates[final].describe()
    report["means"] = {corpus: {"today": row(block(all_scores[1], corpus, set(f))),
                                "chosen_cv": _cv_mean(report, corpus)} for corpus, f in folds.items()}
    report["by_category"] = {cat: {"today": row(_cat(cases, all_scores[1], cat)),
                                   "chosen_on_all": row(_cat(cases, all_scores[final], cat)),
                                   **{n: row(_cat(cases, s, cat)) for n, s in table.singles.items()}}
                             for cat in ("1", "2", "3", "4")}
    if heldout and ("german", HELDOUT) in mask:
        report["heldout"] = fold_report("german", {HELDOUT}, final)
        report["shared_de"] = fold_report("shared_de", {"shared"}, final)
    return report


def _cat(cases: list[Case], scores: np.ndarray, category: str) -> np.ndarray:
    return scores[[i for i, c in enumerate(cases) if c.corpus == "locomo" and c.kind == category]]


def _cv_mean(report: dict[str, Any], corpus: str) -> dict[str, float]:
    """Question-weighted mean of the chosen ways' figures on the folds held out."""
    rows = [r["chosen"] for key, r in report["folds"].items() if key.startswith(corpus + "/")]
    n = sum(r["n"] for r in rows)
    return {m: round(sum(r[m] * r["n"] for r in rows) / n, 3) for m in METRICS} | {"n": n}


def show(report: dict[str, Any]) -> None:
    print("fold held out | today (e5+words+trigram, USE 0.75 on German) any@1/any@5/any@10/MRR | chosen | best single")
    for key, r in report["folds"].items():
        t, c = r["today"], r["chosen"]
        best = " ".join(f"{m} {name} {v:.3f}" for m, (name, v) in r["best_single"].items())
        print(f"{key:<16} n={t['n']:<4} {t['any@1']:.3f} {t['any@5']:.3f} {t['any@10']:.3f} {t['mrr']:.3f} | "
              f"{c['any@1']:.3f} {c['any@5']:.3f} {c['any@10']:.3f} {c['mrr']:.3f} ({r['way']}) | {best}"
              f" | loses {r['loses']}")
    print(f"chosen on every dev fold: {report['chosen_on_all_dev']}")
    for corpus, m in report["means"].items():
        print(f"{corpus} means: today {m['today']}  cross-validated {m['chosen_cv']}")
    for cat, r in report["by_category"].items():
        print(f"LoCoMo category {cat}: " + "  ".join(f"{k} {v['any@10']:.3f}/{v['mrr']:.3f}" for k, v in r.items()))
    for key in ("heldout", "shared_de"):
        if key in report:
            r = report[key]
            print(f"{key} (once): today {r['today']}\n  chosen ({r['way']}) {r['chosen']}\n  best single "
                  f"{r['best_single']} loses {r['loses']}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_PATH)
    parser.add_argument("--german", type=Path, default=ROOT / "bench" / "data" / "german_memories.json")
    parser.add_argument("--shared", type=Path, default=shared_german.DEFAULT_PATH)
    parser.add_argument("--cache", default="", help="a file to keep the searched candidates in between runs")
    parser.add_argument("--heldout", action="store_true", help="score the held-out sets (once, at the end)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    cases = await collect(args.locomo, args.german, args.shared, args.cache)
    print(f"{len(cases)} questions with every signal in {time.perf_counter() - start:.0f} s", flush=True)
    if not args.heldout:
        cases = [c for c in cases if c.fold != HELDOUT and c.corpus != "shared_de"]
    report = evaluate(cases, args.heldout)
    show(report)
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
