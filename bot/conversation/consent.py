"""Is a typed reply an answer to a yes/no question? Pure decisions over the words of the reply."""
from __future__ import annotations

import re
from typing import Literal

YES = frozenset({"ja", "jawohl", "jep", "jup", "jo", "klar", "genau", "gerne", "gern", "okay", "ok", "sicher",
                 "unbedingt", "passt", "yes", "yep", "yeah", "sure", "y", "absolutely", "👍"})
NO = frozenset({"nein", "nee", "ne", "nö", "nicht", "no", "nope", "nah", "not", "don't", "dont", "👎"})
# Words that may stand beside a yes or a no without making the reply more than an answer.
FILLER = frozenset({"bitte", "danke", "doch", "lieber", "mach", "das", "es", "so", "auf", "jeden", "fall", "gut",
                    "super", "gerne", "merk", "dir", "dirs", "nötig", "notwendig", "aber", "ist", "in", "ordnung",
                    "please", "thanks", "thank", "you", "do", "it", "of", "course", "fine", "that", "is", "go",
                    "ahead", "need", "necessary", "keep", "rather", "a", "auch", "einverstanden", "richtig",
                    "schön", "great", "alright", "right", "lass", "mal", "besser"})
MAX_WORDS = 5
MAX_CHARS = 40
_WORD = re.compile(r"[\w']+|👍|👎")


def yes_or_no(text: str) -> Literal["yes", "no"] | None:
    """'yes' or 'no' when the whole reply is an answer and says one of them; None for anything else.

    A reply is an answer only when it is short and every word in it is a yes, a no or a filler word
    ("ja bitte", "nein danke", "lieber nicht", "ok, mach das"). "Genau, ich habe heute frei" and
    "Ich kann nicht schlafen" say more than yes or no: they are messages, not answers. A reply that
    says both ("ok, nein") counts as a no. Whole words only: "Kino", "Jahr" or "noch" never count.
    """
    if len(text.strip()) > MAX_CHARS:
        return None
    words = _WORD.findall(text.casefold())
    if not words or len(words) > MAX_WORDS:
        return None
    if any(w not in YES and w not in NO and w not in FILLER for w in words):
        return None
    if any(w in NO for w in words):
        return "no"  # a no wins ("ok, nein"): nothing is kept without a clear yes
    return "yes" if any(w in YES for w in words) else None
