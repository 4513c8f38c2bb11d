"""Everyday chat messages that need no help line (bench/data/everyday_set.tsv): generate the set and read it.

Usage: python -m bench.everyday_set [PATH]

Writes the set (by default bench/data/everyday_set.tsv) from hand-written lines in several German and English voices
(bench/everyday_de.py, bench/everyday_en.py), realistic variants of them (no punctuation, a typo, an emoji, a laugh,
texting abbreviations, umlauts written out, a held last letter, a transcript's filler) and template families
(bench/everyday_templates.py), all with one fixed seed, and prints the counts. Every message is an implicit 0: none
of them should bring a help line, so the set measures a detector's false alarms on what people really type into a
chat.

The held-out split is whole voices and whole template families, set aside before anything is tuned; every text
(casefolded, whitespace collapsed) occurs once in the whole set. `locomo_turns()` adds the turns of the LoCoMo
conversations beside the repository (../shared, read at run time, never copied) as a further held-out English source.

A source tag reads `lang.origin.category[.variant]`: origin is a voice (`teen`, `uk`) or a template family
(`tpl-clock`), category what the message is about (CATEGORIES), variant the changes made to a hand-written line.
"""
from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import everyday_de, everyday_en
from bench.everyday_templates import FAMILIES, Family

DEFAULT = Path(__file__).resolve().parent / "data" / "everyday_set.tsv"
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_conv0-4.json"
SEED = 51
SPLITS = ("train", "heldout")
LANGS = ("de", "en")
COLUMNS = ("id", "split", "lang", "source", "text")
CATEGORIES = (
    "greeting", "short", "number", "emoji", "smalltalk", "plans", "request", "complaint", "sad", "idiom",
    "darkhumour", "work", "school", "family", "health", "sports", "games", "media", "news", "cooking", "pets",
)

# Whole voices and template families set aside: nothing is tuned on them. Each language keeps back voices of its
# own kinds (elderly, dialect, non-native, spoken) and families of numbers, emoji and short replies.
HELDOUT = (
    "de.senior", "de.swabian", "de.austrian", "de.swiss", "de.voice",
    "de.tpl-amounts", "de.tpl-digits", "de.tpl-replies", "de.tpl-emojimix", "de.tpl-reminders", "de.tpl-hyperbole",
    "en.uk", "en.nonnative", "en.older", "en.voice", "en.aus",
    "en.tpl-amounts", "en.tpl-digits", "en.tpl-replies", "en.tpl-emojimix", "en.tpl-reminders", "en.tpl-hyperbole",
)

FAMILY_CAP = 80  # messages one template family may give at most
PATTERN_CAP = 12  # messages one pattern of a family may give at most
SECOND_VARIANT = 0.5  # chance that a hand-written line gets a second variant


@dataclass(frozen=True)
class EverydayRow:
    """One everyday chat message of the set."""

    id: str
    split: str
    lang: str
    source: str
    text: str


def lines(block: str) -> list[str]:
    """The messages of a block, one a line."""
    return [line.strip() for line in block.splitlines() if line.strip()]


def key(text: str) -> str:
    """The form two texts are the same in: casefolded, whitespace collapsed."""
    return " ".join(text.casefold().split())


def origin(source: str) -> str:
    """The voice or template family of a source tag (`de.teen.idiom.typo` -> `de.teen`)."""
    return ".".join(source.split(".")[:2])


def category(source: str) -> str:
    """The category of a source tag (`de.teen.idiom.typo` -> `idiom`)."""
    return source.split(".")[2]


# Variants: what people do to a sentence when they type fast. Each returns the text unchanged where it does not apply.

