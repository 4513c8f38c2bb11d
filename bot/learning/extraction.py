"""After a reply: pull facts about the user, the people in their life and the talk's content out of the new messages.

Every message after the extraction cursor is read, in batches of BATCH oldest first, each batch once: the
cursor moves past a batch only when its answer was stored.
Every new note passes admission control first (`memory.search.admission`): small talk and repeats are dropped
and counted, and a note that contradicts a stored one replaces it through the correction flow.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any

from bot.errors import LLMBadOutput
from bot.llm.port import LLM, ChatMessage, CompletionRequest, SystemBlock
from bot.quoting import clip
from memory import (
    MemoryStore,
    Message,
    Note,
    Person,
    PersonDraft,
    Scope,
    Thresholds,
    YearlyDate,
    is_vague,
    new_processing,
    yearly_date,
)

log = logging.getLogger(__name__)

BATCH = 40  # messages shown to the model in one extraction call

SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {"type": "array", "items": {"type": "object", "properties": {
            "text": {"type": "string"}, "importance": {"type": "integer"},
            "source_ids": {"type": "array", "items": {"type": "integer"}}}, "required": ["text", "source_ids"]}},
        "content": {"type": "array", "items": {"type": "object", "properties": {
            "text": {"type": "string"},
            "source_ids": {"type": "array", "items": {"type": "integer"}}}, "required": ["text", "source_ids"]}},
        "profile": {"type": "array", "items": {"type": "object", "properties": {
            "category": {"type": "string", "enum": ["facts", "emotional", "life_events"]},
            "key": {"type": "string"}, "value": {"type": "string"},
            "source_ids": {"type": "array", "items": {"type": "integer"}}},
            "required": ["category", "key", "value", "source_ids"]}},
        "topics": {"type": "array", "items": {"type": "object", "properties": {
            "text": {"type": "string"}, "due": {"type": "string"},
            "source_ids": {"type": "array", "items": {"type": "integer"}}}, "required": ["text", "source_ids"]}},
        "people": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "aliases": {"type": "array", "items": {"type": "string"}},
            "relation": {"type": "string"}, "facts": {"type": "array", "items": {"type": "string"}},
            "same_as": {"type": "string"},
            "dates": {"type": "array", "items": {"type": "object", "properties": {
                "kind": {"type": "string", "enum": ["birthday", "anniversary", "other"]},
                "month": {"type": "integer"}, "day": {"type": "integer"}, "year": {"type": "integer"}},
                "required": ["kind", "month", "day"]}},
            "relations": {"type": "array", "items": {"type": "object", "properties": {
                "to": {"type": "string"}, "relation": {"type": "string"}}, "required": ["to", "relation"]}},
            "source_ids": {"type": "array", "items": {"type": "integer"}}}, "required": ["name", "source_ids"]}},
    },
    "required": ["facts", "content", "profile"],
}

INSTRUCTIONS = """You extract memories from a chat between a person (role "user") and their companion
(role "assistant"). Answer only with JSON:
{"facts": [...], "content": [...], "profile": [...], "topics": [...], "people": [...]}.
- facts: short, atomic facts ABOUT THE PERSON that the PERSON said themselves: preferences, projects,
  plans, dates, people in their life. Write them in the chat's language, in the third person
  ("Anna mag kurze Antworten."). importance 1-10 (10 = life-defining). source_ids = ids of the
  person's messages that state it. Never take a fact from the assistant's words alone.
- content: what was said and concluded in this exchange, one or two sentences each, with source_ids.
- profile: stable core facts the person said about themselves, as category ("facts": name, work,
  home, interests; "emotional": fears, needs, communication style; "life_events"), a short key
  ("name", "work", "style") and a value ("Anna", "kurze Antworten"), with source_ids.
- topics: things the person has coming up that a friend would ask about afterwards (an appointment,
  an exam, a trip), as a short question to ask ("Wie war der Zahnarzttermin?") with "due" = the local
  date and time after which to ask (ISO 8601, e.g. "2026-11-26T18:00"), and source_ids.
