"""The second held-out crisis set (bench/data/crisis_voices.tsv, written blind to the detector before any tuning):
its reader. Only `bench/crisis_train.py eval` and the held-out tests call it, and they print counts, never a row."""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

VOICES = Path(__file__).resolve().parent / "data" / "crisis_voices.tsv"


@dataclass(frozen=True)
class VoiceRow:
    """One labelled message of the voices set."""

    id: str
    lang: str
    label: int
    kind: str
    voice: str
    text: str


def voices_rows(path: Path = VOICES) -> list[VoiceRow]:
    """Every row of the set."""
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [VoiceRow(r["id"], r["lang"], int(r["label"]), r["kind"], r["voice"], r["text"]) for r in reader]
