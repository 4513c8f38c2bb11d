"""What mnemo says about an export before importing it (the preview), in German (default) and English."""
from __future__ import annotations

HISTORY_TEXTS: dict[str, dict[str, str]] = {
    "history_preview_found": {
        "de": "Gefunden: {conversations} aus {source} vom {first} bis {last}, mit {person} "
              "von dir und {other} von der Gegenseite.",
        "en": "Found: {conversations} from {source}, {first} to {last}, with {person} "
              "from you and {other} from the other side.",
    },
    "history_preview_cost_one": {
        "de": "Geschätzter Aufwand: etwa {tokens} Token in einem Aufruf des Hintergrundmodells "
              "(bis zu {batch} deiner Nachrichten, grob {chars} Zeichen je Token).",
        "en": "Estimated cost: about {tokens} tokens in one call of the background model "
              "(up to {batch} of your messages, roughly {chars} characters per token).",
    },
    "history_preview_cost": {
        "de": "Geschätzter Aufwand: etwa {tokens} Token in {calls} Aufrufen des Hintergrundmodells "
              "(je Aufruf bis zu {batch} deiner Nachrichten, grob {chars} Zeichen je Token).",
        "en": "Estimated cost: about {tokens} tokens in {calls} calls of the background model "
              "(up to {batch} of your messages per call, roughly {chars} characters per token).",
    },
    "history_preview_budget_day": {
        "de": "Das sind {share} % des täglichen Budgets für Hintergrundarbeit ({budget} Token).",
        "en": "That is {share}% of the daily background budget ({budget} tokens).",
    },
    "history_preview_budget_days": {
        "de": "Das sind {share} % des täglichen Budgets für Hintergrundarbeit ({budget} Token): "
              "das Einlesen verteilt sich auf mindestens {days}.",
        "en": "That is {share}% of the daily background budget ({budget} tokens): "
              "reading it takes at least {days}.",
    },
    "history_preview_no_cap": {
        "de": "Für Hintergrundarbeit ist kein tägliches Budget gesetzt (MNEMO_BACKGROUND_TOKENS_PER_DAY).",
        "en": "No daily budget is set for background work (MNEMO_BACKGROUND_TOKENS_PER_DAY).",
    },
    "history_preview_nothing_yet": {
        "de": "Bisher ist nichts gespeichert und kein Modell gefragt.",
        "en": "Nothing has been stored and no model asked so far.",
    },
    "history_preview_nothing": {
        "de": "In dieser Datei habe ich keine Gespräche gefunden – es gibt nichts einzulesen.",
        "en": "I found no conversations in this file – there is nothing to import.",
    },
}
