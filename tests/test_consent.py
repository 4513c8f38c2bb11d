"""The yes/no decision over typed replies, as a table of cases."""
from __future__ import annotations

import pytest

from bot.conversation.consent import yes_or_no


@pytest.mark.parametrize("text, expected", [
    ("ja", "yes"), ("Ja, bitte!", "yes"), ("jo mach das", "yes"), ("Klar doch", "yes"), ("yes please", "yes"),
    ("nein", "no"), ("Nein danke", "no"), ("nee lass mal", "no"), ("Ok, nein", "no"), ("no thanks", "no"),
    ("Ich war gestern noch im Kino", None), ("Jahr", None), ("Token", None), ("noch nicht entschieden", None),
    ("Bitte erkläre mir erst, was du meinst", None), ("Kinoabend?", None), ("Das ist ein schönes Jahr, ja", None),
    ("", None), ("lieber nicht", "no"), ("👍", "yes"), ("nicht nötig", "no"), ("ja ja", "yes"),
    # A message that merely contains a yes or no word is no answer: it goes to the model, the question stays open.
    ("Genau, ich habe heute frei", None), ("Ich kann nicht schlafen", None), ("Nein, ich will nicht mehr leben", None),
    ("Nein heute war ein furchtbarer Tag", None), ("ok", "yes"),
])
def test_yes_or_no(text: str, expected: str | None) -> None:
    assert yes_or_no(text) == expected
