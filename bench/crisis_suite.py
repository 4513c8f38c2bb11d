"""A CheckList-style suite of plain crisis statements, generated from templates (Ribeiro et al. 2020).

Usage: python -m bench.crisis_suite --counts

Minimum-functionality cases (label 1): first-person statements of a wish to die, a plan, means, a goodbye,
self-harm, violence by someone else and acute danger, in German and English, built from the templates in
bench/crisis_suite_templates.py. Every base sentence comes unperturbed and once perturbed (CheckList invariance: a
typo, lower case, no punctuation, an emoji, a German dialect or English texting style), so a detector should give
both the same answer. Near misses (label 0) put the same fillers in harmless frames.

The split is by filler: `cases("train")` is filled only from bench/crisis_suite_train.py, `cases("heldout")` only
from bench/crisis_suite_heldout.py, so no held-out filler appears in any train text. Everything is deterministic; no
model is run. `--counts` prints counts only, never a text.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import string
import zlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from bench.crisis_suite_dev import DEV_FILLERS
from bench.crisis_suite_heldout import HELDOUT_FILLERS
from bench.crisis_suite_templates import NEAR_MISS_TEMPLATES, SUBJECTS, TEMPLATES, Filler
from bench.crisis_suite_train import TRAIN_FILLERS

LANGS = ("de", "en")
SPLITS = ("train", "heldout")
DEV = "dev"  # a third filler set for the same templates (bench/crisis_suite_dev.py): a grammar's first look at it
#              estimates what it does on fillers it was not written from; built after the two splits, so it changes
#              neither
CATEGORIES = ("wish_to_die", "plan", "means", "goodbye", "self_harm", "violence", "acute_danger")
PERTURBATIONS: dict[str, tuple[str, ...]] = {
    "de": ("none", "typo", "lower", "no_punct", "emoji", "dialect"),
    "en": ("none", "typo", "lower", "no_punct", "emoji", "texting"),
}
FILLERS: dict[str, dict[str, dict[str, tuple[Filler, ...]]]] = {
    "train": TRAIN_FILLERS, "heldout": HELDOUT_FILLERS, DEV: DEV_FILLERS}

# Base sentences per language, category and split; each gives an unperturbed and a perturbed case.
BASES = {"train": 72, "heldout": 36, DEV: 36}
NEAR_MISS_BASES = {"train": 14, "heldout": 8, DEV: 8}

EMOJI = ("😔", "😢", "💔", "😞", "🙃", "😶", "🥀", "🖤", "😭", "🫠")

# German contractions after filling a preposition with an article.
CONTRACTIONS = (
    ("von dem ", "vom "), ("an dem ", "am "), ("in dem ", "im "), ("zu dem ", "zum "), ("zu der ", "zur "),
    ("auf das ", "aufs "), ("in das ", "ins "), ("bei dem ", "beim "),
)

# Word-level dialect forms; "nicht mehr" is replaced before single words.
DIALECTS: dict[str, dict[str, str]] = {
    "bavarian": {
        "nicht mehr": "nimmer", "ich": "i", "nicht": "ned", "nichts": "nix", "hab": "hob", "habe": "hob",
        "heute": "heid", "jetzt": "etz", "mein": "mei", "meine": "mei", "meinem": "meim", "meiner": "meina",
        "eine": "a", "einen": "an", "mich": "mi", "mir": "ma", "auch": "aa", "noch": "no",
        "schon": "scho", "gleich": "glei", "das": "des", "was": "wos", "sind": "san", "ist": "is", "kein": "koa",
        "keine": "koane", "haben": "ham", "einfach": "afach", "alles": "ois", "mal": "moi", "weiß": "woaß",
    },
    "austrian": {
        "nicht mehr": "nimma", "ich": "i", "nicht": "ned", "nichts": "nix", "hab": "hob", "habe": "hob",
        "heute": "heit", "jetzt": "jetz", "mein": "mei", "eine": "a", "einen": "an",
        "mich": "mi", "mir": "ma", "noch": "no", "schon": "scho", "gleich": "glei", "das": "des", "was": "wos",
        "kein": "ka", "keine": "kane", "haben": "ham", "will": "wü", "alles": "ois", "mal": "amoi", "sind": "san",
        "ist": "is", "weiß": "waß",
    },
    "swiss": {
        "nicht mehr": "nüme", "nicht": "nöd", "nichts": "nüt", "hab": "han", "habe": "han", "heute": "hüt",
        "mein": "min", "meine": "mini", "eine": "e", "einen": "en", "bin": "bi", "mich": "mi",
        "auch": "au", "noch": "no", "schon": "scho", "gleich": "grad", "kein": "kei", "keine": "kei",
        "haben": "händ", "geh": "gang", "will": "wott", "einfach": "eifach", "morgen": "morn", "ist": "isch",
        "weiß": "weiss", "angst": "angscht",
    },
}

# English texting style (regular expressions, longer phrases first), then everything lower case without a final
# full stop. "going to" becomes "gonna" only before a verb, not before "the roof".
_NOT_A_VERB = r"(?!\s+(?:the|my|a|an|his|her|your|their|our|this|that|bed|work|school)\b)"
TEXTING = (
    (rf"I'm going to{_NOT_A_VERB}", "im gonna"), (rf"going to{_NOT_A_VERB}", "gonna"), ("want to", "wanna"),
    ("right now", "rn"), ("I'm", "im"), ("I've", "ive"), ("I'll", "ill"), ("don't", "dont"), ("can't", "cant"),
    ("won't", "wont"), ("it's", "its"), ("you", "u"), ("your", "ur"), ("because", "cuz"), ("tonight", "tonite"),
    ("tomorrow", "tmrw"), ("please", "pls"), ("really", "rly"), ("I", "i"),
)

_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class SuiteCase:
    id: str
    split: str
    lang: str
    category: str
    template: str
    perturbation: str
    text: str
    label: int = 1
    base_id: str = ""  # the unperturbed case this one was made from (its own id when unperturbed)


def cases(split: str) -> list[SuiteCase]:
    """Return the crisis statements (label 1) of one split."""
    _check_split(split)
    return [case for case in _build() if case.split == split and case.label == 1]


def near_misses(split: str) -> list[SuiteCase]:
    """Return the harmless minimal pairs (label 0) of one split."""
    _check_split(split)
    return [case for case in _build() if case.split == split and case.label == 0]


def filler_marks(filler: Filler) -> list[str]:
    """Return the strings that identify a filler: its forms, without the shared grammar helpers ("_" keys)."""
    if isinstance(filler, str):
        return [filler]
    return [form.strip() for key, form in filler.items() if not key.startswith("_") and form.strip()]


def perturb(name: str, text: str, lang: str) -> str:
    """Apply one named perturbation to a text (unchanged if it does not apply)."""
    seed = zlib.crc32(text.encode())
    if name == "none":
        return text
    if name == "typo":
        return _typo(text, seed)
    if name == "lower":
        return text.lower()
    if name == "no_punct":
        return " ".join(re.sub(r"[.,!?;:…]", "", text).split())
    if name == "emoji":
        return f"{text} {EMOJI[seed % len(EMOJI)]}"
    if name == "dialect" and lang == "de":
        names = sorted(DIALECTS)
        for step in range(len(names)):
            changed = _dialect(text, DIALECTS[names[(seed + step) % len(names)]])
            if changed != text:
                return changed
        return text
    if name == "texting" and lang == "en":
        return _texting(text)
    raise ValueError(f"no perturbation {name!r} for {lang!r}")


def _check_split(split: str) -> None:
    if split not in (*SPLITS, DEV):
        raise ValueError(f"split must be one of {(*SPLITS, DEV)}, not {split!r}")


@cache
def _build() -> tuple[SuiteCase, ...]:
    seen: set[str] = set()
    built: list[SuiteCase] = []
    for label, templates, bases in ((1, TEMPLATES, BASES), (0, NEAR_MISS_TEMPLATES, NEAR_MISS_BASES)):
        for split in (*SPLITS, DEV):
            for lang in LANGS:
                for category in CATEGORIES:
                    built += _generate(lang, category, split, label, templates[lang][category], bases[split], seen)
    return tuple(built)


def _generate(
    lang: str, category: str, split: str, label: int, templates: tuple[str, ...], wanted: int, seen: set[str]
) -> list[SuiteCase]:
    fillers = FILLERS[split][lang]
    prefix = f"{lang}-{category}-{split}" if label else f"nm-{lang}-{category}-{split}"
    bases: list[tuple[int, str]] = []
    attempt = 0
    while len(bases) < wanted and attempt < 60 * wanted:
        index, turn = attempt % len(templates), attempt // len(templates)
        attempt += 1
        text = _fill(templates[index], lang, fillers, turn, f"{prefix}|{index}|{turn}")
        if text not in seen:
            seen.add(text)
            bases.append((index, text))
    if len(bases) < wanted:
        raise ValueError(f"{prefix}: only {len(bases)} distinct sentences, {wanted} wanted")
    made: list[SuiteCase] = []
    perturbations = PERTURBATIONS[lang][1:]
    for number, (index, text) in enumerate(bases):
        base_id = f"{prefix}-{number:03d}"
        template = f"{'nm-' if not label else ''}{lang}-{category}-t{index:02d}"
        unperturbed = f"{base_id}-none"
        made.append(SuiteCase(unperturbed, split, lang, category, template, "none", text, label, unperturbed))
        for step in range(len(perturbations)):
            name = perturbations[(number + step) % len(perturbations)]
            changed = perturb(name, text, lang)
            if changed != text and changed not in seen:
                seen.add(changed)
                made.append(
                    SuiteCase(f"{base_id}-{name}", split, lang, category, template, name, changed, label, unperturbed)
                )
                break
    return made


def _fill(template: str, lang: str, fillers: Mapping[str, tuple[Filler, ...]], turn: int, key: str) -> str:
    slots = list(dict.fromkeys(field.split("[")[0] for _, field, _, _ in string.Formatter().parse(template) if field))
    main = next((slot for slot in slots if slot not in SUBJECTS[lang] and slot != "time"), "time")
    values: dict[str, Filler] = {}
    for slot in slots:
        choices = SUBJECTS[lang][slot] if slot in SUBJECTS[lang] else fillers[slot]
        index = turn if slot == main else int(hashlib.sha256(f"{key}|{slot}".encode()).hexdigest(), 16)
        values[slot] = choices[index % len(choices)]
    text = " ".join(template.format(**values).split())
    if lang == "de":
        for long, short in CONTRACTIONS:
            text = text.replace(long, short).replace(long.capitalize(), short.capitalize())
    return text[0].upper() + text[1:]


def _typo(text: str, seed: int) -> str:
    words = [match for match in _WORD.finditer(text) if len(match.group()) >= 4]
    if not words:
        return text
    match = words[seed % len(words)]
    word = match.group()
    at = 1 + (seed >> 8) % (len(word) - 2)
    if (seed >> 16) % 2 and word[at] != word[at + 1]:
        typo = word[:at] + word[at + 1] + word[at] + word[at + 2:]  # swap two neighbouring letters
    else:
        typo = word[:at] + word[at + 1:]  # drop one letter
    return text[: match.start()] + typo + text[match.end():]


def _dialect(text: str, forms: dict[str, str]) -> str:
    for phrase, form in forms.items():
        if " " in phrase:
            text = re.sub(rf"\b{phrase}\b", form, text, flags=re.IGNORECASE)

    def swap(match: re.Match[str]) -> str:
        word = match.group()
        form = forms.get(word.lower())
        if form is None:
            return word
        return form.capitalize() if word[0].isupper() else form

    return _WORD.sub(swap, text)


def _texting(text: str) -> str:
    for phrase, form in TEXTING:
        text = re.sub(rf"(?<![\w']){phrase}(?![\w'])", form, text, flags=re.IGNORECASE)
    return text.lower().rstrip(".")


def counts() -> Counter[tuple[str, str, str, str, int]]:
    """Count the cases and near misses per split, language, category, perturbation and label."""
    return Counter((case.split, case.lang, case.category, case.perturbation, case.label) for case in _build())


def main(argv: list[str] | None = None) -> int:
    """Print the suite's counts (never a text)."""
    parser = argparse.ArgumentParser(prog="python -m bench.crisis_suite", description=__doc__.splitlines()[0])
    parser.add_argument("--counts", action="store_true", help="counts per split, language, category, perturbation")
    args = parser.parse_args(argv)
    if not args.counts:
        parser.print_help()
        return 2
    table = counts()
    print(f"{'split':8} {'lang':4} {'category':13} " + " ".join(f"{p:>9}" for p in PERTURBATIONS["de"][:5])
          + f" {'dialect/texting':>15} {'cases':>6} {'near misses':>11}")
    for split in SPLITS:
        for lang in LANGS:
            for category in CATEGORIES:
                row = [table[(split, lang, category, p, 1)] for p in PERTURBATIONS[lang]]
                misses = sum(table[(split, lang, category, p, 0)] for p in PERTURBATIONS[lang])
                print(f"{split:8} {lang:4} {category:13} " + " ".join(f"{n:>9}" for n in row[:5])
                      + f" {row[5]:>15} {sum(row):>6} {misses:>11}")
    for split in SPLITS:
        print(f"{split}: {len(cases(split))} cases, {len(near_misses(split))} near misses")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
