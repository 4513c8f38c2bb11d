"""Is a typed reply a yes or a no? A pure decision over the first words."""
from __future__ import annotations

import re
from typing import Literal

YES = frozenset({"ja", "jawohl", "jep", "jup", "jo", "klar", "genau", "gerne", "gern", "okay", "ok",
                 "yes", "yep", "yeah", "sure", "y"})
NO = frozenset({"nein", "nee", "ne", "nö", "nicht", "no", "nope", "nah"})
FIRST_WORDS = 4


def yes_or_no(text: str) -> Literal["yes", "no"] | None:
    """'yes' or 'no' when one of the first four whole words says so (a no wins), else None.

    Whole words only: "Kino", "Jahr", "Token" or "noch" never count.
    """
    words = re.findall(r"\w+", text.casefold())[:FIRST_WORDS]
    if any(w in NO for w in words):
        return "no"
    if any(w in YES for w in words):
        return "yes"
    return None
