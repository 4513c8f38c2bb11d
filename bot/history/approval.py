"""A reviewed candidate decided: approved ones become notes, profile entries and people with their original time,
all audited under their import's one processing id (so /undo takes the import back); rejected ones stay out."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from bot.history.readers import NAMES
from bot.learning.extraction import PeopleDraft, store_person
from bot.texts import t
from memory import ImportCandidate as Candidate
from memory import MemoryStore, NotFound, PersonDraft, Scope, yearly_date

log = logging.getLogger(__name__)

def source_name(source: str) -> str:
    """'ChatGPT' for 'chatgpt': the export's name as a person knows it."""
    return NAMES.get(source, source)


def provenance(source: str, said_at: datetime, lang: str) -> str:
    """'aus ChatGPT, 2023-03-02': where an imported memory came from, and when it was said."""
    return t(lang, "provenance", source=source_name(source), date=f"{said_at:%Y-%m-%d}")


async def provenances(store: MemoryStore, scope: Scope, note_ids: Sequence[int], lang: str) -> dict[int, str]:
    """Note id -> its provenance, for the notes that came from an import."""
    return {note_id: provenance(c.source, c.said_at, lang)
            for note_id, c in (await store.imports.provenance(scope, note_ids)).items()}


async def reject(store: MemoryStore, scope: Scope, candidate: Candidate, now: float) -> bool:
    """Leave a candidate out of the memory for good; False when it was decided already."""
    return await store.imports.decide(scope, candidate.id, "rejected", now=now)


async def approve(store: MemoryStore, scope: Scope, candidate: Candidate, now: float) -> bool:
    """Store a pending candidate as what it is, at the time it was said; False when it was decided already.

    A note keeps the date it was said, but ranks and fades as one written `now`: a fact said two years ago, approved
    today, is found like today's and has not faded before it was ever used.

    A fact the memory holds already is not stored twice. A fact that contradicts a note is stored beside it,
    and the older of the two is closed, superseded by the newer: an imported 2023 fact does not overrule what
    the person said last week, but becomes its history.
    """
    if candidate.status != "pending" or not await store.imports.decide(scope, candidate.id, "approved", now=now):
        return False  # decided already: a second press (even at the same moment) stores nothing
    try:
        stored_id = await _store(store, scope, candidate, now)
    except BaseException:
        await store.imports.settle(scope, candidate.id, "pending", None)
        raise
    await store.imports.settle(scope, candidate.id, "approved", stored_id)
    return True


async def _store(store: MemoryStore, scope: Scope, candidate: Candidate, now: float) -> int | None:
    """Store what the candidate says; the id of what it became (None: the memory held it already)."""
    imported = await store.imports.get(scope, candidate.import_id)
    processing, reason = imported.processing_id, f"import: {source_name(candidate.source)}"
    said = candidate.said_at.timestamp()
    stored_id: int | None = None
    if candidate.kind == "fact":
        write = await store.notes.add(scope, candidate.text, kind="fact",
                                      importance=int(candidate.data.get("importance", 5)), created_at=said,
                                      valid_from=said, processing=processing, reason=reason,
                                      entered_at=max(now, said))
        stored_id = write.note.id if write.created else None
        if write.created and candidate.contradicts is not None:
            await _settle_contradiction(store, scope, write.note.id, candidate.contradicts, processing, said)
    elif candidate.kind == "profile":
        data = candidate.data
        entry = await store.profile.set(scope, data["category"], data["key"], data["value"], processing=processing,
                                        reason=reason)
        stored_id = entry.id
    else:
        person, _count = await store_person(store, scope, _people_draft(candidate), processing=processing,
                                            admission=None, now=said, reason=reason)
        stored_id = person.id
    return stored_id


async def _settle_contradiction(store: MemoryStore, scope: Scope, new_id: int, old_id: int, processing: str,
                                said: float) -> None:
    """Close the older of two contradicting notes, superseded by the newer."""
    try:
        old = await store.notes.get(scope, old_id)
    except NotFound:
        return
    if old.valid_to is not None:
        return
    known = old.created_at.timestamp()
    older, newer, since = (new_id, old_id, known) if said < known else (old_id, new_id, said)
    await store.notes.close(scope, older, superseded_by=newer, processing=processing, at=since,
                            reason="import: contradicted by a newer statement")


def _people_draft(candidate: Candidate) -> PeopleDraft:
    """The person a candidate names, as extraction's draft (with no message ids: the words were not said here)."""
    data = candidate.data
    dates = (yearly_date(d[0], d[1], d[2], d[3], this_year=9999) for d in data.get("dates", []))
    person = PersonDraft(data["name"], tuple(data.get("aliases", ())), data.get("relation", ""),
                         data.get("same_as", ""))
    return PeopleDraft(person, tuple(data.get("facts", ())), tuple((a, b) for a, b in data.get("links", [])), (),
                       tuple(d for d in dates if d is not None))
