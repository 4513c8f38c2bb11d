"""Whether a text mentions what is to be forgotten, decided in code: a fact by enough of its distinctive words,
a person by any of their names; and the text without the sentences that do."""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory import COMMON_SHARE, content_words, stem

LONG = 80  # characters: a text with this much left besides the mentions may not come back empty
COMMON_MIN = 2  # a word in more copies than this (and than COMMON_SHARE of them) tells no fact apart


@dataclass(frozen=True)
class Forgotten:
    """What must go: facts (note texts), a person's names (any sentence naming them), and corrected texts that stay."""

    facts: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    instead: tuple[str, ...] = ()


@dataclass(frozen=True)
class Matcher:
    """The forgotten as words: per fact its distinctive stems and how many a sentence must hold; the names."""

    facts: tuple[tuple[frozenset[str], int], ...]
    names: tuple[tuple[str, ...], ...]


def stems(text: str) -> list[str]:
    """The stems of a text's content words, in order, each once."""
    return list(dict.fromkeys(stem(w) for w in content_words(text)))


def need(count: int) -> int:
    """How many of a fact's distinctive words a sentence must hold to mention it."""
    return 1 if count <= 1 else max(2, math.ceil(0.6 * count))


def common_words(texts: Sequence[str]) -> frozenset[str]:
    """Stems that occur in so many of the texts (the person's own name, say) that they tell nothing apart."""
    counts = Counter(s for text in texts for s in set(stems(text)))
    limit = max(COMMON_SHARE * len(texts), COMMON_MIN)
    return frozenset(s for s, n in counts.items() if n > limit)


def matcher(forgotten: Forgotten, common: frozenset[str] = frozenset()) -> Matcher:
    """The words that identify each forgotten fact (common and still-true words left out) and the names."""
    allowed = {s for text in forgotten.instead for s in stems(text)}
    facts = []
    for fact in forgotten.facts:
        words = [s for s in stems(fact) if s not in allowed]
        kept = [s for s in words if s not in common] or words
        if kept:
            facts.append((frozenset(kept), need(len(kept))))
    names = tuple(words for words in (tuple(content_words(n)) for n in forgotten.names) if words)
    return Matcher(tuple(facts), names)


def _holds(token_stems: set[str], word: str) -> bool:
    """A stem is in a sentence as a word, or (5+ letters) inside a compound: 'spinn' in 'spinnenangst'."""
    return word in token_stems or (len(word) >= 5 and any(word in s for s in token_stems))


def _names(words: list[str], name: str) -> bool:
    return any(w == name or w == name + "s" or stem(w) == stem(name) for w in words)


def mentions_sentence(sentence: str, m: Matcher) -> bool:
    """Whether one sentence says a forgotten fact (enough of its words) or names a forgotten person."""
    words = content_words(sentence)
    token_stems = {stem(w) for w in words}
    if any(sum(_holds(token_stems, w) for w in fact) >= required for fact, required in m.facts):
        return True
    return any(all(_names(words, part) for part in name) for name in m.names)


_BREAK = re.compile(r"((?<=[.!?…])\s+|\s*\n\s*)")


def sentences(text: str) -> list[str]:
    """A text's sentences and lines."""
    return [s for s in _BREAK.split(text)[::2] if s.strip()]


def mentions(text: str, m: Matcher) -> bool:
    """Whether any sentence of the text mentions what is forgotten."""
    return any(mentions_sentence(s, m) for s in sentences(text))


def shares_word(text: str, m: Matcher) -> bool:
    """Whether the text holds any word of the forgotten (the model may judge it; code does not)."""
    words = content_words(text)
    token_stems = {stem(w) for w in words}
    return (any(_holds(token_stems, w) for fact, _ in m.facts for w in fact)
            or any(_names(words, part) for name in m.names for part in name))


def without_mentions(text: str, m: Matcher) -> str:
    """The text without the sentences that mention what is forgotten; everything else as it was."""
    parts = _BREAK.split(text)
    kept: list[list[str]] = []
    for i in range(0, len(parts), 2):
        sentence, gap = parts[i], parts[i + 1] if i + 1 < len(parts) else ""
        if sentence.strip() and mentions_sentence(sentence, m):
            if kept and gap.count("\n") > kept[-1][1].count("\n"):
                kept[-1][1] = gap  # a paragraph break after a dropped sentence stays
            continue
        kept.append([sentence, gap])
    return "".join(s + g for s, g in kept).strip()


def accept(old: str, new: Any, m: Matcher) -> str | None:
    """The model's rewrite when usable (text, no longer mentioning it, not grown, not emptied where much stays)."""
    if not isinstance(new, str):
        return None
    new = new.strip()
    if mentions(new, m) or len(new) > len(old) * 1.2 + 40:
        return None
    if not new and len(without_mentions(old, m)) >= LONG:
        return None
    return new
