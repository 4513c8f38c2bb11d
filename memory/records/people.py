"""People in the user's life: names, aliases, the relation to the user, relations among them, linked notes.

Relations are bi-temporal: `valid_from`/`valid_to` say when a relation held in the user's life,
`recorded_at`/`retracted_at` when mnemo learned it and when it took it back. A relation to the user
is a row whose `b` is NULL; `people.relation` holds the current one for quick reading. Facts about a
person are notes whose `person_id` points to them. Every change is audited and undoable.
"""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memory.account import erasure
from memory.errors import NotFound
from memory.ledgers import audit
from memory.models import AuditEntry, Link, Note, Person, PersonCard, Scope, ts
from memory.records import kinship, person_dates
from memory.records.kinship import Known, PersonDraft
from memory.records.notes import Notes
from memory.search.index import SearchIndex
from memory.storage.db import Database, Tx

PROMPT_PEOPLE = 8  # closest people that go into every prompt
_COLS = "id, name, aliases, relation, valid_from, valid_to, created_at, updated_at, merged_into"
_REL_COLS = "id, a, b, relation, valid_from, valid_to, recorded_at, retracted_at"


def _person(row: Any) -> Person:
    id_, name, aliases, relation, valid_from, valid_to, created, updated, merged = row
    return Person(id_, name, tuple(json.loads(aliases)), relation, ts(valid_from), ts(valid_to),
                  ts(created), ts(updated), merged)  # type: ignore[arg-type]


def doc_text(person: Known) -> str:
    """What the search index holds for a person: 'Miriam: Schwester; meine Schwester, Miri'."""
    named = not kinship.is_description(person.name)
    head = person.name if named else (person.relation or person.name)
    rest = [person.relation] if named and person.relation else [person.name] if person.name != head else []
    rest += [", ".join(person.aliases)] if person.aliases else []
    return f"{head}: {'; '.join(rest)}" if rest else head


def card_line(card: PersonCard, facts: int = 2) -> str:
    """One compact line per person for the prompt: 'Miriam – Schwester (also: meine Schwester): fact | fact'."""
    p = card.person
    head = p.name if p.named else "(name not known yet)"
    if p.relation:
        head += f" – {p.relation}"
    if p.aliases:
        head += f" (also: {', '.join(p.aliases[:3])})"
    extra = [f"{link.a} is {link.relation} of {link.b}" for link in card.links[:2]]
    extra += [f[:120] for f in card.facts[:facts]]
    return head + (": " + " | ".join(extra) if extra else "")


def closest(people: Sequence[Person], note_counts: dict[int, int], limit: int = PROMPT_PEOPLE) -> list[Person]:
    """The people closest to the user: partner and family first, then by how much is known, then the latest."""
    ranked = sorted(people, key=lambda p: (kinship.closeness(p.relation), -note_counts.get(p.id, 0),
                                           -p.updated_at.timestamp(), p.id))
    return ranked[:limit]


