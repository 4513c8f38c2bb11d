"""Signs of suicidal thoughts or acute danger, in German and English (a pure detection function), and the help
lines per country that a reply in a crisis carries."""
from __future__ import annotations

import re

from bot.texts import TEXTS

# Phrases, not single words: "Ich sterbe vor Lachen" or "killing it" must not trigger.
_PATTERNS = [
    r"\b(will|möchte|wollte|mag)\s+(ich\s+)?((einfach|echt|wirklich|eigentlich|bloß|nur\s+noch)\s+)?"
    r"(nicht\s+mehr\s+leben|sterben|tot\s+sein)\b",
    r"\bnicht\s+mehr\s+leben\s+(wollen|will|möchte)\b",
    r"\b(mich|mir)\s+(umbringen|das\s+leben\s+nehmen|etwas\s+antun|was\s+antun)\b",
    r"\bumbringen\b.*\bmich\b|\bmich\b.*\bumbringen\b",
    r"\bselbstmord\b|\bsuizid\w*\b|\bsuicid\w*\b|\bsuicide\b",
    r"\b(hat|macht)\s+(alles\s+)?keinen\s+sinn\s+mehr\b.*\b(leben|weiterleben)\b",
    r"\bkeinen\s+sinn\s+mehr\s+zu\s+leben\b",
    r"\bwill\s+nicht\s+mehr\s+aufwachen\b",
    r"\bmich\s+(ritzen|schneiden)\b|\britze\s+mich\b",
    r"\b(kill|hurt|harm)\s+myself\b",
    r"\bend\s+(my|it\s+all|my\s+life)\b",
    r"\b(want|wanna|going)\s+to\s+die\b",
    r"\bdon'?t\s+want\s+to\s+(live|be\s+alive|wake\s+up)\b",
    r"\bno\s+reason\s+to\s+live\b",
    r"\b(er|sie)\s+(schlägt|bedroht)\s+mich\b|\bich\s+werde\s+(geschlagen|bedroht)\b",
    r"\bsomeone\s+is\s+(hurting|threatening)\s+me\b",
]
_REGEX = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)


def signals_crisis(text: str) -> bool:
    """True when the text shows signs of suicidal thoughts or acute danger."""
    return bool(_REGEX.search(text))


# Help lines per country for the safety notice; DE is the default.
CRISIS_LINES: dict[str, dict[str, str]] = {
    "DE": TEXTS["crisis_help"],
    "AT": {
        "de": "Wenn es dir gerade sehr schlecht geht: Die Telefonseelsorge erreichst du rund um die Uhr unter 142. "
              "In akuter Gefahr ruf bitte 144 oder 112 an.",
        "en": "If you are in a very bad place: Telefonseelsorge Austria answers day and night at 142. "
              "In acute danger, please call 144 or 112.",
    },
    "CH": {
        "de": "Wenn es dir gerade sehr schlecht geht: Die Dargebotene Hand erreichst du rund um die Uhr unter 143. "
              "In akuter Gefahr ruf bitte 144 oder 112 an.",
        "en": "If you are in a very bad place: Die Dargebotene Hand answers day and night at 143. "
              "In acute danger, please call 144 or 112.",
    },
    "US": {
        "de": "Wenn es dir gerade sehr schlecht geht: Ruf oder schreib 988 (Suicide & Crisis Lifeline). "
              "In akuter Gefahr ruf 911 an.",
        "en": "If you are in a very bad place right now: call or text 988 (Suicide & Crisis Lifeline). "
              "In acute danger, call 911.",
    },
}


def crisis_help(country: str, lang: str) -> str:
    """The help-line notice for a country (German numbers when the country is unknown)."""
    lines = CRISIS_LINES.get(country.upper(), CRISIS_LINES["DE"])
    return lines.get(lang, lines["de"])
