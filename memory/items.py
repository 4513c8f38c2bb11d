"""Profile entries, thoughts, diary entries, open topics and learned rules."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory import audit
from memory.db import Database, Tx
from memory.errors import NotFound
from memory.index import SearchIndex
from memory.models import DiaryEntry, LearnedRule, OpenTopic, ProfileEntry, Scope, Source, Thought, ts


async def _insert_indexed(
    tx: Tx, index: SearchIndex, scope: Scope, table: str, source: Source, values: dict[str, Any],
    text: str, vector: Any, now: float, processing: str, reason: str,
) -> int:
    """Insert a row, index its text, link the document, and audit the creation; all in tx."""
    cols = ", ".join(["scope_id", *values])
    marks = ", ".join("?" * (len(values) + 1))
    item_id = await tx.execute(f"INSERT INTO {table}({cols}) VALUES ({marks})", (scope.id, *values.values()))
    doc_id = await index.add(tx, scope.id, source, item_id, text, vector, now)
    await tx.execute(f"UPDATE {table} SET doc_id = ? WHERE id = ?", (doc_id, item_id))
    await audit.record(tx, scope.id, processing, "create", source, item_id, after={"id": item_id, **values},
                       reason=reason)
    return item_id


async def _edit_text(
    db: Database, index: SearchIndex, scope: Scope, table: str, source: Source, item_id: int, text: str,
    make: Callable[[Any], Any], *, processing: str, reason: str, final: bool,
) -> Any:
    """Set an item's text with its document and vector, or delete both for an empty text; audited, in one transaction.

    Returns the item after the change (None when deleted). With `final`, the change is an erasure: the
    audit entry says that the item was rewritten, never what it said before.
    """
    text = text.strip()
    vector = (await index.embed([text]))[0] if text else None
    columns = "id, day, text, created_at" if table == "diary_entries" else "id, text, origin, created_at"
    async with db.transaction() as tx:
        row = await tx.fetchone(f"SELECT {columns}, doc_id FROM {table} WHERE id = ? AND scope_id = ?",
                                (item_id, scope.id))
        if row is None:
            raise NotFound(f"{source} {item_id}")
        before, doc_id = make(row[:-1]), row[-1]
        after = None
        if vector is not None:
            await tx.execute(f"UPDATE {table} SET text = ? WHERE id = ?", (text, item_id))
            if doc_id is not None:
                await index.update(tx, doc_id, text, vector)
            after = make(await tx.fetchone(f"SELECT {columns} FROM {table} WHERE id = ?", (item_id,)))
        else:
            if doc_id is not None:
                await index.remove(tx, doc_id)
            await tx.execute(f"DELETE FROM {table} WHERE id = ?", (item_id,))
        if final:
            await audit.record(tx, scope.id, processing, audit.ERASE, source, item_id, reason=reason)
        else:
            await audit.record(tx, scope.id, processing, "update" if text else "delete", source, item_id,
                               before=before, after=after, reason=reason)
    return after


class Profile:
    """Structured facts that always go into the prompt."""

    _COLS = "id, category, key, value, importance, updated_at"

    def __init__(self, db: Database, index: SearchIndex) -> None:
        self.db, self.index = db, index

    async def set(
        self, scope: Scope, category: str, key: str, value: str, *, importance: int = 5,
        processing: str | None = None, reason: str = "",
    ) -> ProfileEntry:
        """Create or replace the entry category/key."""
        text = f"{key}: {value}"
        vector = (await self.index.embed([text]))[0]
        processing = processing or audit.new_processing("profile")
        now = time.time()
        async with self.db.transaction() as tx:
            old = await tx.fetchone(
                f"SELECT {self._COLS}, doc_id FROM profile_entries WHERE scope_id = ? AND category = ? AND key = ?",
                (scope.id, category, key),
            )
            if old is None:
                values = {"category": category, "key": key, "value": value, "importance": importance,
                          "created_at": now, "updated_at": now}
                item_id = await _insert_indexed(tx, self.index, scope, "profile_entries", "profile", values,
                                                text, vector, now, processing, reason)
            else:
                item_id = old[0]
                await tx.execute("UPDATE profile_entries SET value = ?, importance = ?, updated_at = ? WHERE id = ?",
                                 (value, importance, now, item_id))
                await self.index.update(tx, old[-1], text, vector, importance)
                await audit.record(tx, scope.id, processing, "update", "profile", item_id,
                                   before=_profile(old[:-1]), after={"value": value}, reason=reason)
            row = await tx.fetchone(f"SELECT {self._COLS} FROM profile_entries WHERE id = ?", (item_id,))
        return _profile(row)

    async def list(self, scope: Scope) -> list[ProfileEntry]:
        """All entries, most important and newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {self._COLS} FROM profile_entries WHERE scope_id = ?"
                " ORDER BY importance DESC, updated_at DESC",
                (scope.id,),
            )
        return [_profile(r) for r in rows]

    async def propose(self, scope: Scope, category: str, key: str, value: str) -> PendingProfile:
        """Hold a new profile fact until the user says yes (once per category/key)."""
        now = time.time()
        async with self.db.transaction() as tx:
            same = await tx.fetchone("SELECT id FROM pending_profile WHERE scope_id = ? AND category = ? AND key = ?",
                                     (scope.id, category, key))
            if same:
                await tx.execute("UPDATE pending_profile SET value = ? WHERE id = ?", (value, same[0]))
                return PendingProfile(same[0], category, key, value)
            item_id = await tx.execute(
                "INSERT INTO pending_profile(scope_id, category, key, value, created_at) VALUES (?, ?, ?, ?, ?)",
                (scope.id, category, key, value, now),
            )
        return PendingProfile(item_id, category, key, value)

    async def pending(self, scope: Scope) -> PendingProfile | None:
        """The oldest profile fact waiting for a yes, if any."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT id, category, key, value FROM pending_profile WHERE scope_id = ?"
                                    " ORDER BY id LIMIT 1", (scope.id,))
        return PendingProfile(*row) if row else None

    async def pending_fact(self, scope: Scope, pending_id: int) -> PendingProfile:
        """One profile fact waiting for a yes, or NotFound."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT id, category, key, value FROM pending_profile WHERE id = ?"
                                    " AND scope_id = ?", (pending_id, scope.id))
        if row is None:
            raise NotFound(f"pending profile fact {pending_id}")
        return PendingProfile(*row)

    async def is_pending(self, scope: Scope, pending_id: int) -> bool:
        """Whether this profile fact still waits for a yes or no."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT 1 FROM pending_profile WHERE id = ? AND scope_id = ?",
                                    (pending_id, scope.id))
        return row is not None

    async def decide(self, scope: Scope, pending_id: int, accept: bool) -> PendingProfile:
        """Store the pending fact (yes) or drop it (no); NotFound when it is not waiting any more."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT id, category, key, value FROM pending_profile"
                                    " WHERE id = ? AND scope_id = ?", (pending_id, scope.id))
            if row is None:
                raise NotFound(f"pending profile fact {pending_id}")
            await tx.execute("DELETE FROM pending_profile WHERE id = ?", (pending_id,))
        fact = PendingProfile(*row)
        if accept:
            await self.set(scope, fact.category, fact.key, fact.value, reason="consent")
        return fact

    async def delete(self, scope: Scope, entry_id: int, *, processing: str | None = None,
                     reason: str = "") -> ProfileEntry:
        """Delete an entry with its index entries."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone(f"SELECT {self._COLS}, doc_id FROM profile_entries WHERE id = ? AND scope_id = ?",
                                    (entry_id, scope.id))
            if row is None:
                raise NotFound(f"profile entry {entry_id}")
            if row[-1] is not None:
                await self.index.remove(tx, row[-1])
            await tx.execute("DELETE FROM profile_entries WHERE id = ?", (entry_id,))
            entry = _profile(row[:-1])
            await audit.record(tx, scope.id, processing or audit.new_processing("forget"), "delete", "profile",
                               entry_id, before=entry, reason=reason)
        return entry


@dataclass(frozen=True)
class PendingProfile:
    """A profile fact waiting for the user's yes."""

    id: int
    category: str
    key: str
    value: str


