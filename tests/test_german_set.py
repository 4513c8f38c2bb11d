"""mnemo's own German retrieval set (bench/data/german_memories.json) is sound: fast, no model."""
from __future__ import annotations

from collections import Counter

import pytest

from bench.german_set import DEFAULT, DEV_SPLITS, HELDOUT, KINDS, SPLITS, GermanSet, load, problems, shared_words


@pytest.fixture(scope="module")
def german() -> GermanSet:
    return load(DEFAULT)


def test_the_set_has_no_problems(german: GermanSet) -> None:
    assert problems(german) == []


def test_the_set_is_large_enough(german: GermanSet) -> None:
    assert len(german.notes) >= 180
    assert len(german.questions) >= 240
    kinds = Counter(q.kind for q in german.questions)
    assert kinds["paraphrase"] >= 50
    assert kinds["typo"] >= 20
    assert set(kinds) == set(KINDS)
    assert german.people and german.about and "CC0" in german.about


def test_about_a_fifth_is_held_out_in_every_kind(german: GermanSet) -> None:
    assert 0.17 <= len(german.heldout()) / len(german.questions) <= 0.23
    for kind in KINDS:
        of_kind = [q for q in german.questions if q.kind == kind]
        held = sum(q.split == HELDOUT for q in of_kind)
        assert held >= 1 and held / len(of_kind) <= 0.3, kind
    dev = Counter(q.split for q in german.dev())
    assert set(dev) == set(DEV_SPLITS) and max(dev.values()) - min(dev.values()) <= len(KINDS)


def test_corrections_point_from_the_current_note_to_an_older_one(german: GermanSet) -> None:
    for q in german.questions:
        for old in q.outdated:
            assert any(german.note(old).date < german.note(g).date for g in q.gold), q.id


def test_asked_dates_are_not_before_the_gold_notes(german: GermanSet) -> None:
    for q in german.questions:
        if q.asked:
            assert all(german.note(g).date <= q.asked for g in q.gold), q.id
    assert any(q.asked for q in german.questions if q.kind == "time")


def test_the_checks_find_what_is_wrong() -> None:
    broken = load(DEFAULT)
    first = broken.questions[0]
    broken.questions.append(type(first)(first.id, broken.notes[0].text, ("n999",), "paraphrase", "dev9"))
    found = "\n".join(problems(broken))
    for expected in ("used 2 times", "gold n999 is not a note", "unknown split", "is a note's text"):
        assert expected in found
    assert shared_words("wann gehst du laufen?", "Tobias läuft sonntags mit einer Laufgruppe.") == {"laufen"}


def test_the_plain_form_keeps_the_held_out_questions_apart(german: GermanSet) -> None:
    plain = german.as_dict()
    assert len(plain["notes"]) == len(german.notes)
    assert {q["split"] for q in plain["questions"]} == set(DEV_SPLITS)
    assert len(german.as_dict(SPLITS)["questions"]) == len(german.questions)
