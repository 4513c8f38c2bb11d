"""Numbered schema migrations, recorded in the `migrations` table; running them twice is a no-op."""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from memory.db import Database, Tx

log = logging.getLogger(__name__)

Migration = Callable[[Tx], Awaitable[None]]


async def m001_scopes_and_meta(tx: Tx) -> None:
    """Create the scope table (companion x user) and key/value metadata."""
    await tx.execute(
        """CREATE TABLE scopes (
            id INTEGER PRIMARY KEY,
            companion_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (companion_id, user_id))"""
    )
    await tx.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


async def m002_messages(tx: Tx) -> None:
    """Create the verbatim session log."""
    await tx.execute(
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
            text TEXT NOT NULL,
            created_at REAL NOT NULL,
            channel TEXT NOT NULL DEFAULT '',
            channel_message_id TEXT,
            proactive INTEGER NOT NULL DEFAULT 0,
            doc_id INTEGER)"""
    )
    await tx.execute("CREATE INDEX messages_scope_time ON messages(scope_id, created_at)")
    await tx.execute(
        "CREATE UNIQUE INDEX messages_channel_id ON messages(scope_id, channel, channel_message_id)"
        " WHERE channel_message_id IS NOT NULL AND role = 'user'"
    )


async def m003_memory_items(tx: Tx) -> None:
    """Create notes, profile entries, thoughts, diary, open topics, learned rules and the audit log.

    Ids that buttons carry are never reused (AUTOINCREMENT), so a stale button cannot hit a newer item.
    """
    await tx.execute(
        """CREATE TABLE notes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            importance INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            valid_from REAL,
            valid_to REAL,
            superseded_by INTEGER REFERENCES notes(id),
            source_message_ids TEXT NOT NULL DEFAULT '[]',
            norm_hash TEXT NOT NULL,
            doc_id INTEGER)"""
    )
    await tx.execute("CREATE INDEX notes_scope_kind ON notes(scope_id, kind, norm_hash)")
    await tx.execute(
        """CREATE TABLE profile_entries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            category TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            importance INTEGER NOT NULL DEFAULT 5,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            doc_id INTEGER,
            UNIQUE (scope_id, category, key))"""
    )
    await tx.execute(
        """CREATE TABLE thoughts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            text TEXT NOT NULL,
            origin TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            doc_id INTEGER)"""
    )
    await tx.execute(
        """CREATE TABLE diary_entries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            day TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at REAL NOT NULL,
            doc_id INTEGER)"""
    )
    await tx.execute(
        """CREATE TABLE open_topics (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            text TEXT NOT NULL,
            due_at REAL,
            origin TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'raised', 'done', 'dropped')),
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL)"""
    )
    await tx.execute("CREATE INDEX open_topics_due ON open_topics(scope_id, status, due_at)")
    await tx.execute(
        """CREATE TABLE learned_rules (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            text TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'active', 'disabled', 'rejected')),
            created_at REAL NOT NULL,
            decided_at REAL)"""
    )
    await tx.execute(
        """CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            processing_id TEXT NOT NULL,
            action TEXT NOT NULL,
            item_type TEXT NOT NULL,
            item_id INTEGER,
            before TEXT,
            after TEXT,
            reason TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL)"""
    )
    await tx.execute("CREATE INDEX audit_scope_processing ON audit_log(scope_id, processing_id)")


async def m004_search_index(tx: Tx) -> None:
    """Create the search documents and their two full-text indexes, kept in step by triggers.

    Words are indexed with unicode61 + porter (English inflections); a trigram index beside it
    finds German compounds and inflections by substring ("Kino" in "Kinoabend"). The vector
    table depends on the embedding model and is created by the store once the model is known.
    """
    await tx.execute(
        """CREATE TABLE docs (
            id INTEGER PRIMARY KEY,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            source TEXT NOT NULL,
            item_id INTEGER NOT NULL,
            text TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            importance INTEGER NOT NULL DEFAULT 5,
            created_at REAL NOT NULL,
            UNIQUE (source, item_id))"""
    )
    await tx.execute("CREATE INDEX docs_scope_source ON docs(scope_id, source, created_at)")
    await tx.execute(
        "CREATE VIRTUAL TABLE fts_words USING fts5(text, content='docs', content_rowid='id',"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    await tx.execute(
        "CREATE VIRTUAL TABLE fts_trigram USING fts5(text, content='docs', content_rowid='id',"
        " tokenize='trigram')"
    )
    for table in ("fts_words", "fts_trigram"):
        await tx.execute(
            f"CREATE TRIGGER docs_ai_{table} AFTER INSERT ON docs BEGIN"
            f" INSERT INTO {table}(rowid, text) VALUES (new.id, new.text); END"
        )
        await tx.execute(
            f"CREATE TRIGGER docs_ad_{table} AFTER DELETE ON docs BEGIN"
            f" INSERT INTO {table}({table}, rowid, text) VALUES ('delete', old.id, old.text); END"
        )
        await tx.execute(
            f"CREATE TRIGGER docs_au_{table} AFTER UPDATE OF text ON docs BEGIN"
            f" INSERT INTO {table}({table}, rowid, text) VALUES ('delete', old.id, old.text);"
            f" INSERT INTO {table}(rowid, text) VALUES (new.id, new.text); END"
        )
    await tx.execute(
        """CREATE TABLE embedding_cache (
            model TEXT NOT NULL,
            purpose TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, purpose, content_hash))"""
    )


async def m005_conversation_state(tx: Tx) -> None:
    """Per scope: the rolling summary of what left the recent window, and how far extraction got."""
    await tx.execute(
        """CREATE TABLE conversation_state (
            scope_id INTEGER PRIMARY KEY REFERENCES scopes(id),
            summary TEXT NOT NULL DEFAULT '',
            summary_upto INTEGER NOT NULL DEFAULT 0,
            extracted_upto INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL)"""
    )


async def m006_audit_undo(tx: Tx) -> None:
    """Mark audit entries whose processing was undone, so /undo walks further back each time."""
    await tx.execute("ALTER TABLE audit_log ADD COLUMN undone_at REAL")


async def m007_pending_profile(tx: Tx) -> None:
    """Profile facts waiting for the user's yes (when consent is required); not searchable until then."""
    await tx.execute(
        """CREATE TABLE pending_profile (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            category TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at REAL NOT NULL)"""
    )


