"""The yes/no answers set (bench/data/answers_set.tsv) through `yes_or_no`: accuracy and a confusion matrix per split
and language, and how often something that is no yes was taken as one.

Usage: python -m bench.answers [--split train|heldout] [--errors]

Without --split both splits are measured. --errors lists the wrong readings of the train split only: the held-out
rows are for the figures, never for looking at while changing the word lists (bot/conversation/consent.py).
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bot.conversation.consent import yes_or_no

DEFAULT = Path(__file__).resolve().parent / "data" / "answers_set.tsv"
LABELS = ("yes", "no", "other")
SPLITS = ("train", "heldout")


@dataclass(frozen=True)
class Answer:
    """One labelled reply to a yes/no question."""

    id: str
    split: str
    lang: str
    label: str
    text: str


@dataclass(frozen=True)
class Figures:
    """How `yes_or_no` read some answers: counts by (label, reading)."""

    matrix: Counter[tuple[str, str]]

    @property
    def total(self) -> int:
        return sum(self.matrix.values())

    @property
    def accuracy(self) -> float:
        return sum(n for (label, got), n in self.matrix.items() if label == got) / self.total if self.total else 0.0

    @property
    def false_yes(self) -> int:
        """Answers that are no yes ('no' or 'other') read as a yes: what must never happen."""
        return sum(n for (label, got), n in self.matrix.items() if got == "yes" and label != "yes")

    @property
    def false_no(self) -> int:
        """Answers that are no no read as a no (a yes or another message taken as a refusal)."""
        return sum(n for (label, got), n in self.matrix.items() if got == "no" and label != "no")


def load(path: Path = DEFAULT, split: str | None = None) -> list[Answer]:
    """The answers of the set, of one split or all."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = [Answer(**row) for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    return [row for row in rows if split is None or row.split == split]


def reading(text: str) -> str:
    """What `yes_or_no` makes of a reply, as a label."""
    return yes_or_no(text) or "other"


def measure(answers: list[Answer]) -> Figures:
    """Read every answer and count the readings by label."""
    return Figures(Counter((answer.label, reading(answer.text)) for answer in answers))


def table(name: str, figures: Figures) -> str:
    """The figures as a Markdown block: the accuracy line and the confusion matrix (rows: label, columns: read)."""
    lines = [f"{name}: {figures.total} answers, accuracy {figures.accuracy:.3f}, no yes read as yes "
             f"{figures.false_yes}, no no read as no {figures.false_no}", "",
             "| label \\ read | yes | no | other |", "|---|---|---|---|"]
    lines += [f"| {label} | " + " | ".join(str(figures.matrix[(label, got)]) for got in LABELS) + " |"
              for label in LABELS]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the figures per split and language."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--split", choices=SPLITS)
    parser.add_argument("--errors", action="store_true", help="list the wrong readings (train split only)")
    args = parser.parse_args(argv)
    if args.errors and args.split != "train":
        parser.error("--errors shows the train split only (--split train): no tuning looks at held-out rows")
    for split in (args.split,) if args.split else SPLITS:
        answers = load(split=split)
        print(table(split, measure(answers)), end="\n\n")
        for lang in sorted({a.lang for a in answers}):
            print(table(f"{split}, {lang}", measure([a for a in answers if a.lang == lang])), end="\n\n")
        if args.errors:
            for a in answers:
                if reading(a.text) != a.label:
                    print(f"{a.id}\t{a.lang}\t{a.label}\tread {reading(a.text)}\t{a.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
