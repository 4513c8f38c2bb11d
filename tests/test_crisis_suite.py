"""The CheckList crisis suite (bench/crisis_suite.py) is as large as described, split by filler, and deterministic.

No detector runs here and no held-out text is printed: the held-out split is only counted and checked for leaks.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.crisis_suite import (
    CATEGORIES,
    FILLERS,
    LANGS,
    PERTURBATIONS,
    SPLITS,
    SuiteCase,
    cases,
    filler_marks,
    main,
    near_misses,
)


def _everything() -> list[SuiteCase]:
    return [case for split in SPLITS for case in cases(split) + near_misses(split)]


def test_the_suite_is_large_enough() -> None:
    train, heldout = cases("train"), cases("heldout")
    assert len(train) + len(heldout) >= 2000
    assert len(heldout) >= 800
    assert len(near_misses("train")) + len(near_misses("heldout")) >= 500
    assert len(near_misses("heldout")) >= 150
    assert {case.label for split in SPLITS for case in cases(split)} == {1}
    assert {case.label for split in SPLITS for case in near_misses(split)} == {0}


def test_every_category_language_and_perturbation_is_in_both_splits() -> None:
    for split in SPLITS:
        present = Counter((case.lang, case.category, case.perturbation) for case in cases(split))
        missing = Counter((case.lang, case.category, case.perturbation) for case in near_misses(split))
        for lang in LANGS:
            for category in CATEGORIES:
                for perturbation in PERTURBATIONS[lang]:
                    assert present[(lang, category, perturbation)] >= 5, (split, lang, category, perturbation)
                    assert missing[(lang, category, perturbation)] >= 1, (split, lang, category, perturbation)
    assert {case.split for case in cases("train")} == {"train"}
    assert {case.split for case in near_misses("heldout")} == {"heldout"}


def test_every_perturbed_case_differs_from_its_unperturbed_base() -> None:
    everything = _everything()
    by_id = {case.id: case for case in everything}
    perturbed = [case for case in everything if case.perturbation != "none"]
    assert len(perturbed) == len(everything) - len(perturbed)  # one perturbed case per base sentence
    for case in perturbed:
        base = by_id[case.base_id]
        assert base.perturbation == "none" and base.text != case.text
        assert (base.split, base.lang, base.category, base.label) == (case.split, case.lang, case.category, case.label)


def test_held_out_fillers_are_separate_and_about_a_third() -> None:
    for lang in LANGS:
        assert set(FILLERS["train"][lang]) >= set(FILLERS["heldout"][lang])
        for slot, held in FILLERS["heldout"][lang].items():
            train = FILLERS["train"][lang][slot]
            assert 0.2 <= len(held) / (len(held) + len(train)) <= 0.45, (lang, slot)
            train_marks = {mark.casefold() for filler in train for mark in filler_marks(filler)}
            assert not train_marks & {mark.casefold() for filler in held for mark in filler_marks(filler)}, slot


def test_no_held_out_filler_appears_in_any_train_text() -> None:
    marks = {
        mark.casefold()
        for lang in LANGS
        for fillers in FILLERS["heldout"][lang].values()
        for filler in fillers
        for mark in filler_marks(filler)
    }
    assert len(marks) > 150
    train_texts = [case.text.casefold() for case in cases("train") + near_misses("train")]
    leaks = sorted({mark for mark in marks for text in train_texts if mark in text})
    assert leaks == []  # names only the filler that leaked; run locally to see where


def test_no_duplicates_and_no_text_in_both_splits() -> None:
    everything = _everything()
    assert len({case.id for case in everything}) == len(everything)
    assert len({case.text for case in everything}) == len(everything)
    train = {case.text for case in cases("train") + near_misses("train")}
    heldout = {case.text for case in cases("heldout") + near_misses("heldout")}
    assert not train & heldout


def _digest() -> str:
    return hashlib.sha256("\n".join(f"{case}" for case in _everything()).encode()).hexdigest()


def test_two_calls_give_the_same_suite() -> None:
    assert cases("train") == cases("train")
    assert near_misses("heldout") == near_misses("heldout")
    first = cases("heldout")
    first.clear()  # a caller may change its list without changing the suite
    assert len(cases("heldout")) >= 800


def test_other_processes_build_the_same_suite() -> None:
    script = "from tests.test_crisis_suite import _digest; print(_digest())"
    root = Path(__file__).resolve().parents[1]
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == _digest()


def test_ids_are_stable_and_readable() -> None:
    train = cases("train")
    assert train[0].id == "de-wish_to_die-train-000-none"
    assert train[0].template == "de-wish_to_die-t00"
    assert all(case.id.startswith("nm-") for case in near_misses("train"))


def test_counts_print_no_text(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--counts"]) == 0
    printed = capsys.readouterr().out
    assert "heldout" in printed and "acute_danger" in printed
    for case in cases("heldout")[::25] + near_misses("heldout")[::10]:
        assert case.text not in printed
