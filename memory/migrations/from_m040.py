"""Migrations from m040 on (the search keeps a scope's documents in RAM: `memory.search.scope_arrays`; several
workers share one database: leases, claims, the slots of repeating jobs).

Frozen once released: databases record their names. A new migration goes at the end here and into the
list MIGRATIONS in memory/migrations.
"""
from __future__ import annotations

from memory.storage.db import Tx


async def m040_scope_changes(tx: Tx) -> None:
    """Two counters per scope, kept by triggers on `docs`: documents added, documents deleted or rewritten.

    A search compares them with what it holds of the scope in memory: `added` alone moved, it reads the
    documents added since; `changed` moved, it reads the scope again. Triggers count every writer (another
    process, a migration, an erasure), so no path can leave a process searching what was deleted.
    """
    await tx.execute("CREATE TABLE scope_changes (scope_id INTEGER PRIMARY KEY, added INTEGER NOT NULL DEFAULT 0,"
                     " changed INTEGER NOT NULL DEFAULT 0)")
    await tx.execute("INSERT INTO scope_changes(scope_id, added) SELECT scope_id, count(*) FROM docs GROUP BY scope_id")

    def bump(column: str, scope: str) -> str:
        return (f"INSERT INTO scope_changes(scope_id, {column}) VALUES ({scope}, 1)"
                f" ON CONFLICT(scope_id) DO UPDATE SET {column} = {column} + 1;")

    await tx.execute(f"CREATE TRIGGER docs_added AFTER INSERT ON docs BEGIN {bump('added', 'NEW.scope_id')} END")
    await tx.execute(f"CREATE TRIGGER docs_deleted AFTER DELETE ON docs BEGIN {bump('changed', 'OLD.scope_id')} END")
    await tx.execute("CREATE TRIGGER docs_rewritten AFTER UPDATE OF scope_id, source, text, content_hash, created_at"
                     f" ON docs BEGIN {bump('changed', 'OLD.scope_id')} {bump('changed', 'NEW.scope_id')} END")


async def m041_worker_leases(tx: Tx) -> None:
    """Coordination of several workers on one database: named leases (the scheduler's, Matrix sync's), and who
    holds an inbox entry or an outbox message until when.

    `inbox.thread` is the conversation an update belongs to (a chat, a room): a worker claims a conversation's
    unhandled updates together, so one person's messages are answered in order. One process on SQLite needs
    none of it; the columns stay empty there unless a caller claims.
    """
    real = "DOUBLE PRECISION" if tx.dialect == "postgres" else "REAL"
    await tx.execute(f"CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, until {real} NOT NULL)")
    for table in ("inbox", "outbox"):
        await tx.execute(f"ALTER TABLE {table} ADD COLUMN claimed_by TEXT")
        await tx.execute(f"ALTER TABLE {table} ADD COLUMN claimed_until {real}")
    await tx.execute("ALTER TABLE inbox ADD COLUMN thread TEXT")
    await tx.execute("CREATE INDEX inbox_threads ON inbox(channel, thread, handled_at)")


async def m042_no_trigram_index(tx: Tx) -> None:
    """PostgreSQL: the pg_trgm index over the documents' texts (created by the first PostgreSQL stores where the
    server had the extension) goes: word parts are found in the texts the search keeps of each scope
    (`memory.search.scope_arrays`), and the index only slowed the writes. The extension itself stays (the operator's).
    SQLite: nothing."""
    if tx.dialect == "postgres":
        await tx.execute("DROP INDEX IF EXISTS docs_text_trgm")


async def m043_job_slots(tx: Tx) -> None:
    """The slots of repeating scheduler jobs (the planner's quarter hours) that were run: who started one when, and
    when it was done. Several workers' schedulers each keep their own job store; this table makes one slot run once
    across them, and lets the next one finish a slot whose runner died."""
    real = "DOUBLE PRECISION" if tx.dialect == "postgres" else "REAL"
    await tx.execute(f"CREATE TABLE job_slots (job TEXT NOT NULL, slot {real} NOT NULL, worker TEXT NOT NULL,"
                     f" started_at {real} NOT NULL, done_at {real}, PRIMARY KEY (job, slot))")