async def m008_preferences(tx: Tx) -> None:
    """Per-user preferences set from the chat (diary push, times, active hours, check-ins)."""
    await tx.execute(
        """CREATE TABLE preferences (
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (scope_id, key))"""
    )


async def m009_outbox(tx: Tx) -> None:
    """Messages the companion sends on its own, recorded before sending and marked after."""
    await tx.execute(
        """CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_try REAL NOT NULL,
            last_error TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            sent_at REAL)"""
    )
    await tx.execute("CREATE INDEX outbox_due ON outbox(status, next_try)")


async def m010_access(tx: Tx) -> None:
    """Users the operator approved by pairing code, and the open pairing requests of unknown users."""
    await tx.execute(
        """CREATE TABLE approved_users (
            channel TEXT NOT NULL,
            user_id TEXT NOT NULL,
            display_name TEXT NOT NULL DEFAULT '',
            approved_at REAL NOT NULL,
            approved_by TEXT NOT NULL,
            revoked_at REAL,
            revoked_by TEXT,
            PRIMARY KEY (channel, user_id))"""
    )
    await tx.execute("CREATE INDEX approved_users_user ON approved_users(user_id)")
    await tx.execute(
        """CREATE TABLE pairing_requests (
            code TEXT PRIMARY KEY,
            channel TEXT NOT NULL,
            user_id TEXT NOT NULL,
            display_name TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            UNIQUE (channel, user_id))"""
    )


async def m011_inbox(tx: Tx) -> None:
    """Incoming updates, stored before they are confirmed to the messenger and marked once handled."""
    await tx.execute(
        """CREATE TABLE inbox (
            channel TEXT NOT NULL,
            event_id TEXT NOT NULL,
            payload TEXT,
            received_at REAL NOT NULL,
            handled_at REAL,
            PRIMARY KEY (channel, event_id))"""
    )
    await tx.execute("CREATE INDEX inbox_unhandled ON inbox(channel, handled_at)")


