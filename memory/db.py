"""Open the SQLite file with a driver that can load sqlite-vec, and serialize access from asyncio."""
from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from memory.errors import DriverUnavailable

log = logging.getLogger(__name__)

# Tried in this order. Never import two of these in one process: sqlean and pysqlite3 together
# crashed the interpreter, so the first module that can load extensions wins and is kept.
_DRIVERS = ("sqlite3", "sqlean", "pysqlite3")
_chosen: Any = None
MMAP_BYTES = 1 << 30


def sqlite_module() -> Any:
    """Return the first DB-API sqlite module here that can load extensions."""
    global _chosen
    if _chosen is not None:
        return _chosen
    for name in _DRIVERS:
        try:
            module = sqlite3 if name == "sqlite3" else importlib.import_module(name)
        except ImportError:
            continue
        probe = module.connect(":memory:")
        try:
            if hasattr(probe, "enable_load_extension"):
                _chosen = module
                return module
        finally:
            probe.close()
    raise DriverUnavailable(
        "This Python's sqlite3 cannot load extensions; install sqlean-py "
        "(pip install sqlean-py) or pysqlite3-binary so mnemo can use sqlite-vec."
    )


def connect_sync(path: Path | str) -> Any:
    """Open a connection in autocommit mode with sqlite-vec loaded and WAL on."""
    import sqlite_vec

    module = sqlite_module()
    conn = module.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    # Read through a memory map: a vector search reads every vector of the user (15 MB at 10k
    # notes), which through read() calls took 8.6 ms and through the map 5.1 ms.
    conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    return conn


class Database:
    """One aiosqlite connection; every statement runs on its thread, never on the event loop.

    A lock serializes transactions so that statements of two coroutines never interleave
    inside one BEGIN ... COMMIT.
    """

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()
        self._aside: aiosqlite.Connection | None = None  # see aside(); opened on first use
        self._aside_lock = asyncio.Lock()
        self.path = path

    @classmethod
    async def open(cls, path: Path | str) -> Database:
        """Open (and create) the database file at path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = aiosqlite.Connection(lambda: connect_sync(path), iter_chunk_size=64)
        await conn
        return cls(conn, path)

    async def close(self) -> None:
        """Close the connections."""
        async with self._aside_lock:
            if self._aside is not None:
                await self._aside.close()
                self._aside = None
        await self._conn.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """Run the block as one write transaction; any exception rolls everything back."""
        async with self._lock:
            await self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(self._conn)
            except BaseException:
                await self._conn.execute("ROLLBACK")
                raise
            else:
                await self._conn.execute("COMMIT")

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Tx]:
        """Run the block's reads without interleaving with a running transaction."""
        async with self._lock:
            yield Tx(self._conn)

    @contextlib.asynccontextmanager
    async def aside(self) -> AsyncIterator[Tx]:
        """Reads on a second connection (its own thread), alongside what the main connection runs.

        WAL lets a reader run while the main connection reads or writes, so a long read here (a
        vector search) uses the second core. It sees the last committed state, which may be a moment
        older or newer than what a block on the main connection reads; use it for reads where that
        does not matter.
        """
        async with self._aside_lock:
            if self._aside is None:
                path = self.path
                self._aside = aiosqlite.Connection(lambda: connect_sync(path), iter_chunk_size=64)
                await self._aside
            yield Tx(self._aside)


class Tx:
    """Statements inside a transaction or a read block."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Execute one statement and return lastrowid."""
        cursor = await self._conn.execute(sql, params)
        rowid = cursor.lastrowid
        await cursor.close()
        return int(rowid or 0)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Execute one statement for many parameter rows."""
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """Return all rows of a query."""
        return list(await self._conn.execute_fetchall(sql, params))

    async def fetchone(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Return the first row of a query, or None."""
        rows = list(await self._conn.execute_fetchall(sql, params))
        return rows[0] if rows else None

    async def changes(self) -> int:
        """Rows changed by the last statement."""
        row = await self.fetchone("SELECT changes()")
        return int(row[0])
