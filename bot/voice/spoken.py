"""What of a reply is spoken: the text without what a voice cannot say, shortened at a sentence's end (pure)."""
from __future__ import annotations

import re
from typing import Literal

VoiceMode = Literal["on", "off", "auto"]
MODES: dict[str, VoiceMode] = {"an": "on", "on": "on", "aus": "off", "off": "off", "auto": "auto"}

_URL = re.compile(r"(?:https?://|www\.)\S+?(?=[.,!?;:)]*(?:\s|$))")  # a link, not the sentence's end after it
_MARKUP = re.compile(r"[*_`#>|~]+")
# Emoji and other pictographs: a voice reads them out by name ("grinning face") or stumbles over them.
_PICTOGRAPHS = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\u20e3]+")
_SENTENCE_END = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"'»«“”)]))\s+")  # the space after a sentence
_LOOSE_MARK = re.compile(r" ([.,!?;:…])")  # a mark left alone where a link or an emoji stood before it
_MARK_BEFORE_END = re.compile(r"[,:;]+(?=[.!?…])")
HARD_LIMIT_FACTOR = 2  # a first sentence longer than the limit is spoken whole up to twice the limit, else not at all


def speaks(mode: str | None, voice_note: bool) -> bool:
    """Whether a reply is spoken: always when on, only in answer to a voice note on auto, never when off."""
    return mode == "on" or (mode == "auto" and voice_note)


def speakable(text: str, limit: int) -> str:
    """The reply as a voice says it: no links, no markup, no emoji, whole sentences up to `limit` characters.

    Never cut in the middle of a sentence: the sentences that fit are spoken, the rest stays in the text that goes
    along. A first sentence longer than the limit is spoken whole when it is at most twice as long, else nothing
    is spoken ('').
    """
    plain = _PICTOGRAPHS.sub("", _MARKUP.sub("", _URL.sub("", text)))
    plain = _LOOSE_MARK.sub(r"\1", " ".join(plain.split()))
    plain = _MARK_BEFORE_END.sub("", plain)  # 'hier: <link>.' is said 'hier.'
    if len(plain) <= limit:
        return plain
    spoken = ""
    for sentence in _SENTENCE_END.split(plain):
        candidate = f"{spoken} {sentence}".strip()
        if len(candidate) > limit:
            break
        spoken = candidate
    if spoken:
        return spoken
    first = _SENTENCE_END.split(plain, maxsplit=1)[0]
    return first if len(first) <= limit * HARD_LIMIT_FACTOR else ""
