"""The explicit crisis layer as a small grammar: words are tagged with the parts they play (a wish, dying, a place
one falls from, a means, getting it ready, a body part, an attacker, an act of violence, the speaker), and a rule
says which parts, in which order and how close, make a message that needs the help line (pure).

A part is a list of words and word stems (`stem*`), and phrases of several words; a word of five letters or more
also matches with one letter dropped, added or two letters swapped ("sterbn", "umbrinegn"), so typos, dialect
spellings, case, missing punctuation and emoji change nothing. A rule names parts and the most words that may stand
between them; a negation between them ("will nicht sterben") breaks it. The grammar knows nothing of sentences in
any set: its words are the parts of speech a crisis is told in, and a new means, place or verb is one word more in
its part.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from bot.conversation.crisis_parts import ALONE, ALONE_WORDS, DISTANCE, FIRST_PERSON, IDIOMS, PARTS, TIMES
from bot.conversation.crisis_rules import ALL_RULES, ANIMALS, BEFORE_DIE, JOKING, WAY_OF_LIVING, WORLD

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?|\^|[\U0001F300-\U0001FAFF]", re.UNICODE)
_SENTENCE = re.compile(r"[.!?;:\n]+")

def tokens(text: str) -> list[str]:
    """The words of a text, lower case, umlauts and ß kept, apostrophes inside words kept."""
    return [w.replace("’", "'") for w in _TOKEN.findall(text.replace("’", "'").casefold())]


def _near(word: str, entry: str) -> bool:
    """Whether a word is the entry with one letter dropped, one added or two neighbours swapped (entries of 5+)."""
    if len(entry) < 4 or abs(len(word) - len(entry)) > 1 or word[0] != entry[0]:
        return False
    if len(word) == len(entry):
        diff = [i for i, (a, b) in enumerate(zip(word, entry)) if a != b]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == entry[diff[1]] \
            and word[diff[1]] == entry[diff[0]]
    if len(entry) < 5:
        return False
    short, long_ = (word, entry) if len(word) < len(entry) else (entry, word)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


def _word_matches(word: str, entry: str, fuzzy: bool = True) -> bool:
    """One word against one entry word: exact, a stem (`stem*`), an ending (`*ending`), or (fuzzy) a near typo."""
    if entry.endswith("*"):
        return word.startswith(entry[:-1])
    if entry.startswith("*"):
        return word.endswith(entry[1:]) and len(word) > len(entry)
    return word == entry or (fuzzy and _near(word, entry))


def _entry_words(entry: str) -> tuple[str, ...]:
    """An entry as words, its `*` kept at the start or end of a word."""
    marked = entry.replace("*", "zqstemqz")
    return tuple(w.replace("zqstemqz", "*") for w in tokens(marked))


@functools.cache
def _entries(part: str) -> tuple[tuple[str, ...], ...]:
    """A part's entries as word sequences."""
    return tuple(_entry_words(e) for e in PARTS[part])


Entry = tuple[str, ...]


class _Index:
    """Entries (each with the part it belongs to) looked up by their first word: exactly, by a typo of it, by its
    stem or its ending."""

    def __init__(self, entries: Sequence[tuple[Entry, str]], fuzzy: bool) -> None:
        self.fuzzy = fuzzy
        self.exact: dict[str, list[tuple[Entry, str]]] = {}
        self.near: dict[str, list[tuple[Entry, str]]] = {}  # a typo of a first word (one dropped or swapped letter)
        self.stems: dict[str, list[tuple[Entry, str]]] = {}  # by a stem's first three letters
        self.endings: list[tuple[Entry, str]] = []
        for item in entries:
            first = item[0][0]
            if first.endswith("*"):
                self.stems.setdefault(first[:3], []).append(item)
            elif first.startswith("*"):
                self.endings.append(item)
            else:
                self.exact.setdefault(first, []).append(item)
                for variant in _typos(first) if fuzzy else ():
                    self.near.setdefault(variant, []).append(item)

    def candidates(self, word: str) -> list[tuple[Entry, str]]:
        """The entries whose first word may match the word (checked whole by `_word_matches`)."""
        found = list(self.exact.get(word, ())) + list(self.near.get(word, ())) + list(self.stems.get(word[:3], ()))
        if self.fuzzy and len(word) >= 6:  # a letter too many: the word without it is an entry's first word
            for k in range(len(word)):
                found.extend(self.exact.get(word[:k] + word[k + 1:], ()))
        return found + self.endings

    def matches(self, words: Sequence[str]) -> list[tuple[int, int, str]]:
        """Every match in the words: (first word, word after the last, the entry's part)."""
        found = set()
        for start, word in enumerate(words):
            for entry, part in self.candidates(word):
                end = start + len(entry)
                if end <= len(words) and all(_word_matches(words[start + k], entry[k], self.fuzzy)
                                             for k in range(len(entry))):
                    found.add((start, end, part))
        return sorted(found)