def _profile(row: Any) -> ProfileEntry:
    return ProfileEntry(row[0], row[1], row[2], row[3], row[4], ts(row[5]))  # type: ignore[arg-type]


class Thoughts:
    """What the companion concluded while reflecting."""

    def __init__(self, db: Database, index: SearchIndex) -> None:
        self.db, self.index = db, index

    async def add(
        self, scope: Scope, text: str, *, origin: str = "", processing: str | None = None,
        created_at: float | None = None,
    ) -> Thought:
        """Store and index a thought."""
        vector = (await self.index.embed([text]))[0]
        now = time.time() if created_at is None else created_at
        async with self.db.transaction() as tx:
            item_id = await _insert_indexed(tx, self.index, scope, "thoughts", "thought",
                                            {"text": text, "origin": origin, "created_at": now},
                                            text, vector, now, processing or audit.new_processing("thought"), origin)
        return Thought(item_id, text, origin, ts(now))  # type: ignore[arg-type]

    async def delete(self, scope: Scope, thought_id: int, *, processing: str | None = None,
                     reason: str = "") -> Thought:
        """Delete a thought with its index entries."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT id, text, origin, created_at, doc_id FROM thoughts"
                                    " WHERE id = ? AND scope_id = ?", (thought_id, scope.id))
            if row is None:
                raise NotFound(f"thought {thought_id}")
            if row[4] is not None:
                await self.index.remove(tx, row[4])
            await tx.execute("DELETE FROM thoughts WHERE id = ?", (thought_id,))
            thought = Thought(row[0], row[1], row[2], ts(row[3]))  # type: ignore[arg-type]
            await audit.record(tx, scope.id, processing or audit.new_processing("forget"), "delete", "thought",
                               thought_id, before=thought, reason=reason)
        return thought

    async def edit(
        self, scope: Scope, thought_id: int, text: str, *, processing: str | None = None, reason: str = "",
        final: bool = False,
    ) -> Thought | None:
        """Change a thought's text (re-indexed, audited); an empty text deletes it (None).

        final: an erasure, whose audit entry does not keep the old text (so /undo cannot bring it back).
        """
        thought: Thought | None = await _edit_text(
            self.db, self.index, scope, "thoughts", "thought", thought_id, text, _thought,
            processing=processing or audit.new_processing("edit"), reason=reason, final=final)
        return thought

    async def all(self, scope: Scope) -> list[Thought]:
        """Every thought of the scope, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT id, text, origin, created_at FROM thoughts WHERE scope_id = ? ORDER BY id",
                                     (scope.id,))
        return [_thought(r) for r in rows]

    async def latest(self, scope: Scope, limit: int = 3) -> list[Thought]:
        """The newest thoughts, newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT id, text, origin, created_at FROM thoughts WHERE scope_id = ?"
                                     " ORDER BY id DESC LIMIT ?", (scope.id, limit))
        return [Thought(r[0], r[1], r[2], ts(r[3])) for r in rows]  # type: ignore[arg-type]


class Diary:
    """The companion's diary; entries are never deduplicated."""

    def __init__(self, db: Database, index: SearchIndex) -> None:
        self.db, self.index = db, index

    async def add(
        self, scope: Scope, day: str, text: str, *, processing: str | None = None, created_at: float | None = None,
    ) -> DiaryEntry:
        """Store and index one entry."""
        vector = (await self.index.embed([text]))[0]
        now = time.time() if created_at is None else created_at
        async with self.db.transaction() as tx:
            item_id = await _insert_indexed(tx, self.index, scope, "diary_entries", "diary",
                                            {"day": day, "text": text, "created_at": now},
                                            text, vector, now, processing or audit.new_processing("diary"), "diary")
        return DiaryEntry(item_id, day, text, ts(now))  # type: ignore[arg-type]

    async def latest(self, scope: Scope, limit: int = 1) -> list[DiaryEntry]:
        """The newest entries, newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT id, day, text, created_at FROM diary_entries WHERE scope_id = ?"
                                     " ORDER BY id DESC LIMIT ?", (scope.id, limit))
        return [DiaryEntry(r[0], r[1], r[2], ts(r[3])) for r in rows]  # type: ignore[arg-type]

    async def edit(
        self, scope: Scope, entry_id: int, text: str, *, processing: str | None = None, reason: str = "",
        final: bool = False,
    ) -> DiaryEntry | None:
        """Change an entry's text (re-indexed, audited); an empty text deletes it (None).

        final: an erasure, whose audit entry does not keep the old text (so /undo cannot bring it back).
        """
        entry: DiaryEntry | None = await _edit_text(
            self.db, self.index, scope, "diary_entries", "diary", entry_id, text, _diary,
            processing=processing or audit.new_processing("edit"), reason=reason, final=final)
        return entry

    async def all(self, scope: Scope) -> list[DiaryEntry]:
        """Every entry of the scope, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT id, day, text, created_at FROM diary_entries WHERE scope_id = ?"
                                     " ORDER BY id",
                                     (scope.id,))
        return [_diary(r) for r in rows]

    async def count(self, scope: Scope) -> int:
        """How many entries exist."""
        async with self.db.reading() as tx:
            return int((await tx.fetchone("SELECT count(*) FROM diary_entries WHERE scope_id = ?", (scope.id,)))[0])


