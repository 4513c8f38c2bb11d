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
    "review_group_more": {"de": "(hier {shown} der {total} aus diesem Gespräch; die übrigen kommen gleich danach)",
                          "en": "(here {shown} of the {total} from this conversation; the rest come right after)"},
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
    # the readers' media placeholders and Telegram's saved messages, as shown (bot/history/shown.py)
    "placeholder_photo": {"de": "Foto", "en": "photo"},
    "placeholder_voice": {"de": "Sprachnachricht", "en": "voice message"},
    "placeholder_round": {"de": "Videonachricht", "en": "video message"},
    "placeholder_video": {"de": "Video", "en": "video"},
    "placeholder_gif": {"de": "GIF", "en": "GIF"},
    "placeholder_audio": {"de": "Audio", "en": "audio"},
    "placeholder_sticker": {"de": "Sticker", "en": "sticker"},
    "placeholder_file": {"de": "Datei", "en": "file"},
    "placeholder_poll": {"de": "Umfrage", "en": "poll"},
    "placeholder_location": {"de": "Standort", "en": "location"},
    "placeholder_contact": {"de": "Kontakt", "en": "contact"},
    "placeholder_forwarded": {"de": "weitergeleitet von", "en": "forwarded from"},
    "placeholder_saved_messages": {"de": "Gespeicherte Nachrichten", "en": "Saved Messages"},
}