- people: each person the PERSON mentions (never the person themselves or the assistant), once: "name" as
  the person calls them (a first name; a description like "meine Schwester" while no name is known),
  "aliases" (other names for them), "relation" to the person ("Schwester", "Kollegin", "Partner"; "" when
  unknown), "facts" (short third-person sentences about them that the person said, naming them:
  "Miriam arbeitet im Krankenhaus."), "same_as" (only when the messages show that this name and an earlier
  description are one person: name "Miriam", same_as "meine Schwester"), "relations" to other named people
  ([{"to": "Tobias", "relation": "Ehefrau"}] for "Miriam ist Tobias' Frau"), "dates" that come back every
  year and that the person said ([{"kind": "birthday", "month": 3, "day": 3}] for "Miriam hat am 3. März
  Geburtstag"; kind "anniversary" for the person's anniversary with their partner, put on the partner; "year"
  only when it was said, e.g. the year of birth), and source_ids. Facts about other people go here, not into
  "facts".
- A line "--- Monday, 2026-11-24 ---" gives the local date of the messages below it; relative dates
  ("morgen", "next week") count from the day they were said, not from now.
- A person's message that begins "(Dokument: name)" or "(document: name)" sent a document: its text is not in
  this chat, only the assistant's answer about it. Take from it only what the person asked to keep ("merk dir
  das", "remember …"), as the assistant's answer names it, with the ids of both messages as source_ids; when
  they did not ask, keep nothing of the document's content.
- A line "user (forwarded: someone else's words)" is a message the person forwarded: someone else wrote it.
  Never take a fact, profile entry, topic or person from it; only what the person says about it in their own
  messages counts.
- Small talk without substance gives empty lists. Never invent anything."""


@dataclass(frozen=True)
class ProfileDraft:
    """A profile entry the model proposed, from the user's own words."""

    category: str
    key: str
    value: str


@dataclass(frozen=True)
class Draft:
    """A note the model proposed, checked against the messages it names."""

    kind: str
    text: str
    importance: int
    source_ids: tuple[int, ...]


def own_ids(messages: Sequence[Message]) -> set[int]:
    """The ids of the person's own messages: never the companion's, nor words the person forwarded (someone
    else's), which no fact, profile entry, topic or person is taken from."""
    return {m.id for m in messages if m.role == "user" and m.origin != "forwarded"}


def accept(data: Any, messages: Sequence[Message]) -> list[Draft]:
    """Keep the proposed items whose sources are real; a fact needs at least one user message as source."""
    if not isinstance(data, dict):
        raise LLMBadOutput(f"extraction is not a JSON object ({type(data).__name__})")
    roles = {m.id: m.role for m in messages}
    own = own_ids(messages)
    drafts = []
    for kind, key in (("fact", "facts"), ("content", "content")):
        for item in field_items(data, key):
            if not str(item.get("text", "")).strip():
                continue
            ids = tuple(i for i in item.get("source_ids") or [] if isinstance(i, int) and i in roles)
            if kind == "fact" and not own.intersection(ids):
                log.info("dropped a fact without a user source (%d characters)", len(str(item.get("text"))))
                log.debug("the fact dropped: %r", item.get("text"))
                continue
            try:
                importance = max(1, min(10, int(item.get("importance", 5))))
            except (TypeError, ValueError):
                importance = 5
            drafts.append(Draft(kind, clip(str(item["text"]).strip(), 500), importance, ids))
    return drafts


def field_items(data: Any, name: str) -> list[dict[str, Any]]:
    """The objects in one list field of the model's answer (anything else in it is skipped); LLMBadOutput when the
    field is there but no list."""
    items = (data.get(name) if isinstance(data, dict) else None) or []
    if not isinstance(items, list):
        raise LLMBadOutput(f"extraction field '{name}' is not a list")
    return [item for item in items if isinstance(item, dict)]


