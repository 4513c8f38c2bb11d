"""Errors raised by the memory package.

    MemoryStoreError
    ├── DriverUnavailable   no SQLite driver here can load sqlite-vec
    ├── ModelMismatch       the database was indexed with another embedding model
    ├── NotFound            no such item in this scope
    ├── Expired             a pairing code was found but is no longer valid
    ├── EmbeddingFailed     the embedder raised or returned the wrong shape
    │   └── EmbeddingUnavailable   the embedding server is down, too slow or answered garbage (for now)
    ├── CompanionExists     a companion with this id was already created
    ├── ReminderFired       /undo of a reminder's creation or move after it fired
    ├── CopyRefused         the copy to PostgreSQL cannot start or go on (`memory.storage.postgres_copy`)
    └── DatabaseUnavailable the PostgreSQL server cannot be reached, or the connection was lost inside a transaction
"""
from __future__ import annotations


class MemoryStoreError(Exception):
    """Base of every error the memory package raises."""


class DriverUnavailable(MemoryStoreError):
    """No SQLite driver in this environment can load the sqlite-vec extension."""


class ModelMismatch(MemoryStoreError):
    """The database's vectors come from a different embedding model than the configured one."""


class NotFound(MemoryStoreError):
    """The item does not exist in the caller's scope."""


class EmbeddingFailed(MemoryStoreError):
    """The embedder failed or returned vectors of the wrong dimension."""


class EmbeddingUnavailable(EmbeddingFailed):
    """The embedding server could not give vectors just now (down, past its timeout, an error, an unreadable answer);
    a search then finds by words only and a text left unindexed is indexed later."""


class Expired(MemoryStoreError):
    """The item exists but its time has run out (a pairing code past its validity)."""


class CompanionExists(MemoryStoreError):
    """A companion with this id already exists; its core personality is never rewritten."""


class ReminderFired(MemoryStoreError):
    """/undo was asked to take back a reminder's creation (or a move of it) after it fired: it came, so taking it back
    would cancel what was delivered, or bring back a time that passed (it would come again). `texts`: its words."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__(f"reminders fired since: {texts}")
        self.texts = texts


class CopyRefused(MemoryStoreError):
    """The copy from SQLite to PostgreSQL cannot start (a source not migrated, a target holding other data) or a
    row stopped it; what was copied stays and a new run goes on from there."""


class DatabaseUnavailable(MemoryStoreError):
    """The PostgreSQL server cannot be reached just now, or the connection was lost where a statement cannot safely be
    run again (inside a transaction: the server rolled it back; at its COMMIT: whether it was kept is unknown). The
    next block connects again."""
