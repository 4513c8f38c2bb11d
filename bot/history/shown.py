"""Imported words as a person reads them: the readers' media placeholders ("[photo]", "[file: plan.pdf]") and
Telegram's "Saved Messages" stay neutral in what is stored and are put in the person's language when shown."""
from __future__ import annotations

import re

from bot.history.telegram import SAVED_MESSAGES
from bot.profile_keys import profile_key
from bot.texts import t
from memory import ImportCandidate as Candidate

# The readers' placeholder words (bot/history/telegram.py, chatgpt.py, claude.py) and the text key of each.
WORDS = {"photo": "placeholder_photo", "voice message": "placeholder_voice", "video message": "placeholder_round",
         "video": "placeholder_video", "GIF": "placeholder_gif", "audio": "placeholder_audio",
         "sticker": "placeholder_sticker", "file": "placeholder_file", "poll": "placeholder_poll",
         "location": "placeholder_location", "contact": "placeholder_contact",
         "forwarded from": "placeholder_forwarded"}
# "[photo]", "[sticker 😍]", "[file: plan.pdf]", "[forwarded from Tagesschau]"; the longer word first
_PLACEHOLDER = re.compile(r"\[(" + "|".join(re.escape(w) for w in sorted(WORDS, key=len, reverse=True))
                          + r")((?::)? [^\]\n]*)?\]")


def shown_text(text: str, lang: str) -> str:
    """The text with its media placeholders in the person's language ('[Foto] So sieht der Balkon aus')."""
    return _PLACEHOLDER.sub(lambda m: f"[{t(lang, WORDS[m.group(1)])}{m.group(2) or ''}]", text)


def candidate_text(c: Candidate, lang: str) -> str:
    """A review candidate as the person reads it: a profile entry by its key in their language ('Arbeit: Tischler
    in Leipzig', never the stored 'work: …'), anything else with its placeholders in their language."""
    if c.kind == "profile" and {"key", "value"} <= c.data.keys():
        return f"{profile_key(str(c.data['key']), lang)}: {shown_text(str(c.data['value']), lang)}"
    return shown_text(c.text, lang)


def shown_title(source: str, title: str, lang: str) -> str:
    """A conversation's title in the person's language: Telegram's own chat of saved messages has a name in it."""
    return t(lang, "placeholder_saved_messages") if source == "telegram" and title == SAVED_MESSAGES else title
