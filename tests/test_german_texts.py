"""Every German text the interface can show (bot.texts.TEXTS, which gathers every text table) is German: no known
English words, no raw profile keys, no setting names, no number before a plural noun that is not counted (so never
'1 Notizen'); every text has both languages with the same values to fill in; the plural helper and the profile's
keys and categories speak both languages."""
from __future__ import annotations

import re
import string

import pytest

from bot.profile_keys import PROFILE_CATEGORIES, PROFILE_KEYS, profile_category, profile_key
from bot.texts import TEXTS, counted, t

# Texts only the operator reads, in the terminal where mnemo is run, and why they may name settings.
OPERATOR_ONLY = {
    "no_model_hint": "printed in the operator's terminal when mnemo starts without a model",
    "history_preview_no_cap": "`mnemo import-history`, the operator's command, names the budget's setting",
}
ENGLISH = ("the", "and", "of", "is", "are", "you", "your", "nothing", "done", "file", "empty", "work", "facts",
           "please", "not", "with", "from", "this", "that", "imported", "suggestions", "conversations",
           "messages", "notes", "operator", "settings", "memory", "yes", "only", "group", "people", "profile",
           "reminder", "reminders", "rules", "error", "failed", "continuing", "paused", "stopped", "read", "none",
           "mnemos", "skipped", "found", "today", "week", "day", "days", "minutes", "hours")
ENGLISH_WORD = re.compile(r"\b(" + "|".join(ENGLISH) + r")\b", re.IGNORECASE)
SETTING = re.compile(r"\b(?:MNEMO_)?[A-Z]{2,}_[A-Z_]{2,}\b")
SNAKE_KEY = re.compile(r"\b[a-z]+_[a-z_]+\b")
RAW_KEY = re.compile(r"(?<![\w/-])(" + "|".join(k for k in PROFILE_KEYS if "_" not in k) + r"):")
PLURAL = re.compile(r"\{\w+\} (Gespräche|Nachrichten|Notizen|Fakten|Vorschläge|Minuten|Stunden|Tage|Erinnerungen|"
                    r"Regeln|Personen|Einträge|Gedanken|Themen|Aufrufe|Aufrufen)\b")
# what a person types or reads verbatim: placeholders, commands with their words, code, file names, long options
VERBATIM = re.compile(r"\{[^}]*\}|/\w+(?: (?:an|aus|auto|on|off|\d+))?|`[^`]*`|\b[\w.-]+\.(?:json|zip|env)\b|--\w+"
                      r"|https?://\S+|@\w+:\S+")


def german() -> list[tuple[str, str]]:
    """(key, German text) of every text a person may be shown."""
    return [(key, entry["de"]) for key, entry in sorted(TEXTS.items()) if key not in OPERATOR_ONLY]


def fields(text: str) -> set[str]:
    """The names of the values a text is filled with."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_text_has_both_languages_with_the_same_values() -> None:
    for key, entry in TEXTS.items():
        assert set(entry) == {"de", "en"}, key
        assert fields(entry["de"]) == fields(entry["en"]), key


@pytest.mark.parametrize(("pattern", "what"), [(ENGLISH_WORD, "an English word"), (SETTING, "a setting's name"),
                                               (SNAKE_KEY, "a raw key"), (RAW_KEY, "a raw profile key")])
def test_no_german_text_shows_english_words_raw_keys_or_setting_names(pattern: re.Pattern[str], what: str) -> None:
    found = [(key, m.group(0)) for key, text in german() for m in [pattern.search(VERBATIM.sub(" ", text))] if m]
    assert found == [], f"German texts with {what}: {found}"


def test_no_german_text_puts_a_number_before_a_plural_noun_itself() -> None:
    def counted_elsewhere(key: str) -> bool:  # a count's noun itself, or the many of a pair whose '_one' says 1
        return key.startswith("count_") or f"{key.removesuffix('_many')}_one" in TEXTS

    assert [key for key, text in german() if PLURAL.search(text) and not counted_elsewhere(key)] == []


def test_counts_have_their_nouns_in_the_right_number_in_both_languages() -> None:
    nouns = {key.removeprefix("count_").rpartition("_")[0] for key in TEXTS if key.startswith("count_")}
    assert {"conversations", "messages", "notes", "facts", "suggestions"} <= nouns
    for noun in nouns:
        assert {f"count_{noun}_one", f"count_{noun}_many"} <= TEXTS.keys(), noun
        for lang in ("de", "en"):
            assert counted(lang, 1, noun).startswith("1 ") and counted(lang, 3, noun).startswith("3 ")
    assert [counted("de", n, "notes") for n in (0, 1, 2)] == ["0 Notizen", "1 Notiz", "2 Notizen"]
    assert [counted("en", n, "conversations") for n in (1, 2)] == ["1 conversation", "2 conversations"]
    assert counted("de", 1200, "messages", "1.200") == "1.200 Nachrichten"


def test_profile_keys_and_categories_are_read_in_the_persons_language() -> None:
    assert all(set(names) == {"de", "en"} for names in [*PROFILE_KEYS.values(), *PROFILE_CATEGORIES.values()])
    assert (profile_key("work", "de"), profile_key("work", "en"), profile_key("life_events", "de")) == (
        "Arbeit", "Work", "Lebensereignisse")
    assert [profile_category(c, "de") for c in ("facts", "emotional", "life_events")] == [
        "Fakten", "Gefühle und Bedürfnisse", "Lebensereignisse"]
    assert t("de", "review_kind_profile") == "Profil"
