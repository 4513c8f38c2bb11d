"""What mnemo says about voice notes and spoken replies on its own (de/en)."""
from __future__ import annotations

VOICE_TEXTS: dict[str, dict[str, str]] = {
    "voice_not_set_up": {
        "de": "Sprachnachrichten kann ich noch nicht anhören – dafür muss die Person, die mich betreibt, erst eine "
              "Spracherkennung einrichten. Schreib mir bis dahin gern.",
        "en": "I can't listen to voice notes yet – whoever runs me needs to set up speech recognition first. "
              "Until then, just write.",
    },
    "voice_too_big": {
        "de": "Die Sprachnachricht ist zu groß für mich ({size} MB, höchstens {limit} MB). Magst du sie kürzer "
              "aufnehmen?",
        "en": "That voice note is too big for me ({size} MB, at most {limit} MB). Could you record a shorter one?",
    },
    "voice_too_long": {
        "de": "Die Sprachnachricht ist zu lang für mich ({seconds} s, höchstens {limit} s). Magst du sie in "
              "kürzeren Teilen schicken?",
        "en": "That voice note is too long for me ({seconds} s, at most {limit} s). Could you send it in shorter "
              "parts?",
    },
    "voice_too_many_words": {
        "de": "In der Sprachnachricht steckt mehr Text, als ich auf einmal lesen kann ({size} Zeichen, höchstens "
              "{limit}). Magst du sie in kürzeren Teilen schicken?",
        "en": "That voice note holds more text than I can read at once ({size} characters, at most {limit}). "
              "Could you send it in shorter parts?",
    },
    "voice_unsupported": {
        "de": "Diese Audiodatei kann ich nicht abspielen – ich verstehe OGG/Opus, MP3, M4A/MP4, WAV, FLAC und WebM.",
        "en": "I can't play that audio file – I understand OGG/Opus, MP3, M4A/MP4, WAV, FLAC and WebM.",
    },
    "voice_unreadable": {
        "de": "Diese Sprachnachricht konnte ich nicht anhören – die Datei scheint beschädigt zu sein. Nimm sie "
              "bitte noch einmal auf oder schreib mir.",
        "en": "I couldn't listen to that voice note – the file seems to be damaged. Please record it again or write "
              "to me.",
    },
    "voice_backend_down": {
        "de": "Ich konnte deine Sprachnachricht gerade nicht anhören – meine Spracherkennung antwortet nicht. "
              "Schick sie mir gleich noch einmal oder schreib mir.",
        "en": "I couldn't listen to your voice note just now – my speech recognition doesn't answer. Send it again "
              "in a moment, or write to me.",
    },
    "voice_refused": {
        "de": "Ich kann gerade keine Sprachnachrichten verstehen – der Dienst für die Spracherkennung lehnt ab. Das "
              "muss mein Betreiber beheben; schreib mir bis dahin gern.",
        "en": "I can't understand voice notes right now – the speech recognition service refuses. My operator has to "
              "fix that; until then, just write to me.",
    },
    "voice_empty": {
        "de": "In deiner Sprachnachricht habe ich keine Worte gehört.",
        "en": "I didn't hear any words in your voice note.",
    },
    # Where a message came from, as /why shows its source ("voice" is the origin stored with the message).
    "why_source_voice": {"de": "du sagtest am {when} (Sprachnachricht)", "en": "you said on {when} (voice message)"},
    "voice_body": {"de": "Sprachnachricht", "en": "Voice message"},  # a spoken reply's text on Matrix (its body)
    # /voice
    "voice_mode": {
        "de": "Sprachantworten: {mode}. Mit /voice an spreche ich immer, mit /voice auto nur auf Sprachnachrichten, "
              "mit /voice aus nie; der Text kommt immer mit.",
        "en": "Voice replies: {mode}. With /voice on I always speak, with /voice auto only in answer to voice "
              "notes, with /voice off never; the text always comes along.",
    },
    "voice_mode_on": {"de": "an", "en": "on"},
    "voice_mode_off": {"de": "aus", "en": "off"},
    "voice_mode_auto": {"de": "auto (auf Sprachnachrichten)", "en": "auto (in answer to voice notes)"},
    "voice_usage": {"de": "Das verstehe ich nicht – /voice an, /voice aus oder /voice auto.",
                    "en": "I don't understand – /voice on, /voice off or /voice auto."},
    "voice_speaker_not_set_up": {
        "de": "Sprechen kann ich noch nicht – dafür muss die Person, die mich betreibt, erst eine Sprachausgabe "
              "einrichten.",
        "en": "I can't speak yet – whoever runs me needs to set up a voice for me first.",
    },
}
