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


# The same numbers for words the person forwarded (someone else's): the help is for someone they know, and for them.
CRISIS_LINES_OTHER: dict[str, dict[str, str]] = {
    "DE": {
        "de": "Wenn jemand, den du kennst, in Gefahr ist: In akuter Gefahr ruf bitte sofort 112 an. Die "
              "Telefonseelsorge berät rund um die Uhr kostenlos, auch dich als Angehörige oder Freund, unter "
              "0800 111 0 111 oder 0800 111 0 222.",
        "en": "If someone you know is in danger: in acute danger, please call 112 right away. In Germany the "
              "Telefonseelsorge answers day and night, free, also for you as their friend or family, at "
              "0800 111 0 111 or 0800 111 0 222.",
    },
    "AT": {
        "de": "Wenn jemand, den du kennst, in Gefahr ist: In akuter Gefahr ruf bitte sofort 144 oder 112 an. Die "
              "Telefonseelsorge berät rund um die Uhr, auch dich, unter 142.",
        "en": "If someone you know is in danger: in acute danger, please call 144 or 112 right away. "
              "Telefonseelsorge Austria answers day and night, also for you, at 142.",
    },
    "CH": {
        "de": "Wenn jemand, den du kennst, in Gefahr ist: In akuter Gefahr ruf bitte sofort 144 oder 112 an. Die "
              "Dargebotene Hand berät rund um die Uhr, auch dich, unter 143.",
        "en": "If someone you know is in danger: in acute danger, please call 144 or 112 right away. "
              "Die Dargebotene Hand answers day and night, also for you, at 143.",
    },
    "US": {
        "de": "Wenn jemand, den du kennst, in Gefahr ist: In akuter Gefahr ruf bitte sofort 911 an. Unter 988 (Suicide "
              "& Crisis Lifeline, Anruf oder SMS) bekommst auch du Rat, wie du helfen kannst.",
        "en": "If someone you know is in danger: in acute danger, please call 911 right away. Call or text 988 "
              "(Suicide & Crisis Lifeline): they also help you help them.",
    },
}


def crisis_help_other(country: str, lang: str) -> str:
    """The help-line notice for someone the person knows (forwarded words that show a crisis); German numbers when
    the country is unknown."""
    lines = CRISIS_LINES_OTHER.get(country.upper(), CRISIS_LINES_OTHER["DE"])
    return lines.get(lang, lines["de"])


def without_help(text: str, country: str, lang: str) -> str:
    """A crisis answer without the help text, for the person's or for someone they know, that the model repeated (the
    program sent it first)."""
    for notice in (crisis_help(country, lang), crisis_help_other(country, lang)):
        text = text.replace(notice, "")
    return text.strip()
