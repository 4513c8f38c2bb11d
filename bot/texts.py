"""Everything mnemo says on its own, in German (default) and English."""
from __future__ import annotations

from typing import Literal

Lang = Literal["de", "en"]

TEXTS: dict[str, dict[str, str]] = {
    "model_down": {
        "de": "Ich kann gerade nicht antworten – mein Sprachmodell ist nicht erreichbar. Deine Nachricht habe ich gespeichert.",
        "en": "I can't answer right now – my language model is unreachable. I have saved your message.",
    },
    "too_long": {
        "de": "Die Nachricht ist zu lang ({size} Zeichen, höchstens {limit}). Schick sie mir bitte in kürzeren Teilen.",
        "en": "That message is too long ({size} characters, at most {limit}). Please send it in shorter parts.",
    },
    "not_text": {
        "de": "Das kann ich nicht lesen – bitte schreib mir Text.",
        "en": "I can't read that – please send me text.",
    },
    "empty": {"de": "Die Nachricht war leer.", "en": "That message was empty."},
    "no_model_hint": {
        "de": "Kein Sprachmodell antwortet unter {url}. Starte Ollama (ollama serve) oder setze MNEMO_CHAT_BASE_URL, "
              "MNEMO_CHAT_MODEL und MNEMO_CHAT_API_KEY in .env.",
        "en": "No language model answers at {url}. Start Ollama (ollama serve) or set MNEMO_CHAT_BASE_URL, "
              "MNEMO_CHAT_MODEL and MNEMO_CHAT_API_KEY in .env.",
    },
    "console_hello": {
        "de": "{name} hört zu. Schreib etwas (Strg-D beendet, /help zeigt Befehle).",
        "en": "{name} is listening. Type something (Ctrl-D quits, /help shows commands).",
    },
    "crisis_help": {
        "de": "Wenn es dir gerade sehr schlecht geht: Du bist nicht allein. Die Telefonseelsorge ist rund um die Uhr "
              "kostenlos erreichbar unter 0800 111 0 111 oder 0800 111 0 222. In akuter Gefahr ruf bitte 112 an.",
        "en": "If you are in a very bad place right now: you are not alone. In Germany the Telefonseelsorge answers day "
              "and night, free, at 0800 111 0 111 or 0800 111 0 222. If you are in acute danger, please call 112.",
    },
}

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


def t(lang: str, key: str, **values: object) -> str:
    """The text `key` in the language, German when the language is unknown."""
    entry = TEXTS[key]
    return entry.get(lang, entry["de"]).format(**values)


def crisis_help(country: str, lang: str) -> str:
    """The help-line notice for a country (German numbers when the country is unknown)."""
    lines = CRISIS_LINES.get(country.upper(), CRISIS_LINES["DE"])
    return lines.get(lang, lines["de"])
