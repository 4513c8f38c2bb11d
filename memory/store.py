"""MemoryStore: the one entry point to everything mnemo remembers, in one SQLite file."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory.account import erasure
from memory.account.companions import Companions
from memory.account.incognito_state import STATE_KEY as INCOGNITO
from memory.account.incognito_state import IncognitoLog
from memory.account.pairing import AccessStore
from memory.account.web_access import WebAccess
from memory.errors import EmbeddingUnavailable
from memory.ledgers import audit
from memory.ledgers.choices import Choices
from memory.ledgers.command_runs import Runs
from memory.ledgers.failures import FailureCounts
from memory.ledgers.inbox import Inbox
from memory.ledgers.journal import Journal
from memory.ledgers.outbox import Outbox
from memory.ledgers.shown_numbers import Numbers
from memory.ledgers.usage import TokenUsage
from memory.ledgers.web_log import WebLog
from memory.migrations import migrate
from memory.models import AuditEntry, Scope, SearchHit, Source
from memory.records.conversation import Conversations
from memory.records.diary_entries import Diary
from memory.records.history_imports import HistoryImports
from memory.records.learned_rules import Rules
from memory.records.notes import Notes
from memory.records.open_topics import Topics
from memory.records.people import People
from memory.records.person_dates import PersonDates
from memory.records.preferences import PreferenceStore, preference_written
from memory.records.profile import Profile
from memory.records.reactions import Reactions
from memory.records.relationship import Relationships
from memory.records.reminders import Reminders, StoredReminder, reminder_edited
from memory.records.rhythm_weights import RhythmStore
from memory.records.state import ScopeState
from memory.records.suggestions import Suggestions
from memory.records.thoughts import Thoughts
from memory.records.voice_recordings import VoiceRecordings
from memory.search import keywords, meaning
from memory.search.admission import AdmissionControl
from memory.search.calibration import Measured, fitting, stored
from memory.search.embedder import Calibration, Embedder
from memory.search.embedder import calibration as named_calibration
from memory.search.index import SearchIndex, touch
from memory.search.ranking import Weights
from memory.search.rerank import Reranking, reranked
from memory.search.retrievers import CANDIDATES
from memory.search.scope_arrays import CACHE_BYTES
from memory.search.use_signal import UseSignal
from memory.storage.db import Database
from memory.storage.job_slots import JobSlots
from memory.storage.learning_locks import LearningLocks
from memory.storage.leases import Leases
from memory.storage.postgres import PostgresDatabase, is_postgres

log = logging.getLogger(__name__)

DB_FILENAME = "mnemo.sqlite3"
EXPORT_FORMAT = "mnemo-export-1"  # the one format of every export: the chat's /export and `mnemo export`
KEYWORD_CANDIDATES = 3 * CANDIDATES  # every retriever's best, fused: what a keyword search chooses from
SCOPED_TABLES = ("messages", "notes", "profile_entries", "pending_profile", "thoughts", "diary_entries",
                 "open_topics", "learned_rules", "audit_log", "preferences", "outbox",
                 "relationships", "person_relations", "person_dates", "people", "reminders", "admission_counts",
                 "scope_state", "choices", "command_runs", "item_numbers", "rhythm", "history_imports",
                 "review_candidates", "web_log", "reactions", "sent_messages",
                 "incognito_stretches", "incognito_activity")


async def open_database(path: Path | str, database_url: str | None = None) -> Database:
    """The database at MNEMO_DATABASE_URL when it names a PostgreSQL server, else the SQLite file at path (a file,
    or a data directory holding mnemo.sqlite3); not migrated."""
    path = Path(path)
    folder = path.suffix == "" or path.is_dir()
    if database_url:
        if not is_postgres(database_url):
            raise ValueError("MNEMO_DATABASE_URL must start with postgresql:// (without it, mnemo uses SQLite)")
        return await PostgresDatabase.connect(database_url, path if folder else path.parent)
    return await Database.open(path / DB_FILENAME if folder else path)


class MemoryStore:
    """Messages, notes, profile, thoughts, diary, open topics, rules and audit, scoped per companion and user."""

    def __init__(self, db: Database, index: SearchIndex, semantic_dedupe: float = 0.82,
                 related: float | None = None, calibration: Calibration | None = None) -> None:
        self.db = db
        self.index = index
        # the recorded model's thresholds (`memory.search.calibration`): the relevance floor, duplicates, keywords
        self.calibration = calibration or named_calibration(index.embedder.name)
        self.messages = Journal(db, index)
        self.notes = Notes(db, index, semantic_dedupe)
        self.profile = Profile(db, index)
        self.thoughts = Thoughts(db, index)
        self.diary = Diary(db, index)
        self.topics = Topics(db)
        self.rules = Rules(db)
        self.conversations = Conversations(db)
        self.preferences = PreferenceStore(db)
        self.leases = Leases(db)
        self.outbox = Outbox(db, self.leases)  # its claims and the inbox's on the database's clock, as leases
        self.access = AccessStore(db)
        self.inbox = Inbox(db, self.leases)
        self.learning_locks = LearningLocks(self.leases)  # one learning run or erasure per scope, across workers
        self.job_slots = JobSlots(db, self.leases)  # the slots of repeating scheduler jobs run, once across workers
        self.companions = Companions(db)
        self.relationships = Relationships(db)
        self.people = People(db, index, self.notes)
        self.person_dates = PersonDates(db)
        self.reminders = Reminders(db)
        self.usage = TokenUsage(db)
        self.state = ScopeState(db)
        self.incognito = IncognitoLog(db)  # incognito: on or off per scope, and the stretches it had
        self.choices = Choices(db)
        self.runs = Runs(db)
        self.numbers = Numbers(db)
        self.failures = FailureCounts(db)
        self.reranking: Reranking | None = None  # set by the caller when a reranker is configured
        self.rhythm = RhythmStore(db)
        self.imports = HistoryImports(db)
        self.web_log = WebLog(db)
        self.voice_recordings = VoiceRecordings(db)  # kept voice notes' audio (MNEMO_VOICE_KEEP), every worker's
        self.reactions = Reactions(db)  # emoji on messages, both ways; which messenger message shows what
        self.suggestions = Suggestions(db)  # for the operator: never in the person's export
        self.web = WebAccess(db)  # the web page's login links and sessions (not in the export)
        related = self.calibration.relevant if related is None else related
        self.admission = AdmissionControl(db, index, self.notes, related)
        self._scopes: dict[tuple[str, str], Scope] = {}

    @classmethod
    async def open(
        cls, path: Path | str, embedder: Embedder, *, weights: Weights | None = None,
        semantic_dedupe: float | None = None, search_cache_bytes: int = CACHE_BYTES, database_url: str | None = None,
        second: Embedder | None = None, calibrate: bool = False,
    ) -> MemoryStore:
        """Open the database (a file path, or a data directory), migrate it and check the embedding model.

        search_cache_bytes: what the search keeps of the scopes in memory (`memory.search.scope_arrays`).
        database_url: a PostgreSQL server's URL (MNEMO_DATABASE_URL) instead of the file; path is then the
        data directory (or a file in it).
        second: the second signal's model (USE, `memory.search.use_signal`), None when it is off.
        calibrate: measure the thresholds of a model other than the bundled e5 when none are kept for it (about 150
        texts embedded once; `memory.search.calibration`); mnemo's own start does, a library caller may not."""
        db = await open_database(path, database_url)
        try:
            applied = await migrate(db, backup_dir=db.backup_dir)
            index = SearchIndex(db, embedder, weights, cache_bytes=search_cache_bytes,
                                second=UseSignal(second) if second is not None else None)
            await index.ensure_model()
            fitted = await fitting(db, embedder, measure_missing=calibrate)
            await erasure.on_open(db, fresh="m001_scopes_and_meta" in applied)
            if "m039_bit_vectors" in applied and "m001_scopes_and_meta" not in applied:
                await db.vacuum()  # the float32 vectors m039 dropped leave free pages: about half the file
        except BaseException:
            await db.close()
            raise
        if semantic_dedupe is None:
            semantic_dedupe = fitted.duplicate
        return cls(db, index, semantic_dedupe, calibration=fitted)

    async def measured_calibration(self) -> Measured | None:
        """When and on how many pairs the recorded model's thresholds were measured (None: the bundled e5's shipped
        ones, or not measured yet)."""
        async with self.db.reading() as tx:
            return await stored(tx, self.index.embedder.name)

    async def _query_vector(self, query: str) -> np.ndarray | None:
        """The query's vector; None while the embedding server cannot give one (logged and counted)."""
        try:
            return (await self.index.embed([query], "query"))[0]
        except EmbeddingUnavailable as exc:
            log.warning("no query vector, the search finds by words only: %s", exc)
            await self.failures.add("embedding.unavailable")
            return None

    async def close(self) -> None:
        """Stop the embedding batches (waiting requests fail), close an embedding server's connections
        (`ServerEmbedder.aclose`) and the database."""
        await self.index.batcher.stop()
        if self.index.second is not None:
            await self.index.second.batcher.stop()
        if (close := getattr(self.index.embedder, "aclose", None)) is not None:
            await close()
        await self.db.close()

    async def __aenter__(self) -> MemoryStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def scope(self, companion_id: str, user_id: str) -> Scope:
        """The scope of one companion and one user, created on first use."""
        key = (companion_id, user_id)
        if key in self._scopes:
            return self._scopes[key]
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT OR IGNORE INTO scopes(companion_id, user_id, created_at) VALUES (?, ?, ?)",
                (companion_id, user_id, time.time()),
            )
            row = await tx.fetchone("SELECT id FROM scopes WHERE companion_id = ? AND user_id = ?", key)
        scope = Scope(int(row[0]), companion_id, user_id)
        self._scopes[key] = scope
        return scope

    async def scopes(self, companion_id: str) -> list[Scope]:
        """Every scope of a companion whose user has written at least once."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT s.id, s.companion_id, s.user_id FROM scopes s WHERE s.companion_id = ? AND EXISTS"
                " (SELECT 1 FROM messages m WHERE m.scope_id = s.id AND m.role = 'user') ORDER BY s.id",
                (companion_id,),
            )
        return [Scope(int(r[0]), r[1], r[2]) for r in rows]

    async def search(
        self, scope: Scope, query: str, sources: Sequence[Source] = ("note",), k: int = 10, *,
        window: tuple[float, float] | None = None, now: float | None = None, min_cosine: float | None = None,
        include_faded: bool = False, use: bool = False, words_pass: bool = False, rerank: bool = False,
    ) -> list[SearchHit]:
        """Hybrid search (meaning + words + trigrams, recency and importance) within one scope; by words only while
        the embedding server is down (counted as `embedding.unavailable`).

        Args:
            include_faded: also find notes that faded from lack of use (a recall brings them back).
            use: the hits go into a prompt or answer a recall, so their fading starts over.
            words_pass: with min_cosine, a document holding a query word passes the floor anyway (a keyword
                search: what names the word is relevant, whatever its vector says).
            rerank: the reranker, when one is set (`self.reranking`), reorders the best candidates.
        """
        if not query.strip():
            return []
        reranking = self.reranking if rerank else None
        hits = await self.index.search_vector(
            scope.id, await self._query_vector(query), query, sources, max(k, reranking.top if reranking else 0),
            window=window, now=now, min_cosine=min_cosine, include_faded=include_faded, words_pass=words_pass)
        if reranking is not None:
            hits = await reranked(hits, query, reranking, self.failures.add)
        hits = hits[:k]
        if use and hits:
            async with self.db.transaction() as tx:
                await touch(tx, [(h.source, h.item_id) for h in hits], time.time() if now is None else now)
        return hits

    async def keyword_search(self, scope: Scope, query: str, k: int = 10, *, strict: float | None,
                             parts_of_query: bool = False) -> list[SearchHit]:
        """The notes a search for a word offers (/memories WORD, /forget WORD): those holding every word of the query,
        or with a cosine of at least `strict` (`memory.search.keywords`), best first. Faded notes count too.

        The hybrid search gathers the candidates (each retriever's best, its words and word parts among them); the
        decision which of them match is `keywords.matching`.
        """
        hits = await self.search(scope, query, ("note",), k=KEYWORD_CANDIDATES, include_faded=True)
        kept = keywords.matching(query, [keywords.Candidate(h.text, h.components.cosine) for h in hits], strict,
                                 parts_of_query=parts_of_query)
        return [hits[i] for i in kept][:k]

    async def find_notes(self, scope: Scope, query: str, k: int = 10, *, strict: float | None,
                         floor: meaning.Floor | None = None) -> list[SearchHit]:
        """What a person's search for notes finds (the memory page, /memories WORDS): first what `keyword_search`
        offers, in its order, then the notes about the query by meaning, best first (`memory.search.meaning`; floor:
        the embedder's by default). Faded notes count too."""
        hits = await self.search(scope, query, ("note",), k=KEYWORD_CANDIDATES, include_faded=True)
        words = keywords.matching(query, [keywords.Candidate(h.text, h.components.cosine) for h in hits], strict)
        floor = floor or meaning.floor_for(self.calibration)
        return meaning.found(hits, words, floor)[:k]

    async def export(self, scope: Scope) -> dict[str, Any]:
        """Everything stored for one scope, as plain JSON-ready data that `mnemo import` reads."""
        out: dict[str, Any] = {"format": EXPORT_FORMAT, "companion_id": scope.companion_id, "user_id": scope.user_id}
        async with self.db.reading() as tx:
            for table in SCOPED_TABLES:
                names = await tx.column_names(table)
                # PostgreSQL has no rowid: a table without an id (scope_state, preferences) is ordered by all its
                # columns, else its rows came back in whatever order the last update left them
                order = ("rowid" if tx.dialect == "sqlite" else "id" if "id" in names
                         else ", ".join(str(n) for n in range(1, len(names) + 1)))
                cursor_rows = await tx.fetchall(f"SELECT * FROM {table} WHERE scope_id = ? ORDER BY {order}",
                                                (scope.id,))
                out[table] = [
                    {k: v for k, v in zip(names, row) if k not in ("scope_id", "doc_id", "norm_hash")}
                    for row in cursor_rows
                ]
        return out

    async def delete_scope(self, scope: Scope) -> int:
        """Erase everything of one scope for good, in one transaction; returns rows removed.

        Every table with a scope id, the vectors, the full-text entries, cached embeddings no one else uses;
        then the write-ahead log is emptied and the backups in the data folder lose the scope too
        (`memory.account.erasure`). The scope's id stays, so its tombstone can name it. Incognito stays as it was found
        (on, with its end): the next message is no more kept than the ones before the deletion.
        """
        async with self.db.transaction() as tx:
            incognito = await tx.fetchone("SELECT value, updated_at FROM scope_state WHERE scope_id = ? AND key = ?",
                                          (scope.id, INCOGNITO))
            removed = await erasure.erase_scope(tx, scope.id)
            if incognito is not None:
                await tx.execute("INSERT INTO scope_state(scope_id, key, value, updated_at) VALUES (?, ?, ?, ?)",
                                 (scope.id, INCOGNITO, incognito[0], incognito[1]))
            await erasure.record(tx, scope.id, [("scope", None)], "/deleteme")
        self.index.scopes.forget(scope.id)  # its vectors leave this process's memory now, not at the next search
        await erasure.settle(self.db)
        return removed

    async def change_zone(self, scope: Scope, zone: str, hours: float, moves: Sequence[tuple[StoredReminder, float]],
                          now: float, reason: str) -> None:
        """Set the person's zone, shift their learned hours `hours` later and move repeating reminders to new times, in
        one transaction (`scheduler.zone_change` decides what moves): a zone change cut off half-way leaves nothing
        changed, so its retry moves everything once."""
        async with self.db.transaction() as tx:
            await preference_written(tx, scope, "timezone", zone)
            if hours:
                await self.rhythm.shift_in(tx, scope, hours, now)
            for reminder, due_at in moves:
                await reminder_edited(tx, scope, reminder, reminder.text, due_at, now, reason)
        if moves:
            await self.reminders.changed()

    async def scopes_erased(self, after: int = 0) -> list[erasure.ScopeErased]:
        """The /deleteme of every worker after tombstone `after`, oldest first: what a worker's own files of a person
        (per-person MCP servers' folders) must follow."""
        return await erasure.scopes_erased(self.db, after)

    async def copies_erased(self, scope: Scope, copies: Sequence[tuple[str, int | None]]) -> None:
        """After a final forget rewrote copies of the fact (diary, thoughts, summary, …): the backups in the data
        folder drop those copies too, and the write-ahead log is emptied (`memory.account.erasure`)."""
        if copies:
            async with self.db.transaction() as tx:
                await erasure.record_copies(tx, scope.id, copies)
        await erasure.settle(self.db)

    async def scrub_audit(self, scope: Scope, item_types: Sequence[str], clean: Callable[[str], str]) -> int:
        """Clean every text the scope's audit entries keep about these item types (final erasure)."""
        async with self.db.transaction() as tx:
            return await audit.scrub(tx, scope.id, item_types, clean)

    async def audit_log(self, scope: Scope, limit: int = 50) -> list[AuditEntry]:
        """The newest audit entries of a scope, newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                f"SELECT {audit.AUDIT_COLUMNS} FROM audit_log WHERE scope_id = ? ORDER BY id DESC LIMIT ?",
                (scope.id, limit),
            )
        return [audit.entry_from_row(r) for r in rows]
