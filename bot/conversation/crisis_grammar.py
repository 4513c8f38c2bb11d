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
from dataclasses import dataclass

from bot.conversation.crisis_parts import ALONE, ALONE_WORDS, DISTANCE, FIRST_PERSON, IDIOMS, PARTS

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?|\^|[\U0001F300-\U0001FAFF]", re.UNICODE)
_SENTENCE = re.compile(r"[.!?;:\n]+")

# --- the rules ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """Parts in this order, each at most `gap` words after the one before (`window`: all of them, in any order,
    within `gap` words); a negation between them breaks it, and a word of `void` anywhere in the text voids it."""

    name: str
    parts: tuple[str, ...]
    gap: int = 4
    window: bool = False
    no_not: bool = True
    void: tuple[str, ...] = ()
    subject: bool = False  # the first part must be the speaker's: 'ich'/'I' (or a sentence's start) right around it


_GAMES = ("beim", "aus versehen", "versehentlich", "jokingly", "im spaß", "zum spaß", "puns", "witze", "jokes",
          "out of the way", "spoil*", "spoiler", "spiel*", "game", "games", "schach", "chess", "karten", "cards",
          "tennis", "tischtennis", "mario",
          "kart", "fifa", "wette", "bet", "rennen", "race", "match", "runde", "round", "quiz", "wettkampf",
          "training", "sparring", "kampfsport", "boxen", "boxing", "judo", "karate", "kickbox*", "fußball",
          "football", "soccer", "volleyball", "basketball", "handball", "eishockey", "hockey", "vorschlag",
          "gegner", "opponent", "vorgeschlagen", "proposes", "suggests", "tor", "goal", "punkte", "points",
          "record", "rekord", "high score", "highscore", "bestzeit")
_WATER = ("ins wasser", "in den see", "in den fluss", "ins meer", "in den pool", "ins becken", "into the water",
          "into the lake", "into the river", "into the sea", "into the pool", "baden", "schwimmen", "swim",
          "swimming", "freibad", "schwimmbad", "fallschirm*", "bungee*", "parachute", "skydiv*", "klippenspring*",
          "cliff diving", "trampolin*", "sprungturm", "zehner", "10er", "dreier", "diving", "tauchen", "ski",
          "schanze", "hürde*", "hurdle*", "seilspring*", "weitsprung", "hochsprung", "kletter*", "climb*",
          "parkour", "sommer", "summer")
_BREAKUP = ("mit ihr", "mit ihm", "mit dir", "with her", "with him", "with you", "für heute", "for today",
            "arbeit", "work", "feierabend", "büro", "office", "typ", "guy", "der richtige", "the one", "beziehung",
            "relationship", "mit meinem freund",
            "mit meiner freundin", "serie", "rauchen", "smoking", "alkohol", "diät", "diet")
_TRAVEL = ("urlaub", "vacation", "holiday", "reise", "trip", "umzug", "moving", "party", "feier", "firma",
           "kollegen", "colleagues", "abschiedsfeier", "farewell party", "flughafen", "airport", "ausland", "abroad",
           "praktikum", "semester", "bahnhof", "station", "rente", "retire*", "notar", "notary", "lawyer",
           "anwalt", "vorsorge", "versicherung", "insurance")
_ACCIDENT = ("ofen", "herd", "oven", "stove", "bügeleisen", "kochen", "cooking", "backen", "baking", "rasier*",
             "shaving", "by accident", "aus versehen", "versehentlich", "accidentally", "garten", "gardening",
             "werkstatt", "sunburn", "sonnenbrand", "tattoo*", "piercing", "arzt", "doctor", "operation",
             "surgery", "katze", "cat", "hund", "dog", "zwiebel*", "onion*", "gemüse", "vegetables",
             "messer beim", "beim schneiden", "dosenöffner", "can opener", "papercut", "papierschnitt")
_JOKING = ("😂", "🤣", "😆", "lol", "lmao", "rofl", "haha", "hahaha", "xd", "wenn ich noch", "if i have to",
           "if i hear", "one more", "noch ein", "noch eine", "noch einmal", "one more time")
# After 'leben'/'live': a way of living, not life ('nicht mehr so leben', 'live in this city'); before 'world' it is
# life again ('in dieser Welt').
_WAY_OF_LIVING = frozenset({"wie", "in", "with", "mit", "bei", "like", "im", "at", "near", "zusammen",
                            "together", "alone", "allein", "hier", "here", "there", "dort", "da"})
# 'die' is English only after these ('want to die'); else it is the German article ('vermisse die Stunden').
_BEFORE_DIE = frozenset({"to", "wanna", "gonna", "just", "i", "i'd", "id", "would", "could", "should", "rather",
                         "and", "or", "simply", "will", "ll", "i'll", "ill", "shall", "might", "let", "me", "not"})
_WORLD = frozenset({"welt", "world", "dieser", "this", "der", "the"})

_HANG_HARMLESS = ("wäsche", "laundry", "boot", "boat", "zelt", "tent", "camping", "schaukel", "swing", "umzug",
                  "moving", "abschlepp*", "tow", "hund", "dog", "hose", "hosen", "jeans", "pants", "kleid",
                  "hängematte", "hammock", "boxsack", "punching bag", "lampe", "lamp", "bild", "picture",
                  "kletter*", "climb*", "turnen", "gym", "ringe", "rings")
_ANIMALS = ("katze", "kater", "cat", "hund", "dog", "welpe", "puppy", "kitten", "vogel", "bird", "möwe",
            "seagull", "ente", "duck", "gans", "goose", "pferd", "horse", "kuh", "cow", "ziege", "goat")

RULES: tuple[Rule, ...] = (
    # wishing to die, or not to live
    Rule("wish_die", ("wish", "die"), gap=4, subject=True, void=_JOKING),
    Rule("wish_not_live", ("wish", "not", "live"), gap=4, no_not=False, void=("ohne", "without") + _JOKING,
         subject=True),
    Rule("not_more_live", ("not", "more", "live"), gap=1, no_not=False, void=("ohne", "without")),
    Rule("wish_harm_self", ("wish", "selfobj", "harm"), gap=3),
    Rule("wish_harm_self_en", ("wish", "harm", "selfobj"), gap=3),
    # plans: a height and a fall, a vehicle to step in front of, a car into a wall
    Rule("fall_height", ("height", "fall"), gap=7, window=True, void=_WATER + _JOKING),
    Rule("under_traffic", ("under", "traffic", "throw"), gap=3),
    Rule("against_obstacle", ("against", "obstacle", "drive"), gap=3),
    Rule("drive_against", ("drive", "against", "obstacle"), gap=4),
    # means made ready
    Rule("poison_hoard", ("poison", "hoard"), gap=6, window=True),
    Rule("poison_amount", ("amount", "poison", "swallow"), gap=5, window=True),
    Rule("hang_test", ("hang", "anchor", "ready"), gap=8, window=True, void=_HANG_HARMLESS),
    Rule("hang_neck", ("hang", "neck"), gap=4, window=True),
    Rule("gun_ready", ("gun", "ready"), gap=5, window=True, void=_GAMES),
    Rule("gas_closed", ("gasmeans", "closed"), gap=6, window=True, void=("kochen", "cooking", "grillen", "bbq",
                                                                          "heizung", "heating", "ballon*")),
    # hurting oneself
    Rule("harm_body", ("harm", "body"), gap=5, window=True, void=_ACCIDENT),
    Rule("blade_body", ("blade", "body"), gap=4, window=True, void=_ACCIDENT),
    Rule("harm_intent", ("harm", "selfobj", "intent"), gap=6, window=True, void=_ACCIDENT),
    # hurt by someone else
    Rule("actor_strikes_me", ("actor", "strike", "victim"), gap=3, void=_GAMES),
    Rule("actor_me_struck", ("actor", "victim", "strike"), gap=4, void=_GAMES),
    Rule("threat_kill_me", ("actor", "threat", "victim", "killverb"), gap=4, void=_GAMES + _JOKING),
    Rule("threat_kill_me_en", ("actor", "threat", "killverb", "victim"), gap=3, void=_GAMES + _JOKING),
    # goodbyes
    Rule("farewell_gone", ("farewell", "gone"), gap=6, window=True),
    Rule("giveaway_gone", ("giveaway", "gone"), gap=8, window=True, void=_TRAVEL),
    Rule("giveaway_farewell", ("giveaway", "farewell"), gap=8, window=True, void=_TRAVEL),
    # said in so many words, with the parts around them
    Rule("without_me_better", ("without_me", "better"), gap=6, window=True),
    Rule("nobody_notice_gone", ("nobody", "better", "without_me"), gap=8, window=True),
    Rule("burden_to_all", ("burden", "nobody"), gap=3, window=True, void=("kein", "keine", "no", "not", "nicht")),
    Rule("tired_of_living", ("tired", "live"), gap=2),
    Rule("no_point_living", ("nopoint", "live"), gap=6, window=True),
    Rule("at_the_tracks", ("tracks", "waiting"), gap=8, window=True),
    Rule("under_traffic_after", ("traffic", "throw", "under"), gap=4, window=True, void=_WATER),
    Rule("sleep_never_wake", ("sleep", "not", "live"), gap=3, no_not=False, void=_JOKING),
    Rule("death_relief", ("death", "relief"), gap=5, window=True),
    Rule("disappear_forever", ("disappear", "forever"), gap=5, window=True),
    Rule("not_wish_live_more", ("not", "wish", "live", "more"), gap=3, no_not=False),
    Rule("relapse_harm", ("relapse", "harm"), gap=8, window=True),
    Rule("hidden_cuts", ("cuts", "hiding"), gap=5, window=True, void=_ACCIDENT),
    Rule("urge_to_harm", ("urge", "harm"), gap=4, window=True),
    Rule("harm_again", ("harm", "intent"), gap=2, window=True, void=_ACCIDENT),
    Rule("razor_laid_out", ("razor", "hoard"), gap=5, window=True),
    Rule("strike_actor_me", ("strike", "actor", "victim"), gap=2, void=_GAMES),
    Rule("actor_brings_me_um", ("actor", "killverb", "victim"), gap=3, void=("noch", "still", "mit seinen",
                                                                              "mit ihren") + _JOKING),
    Rule("hang_bought", ("hang", "ready"), gap=5, window=True, void=_WATER + _HANG_HARMLESS),
    Rule("height_no_return", ("height", "no_return"), gap=10, window=True, void=_WATER + _JOKING),
    Rule("last_words_over", ("last_words", "its_over"), gap=12, window=True, void=_JOKING),
    Rule("silent_not_fault", ("if_silent", "not_fault"), gap=12, window=True),
    Rule("cut_myself", ("selfobj", "cutting"), gap=3, subject=True, void=_ACCIDENT + ("haare", "hair", "nägel",
                                                                                     "nails", "pony", "bangs")),
    Rule("bleeding_heavily", ("bleed", "heavy"), gap=4, window=True, void=("nase", "nose", "zahn", "tooth",
                                                                            "periode", "period", "tage")),
    Rule("smells_of_gas", ("smell", "gasmeans"), gap=4, window=True, void=("herd", "stove", "grill", "bbq")),
    Rule("breaking_in", ("breaks", "at_me"), gap=4, window=True),
    Rule("better_to_die", ("better", "die"), gap=4, void=_JOKING),
    Rule("thought_of_dying", ("thought", "die"), gap=4, void=_JOKING + ("oma", "opa", "grandma", "grandpa")),
    Rule("height_enough", ("height", "resolve"), gap=10, window=True),
    Rule("throw_under_traffic", ("throw", "under", "traffic"), gap=3),
    Rule("onto_the_tracks", ("throw", "tracks"), gap=4),
    Rule("into_the_water", ("water_in", "no_return"), gap=8, window=True),
    Rule("hang_myself", ("hangverb", "selfobj"), gap=1, void=("bild", "picture", "wäsche", "laundry", "out")),
    Rule("means_resolve", ("means", "resolve"), gap=12, window=True, void=_JOKING),
    Rule("means_hoard", ("means", "hoard"), gap=6, window=True),
    Rule("razor_got", ("razor", "ready"), gap=5, window=True,
         void=("rasier*", "shave", "shaving", "beine", "new blade", "for my razor", "neue klinge", "bart", "beard")),
    Rule("gun_taken", ("gun", "ready"), gap=8, window=True, void=_GAMES),
    Rule("parting_forever", ("parting", "everyone"), gap=10, window=True, void=_TRAVEL),
    Rule("parting_resolve", ("parting", "resolve"), gap=12, window=True, void=_TRAVEL),
    Rule("giveaway_resolve", ("giveaway", "resolve"), gap=12, window=True, void=_TRAVEL),
    Rule("end_it_now", ("end_it", "time"), gap=4, window=True, void=_BREAKUP),
    Rule("weapon_menace", ("weapon", "menace"), gap=8, window=True, void=_GAMES + _JOKING),
    Rule("standing_with_rope", ("standing_on", "hang"), gap=8, window=True, void=_HANG_HARMLESS),
    Rule("cut_myself_en", ("cutting", "selfobj"), gap=2, subject=True, void=_ACCIDENT + ("hair", "nails")),
)
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


class _Index:
    """Entries looked up by their first word: exactly, by a typo of it, by its stem or its ending."""

    def __init__(self, entries: Sequence[tuple[str, ...]], fuzzy: bool) -> None:
        self.fuzzy = fuzzy
        self.exact: dict[str, list[tuple[str, ...]]] = {}
        self.near: dict[str, list[tuple[str, ...]]] = {}  # a typo of a first word (one dropped or swapped letter)
        self.stems: dict[str, list[tuple[str, ...]]] = {}  # by a stem's first three letters
        self.endings: list[tuple[str, ...]] = []
        for entry in entries:
            first = entry[0]
            if first.endswith("*"):
                self.stems.setdefault(first[:3], []).append(entry)
            elif first.startswith("*"):
                self.endings.append(entry)
            else:
                self.exact.setdefault(first, []).append(entry)
                for variant in _typos(first) if fuzzy else ():
                    self.near.setdefault(variant, []).append(entry)

    def candidates(self, word: str) -> list[tuple[str, ...]]:
        """The entries whose first word may match the word (checked whole by `_word_matches`)."""
        found = list(self.exact.get(word, ())) + list(self.near.get(word, ())) + list(self.stems.get(word[:3], ()))
        if self.fuzzy and len(word) >= 6:  # a letter too many: the word without it is an entry's first word
            for k in range(len(word)):
                found.extend(self.exact.get(word[:k] + word[k + 1:], ()))
        return found + self.endings


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
def _index(entries: tuple[tuple[str, ...], ...], fuzzy: bool) -> _Index:
    """The index of a tuple of entries, made once."""
    return _Index(entries, fuzzy)


def _spans(words: Sequence[str], entries: tuple[tuple[str, ...], ...], fuzzy: bool = False) -> list[tuple[int, int]]:
    """Where entries match: (first word, word after the last) for each match; with `fuzzy`, typos of a letter too
    (the parts and the lone words; idioms and the words that void a rule match exactly)."""
    index = _index(entries, fuzzy)
    found = []
    for start, word in enumerate(words):
        for entry in index.candidates(word):
            end = start + len(entry)
            if end <= len(words) and all(_word_matches(words[start + k], entry[k], fuzzy)
                                         for k in range(len(entry))):
                found.append((start, end))
    return sorted(set(found))


def _tagged(words: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
    """Every part's matches in the words."""
    return {part: _spans(words, _entries(part), fuzzy=True) for part in PARTS}


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
            if follow(index + 1, end):
                return True
        return False

    return follow(0, 0)


