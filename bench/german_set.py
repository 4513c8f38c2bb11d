"""mnemo's own German retrieval set (bench/data/german_memories.json): load it and check it.

Usage: bench/german_set.py [PATH]

Checks that every gold and outdated id names a note, that ids are unique, that every kind and every
split is present, that no question repeats a note's text and that no paraphrase shares a content
word with its gold notes; then prints the counts per kind and split. Exits 1 if a check fails.

`load()` gives a `GermanSet` for tests and benchmarks; `GermanSet.as_dict(splits)` gives the plain
form `bench/german.py` reads (notes, questions with q and gold), restricted to some splits.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.search.language import GERMAN  # noqa: E402

DEFAULT = Path(__file__).resolve().parent / "data" / "german_memories.json"

KINDS = ("paraphrase", "compound", "relation", "negation", "correction", "time", "english", "typo", "direct")
DEV_SPLITS = ("dev1", "dev2", "dev3", "dev4")
HELDOUT = "heldout"
SPLITS = (*DEV_SPLITS, HELDOUT)

# Words that carry no content: articles, pronouns, particles, auxiliaries and question words, in the forms a
# messenger question and a third-person note use (a paraphrase may share these); the second signal's language gate
# counts the same words.
STOPWORDS = GERMAN


@dataclass(frozen=True)
class Person:
    name: str
    relation: str
    about: str = ""


@dataclass(frozen=True)
class Note:
    id: str
    date: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    q: str
    gold: tuple[str, ...]
    kind: str
    split: str
    outdated: tuple[str, ...] = ()
    asked: str | None = None


@dataclass
class GermanSet:
    about: str
    people: list[Person]
    notes: list[Note]
    questions: list[Question]
    path: Path | None = field(default=None, compare=False)

    def note(self, note_id: str) -> Note:
        """The note with this id (KeyError if none)."""
        for note in self.notes:
            if note.id == note_id:
                return note
        raise KeyError(note_id)

    def in_splits(self, *splits: str) -> list[Question]:
        """The questions of the given splits, in the set's order."""
        return [q for q in self.questions if q.split in splits]

    def dev(self) -> list[Question]:
        """Every question a tuner may look at (dev1..dev4)."""
        return self.in_splits(*DEV_SPLITS)

    def heldout(self) -> list[Question]:
        """The held-out questions: for the final figures only, never for tuning."""
        return self.in_splits(HELDOUT)

    def as_dict(self, splits: tuple[str, ...] = DEV_SPLITS) -> dict[str, Any]:
        """The plain form bench/german.py reads: all notes, the questions of the given splits."""
        return {
            "about": self.about,
            "notes": [{"id": n.id, "date": n.date, "text": n.text} for n in self.notes],
            "questions": [{"id": q.id, "q": q.q, "gold": list(q.gold), "kind": q.kind, "split": q.split}
                          for q in self.questions if q.split in splits],
        }


