"""What mnemo says about imported histories: /review, the provenance of imported memories, the import's progress."""
from __future__ import annotations

REVIEW_TEXTS: dict[str, dict[str, str]] = {
    "review_empty": {
        "de": "Nichts zu prüfen – es wartet kein importierter Vorschlag auf dich.",
        "en": "Nothing to review – no imported suggestion is waiting for you.",
    },
    "review_head_one": {
        "de": "Aus deinem Verlauf: ein Vorschlag wartet. Was ich behalten darf, entscheidest du.",
        "en": "From your history: one suggestion is waiting. You decide what I may keep.",
    },
    "review_head": {
        "de": "Aus deinem Verlauf: {count} Vorschläge warten. Was ich behalten darf, entscheidest du.",
        "en": "From your history: {count} suggestions are waiting. You decide what I may keep.",
    },
    "review_group": {"de": "💬 „{title}“ – {origin}", "en": "💬 “{title}” – {origin}"},
    "review_kind_profile": {"de": "Profil", "en": "Profile"},
    "review_kind_person": {"de": "Person", "en": "Person"},
    "review_duplicate": {"de": "≈ schon bekannt: „{text}“", "en": "≈ already known: “{text}”"},
    "review_contradicts": {"de": "↔ bisher: „{old}“  |  neu: „{new}“", "en": "↔ so far: “{old}”  |  new: “{new}”"},
    "review_all_yes": {"de": "alle ✓", "en": "all ✓"},
    "review_all_no": {"de": "alle ✗", "en": "all ✗"},
    "review_kept": {"de": "Behalten: {text}", "en": "Kept: {text}"},
    "review_dropped": {"de": "Weggelassen: {text}", "en": "Left out: {text}"},
    "review_kept_many": {"de": "{count} behalten.", "en": "{count} kept."},
    "review_dropped_many": {"de": "{count} weggelassen.", "en": "{count} left out."},
    "review_done": {
        "de": "Fertig – alles geprüft. Mit /undo nimmst du den ganzen Import zurück.",
        "en": "Done – everything reviewed. /undo takes the whole import back.",
    },
    "provenance": {"de": "aus {source}, {date}", "en": "from {source}, {date}"},
    "undo_item_import": {"de": "Import", "en": "Import"},
}
