"""When does a reply count as raising an open topic? Content words as whole words, never substrings."""
from __future__ import annotations

import re

from memory import STOP_WORDS

_WORD = re.compile(r"\w+", re.UNICODE)


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more letters that are not stop words."""
    return {w for w in _WORD.findall(text.casefold()) if len(w) >= 3 and w not in STOP_WORDS}


def topic_raised(reply: str, topic: str) -> bool:
    """True when the reply names the topic: 2 content words for a sentence-long topic, 1 for a short one."""
    wanted = content_words(topic)
    if not wanted:
        return False
    needed = 1 if len(wanted) <= 2 else 2
    return len(wanted & content_words(reply)) >= needed