def load(path: Path | str = DEFAULT) -> GermanSet:
    """Read the set from its JSON file."""
    path = Path(path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    return GermanSet(
        about=raw["about"],
        people=[Person(p["name"], p["relation"], p.get("about", "")) for p in raw["people"]],
        notes=[Note(n["id"], n["date"], n["text"]) for n in raw["notes"]],
        questions=[Question(q["id"], q["q"], tuple(q["gold"]), q["kind"], q["split"],
                            tuple(q.get("outdated", ())), q.get("asked")) for q in raw["questions"]],
        path=path,
    )


def content_words(text: str) -> set[str]:
    """Lower-case words of a text without the stop words, the digits-only words and one-letter words."""
    words = re.findall(r"[a-zäöüß]+", text.lower().replace("'", " "))
    return {w for w in words if len(w) > 1 and w not in STOPWORDS}


def _fold(word: str) -> str:
    """A word without its umlauts and ß (läuft / lauft, Grüße / grusse)."""
    return word.replace("ä", "a").replace("ö", "o").replace("ü", "u").replace("ß", "ss")


def _related(a: str, b: str) -> bool:
    """The same word or a form or compound head of it: equal after folding umlauts, one starts with
    the other (4+ letters), or both are 5+ letters long and start with the same 4 letters
    (laufen / läuft / Laufgruppe, neue / neuen, Bestzeit / beste)."""
    a, b = _fold(a), _fold(b)
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 4 and long_.startswith(short):
        return True
    return len(short) >= 5 and a[:4] == b[:4]


def shared_words(question: str, note: str) -> set[str]:
    """Content words of the question that the note also uses (in some form)."""
    theirs = content_words(note)
    return {w for w in content_words(question) if any(_related(w, t) for t in theirs)}


def problems(s: GermanSet) -> list[str]:
    """Everything wrong with the set, one line each (empty when it is sound)."""
    out: list[str] = []
    note_ids = [n.id for n in s.notes]
    question_ids = [q.id for q in s.questions]
    for kind, ids in (("note", note_ids), ("question", question_ids)):
        for dup, count in Counter(ids).items():
            if count > 1:
                out.append(f"{kind} id {dup} used {count} times")
    known = set(note_ids)
    texts = {n.text.strip().lower() for n in s.notes}
    for n in s.notes:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", n.date):
            out.append(f"{n.id}: date {n.date!r} is not YYYY-MM-DD")
        if not n.text.strip():
            out.append(f"{n.id}: empty text")
    for q in s.questions:
        if not q.gold:
            out.append(f"{q.id}: no gold")
        for g in q.gold:
            if g not in known:
                out.append(f"{q.id}: gold {g} is not a note")
        for o in q.outdated:
            if o not in known:
                out.append(f"{q.id}: outdated {o} is not a note")
            if o in q.gold:
                out.append(f"{q.id}: {o} is both gold and outdated")
        if q.kind not in KINDS:
            out.append(f"{q.id}: unknown kind {q.kind!r}")
        if q.split not in SPLITS:
            out.append(f"{q.id}: unknown split {q.split!r}")
        if q.kind == "correction" and not q.outdated:
            out.append(f"{q.id}: a correction names no outdated note")
        if q.asked is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", q.asked):
            out.append(f"{q.id}: asked {q.asked!r} is not YYYY-MM-DD")
        if q.q.strip().lower() in texts:
            out.append(f"{q.id}: the question is a note's text")
        if q.kind == "paraphrase":
            for g in q.gold:
                if g in known and (common := shared_words(q.q, s.note(g).text)):
                    out.append(f"{q.id}: paraphrase shares {sorted(common)} with {g}")
    for kind in KINDS:
        if not any(q.kind == kind for q in s.questions):
            out.append(f"no question of kind {kind}")
    for split in SPLITS:
        if not any(q.split == split for q in s.questions):
            out.append(f"no question in split {split}")
    return out


def counts(s: GermanSet) -> dict[str, dict[str, int]]:
    """Questions per kind and split: {kind: {split: n, ..., "all": n}}, with a "total" row."""
    table: dict[str, dict[str, int]] = {}
    for kind in (*KINDS, "total"):
        row = {split: sum(1 for q in s.questions if (kind == "total" or q.kind == kind) and q.split == split)
               for split in SPLITS}
        row["all"] = sum(row.values())
        table[kind] = row
    return table


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    s = load(Path(args[0]) if args else DEFAULT)
    found = problems(s)
    dates = sorted(n.date for n in s.notes)
    print(f"{len(s.notes)} notes from {dates[0]} to {dates[-1]}, {len(s.questions)} questions, "
          f"{len(s.people)} people")
    table = counts(s)
    header = ["kind", *SPLITS, "all"]
    print("  ".join(f"{h:>10}" for h in header))
    for kind, row in table.items():
        print("  ".join([f"{kind:>10}", *(f"{row[c]:>10}" for c in (*SPLITS, "all"))]))
    print(f"{sum(1 for q in s.questions if q.outdated)} questions name an outdated note, "
          f"{sum(1 for q in s.questions if q.asked)} carry the day they are asked, "
          f"{sum(1 for q in s.questions if len(q.gold) > 1)} have more than one gold note")
    for line in found:
        print("PROBLEM:", line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
