"""The import pipeline: the person's own words of each exported conversation, in batches, to the background model;
what it finds becomes review candidates (never memories), and the cursor moves with them.

A file is known by its content hash: read to the end once, it is never read again (no model call); cut off
(an error, a restart, the day's token budget), the next run goes on after the last conversation whose
candidates were stored. The other side's words (another assistant, a friend) are never shown to the model,
so they can never become the person's facts; an imported sentence goes only to the background model and
the queue, never through the chat's turn, so nothing in it (a crisis-sounding line) acts live.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, tzinfo
from itertools import groupby
from pathlib import Path
from typing import Any, Literal

from bot.errors import LLMBadOutput
from bot.history.model import HistoryConversation, HistoryMessage
from bot.learning import extraction
from bot.llm.port import LLM, ChatMessage, CompletionRequest, SystemBlock
from bot.quoting import clip
from memory import HistoryImport, MemoryStore, Message, NewCandidate, NotFound, Scope, Thresholds

log = logging.getLogger(__name__)

BATCH = extraction.BATCH  # the person's messages shown to the model in one call
CALL_CHARS = 24_000  # and at most this many characters of them
CLIP = 1200  # characters of one message at most
MAX_TOKENS = 900

INSTRUCTIONS = """You extract memories from an earlier chat history that a person brought with them. Only the
PERSON's own messages are shown (role "user"), grouped by conversation, each day under a line
"--- Monday, 2023-03-02 ---". Answer only with JSON: {"facts": [...], "content": [], "profile": [...], "people": [...]}.
- facts: short, atomic, lasting facts ABOUT THE PERSON that they said themselves (preferences, work, projects,
  habits, people in their life), in the language they wrote, in the third person ("Sie mag Jazz."), importance
  1-10, source_ids = ids of the messages that state it. Questions they asked another assistant ("how do I
  sort a list in Python?") are no facts about them. Leave "content" empty.
- profile: stable core facts (category "facts", "emotional" or "life_events"; key; value; source_ids).
- people: each person they mention (name, aliases, relation, facts naming them, same_as, relations, dates,
  source_ids), as in a live chat.
- Relative dates count from the day the message was written, not from today. Never invent anything;
  small talk and technical questions give empty lists."""

Progress = Callable[[int], None]  # conversations done so far (of the file's stream, including earlier runs)
Budget = Callable[[], Awaitable[bool]]  # asked before each model call: may background work go on today?
State = Literal["done", "already", "paused", "erased"]


@dataclass(frozen=True)
class ImportOutcome:
    """How an import run ended: read to the end, the file was imported before, paused by the token budget, or
    stopped because the person's memory was erased (/deleteme) while it ran."""

    state: State
    imported: HistoryImport
    queued: int = 0  # candidates queued in this run
    calls: int = 0  # background calls in this run
    tokens: int = 0


def file_hash(path: Path, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file's content, read in chunks (a file of GBs in bounded memory)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def spoken(conversation: HistoryConversation) -> tuple[HistoryMessage, ...]:
    """The person's own messages of a conversation with words in them: all the model is ever shown."""
    return tuple(m for m in conversation.messages if m.speaker == "person" and m.text.strip())


def groups(conversations: Iterable[HistoryConversation], per_call: int = BATCH) -> Iterator[list[HistoryConversation]]:
    """Whole conversations, packed so a group holds at most per_call of the person's messages (a longer
    conversation is a group of its own, read in several calls); the cursor moves by groups."""
    group: list[HistoryConversation] = []
    size = 0
    for conversation in conversations:
        count = len(spoken(conversation))
        if group and size + count > per_call:
            yield group
            group, size = [], 0
        group.append(conversation)
        size += count
    if group:
        yield group


@dataclass(frozen=True)
class Line:
    """One of the person's messages as the model sees it: its id in the call, and the conversation it is from."""

    message: Message
    conversation: HistoryConversation


def calls_of(group: Sequence[HistoryConversation], per_call: int = BATCH, chars: int = CALL_CHARS,
             clip_at: int = CLIP) -> list[list[Line]]:
    """The group's person messages, numbered from 1, cut into calls of at most per_call messages and ~chars."""
    calls: list[list[Line]] = [[]]
    size, number = 0, 0
    for conversation in group:
        for m in spoken(conversation):
            text = clip(m.text, clip_at)
            if calls[-1] and (len(calls[-1]) >= per_call or size + len(text) > chars):
                calls.append([])
                size = 0
            number += 1
            calls[-1].append(Line(Message(number, "user", text, m.at), conversation))
            size += len(text)
    return [c for c in calls if c]


def prompt(lines: Sequence[Line], zone: tzinfo) -> str:
    """The call's transcript: each conversation under its title, each day under its date, only the person's lines."""
    parts = []
    for conversation, run in groupby(lines, key=lambda ln: ln.conversation):
        title = clip(conversation.title, 120) or "Untitled"
        parts.append(f"=== {title} ===\n" + extraction.transcript([ln.message for ln in run], zone))
    return "\n\n".join(parts)


async def found_in(store: MemoryStore, scope: Scope, data: Any, lines: Sequence[Line], admission: Thresholds,
                   zone: tzinfo) -> list[NewCandidate]:
    """The candidates in the model's answer for one call, each with the original time and words it came from.

    Facts and people need one of the shown messages as their source (extraction's own checks); a fact the
    store already holds is marked as a duplicate, one that contradicts a note is marked with it, and small talk
    (what admission control would drop in a live chat) is left out.
    """
    messages = [ln.message for ln in lines]
    by_id = {ln.message.id: ln for ln in lines}

    def origin(ids: Sequence[int]) -> Line:
        return by_id[min(i for i in ids if i in by_id)]

    out: list[NewCandidate] = []
    for draft in extraction.accept(data, messages):
        if draft.kind != "fact":
            continue
        verdict = await store.admission.check(scope, draft.text, "fact", admission)
        if verdict.verdict == "drop" and verdict.reason != "duplicate":
            continue
        line = origin(draft.source_ids)
        out.append(_candidate("fact", draft.text, line, {"importance": draft.importance},
                              duplicate_of=verdict.other if verdict.verdict == "drop" else None,
                              contradicts=verdict.other if verdict.verdict == "contradiction" else None))
    known = {(e.category, e.key): e.value for e in await store.profile.list(scope)}
    for item in extraction.field_items(data, "profile"):
        for p in extraction.accept_profile({"profile": [item]}, messages):
            if known.get((p.category, p.key)) == p.value:
                continue
            ids = [i for i in item.get("source_ids") or [] if i in by_id]
            out.append(_candidate("profile", f"{p.key}: {p.value}", origin(ids),
                                  {"category": p.category, "key": p.key, "value": p.value}))
    for person in extraction.accept_people(data, messages):
        line = origin(person.source_ids)
        named = person.person
        head = named.name + (f" ({named.relation})" if named.relation else "")
        out.append(_candidate("person", " – ".join([head, *person.facts]), line, {
            "name": named.name, "aliases": list(named.aliases), "relation": named.relation, "same_as": named.same_as,
            "facts": list(person.facts), "links": [list(link) for link in person.links],
            "dates": [[d.kind, d.month, d.day, d.year] for d in person.dates]}))
    return out


def by_conversation(found: Sequence[NewCandidate], group: Sequence[HistoryConversation]) -> list[NewCandidate]:
    """The candidates of a group conversation by conversation, in the group's order (a call's facts, profile entries
    and people of several conversations come mixed): queued so, /review shows a conversation's suggestions together."""
    order = {conversation.key: i for i, conversation in enumerate(group)}
    return sorted(found, key=lambda c: order.get(c.conversation_key, len(order)))


def _candidate(kind: Any, text: str, line: Line, data: dict[str, Any], duplicate_of: int | None = None,
               contradicts: int | None = None) -> NewCandidate:
    return NewCandidate(kind, text, line.message.created_at.timestamp(), line.conversation.key,
                        clip(line.conversation.title, 120), clip(line.message.text, 300), data, duplicate_of,
                        contradicts)


async def run_import(
    store: MemoryStore, llm: LLM, scope: Scope, conversations: Iterable[HistoryConversation], *, digest: str,
    source: str, name: str, options: dict[str, Any] | None = None, zone: tzinfo = UTC,
    may_continue: Budget | None = None, on_progress: Progress | None = None, admission: Thresholds | None = None,
) -> ImportOutcome:
    """Read the conversations after the import's cursor and queue what the model finds in the person's words.

    The same file (by `digest`) read to the end before: nothing happens. A model failure raises with the cursor
    before the group it was reading (the next run reads it again); an answer that is not the JSON asked for is
    logged, counted and skipped. When may_continue says no (the day's token budget), the run stops before the
    call and says "paused"; the next run goes on from the cursor.
    """
    admission = admission or Thresholds()
    imported = await store.imports.find(scope, digest)
    if imported is not None and imported.finished_at is not None:
        return ImportOutcome("already", imported)
    if imported is None:
        imported = await store.imports.start(scope, digest, source, name, options or {})
    done, queued, calls, tokens = imported.conversations_done, 0, 0, 0
    skipped = (c for i, c in enumerate(conversations) if i >= imported.conversations_done)
    for group in groups(skipped):
        found: list[NewCandidate] = []
        failed, group_calls = 0, 0
        # a group at a time under the scope's learning lock (this may be `mnemo import-history`, another process):
        # /deleteme waits for the group in flight, and the next group finds the import erased
        async with store.learning_locks.hold(scope):
            try:
                await store.imports.get(scope, imported.id)
            except NotFound:
                log.info("import %s: the person's memory was erased meanwhile; nothing more is read", imported.id)
                return ImportOutcome("erased", imported, queued, calls, tokens)
            for lines in calls_of(group):
                if may_continue is not None and not await may_continue():
                    return ImportOutcome("paused", await store.imports.get(scope, imported.id), queued, calls, tokens)
                completion = await llm.complete(
                    CompletionRequest([ChatMessage("user", prompt(lines, zone))], system=[SystemBlock(INSTRUCTIONS)],
                    json_schema=extraction.SCHEMA, max_tokens=MAX_TOKENS))
                group_calls += 1
                tokens += completion.usage.input_tokens + completion.usage.output_tokens
                try:
                    found += await found_in(store, scope, completion.json(), lines, admission, zone)
                except LLMBadOutput:
                    failed += 1
                    await store.failures.add("import.bad_json")
                    log.warning("import %s: an answer was not the JSON asked for; its messages are skipped",
                                imported.id, exc_info=True)
            read = sum(len(spoken(c)) for c in group)
            queued += await store.imports.advance(scope, imported.id, by_conversation(found, group),
                                                  conversations=len(group),
                                                  last_key=group[-1].key, messages=read, calls=group_calls,
                                                  failed=failed)
        calls += group_calls
        done += len(group)
        if on_progress is not None:
            on_progress(done)
    finished = await store.imports.finish(scope, imported.id)
    return ImportOutcome("done", finished, queued, calls, tokens)