def accept_profile(data: Any, messages: Sequence[Message]) -> list[ProfileDraft]:
    """Keep proposed profile entries that name a user message as source."""
    user_ids = own_ids(messages)
    out = []
    for item in field_items(data, "profile"):
        category = str(item.get("category", "facts"))
        key, value = str(item.get("key", "")).strip(), str(item.get("value", "")).strip()
        ids = [i for i in item.get("source_ids") or [] if isinstance(i, int)]
        if key and value and category in ("facts", "emotional", "life_events") and user_ids.intersection(ids):
            out.append(ProfileDraft(category, clip(key, 60), clip(value, 300)))
    return out


@dataclass(frozen=True)
class TopicDraft:
    """Something to ask about later, due after a local time."""

    text: str
    due_at: float | None


def accept_topics(data: Any, messages: Sequence[Message], now: datetime) -> list[TopicDraft]:
    """Keep proposed topics that come from a user message; a missing or broken due time means tomorrow."""
    user_ids = own_ids(messages)
    out = []
    for item in field_items(data, "topics"):
        if not str(item.get("text", "")).strip():
            continue
        if not user_ids.intersection(i for i in item.get("source_ids") or [] if isinstance(i, int)):
            continue
        try:
            due = datetime.fromisoformat(str(item.get("due")))
            due = due if due.tzinfo else due.replace(tzinfo=now.tzinfo)
        except ValueError:
            due = now + timedelta(days=1)
        out.append(TopicDraft(clip(str(item["text"]).strip(), 300), due.timestamp()))
    return out


@dataclass(frozen=True)
class PeopleDraft:
    """A person the user mentioned, with the facts about them and their relations to other people."""

    person: PersonDraft
    facts: tuple[str, ...]
    links: tuple[tuple[str, str], ...]  # (other person's name, this person's relation to them)
    source_ids: tuple[int, ...]
    dates: tuple[YearlyDate, ...] = ()  # checked in code: only real days


def _strings(value: Any, limit: int, count: int = 10) -> tuple[str, ...]:
    items = value if isinstance(value, list) else []
    return tuple(clip(" ".join(str(v).split()), limit) for v in items[:count] if str(v).strip())


def accept_dates(value: Any, this_year: int) -> tuple[YearlyDate, ...]:
    """The real yearly dates among the proposed ones; the model's garbage is left out."""
    items = value if isinstance(value, list) else []
    dates = (yearly_date(i.get("kind"), i.get("month"), i.get("day"), i.get("year"), this_year=this_year)
             for i in items[:5] if isinstance(i, dict))
    return tuple(dict.fromkeys(d for d in dates if d is not None))


def accept_people(data: Any, messages: Sequence[Message], this_year: int = 9999) -> list[PeopleDraft]:
    """Keep proposed people that a user message names; vague ones ('ein Freund') are left out."""
    user_ids = own_ids(messages)
    out = []
    for item in field_items(data, "people"):
        name = clip(" ".join(str(item.get("name", "")).split()), 80)
        ids = tuple(i for i in item.get("source_ids") or [] if isinstance(i, int) and i in user_ids)
        if not name or is_vague(name) or not ids:
            continue
        links = tuple((clip(str(r["to"]).strip(), 80), clip(str(r["relation"]).strip(), 60))
                      for r in item.get("relations") or [] if isinstance(r, dict)
                      and str(r.get("to", "")).strip() and str(r.get("relation", "")).strip())
        person = PersonDraft(name, _strings(item.get("aliases"), 80), clip(str(item.get("relation") or "").strip(), 60),
                             clip(str(item.get("same_as") or "").strip(), 80))
        out.append(PeopleDraft(person, _strings(item.get("facts"), 500), links, ids,
                               accept_dates(item.get("dates"), this_year)))
    return out


