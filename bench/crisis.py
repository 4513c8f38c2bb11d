"""The crisis set and what the crisis benches share: the set's reader, the logistic regression, its figures; and the
`judge` command.

Usage:
  python -m bench.crisis judge [--model …]   an operator's own model as MNEMO_CRISIS_JUDGE, on the sets
                                             (bench/crisis_judge.py)
  python -m bench.crisis_train train|cv|eval   the classifier trained on every train split, and every held-out figure

The set (bench/data/crisis_set.tsv: id, split, lang, label, kind, text) keeps a held-out split that no tuning looks
at: `train_rows()` gives the train split only; only `bench/crisis_train.py eval`, `judge` and the held-out tests
(which measure, never tune) call `heldout_rows()`. The classifier is a logistic regression in numpy on the bundled
embedder's query vectors (multilingual-e5-small), fitted by Newton steps with an L2 penalty (`fit`).
"""
from __future__ import annotations

import csv
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SET = Path(__file__).resolve().parent / "data" / "crisis_set.tsv"
MODEL = Path(__file__).resolve().parent.parent / "bot" / "conversation" / "crisis_model.json"


@dataclass(frozen=True)
class Row:
    """One labelled message of the set."""

    id: str
    split: str
    lang: str
    label: int
    kind: str
    text: str


def _rows(path: Path, split: str) -> list[Row]:
    """The rows of one split (the file is read whole; rows of other splits are dropped unread by callers)."""
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [Row(r["id"], r["split"], r["lang"], int(r["label"]), r["kind"], r["text"])
                for r in reader if r["split"] == split]


def train_rows(path: Path = SET) -> list[Row]:
    """The train split: everything tuning may look at."""
    return _rows(path, "train")


def heldout_rows(path: Path = SET) -> list[Row]:
    """The held-out split: for the final evaluation only."""
    return _rows(path, "heldout")


# --- logistic regression ------------------------------------------------------------------------------------------

def fit(x: np.ndarray, y: np.ndarray, penalty: float, steps: int = 30,
        weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Fit a logistic regression by Newton steps; returns (mean, weights, bias) for score = w·(x − mean) + b.

    Both classes weigh the same in the loss (the set has more negatives than positives); `weight` weighs rows
    within their class (a source of many rows counts as much as one of few).
    """
    mean = x.mean(axis=0)
    z = np.hstack([x - mean, np.ones((len(x), 1))]).astype(np.float64)
    weight = np.ones(len(y)) if weight is None else weight.astype(np.float64)
    pos, neg = weight[y == 1].sum(), weight[y == 0].sum()
    sample = weight * np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * neg))
    w = np.zeros(z.shape[1])
    ridge = np.full(z.shape[1], penalty)
    ridge[-1] = 0.0  # the bias is not penalised
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ w)))
        grad = z.T @ (sample * (p - y)) + ridge * w
        hess = (z * (sample * p * (1 - p))[:, None]).T @ z + np.diag(ridge + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return mean.astype(np.float32), w[:-1].astype(np.float32), float(w[-1])


def scores(x: np.ndarray, mean: np.ndarray, weights: np.ndarray, bias: float) -> np.ndarray:
    """The classifier's log-odds for each row of x."""
    return np.asarray((x - mean) @ weights + bias, dtype=np.float64)


def folds(y: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """Stratified folds: index arrays, each with about the same share of positives."""
    rng = np.random.default_rng(seed)
    out: list[list[int]] = [[] for _ in range(k)]
    for label in (0, 1):
        idx = np.flatnonzero(y == label)
        rng.shuffle(idx)
        for i, j in enumerate(idx):
            out[i % k].append(int(j))
    return [np.array(sorted(f)) for f in out]






def out_of_fold(x: np.ndarray, y: np.ndarray, penalty: float, repeat: int, k: int = 5, seed: int = 38) -> np.ndarray:
    """Each row's score from a model that did not see it (one stratified k-fold pass; bench/crisis_features.py)."""
    oof = np.zeros(len(y))
    for held in folds(y, k, seed + repeat):
        keep = np.setdiff1d(np.arange(len(y)), held)
        oof[held] = scores(x[held], *fit(x[keep], y[keep], penalty))
    return oof


@dataclass(frozen=True)
class Figures:
    """A confusion matrix and its two rates."""

    tp: int
    fn: int
    fp: int
    tn: int

    @property
    def recall(self) -> float:
        return self.tp / max(1, self.tp + self.fn)

    @property
    def fpr(self) -> float:
        return self.fp / max(1, self.fp + self.tn)

    def line(self, name: str) -> str:
        return (f"{name:<10} TP {self.tp:>3}  FN {self.fn:>3}  FP {self.fp:>3}  TN {self.tn:>3}   "
                f"recall {self.recall:.3f}  false positives {self.fpr:.3f}")


def figures(said: Sequence[bool], y: Sequence[int]) -> Figures:
    """Count a detector's verdicts against the labels."""
    pairs = list(zip(said, y))
    return Figures(sum(1 for s, t in pairs if s and t), sum(1 for s, t in pairs if not s and t),
                   sum(1 for s, t in pairs if s and not t), sum(1 for s, t in pairs if not s and not t))


def per_language(said: Sequence[bool], rows: Sequence[Row]) -> dict[str, Figures]:
    """Figures for de, en and all rows."""
    out = {}
    for lang in ("de", "en", "all"):
        pick = [i for i, r in enumerate(rows) if lang in ("all", r.lang)]
        out[lang] = figures([said[i] for i in pick], [rows[i].label for i in pick])
    return out


# --- the commands -------------------------------------------------------------------------------------------------

def embed_rows(rows: Sequence[Row]) -> np.ndarray:
    """The bundled embedder's query vectors of the rows."""
    from bot.conversation.crisis import e5_embedder

    return np.asarray(e5_embedder().embed([r.text for r in rows], "query"), dtype=np.float32)














def main(argv: list[str] | None = None) -> int:
    """Run the judge command (training and the held-out figures: bench/crisis_train.py)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["judge"]:  # an operator's own model as the crisis judge, with flags of its own
        from bench.crisis_judge import main as judge

        return judge(argv[1:])
    print("usage: python -m bench.crisis judge [--model …]; training and figures: python -m bench.crisis_train",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
