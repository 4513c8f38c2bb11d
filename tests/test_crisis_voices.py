"""The second held-out crisis set (bench/data/crisis_voices.tsv) has the shape and the counts its page promises.

Only shape and counts are checked, and a failure names counts, ids and kinds, never a row's text: no tuning, and no
reader of a test log, may see the set's messages.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "bench" / "data" / "crisis_voices.tsv"
COLUMNS = ["id", "lang", "label", "kind", "voice", "text"]
CRISIS_KINDS = {"direct", "indirect", "plan", "means", "goodbye", "selfharm", "violence", "danger"}
QUIET_KINDS = {"hyperbole", "idiom", "humour", "media", "study", "past", "grief", "breakup", "medical", "sports",
               "sadness", "tiredness", "other"}


def read_rows() -> list[list[str]]:
    """Return the set's rows below its header, each with its text replaced by the text's digest."""
    header, rows, misshapen = _parse(PATH.read_bytes())
    assert header == COLUMNS
    assert misshapen == [], f"lines with a wrong column count or an empty text: {misshapen[:20]}"
    return rows


def _parse(raw: bytes) -> tuple[list[str], list[list[str]], list[int]]:
    """Split the file into header, rows (text as a SHA-256 digest) and the numbers of misshapen lines.

    Nothing is asserted here, so no traceback, not even with --showlocals, ever holds a row's text.
    """
    lines = raw.decode("utf-8").split("\n")
    header = lines[0].split("\t")
    rows: list[list[str]] = []
    misshapen = [] if lines[-1] == "" else [len(lines)]  # the file ends with one newline
    for number, line in enumerate(lines[1:-1], start=2):
        fields = line.split("\t")
        if len(fields) != len(COLUMNS) or not fields[-1].strip():
            misshapen.append(number)
            continue
        rows.append([*fields[:-1], hashlib.sha256(fields[-1].encode("utf-8")).hexdigest()])
    return header, rows, misshapen


def test_ids_and_texts_are_unique_and_the_set_is_large_enough() -> None:
    rows = read_rows()
    total = len(rows)
    ids = Counter(row[0] for row in rows)
    distinct_texts = len({row[5] for row in rows})
    assert total >= 300
    assert sorted(ids) == [f"v{n:04d}" for n in range(1, total + 1)]
    assert distinct_texts == total, f"{total - distinct_texts} repeated texts"


def test_both_languages_and_both_labels_in_each() -> None:
    rows = read_rows()
    assert {row[1] for row in rows} == {"de", "en"}
    assert {row[2] for row in rows} == {"0", "1"}
    for lang in ("de", "en"):
        labels = Counter(row[2] for row in rows if row[1] == lang)
        in_lang = labels["0"] + labels["1"]
        assert in_lang >= 0.4 * len(rows), f"{lang}: {in_lang} of {len(rows)} rows"
        for label in ("0", "1"):
            assert labels[label] >= 0.4 * in_lang, f"{lang} label {label}: {labels[label]} of {in_lang}"


def test_every_kind_is_present_in_each_language_with_its_label() -> None:
    rows = read_rows()
    for lang in ("de", "en"):
        for label, expected in (("1", CRISIS_KINDS), ("0", QUIET_KINDS)):
            kinds = {row[3] for row in rows if row[1] == lang and row[2] == label}
            missing, unknown = sorted(expected - kinds), sorted(kinds - expected)
            assert kinds == expected, f"{lang}/{label}: missing {missing}, unknown {unknown}"


def test_every_voice_speaks_in_both_labels() -> None:
    rows = read_rows()
    voices = Counter((row[4], row[2]) for row in rows)
    names = {voice for voice, _ in voices}
    assert len(names) >= 10
    thin = sorted(f"{voice}/{label}: {voices[voice, label]}" for voice in names for label in ("0", "1")
                  if voices[voice, label] < 5)
    assert thin == [], thin
