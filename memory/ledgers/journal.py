"""The verbatim session log: every message in and out, written before anything else happens."""
from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.errors import MemoryStoreError, NotFound
from memory.models import SENT_KINDS, Message, Scope, ts
from memory.search.index import SearchIndex
from memory.search.turn_context import before_text, catch_up, context_text, embedded_texts, in_context, next_message
from memory.storage.db import Database

log = logging.getLogger(__name__)

_COLUMNS = "id, role, text, created_at, channel, channel_message_id, proactive, origin, kind"


def _message(row: Any) -> Message:
    id_, role, text, created, channel, channel_id, proactive, origin, kind = row
    return Message(id_, role, text, ts(created), channel, channel_id, bool(proactive), origin,  # type: ignore[arg-type]
                   kind)


@dataclass(frozen=True)
class NewMessage:
    """A message to log in bulk."""

    role: str
    text: str
    created_at: float
    channel: str = ""
    channel_message_id: str | None = None
    origin: str = "text"
    kind: str = ""  # the companion's: what it sent; '' takes `sent_kind`'s


def sent_kind(role: str, kind: str, proactive: bool = False, channel: str = "") -> str:
    """The kind a message is logged with: the person's none; the companion's its own (`SENT_KINDS`), else as rows
    logged before kinds were kept are read (m050): a check-in by `proactive`, another push by its channel, a reply."""
    if role != "assistant":
        return ""
    if kind:
        if kind not in SENT_KINDS:
            raise ValueError(f"unknown kind of the companion's message {kind!r}; known: {sorted(SENT_KINDS)}")
        return kind
    return "checkin" if proactive else "push" if channel == "proactive" else "reply"


