"""Open the SQLite file with a driver that can load sqlite-vec, and serialize access from asyncio."""
from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import sqlite3
import stat
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from memory.errors import DriverUnavailable, NotFound

log = logging.getLogger(__name__)

# Tried in this order. Never import two of these in one process: sqlean and pysqlite3 together
# crashed the interpreter, so the first module that can load extensions wins and is kept.
_DRIVERS = ("sqlite3", "sqlean", "pysqlite3")
_chosen: Any = None
MMAP_BYTES = 1 << 30
# FTS5 learned to erase a deleted document's words from its index (the 'secure-delete' option) in 3.42.
MIN_SQLITE = (3, 42, 0)
BACKUPS = "backups"  # the folder beside the database file that holds its backups
PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600
# What mnemo writes beside its database file: the SQLite files of both databases, and these folders.
_OWN_FILES = ("jobs.sqlite3",)
_OWN_DIRS = (BACKUPS, "matrix", "reports")


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
        if module.sqlite_version_info < MIN_SQLITE:
            continue
        probe = module.connect(":memory:")
        try:
            if hasattr(probe, "enable_load_extension"):
                _chosen = module
                return module
        finally:
            probe.close()
    raise DriverUnavailable(
        "This Python's sqlite3 cannot load extensions or is older than SQLite 3.42; install sqlean-py "
        "(pip install sqlean-py) or pysqlite3-binary so mnemo can use sqlite-vec."
    )


def _fold(value: object) -> object:
    """A text case folded for comparing (umlauts too, "ß" as "ss"); anything else as it is."""
    return value.casefold() if isinstance(value, str) else value


def connect_sync(path: Path | str, journal: str = "WAL") -> Any:
    """Open a connection in autocommit mode with sqlite-vec loaded, WAL on and deleted content zeroed.

    journal: the journal mode; a backup is kept in one file ("DELETE").
    """
    import sqlite_vec

    module = sqlite_module()
    conn = module.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    # fold(text): case folded as Python folds it (SQLite's LIKE folds ASCII only: "Äpfel" would miss "äpfel").
    conn.create_function("fold", 1, _fold, deterministic=True)
    # Deleted rows and freed pages are overwritten with zeros, so what a user deletes leaves no bytes behind.
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute(f"PRAGMA journal_mode={journal}")
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
    inside one BEGIN ... COMMIT. `dialect` says which SQL the database speaks (`memory.storage.postgres` is the other).
    """

    dialect = "sqlite"
    url: str | None = None  # a server's URL (PostgreSQL); None for the file at `path`
    # What a claiming SELECT ends with: nothing here, where one process's transactions run one after another;
    # PostgreSQL's workers lock the rows they claim and skip those another worker holds.
    SKIP_LOCKED = ""
    # What locks the rows a statement reads until the transaction ends (nothing: SQLite has one writer at a time).
    FOR_UPDATE = ""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()
        self.path = path

    @classmethod
    async def open(cls, path: Path | str, journal: str = "WAL") -> Database:
        """Open (and create) the database file at path; its folder and files are kept private (0700, 0600)."""
        path = Path(path)
        make_private(path)
        conn = aiosqlite.Connection(lambda: connect_sync(path, journal), iter_chunk_size=64)
        await conn
        return cls(conn, path)

    @property
    def backup_dir(self) -> Path:
        """The folder of this database's backups (before migrations, `mnemo backup`)."""
        return self.path.parent / BACKUPS

    async def checkpoint(self) -> bool:
        """Copy the write-ahead log into the database file and cut the log to zero bytes; False when a reader
        kept it from finishing (its pages stay in the log until the next checkpoint).
        """
        async with self._lock:
            rows = await self._conn.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
        busy = any(bool(row[0]) for row in rows)
        if busy:
            log.warning("the write-ahead log of %s could not be emptied (a reader was busy)", self.path)
        return not busy

    async def vacuum(self) -> None:
        """Rewrite the database file without free space, then empty the write-ahead log."""
        async with self._lock:
            await self._conn.execute("VACUUM")
        await self.checkpoint()

    async def reachable(self, timeout: float = 5.0) -> bool:
        """Whether a query answers within `timeout` seconds (for /healthz); why not is logged."""
        try:
            async with asyncio.timeout(timeout), self.reading() as tx:
                await tx.fetchone("SELECT 1")
        except Exception as exc:  # closed, the driver's own errors, TimeoutError: all mean "not now"
            log.warning("the database %s does not answer: %r", self.shown(), exc)
            return False
        return True

    def shown(self) -> str:
        """Where the database is, for log lines (a server's URL without its password)."""
        return str(self.path)

    async def close(self) -> None:
        """Close the connection."""
        await self._conn.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """Run the block as one write transaction; any exception rolls everything back."""
        async with self._lock:
            await self._begin()
            try:
                yield await self._tx()
            except BaseException:
                with contextlib.suppress(Exception):  # a connection gone: the server rolls back; the cause is raised
                    await self._run("ROLLBACK")
                raise
            else:
                await self._run("COMMIT")

    async def _begin(self) -> None:
        """BEGIN (IMMEDIATE on SQLite); when the task is cancelled meanwhile, the BEGIN still runs, so it is waited
        for and rolled back: a cancelled task never leaves the connection inside a transaction."""
        begin = asyncio.ensure_future(self._run(self.BEGIN))
        try:
            await asyncio.shield(begin)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await begin
                await self._run("ROLLBACK")
            raise

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Tx]:
        """Run the block's reads without interleaving with a running transaction."""
        async with self._lock:
            yield await self._tx()

    BEGIN = "BEGIN IMMEDIATE"  # a writer takes the file's write lock at once, not at its first write

    async def _run(self, sql: str) -> None:
        """Run one statement of the transaction's own (BEGIN, COMMIT, ROLLBACK)."""
        await self._conn.execute(sql)

    async def _tx(self) -> Tx:
        return Tx(self._conn)