async def m012_companions_and_relationships(tx: Tx) -> None:
    """Companions (the deployment's characters) and the relationship of each companion with each user."""
    await tx.execute(
        """CREATE TABLE companions (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            age INTEGER,
            template TEXT NOT NULL DEFAULT '',
            sliders TEXT NOT NULL DEFAULT '{}',
            wish TEXT NOT NULL,
            core TEXT NOT NULL,
            created_at REAL NOT NULL)"""
    )
    await tx.execute(
        """CREATE TABLE relationships (
            scope_id INTEGER PRIMARY KEY REFERENCES scopes(id),
            stage TEXT NOT NULL,
            familiarity INTEGER NOT NULL CHECK (familiarity BETWEEN 0 AND 100),
            trust INTEGER NOT NULL CHECK (trust BETWEEN 0 AND 100),
            affection INTEGER NOT NULL CHECK (affection BETWEEN 0 AND 100),
            playfulness INTEGER NOT NULL CHECK (playfulness BETWEEN 0 AND 100),
            mood TEXT NOT NULL DEFAULT '',
            notes TEXT NOT NULL DEFAULT '',
            intentions TEXT NOT NULL DEFAULT '[]',
            evolving TEXT NOT NULL DEFAULT '{}',
            stage_changed_at REAL NOT NULL,
            updated_at REAL NOT NULL)"""
    )


async def m013_people(tx: Tx) -> None:
    """People in the user's life, bi-temporal relations (to the user when b is NULL), and notes linked to a person."""
    await tx.execute(
        """CREATE TABLE people (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            name TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',
            relation TEXT NOT NULL DEFAULT '',
            valid_from REAL,
            valid_to REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            merged_into INTEGER REFERENCES people(id),
            doc_id INTEGER)"""
    )
    await tx.execute("CREATE INDEX people_scope ON people(scope_id, valid_to)")
    await tx.execute(
        """CREATE TABLE person_relations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            a INTEGER NOT NULL REFERENCES people(id),
            b INTEGER REFERENCES people(id),
            relation TEXT NOT NULL,
            valid_from REAL,
            valid_to REAL,
            recorded_at REAL NOT NULL,
            retracted_at REAL)"""
    )
    await tx.execute("CREATE INDEX person_relations_a ON person_relations(a, b)")
    await tx.execute("ALTER TABLE notes ADD COLUMN person_id INTEGER REFERENCES people(id)")
    await tx.execute("CREATE INDEX notes_person ON notes(person_id)")


async def m014_reminders(tx: Tx) -> None:
    """Reminders the user asked for; outbox messages may carry buttons (a reminder's snooze buttons)."""
    await tx.execute(
        """CREATE TABLE reminders (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            text TEXT NOT NULL,
            due_at REAL NOT NULL,
            repeat TEXT NOT NULL DEFAULT '' CHECK (repeat IN ('', 'daily', 'weekly')),
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'done', 'cancelled')),
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            fired_at REAL)"""
    )
    await tx.execute("CREATE INDEX reminders_due ON reminders(status, due_at)")
    await tx.execute("ALTER TABLE outbox ADD COLUMN buttons TEXT NOT NULL DEFAULT '[]'")


async def m015_admission_counts(tx: Tx) -> None:
    """How many notes admission control admitted, dropped and sent to the correction flow, per scope."""
    await tx.execute(
        """CREATE TABLE admission_counts (
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            outcome TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (scope_id, outcome))"""
    )


async def m016_inbox_shown(tx: Tx) -> None:
    """Per unhandled update, the messages its reply has shown so far, so a replay edits them instead of resending."""
    await tx.execute("ALTER TABLE inbox ADD COLUMN shown TEXT NOT NULL DEFAULT '[]'")


async def m017_fts_scope(tx: Tx) -> None:
    """Give both full-text indexes a `scope` column, so a MATCH finds one user's documents only.

    Before, every match ran over all users' documents and the scope filter came after the join
    (at 100k notes over 100 users, 20-30 ms a search). The column holds `s<scope_id>x`, a token
    that neither index confuses with another scope's (the trigram index matches substrings, and
    `s37x` is no substring of `s137x`). It is read from the view `docs_fts`, and bm25 gives it
    weight 0, so the text alone decides the rank. m020 replaced the token by rowid ranges.
    """
    await tx.execute("CREATE VIEW docs_fts AS SELECT id, text, 's' || scope_id || 'x' AS scope FROM docs")
    await _full_text_tables(tx, "text, scope", "id", "{0}.id, {0}.text, 's' || {0}.scope_id || 'x'", "bm25(1.0, 0.0)")