def _window(tags: dict[str, list[tuple[int, int]]], parts: Sequence[str], width: int) -> bool:
    """Whether every part matches somewhere within `width` words of one another, in any order."""
    first = parts[0]
    for start, _ in tags[first]:
        if all(any(abs(s - start) <= width for s, _ in tags[part]) for part in parts[1:]):
            return True
    return False


def matched_rules(text: str) -> list[str]:
    """The names of the rules (and lone parts) the text matches; empty when it needs no help line by the grammar."""
    words = _masked([w for sentence in _SENTENCE.split(text) if sentence.strip() for w in ["^", *tokens(sentence)]])
    if not words:
        return []
    tags = _tagged(words)
    tags["live"] = [(a, b) for a, b in tags["live"] if not _way_of_living(words, b)]
    tags["^"] = [(a, a + 1) for a, w in enumerate(words) if w == "^"]
    tags["die"] = [(a, b) for a, b in tags["die"] if words[a] != "die" or (a and words[a - 1] in _BEFORE_DIE)]
    tags["live"] = [(a, b) for a, b in tags["live"] if not (a and words[a - 1] in ("so", "like", "wie"))]
    calm = bool(_spans(words, _phrase_entries(_ANIMALS + _JOKING)))
    found = [f"alone:{part}" for part in ALONE if tags[part] and not calm]
    found += [f"word:{' '.join(words[s:e])}" for s, e in _spans(words, _phrase_entries(ALONE_WORDS), fuzzy=True)]
    nots = tags["not"]
    for rule in RULES:
        if rule.void and _spans(words, _phrase_entries(rule.void)):
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


def _way_of_living(words: Sequence[str], end: int) -> bool:
    """Whether the words after a 'leben'/'live' speak of a way of living ('so', 'in this city', 'with roommates')."""
    return end < len(words) and words[end] in _WAY_OF_LIVING and not (
        end + 1 < len(words) and words[end + 1] in _WORLD and (end + 2 >= len(words) or words[end + 2] in
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