async def store_note(
    store: MemoryStore, scope: Scope, text: str, *, kind: str, importance: int, sources: Sequence[int],
    processing: str, admission: Thresholds | None, created_at: float | None = None,
) -> tuple[Note | None, bool]:
    """Store a note after admission control; returns (the note or the one it repeats, whether it is new)."""
    if admission is None:
        write = await store.notes.add(scope, text, kind=kind, importance=importance, source_message_ids=sources,
                                      processing=processing, reason="extraction", created_at=created_at)
        return write.note, write.created
    verdict = await store.admission.check(scope, text, kind, admission)
    await store.admission.count(scope, verdict.verdict)
    if verdict.verdict == "drop":
        log.info("admission dropped a %s of %d characters (%s, score %.2f)", kind, len(text), verdict.reason,
                 verdict.score)
        log.debug("the %s admission dropped: %r", kind, text)
        return (await store.notes.get(scope, verdict.other) if verdict.other else None), False
    write = await store.notes.add(scope, text, kind=kind, importance=importance, source_message_ids=sources,
                                  processing=processing, reason="extraction", dedupe=verdict.verdict == "admit",
                                  created_at=created_at)
    if verdict.verdict == "contradiction" and verdict.other is not None:
        await store.notes.close(scope, verdict.other, superseded_by=write.note.id, processing=processing,
                                reason=f"contradicted by: {text}")
    return write.note, write.created


async def store_people(
    store: MemoryStore, scope: Scope, drafts: Sequence[PeopleDraft], *, processing: str, admission: Thresholds | None,
    now: float,
) -> int:
    """Match or create each person (merging records the user showed to be one), store their facts and relations."""
    stored = 0
    for draft in drafts:
        stored += (await store_person(store, scope, draft, processing=processing, admission=admission, now=now))[1]
    return stored


async def store_person(
    store: MemoryStore, scope: Scope, draft: PeopleDraft, *, processing: str, admission: Thresholds | None,
    now: float, reason: str = "extraction",
) -> tuple[Person, int]:
    """Match or create one person, store their facts, dates and relations; returns the person and the items stored."""
    stored = 0
    person = await store.people.observe(scope, draft.person, processing=processing, reason=reason, now=now)
    note_ids = []
    for fact in draft.facts:
        note, created = await store_note(store, scope, fact, kind="fact", importance=5, sources=draft.source_ids,
                                         processing=processing, admission=admission, created_at=now)
        stored += created
        if note is not None:
            note_ids.append(note.id)
    await store.people.link_notes(scope, person.id, note_ids, processing=processing, reason=reason)
    for date in draft.dates:
        stored += await store.person_dates.note(scope, person.id, date, processing=processing,
                                                reason=reason, now=now) is not None
    for name, relation in draft.links:
        other = await store.people.observe(scope, PersonDraft(name), processing=processing, reason=reason, now=now)
        await store.people.relate(scope, person.id, other.id, relation, processing=processing, reason=reason, now=now)
    return person, stored


def transcript(messages: Sequence[Message], zone: tzinfo | None = None) -> str:
    """The messages as numbered lines for the extraction prompt; with a zone, each local day under its date."""
    lines, day = [], None
    for m in messages:
        if zone is not None and (local := m.created_at.astimezone(zone)).date() != day:
            day = local.date()
            lines.append(f"--- {local:%A, %Y-%m-%d} ---")
        role = f"{m.role} (forwarded: someone else's words)" if m.role == "user" and m.origin == "forwarded" else m.role
        lines.append(f"[{m.id}] {role}: {clip(m.text, 1200)}")
    return "\n".join(lines)


@dataclass
class ExtractionRun:
    """One run of `extract`: its processing (every batch's changes are audited under it) and what it read.

    The caller keeps it, so what a run stored before a later batch failed is known too.
    """

    processing: str = field(default_factory=lambda: new_processing("extract"))
    stored: int = 0  # items stored (notes, profile entries, people's facts and dates, topics)
    read: list[Message] = field(default_factory=list)  # the messages of the batches the model was shown


