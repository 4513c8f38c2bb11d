"""Who is who, as pure decisions: name keys, descriptions ("meine Schwester"), closeness, and matching.

A person may first be known only by a description ("meine Schwester") and later by a name
("Miriam"); the functions here decide which stored people a newly mentioned one is, and how
their names and relation combine when two records turn out to be one person.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

# Leading words that make a name a description or that matching ignores ("meine Schwester" ~ "Schwester").
POSSESSIVES = frozenset("mein meine meinem meinen meiner meines my our unser unsere unserem unseren unserer".split())
ARTICLES = frozenset("der die das den dem des the".split())
INDEFINITE = frozenset("ein eine einem einen einer eines a an some irgendein irgendeine jemand someone".split())

# Relation words by closeness to the user (0 = closest); a relation is ranked by its last word.
_GROUPS: tuple[tuple[int, str], ...] = (
    (0, "partner partnerin ehemann ehefrau mann frau verlobter verlobte lebensgefährte lebensgefährtin"
        " husband wife boyfriend girlfriend fiance fiancee fiancé fiancée spouse"),
    (1, "mutter mama mami vater papa sohn tochter schwester bruder kind kinder eltern zwilling zwillingsschwester"
        " zwillingsbruder mother mom mum father dad son daughter sister brother child parents twin"),
    (2, "oma opa großmutter großvater tante onkel cousin cousine nichte neffe enkel enkelin schwager schwägerin"
        " schwiegermutter schwiegervater grandma grandpa grandmother grandfather aunt uncle niece nephew"
        " grandson granddaughter"),
    (2, "freund freundin kumpel bestie friend buddy"),
    (3, "kollege kollegin chef chefin vorgesetzter vorgesetzte mitarbeiter mitarbeiterin colleague coworker boss"
        " manager"),
    (4, "nachbar nachbarin mitbewohner mitbewohnerin arzt ärztin therapeut therapeutin lehrer lehrerin"
        " neighbour neighbor roommate doctor therapist teacher"),
)
CLOSENESS: dict[str, int] = {word: rank for rank, words in _GROUPS for word in words.split()}
OTHER = 5


@dataclass(frozen=True)
class Known:
    """What matching needs to know about a stored person."""

    id: int
    name: str
    aliases: tuple[str, ...] = ()
    relation: str = ""


@dataclass(frozen=True)
class PersonDraft:
    """A person as the conversation names them: a name or description, other names, the relation to the user."""

    name: str
    aliases: tuple[str, ...] = ()
    relation: str = ""
    same_as: str = ""  # another way the user named the same person earlier ("meine Schwester")


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold().replace("'s ", " ").replace("’s ", " ")
    return re.findall(r"\w+", folded)


def name_key(text: str) -> str:
    """A name for comparison: case-folded, without leading possessives, articles ('meine Schwester' -> 'schwester')."""
    words = _words(text)
    while words and (words[0] in POSSESSIVES or words[0] in ARTICLES):
        words = words[1:]
    return " ".join(words)


def relation_word(relation: str) -> str:
    """The word a relation is known by: its last word ('beste Freundin' -> 'freundin')."""
    words = name_key(relation).split()
    return words[-1] if words else ""


def is_description(name: str) -> bool:
    """True when a name only describes the person ('meine Schwester', 'Mama', 'my boss'), names nobody."""
    words = _words(name)
    if not words or words[0] in POSSESSIVES or words[0] in INDEFINITE:
        return True
    key = name_key(name).split()
    return len(key) <= 2 and bool(key) and key[-1] in CLOSENESS


def is_vague(name: str) -> bool:
    """True for someone not identified at all ('ein Freund', 'a colleague'): not worth a record."""
    words = _words(name)
    return not words or words[0] in INDEFINITE


def closeness(relation: str) -> int:
    """How close a relation is to the user: 0 partner, 1 family, 2 relatives and friends, 3 work, 4 others."""
    return CLOSENESS.get(relation_word(relation), OTHER)


def relation_of(draft: PersonDraft) -> str:
    """The draft's relation, or the one its description names ('meine Schwester' -> 'Schwester')."""
    if draft.relation.strip():
        return draft.relation.strip()
    for name in (draft.name, *draft.aliases):
        if is_description(name) and not is_vague(name):
            words = name.split()
            while words and (words[0].casefold() in POSSESSIVES or words[0].casefold() in ARTICLES):
                words = words[1:]
            return " ".join(words)
    return ""


def person_keys(person: Known) -> set[str]:
    """Every key a stored person answers to."""
    return {name_key(n) for n in (person.name, *person.aliases)} - {""}


def refers_to(reference: str, people: Sequence[Known]) -> list[int]:
    """The person a reference names: by name or alias, else the one person with that relation."""
    key = name_key(reference)
    named = [p.id for p in people if key and key in person_keys(p)]
    if named:
        return named
    word = relation_word(reference)
    related = [p.id for p in people if word and relation_word(p.relation) == word]
    return related if len(related) == 1 else []


def resolve(draft: PersonDraft, people: Sequence[Known]) -> list[int]:
    """The stored people a draft names (all of them are one person); empty when it is someone new.

    A name or alias matches directly; `same_as` links to an earlier way of naming; a description
    ("meine Schwester") matches the one person with that relation; a named draft with a relation
    matches the one still unnamed person with that relation.
    """
    names = [n for n in (draft.name, *draft.aliases) if n.strip()]
    wanted = {name_key(n) for n in names} - {""}
    found = [p.id for p in people if wanted & person_keys(p)]
    if draft.same_as.strip():
        found += refers_to(draft.same_as, people)
    word = relation_word(relation_of(draft))
    if word:
        same = [p for p in people if relation_word(p.relation) == word]
        proper = any(not is_description(n) for n in names)
        if len(same) == 1 and (not proper or is_description(same[0].name)):
            found.append(same[0].id)
    return list(dict.fromkeys(found))


def keeper(people: Sequence[Known]) -> Known:
    """Of several records of one person, the one to keep: a real name beats a description, then the oldest."""
    return min(people, key=lambda p: (is_description(p.name), p.id))


def combine(keep: Known, others: Sequence[Known], draft: PersonDraft | None = None) -> Known:
    """The kept record with everything the others and the draft add: a real name, all other names, a relation."""
    names = [keep.name, *keep.aliases]
    for other in others:
        names += [other.name, *other.aliases]
    if draft is not None:
        names += [draft.name, *draft.aliases]
    names = [" ".join(n.split()) for n in names if n.strip()]
    proper = [n for n in names if not is_description(n)]
    name = keep.name if not is_description(keep.name) or not proper else proper[0]
    aliases: dict[str, str] = {}
    for n in names:
        if name_key(n) != name_key(name):
            aliases.setdefault(name_key(n), n)
    relation = relation_of(draft) if draft is not None else ""
    relation = relation or keep.relation or next((o.relation for o in others if o.relation), "")
    return Known(keep.id, name, tuple(aliases.values()), relation)
