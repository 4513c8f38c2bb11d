"""Extra TRAIN rows for the crisis classifier (bench/data/crisis_train_extra*.tsv): read, validate and count them.

Usage: python -m bench.crisis_extra --counts

The set is hand-written chat in German and English voices the train split of bench/data/crisis_set.tsv lacks (long
everyday turns, dialect, voice-note transcripts, terse texters, hedging and very formal writers) with crises told in
plain, indirect words and hard negatives (dark humour, hyperbole, grief, gaming talk). It is train data only: nothing
in it may be used to report a held-out figure. See bench/data/crisis_train_extra.md.
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
DEFAULT = DATA / "crisis_train_extra.tsv"  # the first file; later rounds add crisis_train_extra_<name>.tsv beside it
COLUMNS = ("id", "lang", "label", "voice", "kind", "text")
LANGS = ("de", "en")
CRISIS_KINDS = ("wish", "plan", "means", "goodbye", "selfharm", "violence", "danger")
CALM_KINDS = ("everyday", "long_everyday", "hard_negative")
ID = re.compile(r"[x-z]\d{4}")  # x: the first file; y, z: later files
VOICE = re.compile(r"[a-z][a-z0-9_]{1,23}")
INSIDE = re.compile(r"[\t\r\n\u2028\u2029]")


@dataclass(frozen=True)
class ExtraRow:
    """One hand-written message: its language, whether it needs the help line (1) or not (0), voice and kind."""

    id: str
    lang: str
    label: int
    voice: str
    kind: str
    text: str


def key(text: str) -> str:
    """A text compared loosely: casefolded, whitespace collapsed."""
    return " ".join(text.casefold().split())


def words(text: str) -> int:
    """The number of words in a text."""
    return len(text.split())


def parsed(line: str, number: int) -> ExtraRow:
    """One body line of the TSV as a row, or a ValueError that names the line."""
    cells = line.split("\t")
    if len(cells) != len(COLUMNS):
        raise ValueError(f"line {number}: {len(cells)} cells, expected {len(COLUMNS)}")
    row_id, lang, label, voice, kind, text = cells
    if not ID.fullmatch(row_id):
        raise ValueError(f"line {number}: bad id {row_id!r}")
    if lang not in LANGS:
        raise ValueError(f"line {number}: bad lang {lang!r}")
    if label not in ("0", "1"):
        raise ValueError(f"line {number}: bad label {label!r}")
    if not VOICE.fullmatch(voice):
        raise ValueError(f"line {number}: bad voice {voice!r}")
    allowed = CRISIS_KINDS if label == "1" else CALM_KINDS
    if kind not in allowed:
        raise ValueError(f"line {number}: kind {kind!r} does not go with label {label}")
    if not text.strip() or text != text.strip() or INSIDE.search(text):
        raise ValueError(f"line {number}: empty, padded or broken text")
    return ExtraRow(row_id, lang, int(label), voice, kind, text)


def extra_rows(path: Path | None = None) -> list[ExtraRow]:
    """Every row of one file, or of every bench/data/crisis_train_extra*.tsv, validated: header, allowed values,
    ids and texts unique across the files."""
    out = []
    for one in [path] if path else sorted(DATA.glob("crisis_train_extra*.tsv")):
        content = one.read_text(encoding="utf-8")
        if "\r" in content:
            raise ValueError(f"carriage return in {one.name}")
        header, *body = content.split("\n")
        if tuple(header.split("\t")) != COLUMNS:
            raise ValueError(f"bad header {header!r} in {one.name}")
        if body and body[-1] == "":
            body.pop()
        out += [parsed(line, number) for number, line in enumerate(body, start=2)]
    seen_ids: set[str] = set()
    seen_texts: set[str] = set()
    for row in out:
        if row.id in seen_ids:
            raise ValueError(f"duplicate id {row.id}")
        if key(row.text) in seen_texts:
            raise ValueError(f"duplicate text at {row.id}")
        seen_ids.add(row.id)
        seen_texts.add(key(row.text))
    return out


def counts(rows: list[ExtraRow]) -> str:
    """Counts by language and label, by kind, and by voice, as text."""
    out = [f"{len(rows)} rows"]
    by_label = Counter((r.lang, r.label) for r in rows)
    by_kind = Counter((r.kind, r.lang) for r in rows)
    out += [f"{lang} label {label}: {n}" for (lang, label), n in sorted(by_label.items())]
    out += [f"kind {kind} ({lang}): {n}" for (kind, lang), n in sorted(by_kind.items())]
    out += [f"voice {voice}: {n}" for voice, n in sorted(Counter(r.voice for r in rows).items())]
    long_ones = sum(1 for r in rows if r.kind == "long_everyday" and words(r.text) >= 40)
    out.append(f"long_everyday with >= 40 words: {long_ones}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Print the counts with --counts."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["--counts"]:
        print(__doc__)
        return 2
    print(counts(extra_rows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