def _thought(r: Any) -> Thought:
    return Thought(r[0], r[1], r[2], ts(r[3]))  # type: ignore[arg-type]


def _diary(r: Any) -> DiaryEntry:
    return DiaryEntry(r[0], r[1], r[2], ts(r[3]))  # type: ignore[arg-type]


class Topics:
    """Open topics: things to ask about later."""

    _COLS = "id, text, due_at, origin, status, created_at"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(
        self, scope: Scope, text: str, *, due_at: float | None = None, origin: str = "",
        created_at: float | None = None, processing: str | None = None,
    ) -> OpenTopic:
        """Remember something to ask about."""
        now = time.time() if created_at is None else created_at
        async with self.db.transaction() as tx:
            item_id = await tx.execute(
                "INSERT INTO open_topics(scope_id, text, due_at, origin, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (scope.id, text, due_at, origin, now, now),
            )
            await audit.record(tx, scope.id, processing or audit.new_processing("topic"), "create", "topic", item_id,
                               after={"text": text, "due_at": due_at}, reason=origin)
        return OpenTopic(item_id, text, ts(due_at), origin, "open", ts(now))  # type: ignore[arg-type]

    async def all(self, scope: Scope) -> list[OpenTopic]:
        """Every topic of the scope, whatever its status, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {self._COLS} FROM open_topics WHERE scope_id = ? ORDER BY id",
                                     (scope.id,))
        return [_topic(r) for r in rows]

    async def due(self, scope: Scope, now: float, limit: int = 1) -> list[OpenTopic]:
        """Open topics whose time has come, oldest due first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {self._COLS} FROM open_topics WHERE scope_id = ? AND status = 'open'"
                " AND (due_at IS NULL OR due_at <= ?) ORDER BY COALESCE(due_at, created_at) LIMIT ?",
                (scope.id, now, limit),
            )
        return [_topic(r) for r in rows]

    async def list(self, scope: Scope, status: str = "open") -> list[OpenTopic]:
        """Topics with a status."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {self._COLS} FROM open_topics WHERE scope_id = ? AND status = ?"
                                     " ORDER BY COALESCE(due_at, created_at)", (scope.id, status))
        return [_topic(r) for r in rows]

    async def remove(
        self, scope: Scope, topic_id: int, *, processing: str | None = None, reason: str = "", final: bool = False,
    ) -> None:
        """Take a topic off the list: dropped and audited (undoable), or with `final` deleted without its text."""
        processing = processing or audit.new_processing("topic")
        async with self.db.transaction() as tx:
            row = await tx.fetchone("SELECT status FROM open_topics WHERE id = ? AND scope_id = ?",
                                    (topic_id, scope.id))
            if row is None:
                raise NotFound(f"topic {topic_id}")
            if final:
                await tx.execute("DELETE FROM open_topics WHERE id = ?", (topic_id,))
                await audit.record(tx, scope.id, processing, audit.ERASE, "topic", topic_id, reason=reason)
                return
            await tx.execute("UPDATE open_topics SET status = 'dropped', updated_at = ? WHERE id = ?",
                             (time.time(), topic_id))
            await audit.record(tx, scope.id, processing, "update", "topic", topic_id, before={"status": row[0]},
                               after={"status": "dropped"}, reason=reason)

    async def set_status(self, scope: Scope, topic_id: int, status: str) -> None:
        """Mark a topic raised, done or dropped."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE open_topics SET status = ?, updated_at = ? WHERE id = ? AND scope_id = ?",
                             (status, time.time(), topic_id, scope.id))
            if await tx.changes() == 0:
                raise NotFound(f"topic {topic_id}")