def _typos(word: str) -> set[str]:
    """The word with one letter dropped (words of 5+) or two neighbours swapped (4+), as `_near` accepts them."""
    out = set()
    if len(word) >= 5:
        out |= {word[:k] + word[k + 1:] for k in range(1, len(word))}
    if len(word) >= 4:
        out |= {word[:k] + word[k + 1] + word[k] + word[k + 2:] for k in range(1, len(word) - 1)}
    out.discard(word)
    return out


@functools.cache
def _index(entries: tuple[Entry, ...], fuzzy: bool) -> _Index:
    """The index of a tuple of entries, made once."""
    return _Index([(entry, "") for entry in entries], fuzzy)


@functools.cache
def _parts_index() -> _Index:
    """One index over every part's entries (typos of a letter match), made once."""
    return _Index([(entry, part) for part in PARTS for entry in _entries(part)], fuzzy=True)


def _spans(words: Sequence[str], entries: tuple[Entry, ...], fuzzy: bool = False) -> list[tuple[int, int]]:
    """Where entries match: (first word, word after the last) for each match; with `fuzzy`, typos of a letter too
    (the lone words; idioms and the words that void a rule match exactly)."""
    return sorted({(start, end) for start, end, _ in _index(entries, fuzzy).matches(words)})


_CALM = ANIMALS + JOKING  # with one of these, a lone part ('danger') says nothing
_LISTS: tuple[tuple[str, ...], ...] = tuple(dict.fromkeys(
    [_CALM, *(rule.void for rule in ALL_RULES if rule.void)]))


@functools.cache
def _lists_index() -> _Index:
    """One index over the calm words and every rule's void words (exact matches), each entry named by its list."""
    return _Index([(entry, str(n)) for n, phrases in enumerate(_LISTS) for entry in _phrase_entries(phrases)],
                  fuzzy=False)


def _lists_present(words: Sequence[str]) -> set[tuple[str, ...]]:
    """The word lists (the calm words, the rules' voids) of which the words hold at least one, read in one pass."""
    return {_LISTS[int(name)] for _, _, name in _lists_index().matches(words)}