async def _full_text_tables(tx: Tx, columns: str, key: str, values: str, rank: str | None = None) -> None:
    """Replace both FTS5 tables (and their triggers) by ones with these columns over the view `docs_fts`.

    key: the view's column that is the rowid; values: the trigger's values for rowid and columns,
    with `{0}` for the row (`new` or `old`); rank: a ranking function to configure, if any.
    """
    new, old = values.format("new"), values.format("old")
    for table, tokenize in (("fts_words", "porter unicode61 remove_diacritics 2"), ("fts_trigram", "trigram")):
        for trigger in ("ai", "ad", "au"):
            await tx.execute(f"DROP TRIGGER docs_{trigger}_{table}")
        await tx.execute(f"DROP TABLE {table}")
        await tx.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5({columns}, content='docs_fts', content_rowid='{key}',"
            f" tokenize='{tokenize}')"
        )
        if rank is not None:
            await tx.execute(f"INSERT INTO {table}({table}, rank) VALUES ('rank', '{rank}')")
        await tx.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
        await tx.execute(
            f"CREATE TRIGGER docs_ai_{table} AFTER INSERT ON docs BEGIN"
            f" INSERT INTO {table}(rowid, {columns}) VALUES ({new}); END"
        )
        await tx.execute(
            f"CREATE TRIGGER docs_ad_{table} AFTER DELETE ON docs BEGIN"
            f" INSERT INTO {table}({table}, rowid, {columns}) VALUES ('delete', {old}); END"
        )
        await tx.execute(
            f"CREATE TRIGGER docs_au_{table} AFTER UPDATE OF text, scope_id ON docs BEGIN"
            f" INSERT INTO {table}({table}, rowid, {columns}) VALUES ('delete', {old});"
            f" INSERT INTO {table}(rowid, {columns}) VALUES ({new}); END"
        )


async def m018_docs_last_used(tx: Tx) -> None:
    """When a document was last used in a prompt or recalled, so unused notes can fade."""
    await tx.execute("ALTER TABLE docs ADD COLUMN last_used_at REAL")


async def m019_token_usage(tx: Tx) -> None:
    """Tokens used per local day and purpose (background work has a daily budget)."""
    await tx.execute(
        """CREATE TABLE token_usage (
            day TEXT NOT NULL,
            purpose TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            calls INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (day, purpose))"""
    )


async def m020_fts_scope_rowids(tx: Tx) -> None:
    """Number each full-text entry `(scope_id << 32) + doc id`, so one user's entries form one rowid range.

    Since m017 a MATCH found one user's documents through a `scope` token; FTS5 still walked every
    user's entries of each query term to intersect them with it. A rowid range lets FTS5 seek to the
    scope's part of each term's list instead (measured in docs/benchmarks.md; the cost no longer grows
    with the other users' memories). `memory.index.scope_range` computes the same range. Document
    ids must stay below 2**32 (four billion) and scope ids below 2**31; every search also checks the
    document's scope. The keys are read from the view `docs_fts`, which FTS5 only scans whole
    (rebuild, integrity-check).
    """
    await tx.execute("DROP VIEW docs_fts")
    await tx.execute("CREATE VIEW docs_fts AS SELECT (scope_id << 32) + id AS key, text FROM docs")
    await _full_text_tables(tx, "text", "key", "({0}.scope_id << 32) + {0}.id, {0}.text")


async def m021_pending_state_and_choices(tx: Tx) -> None:
    """State that must survive a restart, and the choices shown under the bot's messages.

    `scope_state` holds one JSON value per scope and key: the open yes/no question, the notes behind the
    last answer (for /why), a reminder's "when?" question, the open topic offered to the model. `choices`
    records each message that shows buttons (or reactions, or numbered lines in the terminal): who may
    answer it, what each option does, and which question it belongs to, so a decided question's old
    buttons can be taken away and a reaction or number finds its meaning after a restart.
    """
    await tx.execute(
        """CREATE TABLE scope_state (
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (scope_id, key))"""
    )
    await tx.execute(
        """CREATE TABLE choices (
            id INTEGER PRIMARY KEY,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            channel TEXT NOT NULL,
            message_ref TEXT NOT NULL,
            owner TEXT,
            options TEXT NOT NULL,
            question TEXT NOT NULL DEFAULT '',
            extra TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            UNIQUE (channel, message_ref))"""
    )
    await tx.execute("CREATE INDEX choices_scope_question ON choices(scope_id, question)")


