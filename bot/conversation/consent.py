"""Is a typed reply a clear yes or a clear no to a yes/no question? A pure, strict decision over its words.

The reply is read as a sequence of known phrases ("na klar", "auf keinen Fall", "merk dir das", "bitte"); it is an
answer only when every part of it is one of them and they agree. Anything else is no answer (None): a word the
lists do not know, a question mark, hesitation ("..."), uncertainty ("vielleicht", "Jein"), sarcasm ("als ob"), a
yes and a no together, an emoji alone. The message then goes to the model and the question waits for its buttons:
an unclear answer is never a yes. Measured on bench/data/answers_set.tsv (`python -m bench.answers`).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Literal

Verdict = Literal["yes", "no"]
MAX_WORDS = 12
MAX_CHARS = 90

# Single words are space-separated, phrases '|'-separated; `_normal` folds case, umlauts and doubled letters.
YES_WORDS = """ja jo joa jau jep jepp jap japp jup jupp jop jou yo jawohl jawoll jawoi freilich freili genau klar
klaro klärchen logo logen logisch sicher sicherlich natürlich selbstverständlich gerne gern gärn unbedingt ok okay
okey oki okidoki k kk passt einverstanden abgemacht gebongt los yes yep yup yeah yea yeh yah ya yas yess sure
absolutely definitely certainly totally alright aye indeed affirmative deal roger j y yesh yse yeas okej okai
oaky shure"""
YES_PHRASES = """na klar|ja klar|aber klar|klar doch|eh klar|ja eh|na logo|na sicher|aber sicher|sehr gerne|gerne doch|
aber gerne|auf jeden fall|auf alle fälle|in ordnung|geht in ordnung|alles klar|geht klar|passt scho|passt schon|
passt so|passt eh|nur zu|leg los|of course|for sure|sure thing|sounds good|all right|fine by me|yes please|
by all means|genau so|ganz genau|you bet|yes sir|au ja|oh ja|oh yes|ha jo|ha ja|yes indeed|why not yes"""
# Asking for the thing to be done, or saying it is right: a yes alone ("mach das", "stimmt"), a no when negated
# ("merk dir das nicht", "das stimmt nicht").
CONSENT = """mach|mach das|mach ruhig|mach mal|mach es|machs|merk|merk dir|merks dir|merk dirs|merken|speicher|
speichere|speichern|behalt|behalte|behalten|notier|notiere|notieren|aufschreiben|schreib es auf|schreib das auf|
do it|do that|please do|go ahead|go for it|go on|remember|save|keep|note|store|write it down|stimmt|richtig|
korrekt|genau richtig|correct|right|true|wahr|stimmt so|that's right|thats right|that's correct|send|run"""
NO_WORDS = """nein nien neim nei noi ne nö nä na nope nah nay nop n niemals nie never keinesfalls falsch wrong stop
unnötig"""
NO_PHRASES = """auf keinen fall|auf gar keinen fall|auf keinsten|bloß nicht|lieber nicht|besser nicht|eher nicht|
eher nein|lieber ned|besser ned|eher ned|bitte nicht|gar nicht|überhaupt nicht|nicht wirklich|nicht nötig|
nicht notwendig|muss nicht sein|brauchst du nicht|brauch ich nicht|lass mal|lass das|lass es|lass es lieber|
lass es sein|lass gut sein|vergiss es|nix da|ja nicht|ha noi|um gottes willen|untersteh dich|no way|hell no|
hell nah|no thanks|no thank you|absolutely not|definitely not|certainly not|of course not|not really|rather not|
i'd rather not|id rather not|i would rather not|better not|skip it|skip that|forget it|not at all|by no means|
leave it|no need|not necessary|not needed|don't bother|don't you dare|sicher nicht|ganz sicher nicht|
bestimmt nicht|nee du|no no|no sir|nah mate"""
NEGATION = "nicht|ned|net|not|don't|dont|do not|doesn't|nicht mehr nötig"
# Words that decide nothing alone ("löschen") but go with a yes, or negated say no ("bloß nicht löschen").
ACTION = """löschen lösch lösche delete remove ausführen führ aus tun tu machen senden schicken schick it that this
das es dies"""
# Words that restate a decision ("ja, das möchte ich", "no, I don't want that"): nothing alone.
RESTATING_WORDS = """dir mir mich dich uns the me you to ist is sehr very much also for bei wäre wär would like want
jetzt now"""
RESTATING_PHRASES = """ich möchte|möchte ich|ich will|will ich|ich würde|würde ich|ich hätte|hätte ich|das möchte ich|
das will ich|i would like|i'd like|id like|i'd love|i would|i want|i'd|that's|thats|it's|its|für mich|for me|
to do|sehr gerne"""
POLITE_WORDS = "bitte danke dankeschön please pls plz thanks thx ty doch ruhig bitteschön"
POLITE_PHRASES = "danke dir|vielen dank|thank you|bitte sehr|danke schön"
# Praise: never an answer, whatever stands beside it. "Richtig gut", "Ja, super" and "Nicht so gut" answer the
# companion's "Wie geht es dir?" or "War's schön?" as often as the question under the reply.
POSITIVE = """super toll prima perfekt klasse spitze wunderbar schön gut great perfect cool nice awesome good fine
lovely wonderful fantastic excellent"""
# Beside a no only ("nah i'm good", "nein, alles gut"); alone or beside a yes it answers something else.
NO_ONLY = "i'm good|im good|i'm fine|alles gut|all good|all fine"
# Not sure, a condition, making fun of the question, asking back: never an answer, whatever stands beside it.
UNSURE_WORDS = """vielleicht eventuell evtl jein naja weiß wieso warum weshalb wozu hä häh hm maybe perhaps depends
idk dunno whatever egal unsure later tomorrow why what huh lol haha später morgen ahnung aber but only nur erst
first if wenn falls unless glaube glaub denke think guess probably wahrscheinlich eigentlich irgendwie kinda sorta
actually lieber mehr more"""
UNSURE_PHRASES = """na ja|weiß nicht|weiss nicht|keine ahnung|kommt drauf an|mal sehen|mal schauen|noch nicht|
als ob|not sure|nicht sicher|as if|yeah right|yes and no|ja und nein|ja nein|sure jan|not yet|not now|nicht jetzt|
jetzt nicht|why not|warum nicht|wieso nicht"""
EMOJI = {**dict.fromkeys("👍 👌 ✅ 💯 ✔ 🆗 👏 🙌 🤝".split(), "positive"),
         **dict.fromkeys("👎 ❌ 🙅 🚫 ⛔ ✖".split(), "no_only"),
         **dict.fromkeys("🙂 😊 😀 😃 😄 ☺ 🙏 ❤ 😍 🥰 😇 ✨ 👋 😉".split(), "polite")}

_LETTERS = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss", "’": "'", "`": "'", "´": "'"})
_DOUBLED = re.compile(r"(\w)\1+")
_TOKEN = re.compile(r"[\w']+|[^\w\s]")
_PUNCTUATION = frozenset(".,;:!-–—()\"'«»„“”*~")
_HESITATION = re.compile(r"\.\.|…|\?|¿")  # "ja..." hesitates, "ja?" asks back
_VARIANTS = re.compile("[\ufe0f\u200d\U0001f3fb-\U0001f3ff]")  # '👍🏽' is '👍', '❤️' is '❤'


def _normal(word: str) -> str:
    """A word as compared: lower case, without umlauts, doubled letters once ('Jaaa' = 'ja', 'NÖÖ' = 'no')."""
    return _DOUBLED.sub(r"\1", word.casefold().translate(_LETTERS))


def _entries(spec: str) -> list[str]:
    """The entries of a list: its '|'-separated phrases, or its space-separated words when it has no '|'."""
    return [" ".join(p.split()) for p in spec.split("|") if p.split()] if "|" in spec else spec.split()


def _lexicon() -> dict[tuple[str, ...], str]:
    """Every known phrase (as normal words) and its kind; where a phrase is in two lists, the first list wins."""
    table: dict[tuple[str, ...], str] = {}
    lists = ((UNSURE_PHRASES, "unsure"), (UNSURE_WORDS, "unsure"), (NO_ONLY, "no_only"), (NO_PHRASES, "no"),
             (NO_WORDS, "no"), (CONSENT, "consent"), (YES_PHRASES, "yes"), (YES_WORDS, "yes"), (NEGATION, "neg"),
             (ACTION, "action"), (POSITIVE, "praise"), (POLITE_PHRASES, "polite"), (POLITE_WORDS, "polite"),
             (RESTATING_PHRASES, "restating"), (RESTATING_WORDS, "restating"))
    for spec, kind in lists:
        for phrase in _entries(spec):
            table.setdefault(tuple(_normal(w) for w in phrase.split()), kind)
    for emoji, kind in EMOJI.items():
        table[(emoji,)] = kind
    return table


LEXICON = _lexicon()
LONGEST = max(len(phrase) for phrase in LEXICON)
_LONG_WORDS = tuple((p[0], k) for p, k in LEXICON.items() if len(p) == 1 and len(p[0]) >= 6)


def _one_edit(a: str, b: str) -> bool:
    """Whether two different words are one edit apart (a letter changed, added or dropped, or two swapped)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _typo_of(word: str) -> str | None:
    """The kind of the one known long word this word is a typo of ('unbedignt'); None when none or several."""
    if len(word) < 6:
        return None  # short words are too close to each other: 'nicht' and 'nichts', 'klar' and 'kalt'
    kinds = {kind for known, kind in _LONG_WORDS if _one_edit(word, known)}
    return kinds.pop() if len(kinds) == 1 else None


