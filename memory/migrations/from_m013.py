"""Migrations from m013 on (people, reminders, full-text scopes, erasure, numbers, …).

Frozen once released: databases record their names. A new migration goes at the end here (or into a new
module `from_mNNN.py` when this one nears 400 lines) and into the list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


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
    with the other users' memories). `memory.search.retrievers.scope_range` computes the same range. Document
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
    """What a user deletes for good leaves no trace in the indexes (memory/account/erasure.py).

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