def _tagged(words: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
    """Every part's matches in the words, read in one pass over them."""
    tags: dict[str, list[tuple[int, int]]] = {part: [] for part in PARTS}
    for start, end, part in _parts_index().matches(words):
        tags[part].append((start, end))
    return tags


@functools.cache
def _phrase_entries(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Phrases as word sequences (with stems)."""
    return tuple(_entry_words(phrase) for phrase in phrases)


def _masked(words: list[str]) -> list[str]:
    """The words with the idioms blanked out ('ich lach mich tot' says nothing)."""
    out = list(words)
    for start, end in _spans(words, _phrase_entries(IDIOMS)):
        for k in range(max(0, start - 2), min(len(out), end + 1)):
            out[k] = "·"
    return out


TIME_WORD = "⏱"  # what a time of several words ('in einer Stunde', 'once it's dark') becomes: one word, as 'heute'


def _times_collapsed(words: list[str]) -> list[str]:
    """The words with each time of several words made one word, so a rule's distances do not depend on how long
    the person's 'when' is."""
    out, at = [], 0
    for start, end in sorted(_spans(words, _phrase_entries(TIMES)), key=lambda span: (span[0], -span[1])):
        if start >= at and end - start > 1:
            out += [*words[at:start], TIME_WORD]
            at = end
    return out + words[at:]


def _chain(tags: dict[str, list[tuple[int, int]]], parts: Sequence[str], gap: int, nots: list[tuple[int, int]],
           no_not: bool) -> bool:
    """Whether the parts follow each other in this order, each within `gap` words of the one before."""
    def follow(index: int, after: int) -> bool:
        if index == len(parts):
            return True
        for start, end in tags[parts[index]]:
            if index and not (after <= start <= after + gap):
                continue
            if index and no_not and any(after <= n0 and n1 <= start for n0, n1 in nots):
                continue
            if index == len(parts) - 1 and no_not and any(n0 == end for n0, _ in nots):
                continue  # 'er bedroht mich nicht'
            if follow(index + 1, end):
                return True
        return False

    return follow(0, 0)


def _window(tags: dict[str, list[tuple[int, int]]], parts: Sequence[str], width: int) -> bool:
    """Whether every part matches somewhere within `width` words of one another, in any order."""
    first = parts[0]
    for span in tags[first]:  # one word plays one part: 'Testament' is no goodbye and no gift at once
        if all(any(abs(other[0] - span[0]) <= width and not _overlap(other, span) for other in tags[part])
               for part in parts[1:]):
            return True
    return False


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two matches share a word."""
    return a[0] < b[1] and b[0] < a[1]


def matched_rules(text: str) -> list[str]:
    """The names of the rules (and lone parts) the text matches; empty when it needs no help line by the grammar."""
    words = _times_collapsed(_masked([w for sentence in _SENTENCE.split(text) if sentence.strip()
                                      for w in ["^", *tokens(sentence)]]))
    if not words:
        return []
    tags = _tagged(words)
    tags["time"] += [(a, a + 1) for a, w in enumerate(words) if w == TIME_WORD]
    tags["live"] = [(a, b) for a, b in tags["live"] if not _way_of_living(words, b)]
    tags["^"] = [(a, a + 1) for a, w in enumerate(words) if w == "^"]
    german = _mostly_german(words)
    tags["die"] = [(a, b) for a, b in tags["die"]
                   if words[a] != "die" or (not german and a and words[a - 1] in BEFORE_DIE)]
    tags["live"] = [(a, b) for a, b in tags["live"] if not (a and words[a - 1] in ("so", "like", "wie"))]
    present = _lists_present(words)
    calm = _CALM in present
    found = [f"alone:{part}" for part in ALONE if not calm and any(
        not any(a - 2 <= n0 < a or n0 == b for n0, _ in tags["not"]) for a, b in tags[part])]
    found += [f"word:{' '.join(words[s:e])}" for s, e in _spans(words, _phrase_entries(ALONE_WORDS), fuzzy=True)]
    nots = tags["not"]
    for rule in ALL_RULES:
        if rule.void and rule.void in present:
            continue
        if rule.speaker and not tags["self"]:
            continue
        if rule.subject and not _spoken_by_self(tags, rule.parts[0]):
            continue
        if rule.subject and rule.no_not and _wish_negated(tags, rule.parts[0], nots):
            continue
        if rule.window:
            hit = _window(tags, rule.parts, rule.gap) and not (rule.no_not and _negated(tags, rule.parts, nots))
        else:
            hit = _chain(tags, rule.parts, rule.gap, nots, rule.no_not)
        if hit:
            found.append(rule.name)
    return found


_GERMAN = frozenset({"ich", "und", "nicht", "der", "das", "ist", "mit", "von", "zu", "den", "dem", "ein", "eine", "auf",
                     "für", "mir", "mich", "hab", "habe", "es", "wir", "sie", "er", "noch", "schon", "aber", "heute"})
_ENGLISH = frozenset({"i", "and", "not", "the", "is", "to", "with", "of", "a", "my", "me", "it", "you", "just", "so",
                      "want", "today", "but", "i'm", "im", "gonna", "wanna"})


def _mostly_german(words: Sequence[str]) -> bool:
    """Whether a text's little words are German rather than English ('will die Heizung': an article, not dying)."""
    return sum(w in _GERMAN for w in words) > sum(w in _ENGLISH for w in words)


def _way_of_living(words: Sequence[str], end: int) -> bool:
    """Whether the words after a 'leben'/'live' speak of a way of living ('so', 'in this city', 'with roommates')."""
    return end < len(words) and words[end] in WAY_OF_LIVING and not (
        end + 1 < len(words) and words[end + 1] in WORLD and (end + 2 >= len(words) or words[end + 2] in
                                                                ("welt", "world", "^")))


def _spoken_by_self(tags: dict[str, list[tuple[int, int]]], part: str) -> bool:
    """Whether a match of the part has the speaker right around it: 'ich will', 'will ich', 'I really want', or a
    sentence that begins with it ('Will nur noch sterben')."""
    return any(any(s == a - 1 or s == b or (a - 3 <= s <= a - 2 and _tag_at(tags, s) != "^")
                   for s, _ in tags["subj"]) for a, b in tags[part])


def _tag_at(tags: dict[str, list[tuple[int, int]]], start: int) -> str:
    """'^' when a subject match at `start` is a sentence's start, else 'word'."""
    return "^" if (start, start + 1) in tags.get("^", []) else "word"


def _wish_negated(tags: dict[str, list[tuple[int, int]]], part: str, nots: list[tuple[int, int]]) -> bool:
    """Whether every match of the part has a negation within two words before it ('I don't want to die in ...')."""
    return all(any(a - 2 <= n0 < a for n0, _ in nots) for a, _ in tags[part])


def _negated(tags: dict[str, list[tuple[int, int]]], parts: Sequence[str], nots: list[tuple[int, int]]) -> bool:
    """Whether a negation stands right before a part of a window rule ('nicht gesammelt', 'no pills')."""
    return any(n1 in (s, s - 1) for part in parts for s, _ in tags[part] for _, n1 in nots)


def distanced(text: str) -> bool:
    """Whether the text talks about a film, a book, a study, the news, a game or the past."""
    return bool(_spans(tokens(text), _phrase_entries(DISTANCE)))


@functools.lru_cache(maxsize=512)
def grammar_says(text: str) -> bool:
    """True when the grammar finds a crisis told in the text (a distanced text only with a wish of the speaker's).

    Kept for the last texts asked about: a document's pieces are read by the grammar alone first and then by the
    layered detector, whose first layer is the grammar again; a check-in's look at the last days reads the same
    messages each time."""
    found = matched_rules(text)
    if not found:
        return False
    if not distanced(text):
        return True
    own = ("wish_die", "wish_not_live", "not_wish_live_more", "wish_harm_self", "wish_harm_self_en")
    return any(name in own or name.startswith("word:") and bool(FIRST_PERSON & set(name[5:].split()))
               for name in found)
