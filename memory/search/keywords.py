"""Which notes a keyword search may offer: those holding every word of the query (inflected, or as a part of a
compound) or, for a one-word query, close enough in meaning and akin in letters. A pure decision over texts and their
cosines.

`/memories WORD` and `/forget WORD` list what this keeps; the hybrid search only gathers the candidates (its
vector part always returns nearest neighbours, related or not). Words are compared folded: case, "ß" as "ss" and
accents removed ("Straße" = "Strasse", "Bücher" = "Bucher"), as the full-text index folds them.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from memory.search.search_text import content_words

PART = 4  # letters a compound part must have ("Auto" in "Autowerkstatt"); shorter ones match only as whole words
REST = 4  # letters the rest of the compound must have: "Autor" is no compound of "Auto", "Autobahn" is
# Inflection endings (German and English) and what stays of them, longest first; stripped while 3 letters
# remain. No derivation: "Zeitung" is not "Zeit".
_ENDINGS = (("innen", "in"), ("ern", ""), ("ies", "y"), ("en", ""), ("er", ""), ("es", ""), ("em", ""), ("e", ""),
            ("n", ""), ("s", ""))
_WORD = re.compile(r"\w+", re.UNICODE)
_NO_PLURAL_S = ("ss", "us", "is")  # "Haus", "Bus", "Kuss", "crisis" end in an s that is no ending
AKIN = 5  # letters a note word must begin with as the query word does to be akin ("Krankenpflegerin": "Kranken…")


@dataclass(frozen=True)
class Candidate:
    """A note the search gathered: its text and the query's cosine with it."""

    text: str
    cosine: float


def fold(word: str) -> str:
    """A word as compared: case-folded ("ß" as "ss"), accents and umlauts removed ("Bücher" -> "bucher")."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", word).casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def stem(word: str) -> str:
    """A folded word without one inflection ending: 'hundes' -> 'hund', 'dogs' -> 'dog', 'stories' -> 'story'."""
    for ending, kept in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            if ending == "s" and word.endswith(_NO_PLURAL_S):
                continue
            return word[: -len(ending)] + kept
    return word


def forms(word: str) -> set[str]:
    """A folded word, its stem and its stem's stem ('computers' -> 'computer' -> 'comput'): two words with a form
    in common are the same word inflected."""
    once = stem(word)
    return {word, once, stem(once)}


def query_words(query: str) -> list[str]:
    """The query's content words, folded (stop words and single letters left out)."""
    return list(dict.fromkeys(fold(w) for w in content_words(query)))


def note_words(text: str) -> set[str]:
    """A note's content words, folded ("nach" is no part of "Nachbarin")."""
    return set(query_words(text))


def _holds_part(longer: str, part: str) -> bool:
    """Whether `part` (a stem of PART+ letters) begins or ends the compound `longer`, leaving REST+ letters."""
    if len(part) < PART:
        return False
    whole = stem(longer)
    return ((whole.startswith(part) and len(whole) - len(part) >= REST)
            or (any(w.endswith(part) and len(w) - len(part) >= REST for w in (longer, whole))))


def word_matches(query_word: str, note_word: str, *, parts_of_query: bool = False) -> bool:
    """Whether a folded note word is the query word: the same stem, or a compound holding it ('elektroauto' for
    'auto'); with parts_of_query also a part of the query's compound ('steuer' for 'steuererklarung')."""
    if forms(query_word) & forms(note_word):
        return True
    if any(c.isdigit() for c in query_word):
        return False  # a number or a date is only itself
    if _holds_part(note_word, stem(query_word)) or _holds_part(note_word, query_word):
        return True
    return parts_of_query and (_holds_part(query_word, stem(note_word)) or _holds_part(query_word, note_word))


def akin(query_word: str, text: str) -> bool:
    """Whether a note has a word akin in letters to the (folded) query word: one that begins as its stem does (its
    first AKIN letters; a shorter stem only as a compound's first part: "Badewanne" for "Bad", not "badly") or ends
    with it ("Hallenbad"). The evidence a close cosine needs: the model put "Bad" 0.88 close to "Schläft schlecht."
    and "Englisch" 0.86 to "Lernt Spanisch."."""
    root = stem(query_word)
    start = root[:AKIN]
    return any((n.startswith(start) and (len(root) >= AKIN or len(n) - len(root) >= REST)) or stem(n).endswith(root)
               for n in note_words(text))


def holds(words: Sequence[str], text: str, *, parts_of_query: bool = False) -> bool:
    """Whether a note holds every one of the (folded) query words, each somewhere in it."""
    present = note_words(text)
    return bool(words) and all(any(word_matches(w, n, parts_of_query=parts_of_query) for n in present)
                               for w in words)


def matching(query: str, candidates: Sequence[Candidate], strict: float | None, *,
             parts_of_query: bool = False) -> list[int]:
    """The positions of the candidates a keyword search may offer, in their order.

    A note is offered when it holds every content word of the query (`holds`), or, for a query of one word, when
    its cosine with the query is at least `strict` (the embedder's one-word similarity, calibrated on one-word
    queries by bench/keywords.py; None: words only) and it has a word akin to the query's (`akin`): a close cosine
    alone offered "Schläft schlecht." for "Bad" and "Fährt Fahrrad." for "Motorrad" (bench/data/near_miss_set.json).
    A longer query's cosine rises with every word it shares with a note, "mein" too ("mein Auto" is 0.85 close to
    "Mein Handy-Display ist gesprungen."), so it is found by its words alone. A query of stop words alone ("das",
    "the") finds nothing.

    parts_of_query: also offer a note that holds only a part of the query's compound ("Steuern" for
    "Steuererklärung"). Off in the commands: it offered "Mutter" and "groß" for "Großmutter" (bench/keywords.py).
    """
    words = query_words(query)
    if not words:
        return []
    similar = strict if len(_WORD.findall(query)) == 1 else None
    return [i for i, c in enumerate(candidates)
            if holds(words, c.text, parts_of_query=parts_of_query)
            or (similar is not None and c.cosine >= similar and akin(words[0], c.text))]
