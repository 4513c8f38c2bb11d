"""What `mnemo import-history` says around its preview: whose memory, a file read before, going on, how a run ended;
in German (default) and English, like the preview."""
from __future__ import annotations

IMPORT_TEXTS: dict[str, dict[str, str]] = {
    "import_unknown_user": {
        "de": "„{user}“ hat noch nie mit {companion} geschrieben – ich lese nichts ein. Gib die Kennung so an, wie "
              "mnemo sie speichert, z. B. tg:123456 (Telegram) oder @anna:example.org (Matrix).",
        "en": "'{user}' has never written to {companion} – nothing is imported. Give the id as mnemo stores it, "
              "e.g. tg:123456 (Telegram) or @anna:example.org (Matrix).",
    },
    "import_did_you_mean": {"de": "Gemeint ist wohl {known}.", "en": "Did you mean {known}?"},
    "import_already": {
        "de": "{name} ist schon am {day} eingelesen worden ({suggestions}); es gibt nichts zu tun. Die Vorschläge "
              "prüfst du mit /review im Chat.",
        "en": "{name} was imported on {day} ({suggestions}); there is nothing to do. Review the suggestions with "
              "/review in the chat.",
    },
    "import_already_as": {
        "de": "{name} hat denselben Inhalt wie {earlier}, das am {day} eingelesen wurde ({suggestions}); es gibt "
              "nichts zu tun. Die Vorschläge prüfst du mit /review im Chat.",
        "en": "{name} holds the same as {earlier}, imported on {day} ({suggestions}); there is nothing to do. "
              "Review the suggestions with /review in the chat.",
    },
    "import_continuing": {"de": "Ich lese {name} weiter (schon gelesen: {conversations}).",
                          "en": "Continuing the import of {name} (read already: {conversations})."},
    "import_options_kept": {"de": "Es geht mit den Optionen weiter, mit denen es begann ({changed}).",
                            "en": "It goes on with the options it began with ({changed})."},
    "import_option_changed": {"de": "--{option} {asked} statt {first}", "en": "--{option} {asked}, not {first}"},
    "import_option_none": {"de": "(keine)", "en": "(none)"},
    "import_ask": {"de": "Einlesen starten? [j/N] ", "en": "Start the import? [y/N] "},
    "import_declined": {"de": "Nichts eingelesen.", "en": "Nothing imported."},
    "import_model_failed": {
        "de": "Das Hintergrundmodell hat versagt ({error}). Was bis hierhin gelesen ist, bleibt; starte denselben "
              "Befehl noch einmal, dann geht es dort weiter.",
        "en": "The background model failed ({error}). What was read so far is kept; run the same command again "
              "to continue where it stopped.",
    },
    "import_paused": {
        "de": "Pausiert: Das tägliche Budget für Hintergrundarbeit ({spent} von {cap} Token) ist aufgebraucht. "
              "Gelesene Gespräche: {done} von {total}; {suggestions} warten. Starte denselben Befehl morgen noch "
              "einmal; er macht dort weiter.",
        "en": "Paused: the daily token budget for background work is spent ({spent} of {cap} tokens). "
              "Conversations read: {done} of {total}; {suggestions} wait. Run the same command again tomorrow; it "
              "continues where it stopped.",
    },
    "import_erased": {
        "de": "Abgebrochen: Das Gedächtnis wurde gelöscht (/deleteme), während das Einlesen lief; davon bleibt nichts.",
        "en": "Stopped: the person's memory was erased (/deleteme) while the import ran; nothing of it is kept.",
    },
    "import_done": {
        "de": "Fertig: {conversations} gelesen ({calls} an das Hintergrundmodell); {suggestions} warten auf dich. "
              "Behalten wird erst, was du bestätigst: schick /review im Chat. /undo (oder `mnemo undo`) nimmt den "
              "ganzen Import zurück.",
        "en": "Done: {conversations} read ({calls} to the background model); {suggestions} wait for you. "
              "Nothing is remembered until you approve it: send /review in the chat. /undo (or `mnemo undo`) "
              "takes the whole import back.",
    },
    "import_skipped": {"de": "{batches} übersprungen: Die Antwort des Modells war nicht das verlangte JSON.",
                       "en": "{batches} skipped: the model's answer was not the JSON asked for."},
}