def _topic(r: Any) -> OpenTopic:
    return OpenTopic(r[0], r[1], ts(r[2]), r[3], r[4], ts(r[5]))  # type: ignore[arg-type]


class Rules:
    """Learned behaviour rules: proposed as pending, active only after the user's yes."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def propose(self, scope: Scope, text: str) -> LearnedRule:
        """Store a pending rule (a new proposal replaces an older pending one)."""
        now = time.time()
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE learned_rules SET status = 'rejected', decided_at = ? WHERE scope_id = ?"
                             " AND status = 'pending'", (now, scope.id))
            rule_id = await tx.execute(
                "INSERT INTO learned_rules(scope_id, text, status, created_at) VALUES (?, ?, 'pending', ?)",
                (scope.id, text, now),
            )
        return LearnedRule(rule_id, text, "pending", ts(now))  # type: ignore[arg-type]

    async def get(self, scope: Scope, rule_id: int) -> LearnedRule:
        """One rule of this scope, or NotFound."""
        async with self.db.reading() as tx:
            r = await tx.fetchone("SELECT id, text, status, created_at FROM learned_rules"
                                  " WHERE id = ? AND scope_id = ?", (rule_id, scope.id))
        if r is None:
            raise NotFound(f"rule {rule_id}")
        return LearnedRule(r[0], r[1], r[2], ts(r[3]))  # type: ignore[arg-type]

    async def pending(self, scope: Scope) -> LearnedRule | None:
        """The rule waiting for a yes or no, if any."""
        rules = await self.list(scope, "pending")
        return rules[-1] if rules else None

    async def list(self, scope: Scope, status: str | None = None) -> list[LearnedRule]:
        """Rules of the scope (all but rejected ones unless a status is given), oldest first."""
        sql = "SELECT id, text, status, created_at FROM learned_rules WHERE scope_id = ?"
        args: list[Any] = [scope.id]
        sql += " AND status = ?" if status else " AND status != 'rejected'"
        if status:
            args.append(status)
        async with self.db.reading() as tx:
            rows = await tx.fetchall(sql + " ORDER BY id", args)
        return [LearnedRule(r[0], r[1], r[2], ts(r[3])) for r in rows]  # type: ignore[arg-type]

    async def decide(self, scope: Scope, rule_id: int, status: str, *, reason: str = "") -> LearnedRule:
        """Set a rule's status (active, disabled, rejected), audited."""
        before = await self.get(scope, rule_id)
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE learned_rules SET status = ?, decided_at = ? WHERE id = ? AND scope_id = ?",
                             (status, time.time(), rule_id, scope.id))
            await audit.record(tx, scope.id, audit.new_processing("rule"), "update", "rule", rule_id,
                               before=before, after={"status": status}, reason=reason)
        return await self.get(scope, rule_id)

    async def delete(self, scope: Scope, rule_id: int) -> LearnedRule:
        """Delete a rule, audited."""
        before = await self.get(scope, rule_id)
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM learned_rules WHERE id = ? AND scope_id = ?", (rule_id, scope.id))
            await audit.record(tx, scope.id, audit.new_processing("rule"), "delete", "rule", rule_id, before=before)
        return before
