"""Migrations m001 to m012: the first schema (scopes, messages, memory items, search index, state, audit, outbox,
access, inbox, companions). Frozen: databases record these names, so a migration is never changed or renamed."""
from __future__ import annotations

from memory.storage.db import Tx


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