async def m044_incognito_activity(tx: Tx) -> None:
    """Incognito chatting as the planner sees it, per scope: how many messages, when the last came, and the newest
    check-in one answered in time; never a word of them. A check-in does not interrupt incognito chatting, and an
    answer in incognito is not an ignored check-in. /deleteme erases the row with the scope's others."""
    real = "DOUBLE PRECISION" if tx.dialect == "postgres" else "REAL"
    await tx.execute(f"CREATE TABLE incognito_activity (scope_id INTEGER PRIMARY KEY, messages INTEGER NOT NULL,"
                     f" last_at {real} NOT NULL, answered_checkin {real})")


async def m045_person_slots(tx: Tx) -> None:
    """Per person, the slot of a repeating job that wrote to them (the planner's check-in): claimed before the message
    is written, so a worker that lost the scheduler lease in the middle of a person and the next leader running the
    same slot send that person one check-in, not two."""
    real = "DOUBLE PRECISION" if tx.dialect == "postgres" else "REAL"
    await tx.execute(f"CREATE TABLE person_slots (job TEXT NOT NULL, slot {real} NOT NULL, scope_id INTEGER NOT NULL,"
                     f" worker TEXT NOT NULL, claimed_at {real} NOT NULL, PRIMARY KEY (job, slot, scope_id))")


async def m046_docs_entered_at(tx: Tx) -> None:
    """When a document entered the memory, where that is not when it was said: a note approved from a history
    import. Ranking and fading count from it (empty: from `created_at`), so an imported note starts as fresh as a
    note written the day it was approved; `created_at` keeps the day it was said, for dates and time windows."""
    real = "DOUBLE PRECISION" if tx.dialect == "postgres" else "REAL"
    await tx.execute(f"ALTER TABLE docs ADD COLUMN entered_at {real}")


async def m047_voice_recordings(tx: Tx) -> None:
    """The kept voice notes (MNEMO_VOICE_KEEP) as rows: the audio of a logged message, scoped like it. They were
    files in each worker's data directory, where the other workers' /deleteme and /export did not reach them; a
    voice note is tens of KB, a row every worker reads (SQLite BLOB, PostgreSQL bytea). A recording goes with its
    message (ON DELETE CASCADE) and with its scope (`erasure.erase_scope`: every table with a scope id)."""
    pg = tx.dialect == "postgres"
    number, real, blob = ("BIGINT", "DOUBLE PRECISION", "BYTEA") if pg else ("INTEGER", "REAL", "BLOB")
    deferrable = " DEFERRABLE" if pg else ""  # as every scope reference there: the erasure defers its checks
    await tx.execute(
        f"CREATE TABLE voice_recordings (scope_id {number} NOT NULL REFERENCES scopes(id){deferrable},"
        f" message_id {number} NOT NULL REFERENCES messages(id) ON DELETE CASCADE{deferrable},"
        f" format TEXT NOT NULL, audio {blob} NOT NULL, kept_at {real} NOT NULL, PRIMARY KEY (scope_id, message_id))")


async def m048_inbox_sent_order(tx: Tx) -> None:
    """`inbox.sent_order`: an update's place in the messenger's order (Telegram's update id, Matrix's server time in
    milliseconds). Two updates of one chat received by two workers can be recorded in the other order; the inbox
    hands a chat's updates out in this one. Rows recorded before it have none and come first, in recording order."""
    integer = "BIGINT" if tx.dialect == "postgres" else "INTEGER"
    await tx.execute(f"ALTER TABLE inbox ADD COLUMN sent_order {integer}")