LAUGHS = {"de": (" haha", " hahaha", " xD", " lol", " 😂", " hihi"), "en": (" haha", " lol", " lmao", " hahaha", " 😂")}
TAIL_EMOJI = {  # the emoji people end a message of a category with
    "sad": ("🥲", "😔", "😢", "💔", "😞", "😕", "😩"),
    "complaint": ("🙄", "😤", "😩", "🤦", "😑", "😒"),
    "idiom": ("😂", "💀", "🤣", "😅", "🙈", "😭"),
    "darkhumour": ("😂", "💀", "🙃", "😅"),
    "": ("😅", "🙈", "😂", "👍", "🙂", "😊", "😬", "🤷", "😁", "✌️", "❤️", "🥰"),
}
SHORTENINGS = {
    "de": (("ich habe", "hab"), ("habe", "hab"), ("nicht", "nich"), ("einen", "nen"), ("eine", "ne"),
           ("vielleicht", "vllt"), ("ungefähr", "ca"), ("heute", "heut"), ("gerade", "grad"), ("bisschen", "bissl"),
           ("okay", "ok"), ("wirklich", "wirkl"), ("morgen", "morgn"), ("gibt es", "gibts"), ("geht es", "gehts"),
           ("danke", "thx"), ("schon", "scho"), ("mal", "ma"), ("und", "u")),
    "en": (("you", "u"), ("are", "r"), ("your", "ur"), ("going to", "gonna"), ("want to", "wanna"),
           ("got to", "gotta"), ("please", "pls"), ("tomorrow", "tmrw"), ("because", "bc"), ("okay", "ok"),
           ("right now", "rn"), ("though", "tho"), ("really", "rly"), ("I don't know", "idk"), ("thanks", "thx"),
           ("to be honest", "tbh"), ("see you", "cya"), ("tonight", "tonite"), ("and", "&")),
}
NEIGHBOURS = dict(zip("qwertzuiopasdfghjklyxcvbnm", "wqrtzuioplsdfghjkkazcvbnmn"))
FILLERS = {"de": ("ähm", "äh", "also", "halt", "irgendwie", "so"), "en": ("um", "uh", "like", "you know", "I mean")}
UMLAUTS = {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"}


def unpunctuated(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """Without the punctuation that ends a sentence or a clause (times and prices keep theirs)."""
    return re.sub(r"[.,!?;]+(?=\s|$)", "", text).strip() or text


def typo(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """One slip of the finger in one longer word: two letters swapped, one dropped, doubled or its neighbour hit."""
    spots = [m for m in re.finditer(r"[^\W\d_]{4,}", text)]
    if not spots:
        return text
    word = rng.choice(spots)
    at = rng.randrange(word.start() + 1, word.end() - 1)
    slip = rng.choice(("swap", "drop", "double", "neighbour"))
    if slip == "swap":
        return text[:at] + text[at + 1] + text[at] + text[at + 2:]
    if slip == "drop":
        return text[:at] + text[at + 1:]
    if slip == "double":
        return text[:at] + text[at] + text[at:]
    hit = NEIGHBOURS.get(text[at].lower())
    return text[:at] + hit + text[at + 1:] if hit else text[:at] + text[at + 1:]


def with_emoji(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """An emoji that fits the category at the end."""
    return text + rng.choice(("", " ")) + rng.choice(TAIL_EMOJI.get(kind, TAIL_EMOJI[""]))


def laughing(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """A laugh at the end."""
    return text + rng.choice(LAUGHS[lang])


def shortened(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """Texting abbreviations for common words."""
    for long, short in SHORTENINGS[lang]:
        text = re.sub(rf"\b{re.escape(long)}\b", short, text, flags=re.IGNORECASE)
    return text


def without_umlauts(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """Umlauts and ß written out, as on a keyboard without them."""
    return "".join(UMLAUTS.get(char, char) for char in text) if lang == "de" else text


def stretched(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """The last letter of a short message held where people hold it: "jaaa", "heyyy", "yesss"."""
    if len(text.split()) > 3 or text[-1:] not in set("aeiouyhs"):
        return text
    return text + text[-1] * rng.randint(2, 3)


def with_filler(text: str, rng: random.Random, lang: str, kind: str) -> str:
    """A filler word between two words, as a speech-to-text transcript keeps it."""
    spoken = text.split()
    if len(spoken) < 4:
        return text
    at = rng.randrange(1, len(spoken))
    return " ".join([*spoken[:at], rng.choice(FILLERS[lang]), *spoken[at:]])


VARIANTS: dict[str, Callable[[str, random.Random, str, str], str]] = {
    "nopunct": unpunctuated, "typo": typo, "emoji": with_emoji, "laugh": laughing, "short": shortened,
    "umlaut": without_umlauts, "stretch": stretched, "filler": with_filler,
}
CASUAL = ("nopunct", "typo", "emoji", "laugh", "short", "umlaut", "stretch")
# Who makes which changes: an older writer or a learner does not write "lol" or "jaaa", a transcript has fillers but
# no typos, and nobody laughs after saying they miss someone. Case alone makes no new message (texts are compared
# casefolded), so no change only lowers or raises it.
VOICE_VARIANTS = {
    "senior": ("nopunct", "typo", "emoji", "umlaut"),
    "older": ("nopunct", "typo", "emoji"),
    "learner": ("nopunct", "typo", "umlaut"),
    "nonnative": ("nopunct", "typo", "emoji"),
    "voice": ("nopunct", "filler"),
}


def allowed(voice: str, kind: str) -> list[str]:
    """The changes a voice makes to a line of a category."""
    names = list(VOICE_VARIANTS.get(voice, CASUAL))
    if kind == "sad":
        names = [name for name in names if name not in ("laugh", "stretch")]
    return names


def variants(text: str, rng: random.Random, lang: str, kind: str, names: list[str]) -> list[tuple[str, str]]:
    """One or two changed forms of a hand-written line, each with the names of its changes."""
    out = []
    count = 2 if rng.random() < SECOND_VARIANT else 1
    names = list(names)
    rng.shuffle(names)
    for name in names:
        changed = VARIANTS[name](text, rng, lang, kind)
        if changed != text and key(changed) != key(text):
            if len(names) > 1 and rng.random() < 0.3:  # a second change on top, as a typo and an emoji together
                extra = rng.choice([n for n in names if n != name])
                twice = VARIANTS[extra](changed, rng, lang, kind)
                if key(twice) != key(changed):
                    changed, name = twice, f"{name}+{extra}"
            out.append((name, changed))
        if len(out) == count:
            break
    return out


def hand_written(lang: str, voices: dict[str, dict[str, str]], rng: random.Random) -> list[tuple[str, str]]:
    """Every hand-written line of a language with its source, then its variants."""
    originals = [(f"{lang}.{voice}.{kind}", text) for voice, kinds in voices.items()
                 for kind, block in kinds.items() for text in lines(block)]
    changed = [(f"{source}.{name}", text) for source, line in originals
               for name, text in variants(line, rng, lang, category(source), allowed(*source.split(".")[1:3]))]
    return originals + changed


def slot_list(family: Family, slot: str) -> tuple[str, ...]:
    """The words for a slot; `food2` takes those of `food`."""
    return family.slots[slot] if slot in family.slots else family.slots[slot.rstrip("0123456789")]


def filled(family: Family, rng: random.Random) -> list[str]:
    """Up to FAMILY_CAP messages of a family, no pattern giving more than PATTERN_CAP."""
    out: list[str] = []
    seen: set[str] = set()
    per_pattern: Counter[str] = Counter()
    for _ in range(FAMILY_CAP * 20):
        pattern = rng.choice(family.patterns)
        if per_pattern[pattern] >= PATTERN_CAP:
            continue
        slots = re.findall(r"{(\w+)}", pattern)
        text = pattern.format(**{slot: rng.choice(slot_list(family, slot)) for slot in slots})
        text = " ".join(text.split())
        if key(text) in seen:
            continue
        seen.add(key(text))
        per_pattern[pattern] += 1
        out.append(text)
        if len(out) == FAMILY_CAP:
            break
    return out


def build(seed: int = SEED) -> list[EverydayRow]:
    """The whole set: hand-written lines and their variants, then the template families; each text once."""
    rng = random.Random(seed)
    tagged = hand_written("de", everyday_de.VOICES, rng) + hand_written("en", everyday_en.VOICES, rng)
    for family in FAMILIES:
        tagged += [(f"{family.lang}.tpl-{family.name}.{family.category}", text) for text in filled(family, rng)]
    out: list[EverydayRow] = []
    seen: set[str] = set()
    for source, text in tagged:
        if key(text) in seen:
            continue
        seen.add(key(text))
        split = "heldout" if origin(source) in HELDOUT else "train"
        out.append(EverydayRow(f"ev{len(out) + 1:05d}", split, source.split(".")[0], source, text))
    return out


def write(rows: list[EverydayRow], path: Path = DEFAULT) -> None:
    """Write the set as a tab-separated file, one message a line."""
    for row in rows:
        assert not re.search(r"[\t\r\n\u2028\u2029]", row.text), row
    body = "".join("\t".join((r.id, r.split, r.lang, r.source, r.text)) + "\n" for r in rows)
    path.write_text("\t".join(COLUMNS) + "\n" + body, encoding="utf-8")


def rows(split: str, path: Path = DEFAULT) -> list[EverydayRow]:
    """The messages of one split ("train" or "heldout") as stored."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}, expected one of {SPLITS}")
    header, *body = path.read_text(encoding="utf-8").split("\n")
    assert tuple(header.split("\t")) == COLUMNS, header
    stored = [EverydayRow(*line.split("\t")) for line in body if line]
    return [row for row in stored if row.split == split]


def locomo_turns(path: Path = LOCOMO) -> list[str]:
    """Every turn's text of the LoCoMo conversations beside the repository: held-out English everyday talk."""
    conversations = json.loads(path.read_text(encoding="utf-8"))
    return [turn["text"] for conversation in conversations
            for name, session in conversation["conversation"].items()
            if name.startswith("session_") and isinstance(session, list) for turn in session]


def counts(rows: list[EverydayRow]) -> str:
    """The counts per split and language, and per split and origin, as text."""
    by_lang = Counter((r.split, r.lang) for r in rows)
    by_origin = Counter((r.split, origin(r.source)) for r in rows)
    out = [f"{len(rows)} messages"]
    out += [f"{split} {lang}: {n}" for (split, lang), n in sorted(by_lang.items())]
    out += [f"  {split} {name}: {n}" for (split, name), n in sorted(by_origin.items())]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Write the set and print its counts."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT
    built = build()
    write(built, path)
    print(counts(built))
    return 0


if __name__ == "__main__":
    sys.exit(main())
