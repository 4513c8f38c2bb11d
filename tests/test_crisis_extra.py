"""The extra crisis TRAIN rows (bench/data/crisis_train_extra.tsv): their shape, and that they repeat no text of the
train split of bench/data/crisis_set.tsv or of the everyday set's train split. Only train rows are read here."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bench import everyday_set
from bench.crisis_extra import CALM_KINDS, CRISIS_KINDS, DEFAULT, extra_rows, key, words

CRISIS_SET = Path(__file__).resolve().parents[1] / "bench" / "data" / "crisis_set.tsv"


def crisis_train_texts() -> set[str]:
    """The texts of crisis_set.tsv's train split only, compared loosely."""
    header, *body = CRISIS_SET.read_text(encoding="utf-8").split("\n")
    columns = header.split("\t")
    split, text = columns.index("split"), columns.index("text")
    return {key(cells[text]) for cells in (line.split("\t") for line in body if line) if cells[split] == "train"}


def test_size_languages_labels_and_voices() -> None:
    rows = extra_rows()
    assert len(rows) >= 900
    langs = Counter(row.lang for row in rows)
    assert set(langs) == {"de", "en"}
    assert 0.35 * len(rows) <= langs["de"] <= 0.55 * len(rows), langs
    labels = Counter(row.label for row in rows)
    assert set(labels) == {0, 1}
    assert 0.25 * len(rows) <= labels[1] <= 0.45 * len(rows), labels
    assert len({row.voice for row in rows}) >= 14


def test_every_kind_is_present_in_both_languages() -> None:
    rows = extra_rows()
    for lang in ("de", "en"):
        present = {row.kind for row in rows if row.lang == lang}
        assert set(CRISIS_KINDS) | set(CALM_KINDS) <= present, (lang, present)


def test_long_everyday_rows_are_long() -> None:
    long_ones = [row for row in extra_rows() if row.kind == "long_everyday"]
    assert sum(1 for row in long_ones if words(row.text) >= 40) >= 200
    assert all(row.label == 0 for row in long_ones)
    assert len([row for row in extra_rows() if row.kind == "hard_negative"]) >= 120


def test_no_text_repeats_the_crisis_train_split() -> None:
    assert not {key(row.text) for row in extra_rows()} & crisis_train_texts()


def test_no_text_repeats_the_everyday_train_split() -> None:
    everyday = {key(row.text) for row in everyday_set.rows("train")}
    assert not {key(row.text) for row in extra_rows()} & everyday


def test_the_reader_refuses_a_broken_file(tmp_path: Path) -> None:
    good = DEFAULT.read_text(encoding="utf-8").split("\n")
    cases = {
        "header": ["id\tlang\tlabel\ttext"] + good[1:],
        "kind": [good[0], "x9999\tde\t1\tterse\tlong_everyday\tnur ein Test"],
        "label": [good[0], "x9999\ten\t2\tterse\teveryday\tjust a test"],
        "duplicate": [good[0], "x9998\ten\t0\tterse\teveryday\tsame", "x9999\ten\t0\tterse\teveryday\tSame"],
    }
    for name, lines in cases.items():
        path = tmp_path / f"{name}.tsv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ValueError):
            extra_rows(path)