async def m022_erasure(tx: Tx) -> None:
    """What a user deletes for good leaves no trace in the indexes (memory/erasure.py).

    Both full-text indexes take a deleted document's entries out of their segments from now on (FTS5's
    'secure-delete' option, SQLite 3.42), and are rebuilt once without what earlier deletes left behind.
    The embedding cache loses the entries no document uses; `docs(content_hash)` finds whether one does.
    `erasures` holds a tombstone per erasure (scope, kind, id, never text), applied to every backup.
    """
    await tx.execute("CREATE INDEX IF NOT EXISTS docs_content_hash ON docs(content_hash)")
    await tx.execute(
        """CREATE TABLE IF NOT EXISTS erasures (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope_id INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('scope', 'note', 'person',
                                               'diary', 'thought', 'topic', 'summary', 'relationship')),
            item_id INTEGER,
            created_at REAL NOT NULL)"""
    )
    for table in ("fts_words", "fts_trigram"):
        await tx.execute(f"INSERT INTO {table}({table}, rank) VALUES ('secure-delete', 1)")
        await tx.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    await tx.execute("DELETE FROM embedding_cache WHERE content_hash NOT IN (SELECT content_hash FROM docs)")


async def m024_reflections_failures_and_late_pushes(tx: Tx) -> None:
    """Record reflections per scope, drop the "(nichts Neues)" thoughts, count failures, let the outbox drop items.

    A reflection that found nothing used to store the thought "(nichts Neues)" (indexed, shown by /thoughts)
    only to mark that it ran; now `scope_state` holds `reflected_at`, taken here from each scope's newest
    reflection thought, and those fake thoughts leave with their documents, vectors, full-text entries and
    audit entries. `failure_counts` keeps the failure counters (names and counts, no user data) across
    restarts. The outbox gets `due_at` (when a reminder was due, so a late one can say so) and the status
    `dropped` (a check-in that missed its window); SQLite cannot change a CHECK, so the table is rebuilt
    from its own stored definition, keeping every column and index other migrations gave it.
    """
    await tx.execute(
        "INSERT OR IGNORE INTO scope_state(scope_id, key, value, updated_at)"
        " SELECT scope_id, 'reflected_at', max(created_at), max(created_at) FROM thoughts"
        " WHERE origin = 'reflection' GROUP BY scope_id"
    )
    fake = "SELECT {0} FROM thoughts WHERE origin = 'reflection' AND text = '(nichts Neues)'"
    await tx.execute("DELETE FROM audit_log WHERE item_type = 'thought' AND action = 'create'"
                     f" AND item_id IN ({fake.format('id')})")
    if await tx.fetchone("SELECT 1 FROM sqlite_master WHERE name = 'vec_docs'"):  # made by the index, once it runs
        await tx.execute(f"DELETE FROM vec_docs WHERE doc_id IN ({fake.format('doc_id')})")
    await tx.execute(f"DELETE FROM docs WHERE id IN ({fake.format('doc_id')})")
    await tx.execute("DELETE FROM thoughts WHERE origin = 'reflection' AND text = '(nichts Neues)'")
    await tx.execute(
        """CREATE TABLE failure_counts (
            name TEXT PRIMARY KEY,
            count INTEGER NOT NULL DEFAULT 0,
            last_at REAL NOT NULL)"""
    )
    await tx.execute("ALTER TABLE outbox ADD COLUMN due_at REAL")
    await _rebuild(tx, "outbox", "CHECK (status IN ('pending', 'sent', 'failed'))",
                   "CHECK (status IN ('pending', 'sent', 'failed', 'dropped'))")