def make_private(path: Path) -> None:
    """Create the database file's folder (0700) and the file itself (0600); tighten what mnemo wrote there before.

    SQLite gives the -wal, -shm and journal files the mode of the database file. Looser modes left by an
    earlier version are tightened, with one log line. A folder that is not the user's own or is shared
    (sticky, like /tmp) is left as it is.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    _create(path)
    tightened = tighten(folder, path.name)
    if tightened:
        log.warning("made %d files and folders in %s private to this user (0700 folders, 0600 files): %s",
                    len(tightened), folder, ", ".join(str(p.relative_to(folder)) for p in tightened))


def private_file(path: Path) -> Path:
    """Create path as an empty file only this user can read (0600), or take looser modes from it; return it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    _create(path)
    _chmod(path, PRIVATE_FILE)
    return path


def _create(path: Path) -> None:
    """Create an empty file with mode 0600 unless it exists (an existing one is not opened: it may be read-only)."""
    if path.exists():
        return
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))


def tighten(folder: Path, db_name: str) -> list[Path]:
    """Set 0700 on the data folder and mnemo's folders in it, 0600 on mnemo's files there; return what changed."""
    changed: list[Path] = []
    if _shared(folder):
        return changed
    if _chmod(folder, PRIVATE_DIR):
        changed.append(folder)
    for name in (db_name, *_OWN_FILES):
        for suffix in ("", "-wal", "-shm", "-journal"):
            if _chmod(folder / f"{name}{suffix}", PRIVATE_FILE):
                changed.append(folder / f"{name}{suffix}")
    for name in _OWN_DIRS:
        top = folder / name
        if not top.is_dir() or top.is_symlink():
            continue
        for root, _dirs, files in os.walk(top):
            if _chmod(Path(root), PRIVATE_DIR):
                changed.append(Path(root))
            changed += [Path(root) / f for f in files if _chmod(Path(root) / f, PRIVATE_FILE)]
    return changed


def _shared(folder: Path) -> bool:
    """Whether the folder belongs to someone else or is a shared one like /tmp (sticky)."""
    info = folder.stat()
    return info.st_uid != os.geteuid() or bool(info.st_mode & stat.S_ISVTX)


def _chmod(path: Path, mode: int) -> bool:
    """Take away group and other permissions beyond mode; True when something changed."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid() or not stat.S_IMODE(info.st_mode) & ~mode:
        return False
    os.chmod(path, stat.S_IMODE(info.st_mode) & mode)
    return True


class Tx:
    """Statements inside a transaction or a read block (SQLite's; `memory.storage.postgres.PgTx` is PostgreSQL's)."""

    dialect = "sqlite"

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Execute one statement and return lastrowid (in one trip to the connection's thread, not two)."""
        row = await self._conn.execute_insert(sql, params)
        return int(row[0] or 0) if row is not None else 0

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

    async def scoped_row(self, table: str, columns: str, scope_id: int, item_id: int, missing: str,
                         where: str = "") -> Any:
        """The `columns` of one of a scope's rows in `table` (`where` narrows it further), or NotFound(missing)."""
        row = await self.fetchone(f"SELECT {columns} FROM {table} WHERE id = ? AND scope_id = ?{where}",
                                  (item_id, scope_id))
        if row is None:
            raise NotFound(missing)
        return row

    async def changes(self) -> int:
        """Rows changed by the last statement."""
        row = await self.fetchone("SELECT changes()")
        return int(row[0])

    async def script(self, sql: str) -> None:
        """Run several statements without parameters (a schema)."""
        cursor = await self._conn.executescript(sql)
        await cursor.close()

    async def table_names(self) -> set[str]:
        """The ordinary tables of this database (on SQLite also the tables behind its full-text and vector tables)."""
        rows = await self.fetchall("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                                   " AND sql NOT LIKE 'CREATE VIRTUAL%'")
        return {r[0] for r in rows}

    async def column_names(self, table: str) -> list[str]:
        """A table's columns, in their order."""
        return [r[1] for r in await self.fetchall(f"PRAGMA table_info({table})")]

    async def has_table(self, name: str) -> bool:
        """Whether a table (or a full-text or vector table) of this name exists."""
        if self.dialect == "sqlite":
            return await self.fetchone("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)) is not None
        return name in await self.table_names()
