"""The yes/no decision over typed replies, as a table of cases (the answers set's figures: test_answers_set.py)."""
from __future__ import annotations

import pytest

from bot.conversation.consent import yes_or_no


@pytest.mark.parametrize("text, expected", [
    ("ja", "yes"), ("Ja, bitte!", "yes"), ("jo mach das", "yes"), ("Klar doch", "yes"), ("yes please", "yes"),
    ("nein", "no"), ("Nein danke", "no"), ("nee lass mal", "no"), ("no thanks", "no"),
    ("Ich war gestern noch im Kino", None), ("Jahr", None), ("Token", None), ("noch nicht entschieden", None),
    ("Bitte erkläre mir erst, was du meinst", None), ("Kinoabend?", None), ("Das ist ein schönes Jahr, ja", None),
    ("", None), ("lieber nicht", "no"), ("nicht nötig", "no"), ("ja ja", "yes"), ("ok", "yes"),
    # A message that merely contains a yes or no word is no answer: it goes to the model, the question stays open.
    ("Genau, ich habe heute frei", None), ("Ich kann nicht schlafen", None), ("Nein, ich will nicht mehr leben", None),
    ("Nein heute war ein furchtbarer Tag", None),
    # Issue 38: the phrasings a new user tried.
    ("Nicht so gut.", None), ("Na klar!", "yes"), ("Auf jeden Fall", "yes"), ("Logo", "yes"), ("Sehr gerne", "yes"),
    ("Auf keinen Fall", "no"), ("Bloß nicht", "no"), ("Eher nicht", "no"), ("Ja, aber erst morgen", None),
    # Both at once, an emoji alone, asking back, hesitating, joking: no answer. (Before issue 38 "Ok, nein" was a
    # no and "👍" alone a yes; a 👍 is a plain acknowledgement, and "ok, nein" says both.)
    ("Ok, nein", None), ("👍", None), ("ja nee", None), ("Jein", None), ("ja?", None), ("ja...", None),
    ("ja klar, als ob", None), ("nein 👍", None), ("Ich merk mir das", None), ("I remember that", None),
    # Dialect, typos, emoji beside words, a restated decision.
    ("Jaaa 👍", "yes"), ("passt scho", "yes"), ("unbedignt", "yes"), ("Naa, lieber ned", "no"),
    ("ja, das möchte ich", "yes"), ("nein, das möchte ich nicht", "no"), ("no, please don't save that", "no"),
    ("das stimmt nicht", "no"), ("nein, merk dir das nicht", "no"), ("super", None),
    # Praise answers the companion's own "Wie geht es dir?" as often as the question: never an answer.
    ("ja super", None), ("Richtig gut!", None), ("totally fine", None), ("Nicht so gut", None),
])
def test_yes_or_no(text: str, expected: str | None) -> None:
    assert yes_or_no(text) == expected