async def _rebuild(tx: Tx, table: str, old: str, new: str) -> None:
    """Recreate a table whose stored definition contains `old` with `new` instead, keeping rows and indexes."""
    sql = (await tx.fetchone("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)))[0]
    if old not in sql:
        raise RuntimeError(f"{table}: the definition does not contain {old!r}")
    extras = [r[0] for r in await tx.fetchall(
        "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL",
        (table,))]
    head = f"CREATE TABLE {table} ("
    if not sql.startswith(head):
        raise RuntimeError(f"{table}: unexpected definition {sql[:60]!r}")
    sequence = await tx.fetchone("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)) \
        if "AUTOINCREMENT" in sql.upper() else None
    await tx.execute(f"CREATE TABLE {table}_rebuilt (" + sql[len(head):].replace(old, new))
    await tx.execute(f"INSERT INTO {table}_rebuilt SELECT * FROM {table}")
    await tx.execute(f"DROP TABLE {table}")
    await tx.execute(f"ALTER TABLE {table}_rebuilt RENAME TO {table}")
    if sequence is not None:  # ids once handed out are never handed out again, deleted rows included
        now = await tx.fetchone("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,))
        await tx.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
        await tx.execute("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)",
                         (table, max(sequence[0], now[0] if now else 0)))
    for extra in extras:
        await tx.execute(extra)


async def m026_command_runs_and_shown_texts(tx: Tx) -> None:
    """Commands and presses by their channel id, so a replay never runs one twice; what each shown message displays.

    `command_runs` records a command (or button press) as started before it runs and its reply until the
    channel delivered it; a replay after a crash delivers that reply again instead of running the command a
    second time. `inbox.shown_texts` holds, beside `shown`, what each of an unhandled update's messages
    displays (a streamed preview's words so far), so a replay neither repeats an edit nor shows fewer words.
    """
    await tx.execute(
        """CREATE TABLE command_runs (
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            channel TEXT NOT NULL,
            event_id TEXT NOT NULL,
            state TEXT NOT NULL,
            reply TEXT,
            created_at REAL NOT NULL,
            PRIMARY KEY (scope_id, channel, event_id))"""
    )
    await tx.execute("ALTER TABLE inbox ADD COLUMN shown_texts TEXT NOT NULL DEFAULT '[]'")


async def m027_item_numbers_and_welcomes(tx: Tx) -> None:
    """Each user's own numbers for notes, rules, reminders and people; whom the running bot has welcomed.

    `item_numbers` maps (scope, kind, number) to an item id; `item_number_counters` keeps the last number
    given per scope and kind, so a number is never given twice (it survives /deleteme, holding nothing but
    the count). `approved_users.welcomed_at` is set once the user was told they can write now; users
    approved before this migration count as welcomed.
    """
    await tx.execute(
        """CREATE TABLE item_numbers (
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            kind TEXT NOT NULL,
            number INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            PRIMARY KEY (scope_id, kind, number),
            UNIQUE (scope_id, kind, item_id))"""
    )
    await tx.execute(
        """CREATE TABLE item_number_counters (
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            kind TEXT NOT NULL,
            last INTEGER NOT NULL,
            PRIMARY KEY (scope_id, kind))"""
    )
    await tx.execute("ALTER TABLE approved_users ADD COLUMN welcomed_at REAL")
    await tx.execute("UPDATE approved_users SET welcomed_at = approved_at")


MIGRATIONS: list[Migration] = [
    m001_scopes_and_meta,
    m002_messages,
    m003_memory_items,
    m004_search_index,
    m005_conversation_state,
    m006_audit_undo,
    m007_pending_profile,
    m008_preferences,
    m009_outbox,
    m010_access,
    m011_inbox,
    m012_companions_and_relationships,
    m013_people,
    m014_reminders,
    m015_admission_counts,
    m016_inbox_shown,
    m017_fts_scope,
    m018_docs_last_used,
    m019_token_usage,
    m020_fts_scope_rowids,
    m021_pending_state_and_choices,
    m022_erasure,
    m024_reflections_failures_and_late_pushes,
    m026_command_runs_and_shown_texts,
    m027_item_numbers_and_welcomes,
]


async def applied_migrations(db: Database) -> set[str]:
    """Names of the migrations recorded in the database (none for a new file)."""
    async with db.reading() as tx:
        exists = await tx.fetchone("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'")
        if not exists:
            return set()
        return {row[0] for row in await tx.fetchall("SELECT name FROM migrations")}


async def migrate(db: Database, backup_dir: Path | None = None) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction; return their names.

    With backup_dir, an existing database is copied there first whenever something is to be applied.
    """
    done = await applied_migrations(db)
    todo = pending(done)
    if todo and done and backup_dir is not None:
        from memory.backup import backup, backup_name

        copy = await backup(db, backup_name(backup_dir, "before-migration"))
        log.warning("backed up the database to %s before applying %s", copy, ", ".join(todo))
    async with db.transaction() as tx:
        await tx.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
        )
    applied = []
    for migration in MIGRATIONS:
        name = migration.__name__
        if name in done:
            continue
        async with db.transaction() as tx:
            await migration(tx)
            await tx.execute("INSERT INTO migrations(name, applied_at) VALUES (?, ?)", (name, time.time()))
        log.info("applied migration %s", name)
        applied.append(name)
    return applied


def pending(applied: set[str]) -> list[str]:
    """Names of the migrations not in applied, in order."""
    return [m.__name__ for m in MIGRATIONS if m.__name__ not in applied]
