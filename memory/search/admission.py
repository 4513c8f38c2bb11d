"""Admission control: before a new note is stored, a cheap check scores it; small talk and repeats are dropped.

The score is pure: `specificity` (content words that are not small talk, numbers, names) times a
`novelty` factor (0.7 for a near-repeat up to 1.0 for a note unlike anything stored, measured between
the model's "related" and "duplicate" cosines); at the duplicate cosine a note is dropped outright. A note
that says the opposite of a very similar existing one (a negation flip) is a contradiction: it goes to the
correction flow instead of being stored beside the old one.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memory.models import Scope
from memory.records.notes import Notes
from memory.search.index import SearchIndex
from memory.search.search_text import content_words
from memory.storage.db import Database

Verdict = Literal["admit", "drop", "contradiction"]
OUTCOMES = {"admit": "admitted", "drop": "dropped", "contradiction": "contradictions"}

# Words that carry no fact on their own (greetings, weather, thanks, vague judgements), German and English.
SMALL_TALK = frozenset("""
    hallo hello hi hey moin servus tschüss ciao bye danke dank thanks thank bitte wetter weather sonnig sonne sunny
    regen regnet rain rainy kalt warm heiß cold hot schön nice gut good toll great super cool okay ok lol haha
    findet finds fand found sagt says sagte said meint thinks grüßt greets begrüßt geht gehts läuft fine
    heute today gerade just wirklich really echt total ziemlich pretty gefällt likes spaß fun lustig funny
    morgen morning guten gute nacht night abend evening tag day na ja yeah jo plaudert chats unterhalten talked
    redet reden talk talks talked chatted sprachen redeten plauderten unterhielten smalltalk gespräch conversation
""".split())
NEGATIONS = re.compile(r"\b(nicht|nichts|kein\w*|nie|niemals|nimmer|no|not|never|none|nobody|nothing)\b|n't\b", re.I)
FLIP_NEUTRAL = frozenset("mehr more longer anymore any länger".split())


@dataclass(frozen=True)
class Thresholds:
    """Settings of the check: the score a note needs, and the cosine at which a negation flip is a contradiction."""

    min_score: float = 0.5
    contradiction: float | None = None  # None: the embedding model's "related" cosine


@dataclass(frozen=True)
class Neighbour:
    """An existing note near the new one."""

    note_id: int
    text: str
    cosine: float


@dataclass(frozen=True)
class Admission:
    """The check's result, with the signals behind it."""

    verdict: Verdict
    score: float
    specificity: float
    novelty: float
    reason: str = ""
    other: int | None = None  # the duplicate or the contradicted note


def specificity(text: str) -> float:
    """0 for small talk and filler; more for content words beyond the subject, numbers and names."""
    words = content_words(text)[1:]  # the first content word is the subject ("Anna", "Miriam")
    facts = [w for w in words if w not in SMALL_TALK]
    if not facts:
        return 0.0
    names = [w for w in re.findall(r"(?<=\s)[A-ZÄÖÜ][\w-]+", text) if w.casefold() not in SMALL_TALK]
    score = 0.5 + 0.2 * len(facts) + (0.2 if re.search(r"\d", text) else 0.0) + (0.1 if names else 0.0)
    return min(1.0, score)


def novelty(cosine: float, related: float, duplicate: float) -> float:
    """1 for a note unlike anything stored, 0 at the duplicate cosine, linear in between."""
    if cosine >= duplicate:
        return 0.0
    if cosine <= related or duplicate <= related:
        return 1.0
    return (duplicate - cosine) / (duplicate - related)


def contradicts(new: str, old: str) -> bool:
    """True when one says (nearly) the same as the other with a negation added or removed."""
    if bool(NEGATIONS.search(new)) == bool(NEGATIONS.search(old)):
        return False
    a = set(content_words(NEGATIONS.sub(" ", new))) - FLIP_NEUTRAL
    b = set(content_words(NEGATIONS.sub(" ", old))) - FLIP_NEUTRAL
    return bool(a and b) and len(a & b) / len(a | b) >= 0.5


def assess(text: str, neighbours: Sequence[Neighbour], thresholds: Thresholds, related: float,
           duplicate: float) -> Admission:
    """Admit, drop or flag a new note against its nearest existing notes (pure)."""
    contradiction = thresholds.contradiction if thresholds.contradiction is not None else related
    spec = specificity(text)
    for n in neighbours:
        if n.cosine >= contradiction and contradicts(text, n.text):
            return Admission("contradiction", spec, spec, 1.0, "contradicts an existing note", n.note_id)
    nearest = max(neighbours, key=lambda n: n.cosine, default=None)
    new = novelty(nearest.cosine, related, duplicate) if nearest else 1.0
    score = spec * (0.7 + 0.3 * new)
    if nearest is not None and new == 0.0:
        return Admission("drop", score, spec, new, "duplicate", nearest.note_id)
    if score < thresholds.min_score:
        return Admission("drop", score, spec, new, "small talk" if spec == 0.0 else "below the threshold")
    return Admission("admit", score, spec, new)


class AdmissionControl:
    """Finds a new note's neighbours for `assess`, and counts what was admitted and dropped per scope."""

    def __init__(self, db: Database, index: SearchIndex, notes: Notes, related: float) -> None:
        self.db, self.index, self.notes, self.related = db, index, notes, related

    async def check(self, scope: Scope, text: str, kind: str, thresholds: Thresholds) -> Admission:
        """Score a note before it is stored (its vector is cached, so storing it embeds nothing again)."""
        vector = (await self.index.embed([text.strip()]))[0]
        neighbours = []
        for _doc, note_id, cosine in await self.index.nearest(scope.id, vector, "note", k=5):
            note = await self.notes.get(scope, note_id)
            if note.kind == kind and note.valid_to is None:
                neighbours.append(Neighbour(note_id, note.text, cosine))
        return assess(text, neighbours, thresholds, self.related, self.notes.semantic_threshold)

    async def count(self, scope: Scope, verdict: Verdict) -> None:
        """Add one to the scope's count of this outcome."""
        async with self.db.transaction() as tx:
            await tx.execute("INSERT INTO admission_counts(scope_id, outcome, count) VALUES (?, ?, 1)"
                             " ON CONFLICT(scope_id, outcome) DO UPDATE SET count = admission_counts.count + 1",
                             (scope.id, OUTCOMES[verdict]))

    async def counts(self, scope: Scope) -> dict[str, int]:
        """admitted / dropped / contradictions of a scope (zero when none)."""
        async with self.db.reading() as tx:
            rows = dict(await tx.fetchall("SELECT outcome, count FROM admission_counts WHERE scope_id = ?",
                                          (scope.id,)))
        return {name: int(rows.get(name, 0)) for name in OUTCOMES.values()}

    async def totals(self) -> dict[str, int]:
        """admitted / dropped / contradictions over every scope (zero when none), for metrics."""
        async with self.db.reading() as tx:
            rows = dict(await tx.fetchall("SELECT outcome, SUM(count) FROM admission_counts GROUP BY outcome"))
        return {name: int(rows.get(name) or 0) for name in OUTCOMES.values()}