def tokens(text: str) -> list[str] | None:
    """The reply's words (normal) and emoji in order; None when it hesitates, asks back, is too long, or holds a sign
    or emoji the lists do not know."""
    text = _VARIANTS.sub("", unicodedata.normalize("NFC", text)).strip()
    if not text or len(text) > MAX_CHARS or _HESITATION.search(text):
        return None
    found: list[str] = []
    for token in _TOKEN.findall(text):
        if token in EMOJI:
            found.append(token)
        elif token[0].isalnum() or token[0] in "_'":
            found.append(_normal(token))
        elif token not in _PUNCTUATION:
            return None
    words = sum(1 for token in found if token not in EMOJI)
    return found if 0 < words <= MAX_WORDS or not words else None


def kinds(found: list[str]) -> list[str] | None:
    """The tokens read as the longest known phrases: each phrase's kind, in order; None when a word is unknown."""
    parts: list[str] = []
    at = 0
    while at < len(found):
        for size in range(min(LONGEST, len(found) - at), 0, -1):
            kind = LEXICON.get(tuple(found[at:at + size]))
            if kind is not None:
                break
        else:
            size, kind = 1, _typo_of(found[at])
            if kind is None:
                return None
        parts.append(kind)
        at += size
    return parts


def verdict_of(parts: list[str]) -> Verdict | None:
    """What the kinds of a reply's phrases say together: a yes, a no, or nothing clear (None)."""
    if not parts or "unsure" in parts or "praise" in parts:
        return None
    negated = "neg" in parts
    says_no = negated or "no" in parts
    says_yes = "yes" in parts or (not negated and "consent" in parts)
    if says_no and (says_yes or "positive" in parts):
        return None  # "ja nee", "ok, nein", "ja nicht merken", "nein 👍": both at once is no answer
    if says_no:
        return "no"
    if says_yes and "no_only" not in parts:
        return "yes"
    return None  # politeness, an emoji or an action word alone answers nothing


def yes_or_no(text: str) -> Verdict | None:
    """'yes' or 'no' when the whole reply clearly is one ("Na klar!", "Auf keinen Fall", "nein, merk dir das nicht");
    None for anything that says something else as well ("Nicht so gut.", "Ja, aber erst morgen"), asks back,
    hesitates, jokes, or is an emoji alone."""
    found = tokens(text)
    parts = kinds(found) if found else None
    return verdict_of(parts) if parts else None