async def extract(
    store: MemoryStore, llm: LLM, scope: Scope, consent: bool = False, now: datetime | None = None,
    admission: Thresholds | None = None, *, may_continue: Callable[[], Awaitable[bool]] | None = None,
    full_batches_only: bool = False, run: ExtractionRun | None = None,
) -> int:
    """Extract from every message after the cursor, BATCH at a time, oldest first; return how many items were stored.

    Each batch moves the cursor past the messages it covered. A failing batch (the model fails, or its
    answer is not the JSON asked for) raises and leaves the cursor before it, so it is read again next time.
    may_continue is asked before each model call (the day's token budget); with full_batches_only, only
    full batches are read (the rest waits until the chat goes quiet).
    With consent, a profile fact under a new key waits for the user's yes instead of being stored.
    With admission thresholds, each new note is checked before it is stored (None: no check).
    All batches of one run are audited under one processing (the run's, when one is given).
    """
    now = now or datetime.now().astimezone()
    run = run or ExtractionRun()
    stored = 0
    while True:
        state = await store.conversations.get(scope)
        batch = await store.messages.after(scope, state.extracted_upto, BATCH)
        if not batch or (full_batches_only and len(batch) < BATCH):
            return stored
        if any(m.role == "user" for m in batch):
            if may_continue is not None and not await may_continue():
                return stored
            run.read.extend(batch)
            found = await extract_batch(store, llm, scope, batch, consent, now, admission, processing=run.processing)
            stored, run.stored = stored + found, run.stored + found
        if not await store.conversations.set_extracted(scope, batch[-1].id, if_present=True):
            log.info("extraction for scope %s: its messages were erased meanwhile; nothing of them kept", scope.id)
            return stored


async def extract_batch(
    store: MemoryStore, llm: LLM, scope: Scope, batch: Sequence[Message], consent: bool, now: datetime,
    admission: Thresholds | None, *, processing: str | None = None,
) -> int:
    """Ask the model about one batch of messages and store what it found; the cursor is the caller's."""
    header = f"Now (the person's local time): {now:%A, %Y-%m-%d %H:%M}\n\n"
    completion = await llm.complete(CompletionRequest(
        [ChatMessage("user", header + transcript(batch, now.tzinfo))], system=[SystemBlock(INSTRUCTIONS)],
        json_schema=SCHEMA, max_tokens=900))
    try:
        data = completion.json()
        drafts = accept(data, batch)
        profile = accept_profile(data, batch)
        topics = accept_topics(data, batch, now)
        people = accept_people(data, batch, now.year)
    except LLMBadOutput:
        await store.failures.add("extraction.bad_json")
        log.warning("extraction answer was not the JSON asked for; nothing stored, the batch is read again next time",
                    exc_info=True)
        raise
    if not await store.messages.present(scope, [m.id for m in batch]):
        return 0  # erased while the model read them (/deleteme, or a stalled worker's lost lock): nothing written back
    processing = processing or new_processing("extract")
    stored = 0
    await store.index.embed([d.text.strip() for d in drafts])  # one batch; each note below finds its vector cached
    for d in drafts:
        _note, created = await store_note(store, scope, d.text, kind=d.kind, importance=d.importance,
                                          sources=d.source_ids, processing=processing, admission=admission)
        stored += created
    stored += await store_people(store, scope, people, processing=processing, admission=admission,
                                 now=now.timestamp())
    known = {(e.category, e.key) for e in await store.profile.list(scope)}
    for p in profile:
        if consent and (p.category, p.key) not in known:
            await store.profile.propose(scope, p.category, p.key, p.value)
            continue
        await store.profile.set(scope, p.category, p.key, p.value, processing=processing, reason="extraction")
        stored += 1
    for topic in topics:
        await store.topics.add(scope, topic.text, due_at=topic.due_at, origin="conversation")
        stored += 1
    return stored
