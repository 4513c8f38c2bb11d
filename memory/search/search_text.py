"""Text normalization, hashing and full-text query building for German and English."""
from __future__ import annotations

import hashlib
import itertools
import math
import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)

# Function words, then light verbs ("machen", "make"), which say little about what a question is about.
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
    weißt du dir dich dein deine deinem deinen deiner
    mache machst macht machen machte machten gemacht tue tust tut tun tat getan gehe gehst geht
    gehen ging gegangen gebe gibst gibt geben gab gegeben komme kommst kommt kommen kam gekommen
    lasse lässt lassen ließ gelassen""".split()
)

STOP_WORDS_EN = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves do does did what's whats tell know
    make makes made making get gets got getting go goes went going gone""".split()
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


def word_pairs(words: list[str]) -> list[str]:
    """Neighbouring query words as two-word phrases; a document holding one scores more (`matched_bm25`)."""
    return [f"{a} {b}" for a, b in itertools.pairwise(words)]


def trigram_stems(words: list[str]) -> list[str]:
    """What the trigram index looks for: the stem of every word of 4+ letters, as a substring."""
    return sorted({stem(w) for w in words if len(w) >= 4})


BM25_K1 = 1.2
BM25_B = 0.75


def _idf(total_docs: int, holding: int) -> float:
    """FTS5's bm25 idf: ln((N - n + 0.5) / (n + 0.5)), at least 1e-6."""
    return max(math.log((total_docs - holding + 0.5) / (holding + 0.5)), 1e-6)


def _saturated(tf: int, length: Any, average: float) -> Any:
    """bm25's term-frequency part: saturating in tf, lower for a text longer than the average."""
    return tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))


def matched_bm25(holding: Sequence[np.ndarray], lengths: np.ndarray, total_docs: int, mean_length: float) -> np.ndarray:
    """bm25 of terms matched as a whole (words, two-word phrases, stems as substrings), each counted once per
    document: notes are a sentence or two, where a word rarely repeats. A score per document, 0 for none.

    holding: for each term, the positions (into lengths) of the documents that hold it, each once;
    lengths: every document's length, taken relative to mean_length. Document frequencies are the number
    of positions listed for a term, so `holding` must list all of the collection's. k1 1.2, b 0.75 and
    FTS5's idf, as FTS5's bm25() scores a document that holds each term once.
    """
    scores = np.zeros(len(lengths))
    average = max(mean_length, 1.0)
    for at in holding:
        if len(at):
            scores[at] += _idf(total_docs, len(at)) * _saturated(1, lengths[at], average)
    return scores


def counted_bm25(terms: Sequence[str], texts: dict[int, str], holding: Sequence[int], total_docs: int,
                 mean_length: float) -> dict[int, float]:
    """bm25 of substring terms in texts, each counted as often as it occurs in the lower-cased text: how FTS5's bm25()
    scores trigram phrases. A text's length is its number of trigrams (characters - 2).

    holding[i]: in how many of the collection's documents terms[i] occurs (texts may be only the best of them).
    """
    average = max(mean_length - 2.0, 1.0)
    scores: dict[int, float] = {}
    for doc, text in texts.items():
        lowered, score = text.lower(), 0.0
        for term, documents in zip(terms, holding):
            if tf := lowered.count(term):
                score += _idf(total_docs, documents) * _saturated(tf, max(len(lowered) - 2, 1), average)
        scores[doc] = score
    return scores


# A word that occurs in more than this share of a scope's documents (the user's own name, say)
# tells little about which memory is meant; it is left out of the full-text queries.
COMMON_SHARE = 0.1
COMMON_MIN_DOCS = 5


def common_limit(total_docs: int) -> float:
    """In how many of total_docs documents a word may occur before it counts as common."""
    return max(COMMON_SHARE * total_docs, COMMON_MIN_DOCS)


def distinctive(words: list[str], doc_counts: dict[str, int], total_docs: int) -> list[str]:
    """The words that are not common in the scope; all of them when every one is common."""
    limit = common_limit(total_docs)
    kept = [w for w in words if doc_counts.get(w, 0) <= limit]
    return kept or words


_MONTHS = {
    **{m: i for i, m in enumerate("january february march april may june july august september october"
                                   " november december".split(), start=1)},
    **{m: i for i, m in enumerate("januar februar märz april mai juni juli august september oktober"
                                   " november dezember".split(), start=1)},
    "jänner": 1, "sept": 9,
    **{m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)},
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th|\.)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b")
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
DATE_SLACK = timedelta(days=3)  # people misremember a date by a few days


def named_periods(text: str) -> list[tuple[float, float]]:
    """Unix-time windows (UTC, with a few days' slack) of the calendar dates a text names with their year.

    "on 8 May, 2023", "May 8th, 2023", "am 8. Mai 2023", "2023-05-08" name a day; "in May 2023" a month.
    A soft hint for ranking; dates without a year and relative ones ("gestern abends") are the
    caller's hard time window (`memory.search.timewords`).
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    days: list[tuple[int, int, int]] = []
    for day, month, year in _DAY_MONTH_YEAR.findall(folded):
        days.append((int(year), _MONTHS[month], int(day)))
    for month, day, year in _MONTH_DAY_YEAR.findall(folded):
        days.append((int(year), _MONTHS[month], int(day)))
    days += [(int(y), int(m), int(d)) for y, m, d in _ISO_DAY.findall(folded)]
    periods = [p for p in (_day(*d) for d in days) if p]
    if not periods:
        periods = [p for p in (_month(int(year), _MONTHS[month]) for month, year in _MONTH_YEAR.findall(folded)) if p]
    return [((start - DATE_SLACK).timestamp(), (end + DATE_SLACK).timestamp()) for start, end in periods]


def _day(year: int, month: int, day: int) -> tuple[datetime, datetime] | None:
    """The day as a [start, end) pair, or None when there is no such day."""
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return start, start + timedelta(days=1)


def _month(year: int, month: int) -> tuple[datetime, datetime] | None:
    """The month as a [start, end) pair, or None for an impossible year."""
    try:
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    except ValueError:
        return None
    return start, end
