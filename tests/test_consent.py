"""The yes/no decision over typed replies, as a table of cases."""
from __future__ import annotations

import pytest

from bot.consent import yes_or_no


@pytest.mark.parametrize("text, expected", [
    ("ja", "yes"), ("Ja, bitte!", "yes"), ("jo mach das", "yes"), ("Klar doch", "yes"), ("yes please", "yes"),
    ("nein", "no"), ("Nein danke", "no"), ("nee lass mal", "no"), ("Ok, nein", "no"), ("no thanks", "no"),
    ("Ich war gestern noch im Kino", None), ("Jahr", None), ("Token", None), ("noch nicht entschieden", "no"),
    ("Bitte erkläre mir erst, was du meinst", None), ("Kinoabend?", None), ("Das ist ein schönes Jahr, ja", None),
    ("", None),
])
def test_yes_or_no(text: str, expected: str | None) -> None:
    assert yes_or_no(text) == expected
