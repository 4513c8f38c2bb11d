"""How the crisis grammar does on what it may be tuned on: the template suite's train and dev fillers, their near
misses, the crisis set's train split, the everyday corpus's train split and the extra train set (no held-out set is read
here).

Usage:
  python -m bench.crisis_grammar_gen                 figures per set, language and category
  python -m bench.crisis_grammar_gen --misses dev    the dev suite's misses (or: train, near, everyday, set)

The dev fillers (bench/crisis_suite_dev.py) are a third filler set for the suite's templates: the grammar's first
figure on them is the estimate of what it does on places, means and verbs it was not written from.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

from bot.conversation.crisis_grammar import grammar_says


def _sets() -> dict[str, list[tuple[str, str, int, str]]]:
    """(language, category, label, text) per set name; train and dev only."""
    from bench.crisis import train_rows
    from bench.crisis_extra import extra_rows
    from bench.crisis_suite import cases, near_misses
    from bench.everyday_set import rows as everyday_rows

    return {
        "train": [(c.lang, c.category, 1, c.text) for c in cases("train")],
        "dev": [(c.lang, c.category, 1, c.text) for c in cases("dev")],
        "near": [(c.lang, c.category, 0, c.text) for c in near_misses("train") + near_misses("dev")],
        "set": [(r.lang, r.kind, r.label, r.text) for r in train_rows()],
        "everyday": [(r.lang, "everyday", 0, r.text) for r in everyday_rows("train")],
        "extra": [(r.lang, r.kind, r.label, r.text) for r in extra_rows()],
    }


def report(sets: dict[str, list[tuple[str, str, int, str]]]) -> None:
    """Recall (label 1) or flagged share (label 0) per set, language and category."""
    for name, rows in sets.items():
        started = time.perf_counter()
        said = [grammar_says(text) for *_, text in rows]
        took = (time.perf_counter() - started) / max(1, len(rows)) * 1000
        groups: dict[tuple[str, int], list[bool]] = defaultdict(list)
        for (lang, _, label, _), s in zip(rows, said):
            groups[(lang, label)].append(s)
        parts = [f"{lang} {'recall' if label else 'flagged'} {sum(v)}/{len(v)} ({sum(v) / len(v):.3f})"
                 for (lang, label), v in sorted(groups.items())]
        print(f"{name:9} " + "; ".join(parts) + f"   [{took:.2f} ms a text]")
        if name in ("train", "dev"):
            by_cat: dict[str, list[bool]] = defaultdict(list)
            for (lang, cat, _, _), s in zip(rows, said):
                by_cat[f"{lang}-{cat}"].append(s)
            print("          " + ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in sorted(by_cat.items())))


def misses(sets: dict[str, list[tuple[str, str, int, str]]], name: str) -> None:
    """The texts of one set the grammar gets wrong (train and dev sets only)."""
    for lang, cat, label, text in sets[name]:
        if grammar_says(text) != bool(label):
            print(f"{lang} {cat:12} {label} {text}")


def main(argv: list[str] | None = None) -> int:
    """Print the figures, or one set's misses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", choices=("train", "dev", "near", "set", "everyday", "extra"))
    args = parser.parse_args(argv)
    sets = _sets()
    if args.misses:
        misses(sets, args.misses)
    else:
        report(sets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
