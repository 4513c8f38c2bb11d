"""Text normalization, hashing and full-text query building for German and English."""
from __future__ import annotations

import hashlib
import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)

STOP_WORDS_DE = frozenset(
    """aber alle allem allen aller alles als also am an ander andere anderem anderen anderer
    anderes auch auf aus bei bin bis bist da damit dann das dass dem den denn der des dessen
    deshalb die dies diese diesem diesen dieser dieses doch dort du durch ein eine einem einen
    einer eines er es etwas euch euer eure für gegen gewesen hab habe haben hat hatte hätte
    hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im in ist ja jede
    jedem jeden jeder jedes jetzt kann kein keine keinem keinen keiner können könnte mal man
    manche mein meine meinem meinen meiner meines mich mir mit muss musste nach nicht nichts
    noch nun nur ob oder ohne sehr sein seine seinem seinen seiner sich sie sind so solche
    soll sollte sondern sonst über um und uns unser unsere unter viel vom von vor war waren
    warst was weg weil weiter welche welchem welchen welcher welches wenn wer werde werden
    wie wieder will wir wird wirst wo wollen wollte würde würden zu zum zur zwar zwischen
    eigentlich gerade gern gerne schon immer wieso weshalb warum wann woher wohin welches
    weißt du dir dich dein deine deinem deinen deiner""".split()
)

STOP_WORDS_EN = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves do does did what's whats tell know""".split()
)

STOP_WORDS = STOP_WORDS_DE | STOP_WORDS_EN

# German inflection and derivation endings, longest first; stripped only while 4 letters remain.
_GERMAN_SUFFIXES = ("ungen", "innen", "chen", "lein", "ung", "ern", "en", "er", "es", "em", "e", "n", "s")


def normalize(text: str) -> str:
    """Case-fold, fold Unicode forms and collapse whitespace and punctuation (for exact dedupe)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_WORD.findall(folded))


def content_hash(text: str) -> str:
    """Stable hash of the exact text (what was embedded)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_words(text: str) -> list[str]:
    """Words of a query worth searching for: lower-cased, no stop words, no single letters, unique."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if len(word) > 1 and word not in STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def stem(word: str) -> str:
    """A crude German-and-English stem: strip one inflection ending while 4 letters remain."""
    for suffix in _GERMAN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def words_match(words: list[str]) -> str:
    """FTS5 query over the word index: any of the words (quoted, so no user text is FTS syntax)."""
    return " OR ".join(f'"{w}"' for w in words)


def trigram_match(words: list[str]) -> str:
    """FTS5 query over the trigram index: any stem of 4+ letters as a substring."""
    stems = {stem(w) for w in words if len(w) >= 4}
    return " OR ".join(f'"{s}"' for s in sorted(stems))