class Journal:
    """Append and read the session log; messages are also indexed for recall."""

    def __init__(self, db: Database, index: SearchIndex) -> None:
        self.db = db
        self.index = index
        self._behind: set[int] = set()  # scopes with a message this process logged unindexed

    async def add(
        self, scope: Scope, role: str, text: str, *, channel: str = "", channel_message_id: str | None = None,
        created_at: float | None = None, proactive: bool = False, index: bool = True, origin: str = "text",
        kind: str = "",
    ) -> Message:
        """Log a message with its search entry in one transaction; when embedding fails it is logged unindexed.

        One transaction, so a crash never leaves a logged message without its vector and full-text entries.
        `origin` says how the person sent it ('text', 'voice': `text` is then the voice note's transcript), `kind`
        what the companion sent (`memory.SENT_KINDS`: every message of the companion's carries one).
        """
        kind = sent_kind(role, kind, proactive, channel)
        now = time.time() if created_at is None else created_at
        vector, embedded, moved = None, text, False
        if index and text.strip():
            try:
                async with self.db.reading() as tx:  # read in context (`memory.search.turn_context`)
                    embedded = context_text(await before_text(tx, scope.id), text)
                vector = (await self.index.embed([embedded]))[0]
            except MemoryStoreError:
                log.exception("embedding a %s message failed; it is logged and indexed later", role)
                self._behind.add(scope.id)
        names = ["scope_id", "role", "text", "created_at", "channel", "channel_message_id", "proactive"]
        values: list[Any] = [scope.id, role, text, now, channel, channel_message_id, int(proactive)]
        if origin != "text":  # a typed message takes the column's default
            names.append("origin")
            values.append(origin)
        if kind:
            names.append("kind")
            values.append(kind)
        async with self.db.transaction() as tx:
            msg_id = await tx.execute(
                f"INSERT INTO messages({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", tuple(values))
            if vector is not None:
                doc = await self.index.add(tx, scope.id, "message", msg_id, text, vector, now, embedded=embedded)
                await tx.execute("UPDATE messages SET doc_id = ? WHERE id = ?", (doc, msg_id))
                moved = context_text(await before_text(tx, scope.id, msg_id), text) != embedded
        if vector is not None and moved:  # another message was logged between the reading and this one
            await self._read_again([msg_id])
        if vector is not None and scope.id in self._behind:  # the embedder is back: what waited is indexed now
            self._behind.discard(scope.id)
            try:
                await self.index_unindexed(scope.id)
            except MemoryStoreError:
                log.exception("indexing the messages logged unindexed failed; they wait for the next message")
                self._behind.add(scope.id)
        return Message(msg_id, role, text, ts(now), channel, channel_message_id, proactive,  # type: ignore[arg-type]
                       origin, kind)

    async def index_unindexed(self, scope_id: int | None = None, batch: int = 64) -> int:
        """Index the messages logged without their search entry (the embedder failed then), of one scope or all;
        returns how many this call indexed. An embedding failure stops it where it is (raised)."""
        done, last = 0, -1
        scoped = "" if scope_id is None else f" AND scope_id = {int(scope_id)}"
        while True:
            async with self.db.reading() as tx:
                rows = await tx.fetchall(
                    "SELECT id, scope_id, text, created_at FROM messages WHERE doc_id IS NULL AND trim(text) != ''"
                    f"{scoped} AND id > ? ORDER BY id LIMIT ?", (last, batch))
            if not rows:
                return done
            async with self.db.reading() as tx:
                contexts = await embedded_texts(tx, [r[0] for r in rows])
            embedded = [contexts.get(r[0], r[2]) for r in rows]
            vectors = await self.index.embed(embedded)
            async with self.db.transaction() as tx:
                added = []
                for (msg_id, scope, text, created), vector, read in zip(rows, vectors, embedded):
                    # Locked (PostgreSQL): another worker indexing the same message meanwhile waits, then sees it done.
                    row = await tx.fetchone(f"SELECT doc_id FROM messages WHERE id = ?{self.db.FOR_UPDATE}", (msg_id,))
                    if row is not None and row[0] is None:
                        doc = await self.index.add(tx, scope, "message", msg_id, text, vector, created, embedded=read,
                                                   second=False)
                        await tx.execute("UPDATE messages SET doc_id = ? WHERE id = ?", (doc, msg_id))
                        added.append((doc, read))  # not one another worker indexed meanwhile, nor one deleted
                await self.index.add_second(tx, added)
            done += len(added)
            last = rows[-1][0]

    async def catch_up_context(self, batch: int = 64, max_batches: int | None = None) -> tuple[int, bool]:
        """Re-embed the messages stored before they were read in context (`memory.search.turn_context.catch_up`);
        (messages re-embedded, whether none is left)."""
        return await catch_up(self.db, self.index, batch, max_batches)

    async def rewrite(self, scope: Scope, message_id: int, text: str) -> bool:
        """Replace a logged message's text and its search entry in one transaction (a photo's description added); the
        next message, which is read after this one (`memory.search.turn_context`), gets its new vector in it too.

        False when the new text cannot be embedded (logged): the message keeps its text, so it and its entry agree.
        """
        async with self.db.reading() as tx:
            embedded = context_text(await before_text(tx, scope.id, message_id), text)
            after = await next_message(tx, scope.id, message_id)
        reads = [embedded] + ([context_text(text, after[1])] if after is not None and after[2] is not None else [])
        try:
            vectors = await self.index.embed(reads)
        except MemoryStoreError:
            log.exception("embedding the new text of message %s failed; it keeps its old text", message_id)
            return False
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT doc_id, created_at FROM messages WHERE id = ? AND scope_id = ?",
                                    (message_id, scope.id))
            if row is None:
                raise NotFound(f"no message {message_id} in this scope")
            await tx.execute("UPDATE messages SET text = ? WHERE id = ?", (text, message_id))
            if row[0] is not None:
                await self.index.update(tx, row[0], text, vectors[0], embedded=embedded)
            else:
                doc = await self.index.add(tx, scope.id, "message", message_id, text, vectors[0], row[1],
                                           embedded=embedded)
                await tx.execute("UPDATE messages SET doc_id = ? WHERE id = ?", (doc, message_id))
            neighbour = await next_message(tx, scope.id, message_id)
            if after is not None and neighbour == after and after[2] is not None:
                await self.index.update(tx, after[2], after[1], vectors[1], embedded=reads[1])
            moved = context_text(await before_text(tx, scope.id, message_id), text) != embedded
        stale = ([message_id] if moved else []) + ([neighbour[0]] if neighbour and neighbour != after else [])
        if stale:  # a message logged or rewritten meanwhile
            await self._read_again(stale)
        return True

    async def _read_again(self, message_ids: list[int]) -> None:
        """Re-embed messages whose context moved while they were written; a failing embedder leaves them as they are
        (logged: they are found by their words and their vector of before)."""
        try:
            await in_context(self.db, self.index, message_ids)
        except MemoryStoreError:
            log.exception("re-embedding messages %s in their new context failed", message_ids)

    async def add_many(self, scope: Scope, items: Sequence[NewMessage]) -> list[Message]:
        """Log and index many messages with one batched embedding and one transaction; each is read after the one
        before it, the first after the last message logged before them."""
        async with self.db.reading() as tx:
            before = await before_text(tx, scope.id)
        embedded = []
        for item in items:
            embedded.append(context_text(before, item.text))
            before = item.text if item.text.strip(" ") else before  # as SQL's trim(): spaces only
        vectors = await self.index.embed(embedded)
        out, added = [], []
        async with self.db.transaction() as tx:
            for item, vector, read in zip(items, vectors, embedded):
                kind = sent_kind(item.role, item.kind, channel=item.channel)
                msg_id = await tx.execute(
                    "INSERT INTO messages(scope_id, role, text, created_at, channel, channel_message_id, origin, kind)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (scope.id, item.role, item.text, item.created_at, item.channel, item.channel_message_id,
                     item.origin, kind),
                )
                doc = await self.index.add(tx, scope.id, "message", msg_id, item.text, vector, item.created_at,
                                           embedded=read, second=False)
                await tx.execute("UPDATE messages SET doc_id = ? WHERE id = ?", (doc, msg_id))
                added.append((doc, read))
                out.append(Message(msg_id, item.role, item.text, ts(item.created_at),  # type: ignore[arg-type]
                                   item.channel, item.channel_message_id, origin=item.origin, kind=kind))
            await self.index.add_second(tx, added)
        if out:  # the first, when a message was logged meanwhile
            await self._read_again([out[0].id])
        return out

    async def get(self, scope: Scope, message_id: int) -> Message | None:
        """One message of this scope."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(f"SELECT {_COLUMNS} FROM messages WHERE id = ? AND scope_id = ?",
                                    (message_id, scope.id))
        return _message(row) if row else None

    async def by_channel_id(self, scope: Scope, channel: str, channel_message_id: str) -> Message | None:
        """The user message that arrived with this channel id, if it was logged before."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ? AND channel = ? AND channel_message_id = ?"
                " AND role = 'user'", (scope.id, channel, channel_message_id),
            )
        return _message(row) if row else None

    async def recent(self, scope: Scope, limit: int = 20, before_id: int | None = None) -> list[Message]:
        """The last `limit` messages, oldest first."""
        sql = f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ?"
        args: list[Any] = [scope.id]
        if before_id is not None:
            sql += " AND id < ?"
            args.append(before_id)
        async with self.db.reading() as tx:
            rows = await tx.fetchall(sql + " ORDER BY id DESC LIMIT ?", (*args, limit))
        return [_message(r) for r in reversed(rows)]

    async def after(self, scope: Scope, after_id: int, limit: int, before_id: int | None = None) -> list[Message]:
        """The first `limit` messages after the message `after_id` (and before `before_id`), oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ? AND id > ? AND (? IS NULL OR id < ?)"
                " ORDER BY id LIMIT ?", (scope.id, after_id, before_id, before_id, limit),
            )
        return [_message(r) for r in rows]

    async def first(self, scope: Scope, limit: int = 2) -> list[Message]:
        """The first messages ever exchanged in this scope."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ? ORDER BY id LIMIT ?",
                                     (scope.id, limit))
        return [_message(r) for r in rows]

    async def between(self, scope: Scope, start: float, end: float, limit: int = 200) -> list[Message]:
        """Messages in [start, end), oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ? AND created_at >= ? AND created_at < ?"
                " ORDER BY created_at, id LIMIT ?", (scope.id, start, end, limit),
            )
        return [_message(r) for r in rows]

    async def listing(self, scope: Scope, words: Sequence[str] = (), start: float | None = None,
                      end: float | None = None, limit: int = 20, offset: int = 0) -> list[Message]:
        """Messages newest first, containing every one of `words` (any case, umlauts too) and in [start, end) where
        given."""
        sql = f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ?"
        args: list[Any] = [scope.id]
        for word in words:
            sql += " AND fold(text) LIKE ? ESCAPE '\\'"
            folded = word.casefold()
            args.append("%" + folded.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if start is not None:
            sql += " AND created_at >= ?"
            args.append(start)
        if end is not None:
            sql += " AND created_at < ?"
            args.append(end)
        async with self.db.reading() as tx:
            rows = await tx.fetchall(sql + " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                                     (*args, limit, offset))
        return [_message(r) for r in rows]

    async def present(self, scope: Scope, message_ids: Sequence[int]) -> bool:
        """Whether every one of these messages is still in the scope (a learning run's input, before it writes)."""
        ids = sorted(set(message_ids))
        if not ids:
            return True
        async with self.db.reading() as tx:
            marks = ", ".join("?" * len(ids))
            row = await tx.fetchone(f"SELECT count(*) FROM messages WHERE scope_id = ? AND id IN ({marks})",
                                    (scope.id, *ids))
        return int(row[0]) == len(ids)

    async def count(self, scope: Scope) -> int:
        """How many messages the scope holds."""
        async with self.db.reading() as tx:
            return int((await tx.fetchone("SELECT count(*) FROM messages WHERE scope_id = ?", (scope.id,)))[0])

    async def last_proactive(self, scope: Scope) -> Message | None:
        """The newest message the companion sent on its own."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ? AND proactive = 1 ORDER BY id DESC LIMIT 1",
                (scope.id,),
            )
        return _message(row) if row else None

    async def last_user_message(self, scope: Scope, before_id: int | None = None) -> Message | None:
        """The newest message the user wrote (before the message `before_id`, when given)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ? AND role = 'user' AND (? IS NULL OR id < ?)"
                " ORDER BY id DESC LIMIT 1", (scope.id, before_id, before_id),
            )
        return _message(row) if row else None

    async def reply_to(self, scope: Scope, channel: str, channel_message_id: str) -> Message | None:
        """The reply recorded for the user message that arrived with this channel id, if there is one.

        Replies carry the id of the message they answer; for replies logged before they did, the next
        reply on the same channel counts.
        """
        async with self.db.reading() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM messages WHERE scope_id = ? AND role = 'assistant' AND channel = ?"
                " AND (channel_message_id = ? OR (channel_message_id IS NULL AND id > (SELECT id FROM messages"
                " WHERE scope_id = ? AND channel = ? AND channel_message_id = ? AND role = 'user')))"
                " ORDER BY channel_message_id IS NULL, id LIMIT 1",
                (scope.id, channel, channel_message_id, scope.id, channel, channel_message_id),
            )
        return _message(row) if row else None

    async def proactive_texts_since(self, scope: Scope, since: float) -> list[str]:
        """Texts the companion sent on its own (check-ins, pushes) since `since`, newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT text FROM messages WHERE scope_id = ? AND role = 'assistant'"
                " AND (proactive = 1 OR channel = 'proactive') AND created_at >= ? ORDER BY id DESC",
                (scope.id, since),
            )
        return [str(r[0]) for r in rows]

    async def checkin_times(self, scope: Scope, limit: int) -> list[float]:
        """When the newest `limit` check-ins were sent (the messages logged as proactive), newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT created_at FROM messages WHERE scope_id = ? AND proactive = 1"
                                     " ORDER BY id DESC LIMIT ?", (scope.id, limit))
        return [float(r[0]) for r in rows]

    async def user_message_times(self, scope: Scope, since: float) -> list[float]:
        """When the person wrote, from `since` on, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT created_at FROM messages WHERE scope_id = ? AND role = 'user'"
                                     " AND created_at >= ? ORDER BY created_at", (scope.id, since))
        return [float(r[0]) for r in rows]