class People:
    """Store, match, merge, rename and forget people; notes about them are linked by `person_id`."""

    def __init__(self, db: Database, index: SearchIndex, notes: Notes) -> None:
        self.db, self.index, self.notes = db, index, notes

    async def all(self, scope: Scope, *, include_closed: bool = False) -> list[Person]:
        """People of the scope, oldest first."""
        closed = "" if include_closed else " AND valid_to IS NULL"
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_COLS} FROM people WHERE scope_id = ?{closed} ORDER BY id", (scope.id,))
        return [_person(r) for r in rows]

    async def get(self, scope: Scope, person_id: int) -> Person:
        """One current person of this scope, or NotFound."""
        async with self.db.reading() as tx:
            row = await tx.scoped_row("people", _COLS, scope.id, person_id, f"person {person_id}",
                                      " AND valid_to IS NULL")
        return _person(row)

    async def observe(self, scope: Scope, draft: PersonDraft, *, processing: str, reason: str = "",
                      now: float | None = None) -> Person:
        """The person a draft names, updated with what it adds; people it shows to be one are merged first."""
        now = time.time() if now is None else now
        people = await self.all(scope)
        ids = kinship.resolve(draft, [p.known() for p in people])
        if not ids:
            return await self._create(scope, draft, processing, reason, now)
        by_id = {p.id: p for p in people}
        matched = [by_id[i].known() for i in ids]
        keep = kinship.keeper(matched)
        others = [k for k in matched if k.id != keep.id]
        combined = kinship.combine(keep, others, draft)
        for other in others:
            await self._merge(scope, keep.id, other.id, processing, reason or "the same person", now)
        return await self._update(scope, combined, processing, reason, now)

    async def rename(self, scope: Scope, person_id: int, name: str, *, reason: str = "/people rename") -> Person:
        """Give a person a new name; the old one stays as an alias."""
        person = await self.get(scope, person_id)
        name = " ".join(name.split())[:80]
        aliases = [a for a in (person.name, *person.aliases) if kinship.name_key(a) != kinship.name_key(name)]
        known = Known(person.id, name, tuple(dict.fromkeys(aliases)), person.relation)
        return await self._update(scope, known, audit.new_processing("people"), reason, time.time())

    async def merge(self, scope: Scope, keep_id: int, other_id: int, *, reason: str = "/people merge") -> Person:
        """Make two records one person (the first one is kept; the other's names become aliases)."""
        if keep_id == other_id:
            raise NotFound(f"person {other_id} (the same as {keep_id})")
        keep, other = await self.get(scope, keep_id), await self.get(scope, other_id)
        combined = kinship.combine(keep.known(), [other.known()])
        processing, now = audit.new_processing("people"), time.time()
        await self._merge(scope, keep.id, other.id, processing, reason, now)
        return await self._update(scope, combined, processing, reason, now)

    async def forget(self, scope: Scope, person_id: int, *, reason: str = "/people forget") -> tuple[Person, int]:
        """Erase a person for good with their notes (closed ones too), relations and earlier records.

        No byte of what was stored about them stays in the data folder and /undo cannot bring it back; the
        audit entries keep only that they were there (`memory.account.erasure`). Returns the person and how many
        notes went with them.
        """
        person = await self.get(scope, person_id)
        async with self.db.transaction() as tx:
            notes = await erasure.erase_person(tx, scope.id, person_id)
            await erasure.record(tx, scope.id, [("person", person_id), *(("note", n) for n in notes)], reason)
        await erasure.settle(self.db)
        return person, len(notes)

    async def link_notes(self, scope: Scope, person_id: int, note_ids: Sequence[int], *, processing: str,
                         reason: str = "") -> None:
        """Mark notes as facts about a person."""
        current = await self.persons_of_notes(scope, note_ids, linked_only=False)
        changes: dict[int, int | None] = {i: person_id for i, old in current.items() if old != person_id}
        if changes:
            await self._relink(scope, changes, person_id, processing, reason, previous=current)

    async def persons_of_notes(self, scope: Scope, note_ids: Sequence[int], *, linked_only: bool = True
                               ) -> dict[int, int | None]:
        """note id -> person id for the notes (only linked ones, unless linked_only is False)."""
        if not note_ids:
            return {}
        marks = ",".join("?" * len(note_ids))
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT id, person_id FROM notes WHERE scope_id = ? AND id IN ({marks})",
                                     (scope.id, *note_ids))
        return {r[0]: r[1] for r in rows if r[1] is not None or not linked_only}

    async def facts(self, scope: Scope, person_id: int, limit: int = 20, *, include_closed: bool = False) -> list[Note]:
        """The current notes about a person (with closed ones: all), most important and newest first."""
        ids = await self._note_ids(scope, person_id, limit, include_closed)
        return [await self.notes.get(scope, i) for i in ids]

    async def relate(self, scope: Scope, a: int, b: int | None, relation: str, *, processing: str, reason: str = "",
                     now: float | None = None) -> None:
        """Record that `a` is `relation` of `b` (b None: of the user); a different current relation ends now."""
        now = time.time() if now is None else now
        relation = " ".join(relation.split())[:60]
        if not relation or a == b:
            return
        async with self.db.transaction() as tx:
            await self._relate(tx, scope, a, b, relation, processing, reason, now)

    async def links(self, scope: Scope, person_id: int) -> list[Link]:
        """The current relations of a person to other people."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT r.id, pa.name, r.relation, pb.name FROM person_relations r JOIN people pa ON pa.id = r.a"
                " JOIN people pb ON pb.id = r.b WHERE r.scope_id = ? AND (r.a = ? OR r.b = ?) AND r.valid_to IS NULL"
                " AND r.retracted_at IS NULL ORDER BY r.id", (scope.id, person_id, person_id))
        return [Link(*r) for r in rows]

    async def history(self, scope: Scope, person_id: int) -> list[tuple[str, datetime | None, datetime | None]]:
        """The person's relations to the user over time: (relation, valid from, valid to), oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT relation, valid_from, valid_to FROM person_relations WHERE scope_id = ?"
                                     " AND a = ? AND b IS NULL AND retracted_at IS NULL ORDER BY id",
                                     (scope.id, person_id))
        return [(r[0], ts(r[1]), ts(r[2])) for r in rows]

    async def cards(self, scope: Scope, ids: Sequence[int] | None = None,
                    limit: int = PROMPT_PEOPLE) -> list[PersonCard]:
        """Cards of the given people, or of the closest ones when no ids are given."""
        if ids is None:
            people = closest(await self.all(scope), await self._note_counts(scope), limit)
        else:
            by_id = {p.id: p for p in await self.all(scope)}
            people = [by_id[i] for i in ids if i in by_id][:limit]
        return [PersonCard(p, tuple(n.text for n in await self.facts(scope, p.id, 3)),
                           tuple(await self.links(scope, p.id))) for p in people]

    # --- writes ----------------------------------------------------------------------------------------------

    async def _create(self, scope: Scope, draft: PersonDraft, processing: str, reason: str, now: float) -> Person:
        known = kinship.combine(Known(0, " ".join(draft.name.split())[:80]), [], draft)
        vector = (await self.index.embed([doc_text(known)]))[0]
        async with self.db.transaction() as tx:
            person_id = await tx.execute(
                "INSERT INTO people(scope_id, name, aliases, relation, valid_from, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (scope.id, known.name, json.dumps(list(known.aliases), ensure_ascii=False), known.relation,
                 now, now, now))
            doc_id = await self.index.add(tx, scope.id, "person", person_id, doc_text(known), vector, now, 6)
            await tx.execute("UPDATE people SET doc_id = ? WHERE id = ?", (doc_id, person_id))
            person = _person(await tx.fetchone(f"SELECT {_COLS} FROM people WHERE id = ?", (person_id,)))
            await audit.record(tx, scope.id, processing, "create", "person", person_id, after=person, reason=reason)
            if known.relation:
                await self._relate(tx, scope, person_id, None, known.relation, processing, reason, now)
        return person

    async def _update(self, scope: Scope, known: Known, processing: str, reason: str, now: float) -> Person:
        """Set name, aliases and relation (re-indexed, audited); unchanged fields change nothing."""
        before = await self.get(scope, known.id)
        if (before.name, before.aliases, before.relation) == (known.name, known.aliases, known.relation):
            return before
        vector = (await self.index.embed([doc_text(known)]))[0]
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE people SET name = ?, aliases = ?, relation = ?, updated_at = ? WHERE id = ?",
                             (known.name, json.dumps(list(known.aliases), ensure_ascii=False), known.relation, now,
                              known.id))
            await self._reindex(tx, scope, known, vector, now)
            after = _person(await tx.fetchone(f"SELECT {_COLS} FROM people WHERE id = ?", (known.id,)))
            await audit.record(tx, scope.id, processing, "update", "person", known.id, before, after, reason)
            if known.relation and known.relation != before.relation:
                await self._relate(tx, scope, known.id, None, known.relation, processing, reason, now)
        return after

    async def _merge(self, scope: Scope, keep: int, other: int, processing: str, reason: str, now: float) -> None:
        """Point the other's notes and relations to `keep` and close the other (kept for history)."""
        before = await self.get(scope, other)
        async with self.db.transaction() as tx:
            notes = [r[0] for r in await tx.fetchall("SELECT id FROM notes WHERE person_id = ?", (other,))]
            as_a = [r[0] for r in await tx.fetchall("SELECT id FROM person_relations WHERE a = ?", (other,))]
            as_b = [r[0] for r in await tx.fetchall("SELECT id FROM person_relations WHERE b = ?", (other,))]
            await tx.execute("UPDATE notes SET person_id = ? WHERE person_id = ?", (keep, other))
            await tx.execute("UPDATE person_relations SET a = ? WHERE a = ?", (keep, other))
            await tx.execute("UPDATE person_relations SET b = ? WHERE b = ?", (keep, other))
            dates = await person_dates.move(tx, keep, other)
            await self._remove_doc(tx, other)
            await tx.execute("UPDATE people SET valid_to = ?, merged_into = ?, updated_at = ? WHERE id = ?",
                             (now, keep, now, other))
            moved = {"merged_into": keep, "notes": notes, "as_a": as_a, "as_b": as_b, "dates": dates}
            await audit.record(tx, scope.id, processing, "merge", "person", other, before, moved, reason)

    async def _relate(self, tx: Tx, scope: Scope, a: int, b: int | None, relation: str, processing: str,
                      reason: str, now: float) -> None:
        """Open a relation row (ending a different current one between the same two), audited; all in tx."""
        rows = await tx.fetchall(f"SELECT {_REL_COLS} FROM person_relations WHERE scope_id = ? AND a = ? AND b IS ?"
                                 " AND valid_to IS NULL AND retracted_at IS NULL", (scope.id, a, b))
        if any(kinship.name_key(r[3]) == kinship.name_key(relation) for r in rows):
            return
        for row in rows:
            await tx.execute("UPDATE person_relations SET valid_to = ? WHERE id = ?", (now, row[0]))
            await audit.record(tx, scope.id, processing, "close", "person_relation", row[0],
                               before=dict(zip(_REL_COLS.split(", "), row)), reason=reason)
        rel_id = await tx.execute(
            "INSERT INTO person_relations(scope_id, a, b, relation, valid_from, recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
            (scope.id, a, b, relation, now, now))
        await audit.record(tx, scope.id, processing, "create", "person_relation", rel_id,
                           after={"a": a, "b": b, "relation": relation}, reason=reason)

    async def _relink(self, scope: Scope, changes: dict[int, int | None], person_id: int, processing: str,
                      reason: str, previous: dict[int, int | None] | None = None) -> None:
        """Set notes' person (None unlinks), audited with the previous links so undo can restore them."""
        before = {str(i): previous[i] if previous is not None else person_id for i in changes}
        async with self.db.transaction() as tx:
            for note_id, target in changes.items():
                await tx.execute("UPDATE notes SET person_id = ? WHERE id = ? AND scope_id = ?",
                                 (target, note_id, scope.id))
            await audit.record(tx, scope.id, processing, "link", "person", person_id,
                               before={"notes": before}, after={"notes": {str(i): t for i, t in changes.items()}},
                               reason=reason)

    async def _reindex(self, tx: Tx, scope: Scope, known: Known, vector: Any, now: float) -> None:
        row = await tx.fetchone("SELECT doc_id FROM people WHERE id = ?", (known.id,))
        if row[0] is not None:
            await self.index.update(tx, row[0], doc_text(known), vector)
        else:
            doc_id = await self.index.add(tx, scope.id, "person", known.id, doc_text(known), vector, now, 6)
            await tx.execute("UPDATE people SET doc_id = ? WHERE id = ?", (doc_id, known.id))

    async def _remove_doc(self, tx: Tx, person_id: int) -> None:
        await self.index.remove_doc_of(tx, "people", person_id)
        await tx.execute("UPDATE people SET doc_id = NULL WHERE id = ?", (person_id,))

    async def _note_ids(self, scope: Scope, person_id: int, limit: int = 1000,
                        include_closed: bool = False) -> list[int]:
        current = "" if include_closed else " AND valid_to IS NULL"
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT id FROM notes WHERE scope_id = ? AND person_id = ?{current}"
                                     " ORDER BY importance DESC, created_at DESC, id DESC LIMIT ?",
                                     (scope.id, person_id, limit))
        return [r[0] for r in rows]

    async def _note_counts(self, scope: Scope) -> dict[int, int]:
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT person_id, count(*) FROM notes WHERE scope_id = ?"
                                     " AND person_id IS NOT NULL AND valid_to IS NULL GROUP BY person_id", (scope.id,))
        return {r[0]: r[1] for r in rows}

    # --- undo ------------------------------------------------------------------------------------------------

    async def revert(self, scope: Scope, entry: AuditEntry, processing: str) -> None:
        """Apply the inverse of one audited change to a person, a relation or a note link."""
        before, after = entry.before or {}, entry.after or {}
        item_id = entry.item_id
        assert item_id is not None
        async with self.db.transaction() as tx:
            if entry.item_type == "person_relation":
                await self._revert_relation(tx, scope, entry.action, item_id, before)
            elif entry.action == "link":
                for note_id, person_id in before.get("notes", {}).items():
                    await tx.execute("UPDATE notes SET person_id = ? WHERE id = ? AND scope_id = ?",
                                     (person_id, int(note_id), scope.id))
            elif entry.action == "create":
                await tx.execute("UPDATE notes SET person_id = NULL WHERE person_id = ?", (item_id,))
                await tx.execute("DELETE FROM person_relations WHERE a = ? OR b = ?", (item_id, item_id))
                await tx.execute("DELETE FROM person_dates WHERE person_id = ?", (item_id,))
                await self._remove_doc(tx, item_id)
                await tx.execute("DELETE FROM people WHERE id = ? AND scope_id = ?", (item_id, scope.id))
            elif entry.action == "delete":
                await tx.execute(
                    f"INSERT INTO people(scope_id, {_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (scope.id, item_id, before["name"], json.dumps(before["aliases"], ensure_ascii=False),
                     before["relation"], before.get("valid_from"), before.get("valid_to"), before["created_at"],
                     time.time(), before.get("merged_into")))
            elif entry.action == "merge":
                await tx.execute("UPDATE people SET valid_to = NULL, merged_into = NULL WHERE id = ?", (item_id,))
                for key, column in (("notes", "notes SET person_id"), ("as_a", "person_relations SET a"),
                                    ("as_b", "person_relations SET b"), ("dates", "person_dates SET person_id")):
                    for row_id in after.get(key, []):
                        await tx.execute(f"UPDATE {column} = ? WHERE id = ?", (item_id, row_id))
            elif entry.action == "update":
                await tx.execute("UPDATE people SET name = ?, aliases = ?, relation = ?, updated_at = ? WHERE id = ?",
                                 (before["name"], json.dumps(before["aliases"], ensure_ascii=False), before["relation"],
                                  time.time(), item_id))
            await audit.record(tx, scope.id, processing, "revert", entry.item_type, item_id, after=before,
                               reason=f"undo {entry.action}")
        if entry.item_type == "person" and entry.action in ("delete", "merge", "update") and not before.get("valid_to"):
            await self._refresh_doc(scope, item_id)

    async def _revert_relation(self, tx: Tx, scope: Scope, action: str, rel_id: int, before: dict[str, Any]) -> None:
        if action == "create":
            await tx.execute("DELETE FROM person_relations WHERE id = ? AND scope_id = ?", (rel_id, scope.id))
        elif action == "close":
            await tx.execute("UPDATE person_relations SET valid_to = NULL WHERE id = ?", (rel_id,))
        elif action == "delete":
            await tx.execute(f"INSERT INTO person_relations(scope_id, {_REL_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (scope.id, *(before[c] for c in _REL_COLS.split(", "))))

    async def _refresh_doc(self, scope: Scope, person_id: int) -> None:
        """Re-index a person after undo put them back."""
        person = await self.get(scope, person_id)
        vector = (await self.index.embed([doc_text(person.known())]))[0]
        async with self.db.transaction() as tx:
            await self._reindex(tx, scope, person.known(), vector, time.time())