async def m049_use_vectors(tx: Tx) -> None:
    """The second bundled signal's vector per document: Universal Sentence Encoder multilingual v3 (512 dimensions,
    float16 bytes), scoped like the document. It goes with its document (ON DELETE CASCADE: /forget, expiry, an
    edit's old text) and with its scope (`erasure.erase_scope`: every table with a scope id). Documents written
    before, or while the signal is off, have none; `mnemo reindex` fills them (`memory.search.use_signal`)."""
    pg = tx.dialect == "postgres"
    number, blob = ("BIGINT", "BYTEA") if pg else ("INTEGER", "BLOB")
    deferrable = " DEFERRABLE" if pg else ""  # as every scope reference there: the erasure defers its checks
    await tx.execute(
        f"CREATE TABLE use_vectors (doc_id {number} PRIMARY KEY REFERENCES docs(id) ON DELETE CASCADE{deferrable},"
        f" scope_id {number} NOT NULL REFERENCES scopes(id){deferrable}, vector {blob} NOT NULL)")
    await tx.execute("CREATE INDEX use_vectors_scope ON use_vectors(scope_id)")


async def m050_message_kinds(tx: Tx) -> None:
    """`messages.kind`: what kind of message the companion sent ('reply', 'help', 'press', 'checkin', 'reminder',
    'morning', 'date', 'diary'; '' for the person's own). A typed answer counts only when nothing the companion sent
    came between the question and it, whatever kind that was. Rows logged before: a check-in by `proactive`, another
    push by its channel ('push': the kind was not kept), the rest replies."""
    await tx.execute("ALTER TABLE messages ADD COLUMN kind TEXT NOT NULL DEFAULT ''")
    await tx.execute("UPDATE messages SET kind = 'checkin' WHERE role = 'assistant' AND proactive = 1")
    await tx.execute("UPDATE messages SET kind = 'push' WHERE role = 'assistant' AND kind = ''"
                     " AND channel = 'proactive'")
    await tx.execute("UPDATE messages SET kind = 'reply' WHERE role = 'assistant' AND kind = ''")


async def m051_preference_changes(tx: Tx) -> None:
    """`preferences.changes`: how often a preference was set. The scheduler's leader watches the table's sum (with
    the reminders' fingerprint) and moves the jobs when a setting changed on another worker; it is written by the same
    statement as the setting, so no worker's change can reach the table without reaching the leader."""
    integer = "BIGINT" if tx.dialect == "postgres" else "INTEGER"
    await tx.execute(f"ALTER TABLE preferences ADD COLUMN changes {integer} NOT NULL DEFAULT 0")


async def m052_embedding_calibrations(tx: Tx) -> None:
    """A model's thresholds measured on its own cosines (`memory.search.calibration`), beside its name: the cosine of
    a duplicate note, the prompt's relevance floor, a one-word keyword search's (NULL: by words only), when they were
    measured and on how many labelled pairs. Kept per model, not per scope: like `meta`'s recorded model, they belong
    to the database's vectors. The bundled e5 has none (its shipped values)."""
    real = "DOUBLE PRECISION" if tx.dialect == "postgres" else "REAL"
    integer = "BIGINT" if tx.dialect == "postgres" else "INTEGER"
    await tx.execute(f"CREATE TABLE embedding_calibrations (model TEXT PRIMARY KEY, duplicate {real} NOT NULL,"
                     f" relevant {real} NOT NULL, keyword {real}, measured_at {real} NOT NULL,"
                     f" pairs {integer} NOT NULL)")


async def m053_turns_in_context(tx: Tx) -> None:
    """Messages are embedded read after the message before them (`memory.search.turn_context`): an index to find
    that message, and marks for the messages stored before, whose vectors are of their own words. A catch-up re-embeds
    those in batches, in the background at start and in `mnemo reindex`, and removes the marks when done."""
    await tx.execute("CREATE INDEX messages_scope_order ON messages(scope_id, id)")
    row = await tx.fetchone("SELECT max(id) FROM docs WHERE source = 'message'")
    if row is not None and row[0] is not None:
        await tx.execute("INSERT INTO meta(key, value) VALUES ('turns_in_context_after', '0')")
        await tx.execute("INSERT INTO meta(key, value) VALUES ('turns_in_context_until', ?)", (str(row[0]),))
