"""Signs of suicidal thoughts or acute danger, in German and English (a pure detection function, the grammar's),
and the help lines per country that a reply in a crisis carries."""
from __future__ import annotations

from bot.conversation.crisis_grammar import grammar_says
from bot.texts import TEXTS


def signals_crisis(text: str) -> bool:
    """True when the text says in so many words that someone wants to die, plans it, harms themselves, is hurt by
    someone else or is in acute danger: the grammar (`bot.conversation.crisis_grammar`; `bot.conversation.crisis`
    adds the classifier)."""
    return grammar_says(text)


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
