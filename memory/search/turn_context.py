"""A message read in context: the end of the message before it, then itself (issue 54, "context around turns").

A short answer ("Ja, genau das hab ich gemacht") does not say what it is about; the message before it does. A
message's vectors (e5's and USE's) are made of `context_text(before, text)`: the last `CONTEXT_CHARS` characters of
the previous message of the same scope (any role, whatever the time between them), a newline, then the message. Its
full-text entries and `docs.text` stay its own words, and its document's `content_hash` is the hash of the text its
vectors were made of, so the embedding cache keeps one vector per message in context (`memory.search.index`).
Measured in bench/fusion.py (docs/benchmarks.md, "Fusion that never loses to its best part"): on LoCoMo, with the
weights chosen with it, cross-validated, any@10 0.838 -> 0.861, MRR 0.626 -> 0.645; the turn before won over the two
before and over the turns before and after, and context for every message over context for short ones only. Notes,
thoughts, people and profile entries have no turn before them and are embedded as they are.

"The message before" is the previous one in the log's order (its id) with any words: a message logged without text
(a sticker) is nobody's context.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory.search.search_text import content_hash
from memory.storage.db import Database, Tx

if TYPE_CHECKING:  # the index's module reads this one's (through the second signal's filling)
    from memory.search.index import SearchIndex

CONTEXT_CHARS = 300  # of the message before, the end that is read with a message (the measured form)
CAUGHT_UP_KEY = "turns_in_context_after"  # meta: the message documents up to this id are in context (m053's catch-up)
CAUGHT_UP_UNTIL = "turns_in_context_until"  # meta: the last message document stored before m053


def context_text(before: str | None, text: str) -> str:
    """A message as it is embedded: the end of the message before it, a newline, then itself."""
    if not before or not before.strip():
        return text
    return before[-CONTEXT_CHARS:] + "\n" + text


async def before_text(tx: Tx, scope_id: int, before_id: int | None = None) -> str | None:
    """The text of the last message with words in a scope (before the message `before_id`, when given)."""
    row = await tx.fetchone("SELECT text FROM messages WHERE scope_id = ? AND (? IS NULL OR id < ?)"
                            " AND trim(text) != '' ORDER BY id DESC LIMIT 1", (scope_id, before_id, before_id))
    return None if row is None else str(row[0])


async def next_message(tx: Tx, scope_id: int, after_id: int) -> tuple[int, str, int | None] | None:
    """(id, text, doc_id) of the first message with words after the message `after_id`: the one that reads it."""
    row = await tx.fetchone("SELECT id, text, doc_id FROM messages WHERE scope_id = ? AND id > ? AND trim(text) != ''"
                            " ORDER BY id LIMIT 1", (scope_id, after_id))
    return None if row is None else (int(row[0]), str(row[1]), row[2])


async def embedded_texts(tx: Tx, message_ids: Sequence[int]) -> dict[int, str]:
    """The text each of these messages is embedded from (`context_text` of it and the message before)."""
    if not message_ids:
        return {}
    rows = await tx.fetchall(
        "SELECT m.id, m.text, (SELECT p.text FROM messages p WHERE p.scope_id = m.scope_id AND p.id < m.id"
        " AND trim(p.text) != '' ORDER BY p.id DESC LIMIT 1) FROM json_each(?) j CROSS JOIN messages m"
        " ON m.id = j.value", (json.dumps(sorted(set(message_ids))),))
    return {int(r[0]): context_text(r[2], str(r[1])) for r in rows}


async def document_texts(tx: Tx, rows: Sequence[tuple[int, str, int, str]]) -> list[str]:
    """The text each document (doc id, source, item id, text) is embedded from: a message's in context, the rest
    their own (`mnemo reindex`, the second signal's filling)."""
    contexts = await embedded_texts(tx, [item for _, source, item, _ in rows if source == "message"])
    return [contexts.get(item, text) if source == "message" else text for _, source, item, text in rows]


async def in_context(db: Database, index: SearchIndex, message_ids: Sequence[int], tries: int = 3) -> int:
    """Re-embed those of these messages whose vectors were made of another text than they are read in now (the
    message before them changed, or they were stored before m053); returns how many were re-embedded.

    Embedded outside the transaction; a message whose context moved again meanwhile is read again (`tries` rounds).
    """
    done, todo = 0, sorted(set(message_ids))
    for _ in range(tries):
        async with db.reading() as tx:
            wanted = await embedded_texts(tx, todo)
            stored = dict(await tx.fetchall(
                "SELECT m.id, d.content_hash FROM json_each(?) j CROSS JOIN messages m ON m.id = j.value"
                " JOIN docs d ON d.id = m.doc_id", (json.dumps(todo),)))
        stale = {m: t for m, t in wanted.items() if m in stored and stored[m] != content_hash(t)}
        if not stale:
            break
        vectors = await index.embed(list(stale.values()))
        async with db.transaction() as tx:
            now = await embedded_texts(tx, list(stale))
            for (msg_id, read), vector in zip(stale.items(), vectors):
                row = await tx.fetchone(f"SELECT doc_id, text FROM messages WHERE id = ?{db.FOR_UPDATE}", (msg_id,))
                if row is not None and row[0] is not None and now.get(msg_id) == read:
                    await index.update(tx, row[0], row[1], vector, embedded=read)
                    done += 1
        todo = [m for m in stale if now.get(m) != stale[m]]
        if not todo:
            break
    return done


async def catch_up(db: Database, index: SearchIndex, batch: int = 64,
                   max_batches: int | None = None) -> tuple[int, bool]:
    """Read the messages stored before m053 in context, a batch per transaction, from where the last run stopped
    (resumable; a turn never waits for it); (messages re-embedded, whether none is left). Done, it leaves no mark."""
    done, batches = 0, 0
    while max_batches is None or batches < max_batches:
        async with db.reading() as tx:
            marks = dict(await tx.fetchall("SELECT key, value FROM meta WHERE key IN (?, ?)",
                                           (CAUGHT_UP_KEY, CAUGHT_UP_UNTIL)))
            if CAUGHT_UP_UNTIL not in marks:
                return done, True
            after, until = int(marks.get(CAUGHT_UP_KEY, 0)), int(marks[CAUGHT_UP_UNTIL])
            rows = await tx.fetchall("SELECT id, item_id FROM docs WHERE source = 'message' AND id > ? AND id <= ?"
                                     " ORDER BY id LIMIT ?", (after, until, batch))
        done += await in_context(db, index, [r[1] for r in rows])
        async with db.transaction() as tx:
            if rows:
                await tx.execute("UPDATE meta SET value = ? WHERE key = ?", (str(rows[-1][0]), CAUGHT_UP_KEY))
            else:
                await tx.execute("DELETE FROM meta WHERE key IN (?, ?)", (CAUGHT_UP_KEY, CAUGHT_UP_UNTIL))
                return done, True
        batches += 1
    return done, False
