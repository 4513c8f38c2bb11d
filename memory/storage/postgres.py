"""The PostgreSQL store (MNEMO_DATABASE_URL=postgresql://…): one psycopg connection per process, replaced when it
breaks (a restart, a failover, pg_terminate_backend); the same transactions and statements as the SQLite file
(`memory.storage.db`), rewritten where the dialects differ (`memory.storage.sql_dialect`)."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memory.errors import DatabaseUnavailable, DriverUnavailable
from memory.storage.db import Database, Tx
from memory.storage.sql_dialect import insert_target, returns, to_postgres

log = logging.getLogger(__name__)

SCHEMES = ("postgresql://", "postgres://")
PG_NAME = "postgres"  # what stands in the data directory for the database file (never created)
CONNECT_SECONDS = 5  # a connection attempt gives up after this long (unless the URL sets connect_timeout)
T = TypeVar("T")


def is_postgres(url: str | None) -> bool:
    """Whether a database setting names a PostgreSQL server."""
    return bool(url) and str(url).startswith(SCHEMES)


def shown_url(url: str) -> str:
    """The URL without its password, for log lines and messages."""
    head, sep, tail = url.partition("@")
    if not sep or "://" not in head:
        return url
    scheme, _, credentials = head.partition("://")
    return f"{scheme}://{credentials.partition(':')[0]}@{tail}"


@dataclass(frozen=True)
class ServerFacts:
    """What `mnemo doctor` tells about the server: its version and the extensions mnemo can use."""

    version: str
    extensions: dict[str, str | None]  # per extension the server offers: its version in this database, or None


async def server_facts(db: Database) -> ServerFacts:
    """The server's version and which of the extensions mnemo could use it offers."""
    async with db.reading() as tx:
        version = (await tx.fetchone("SHOW server_version"))[0]
        offered = await tx.fetchall("SELECT name, installed_version FROM pg_available_extensions"
                                    " WHERE name IN ('vector', 'pg_trgm')")
    return ServerFacts(str(version), {name: installed for name, installed in offered})


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise DriverUnavailable("MNEMO_DATABASE_URL names PostgreSQL, but psycopg is not installed "
                                "(pip install 'psycopg[binary]').") from exc
    return psycopg


def reconnect_wait(failures: int) -> float:
    """Seconds before the next attempt to connect after `failures` failed ones in a row: 0.25, doubling, at most 2."""
    return 0.0 if failures <= 0 else min(0.25 * 2 ** (failures - 1), 2.0)


def lost(conn: Any) -> bool:
    """Whether the connection is gone (closed, or broken by the server, a restart or the network)."""
    return bool(conn.closed or conn.broken)


async def _open(url: str) -> Any:
    """A new connection in autocommit mode, its parameters bound on the client; psycopg's OperationalError if not."""
    psycopg = _psycopg()
    extra = {} if "connect_timeout" in url else {"connect_timeout": CONNECT_SECONDS}
    conn = await psycopg.AsyncConnection.connect(url, autocommit=True, cursor_factory=psycopg.AsyncClientCursor,
                                                 **extra)
    conn.adapters.register_loader("numeric", _number_loader(psycopg))
    return conn


async def _mapped(run: Callable[[Any], Awaitable[T]], conn: Any, where: str) -> T:
    """Run on conn; an error that lost the connection becomes DatabaseUnavailable (others pass as they are)."""
    try:
        return await run(conn)
    except Exception as exc:
        if lost(conn):
            raise DatabaseUnavailable(f"the connection to PostgreSQL was lost {where}: {exc}".strip()) from exc
        raise


IN_TRANSACTION = "inside a transaction (the server rolled it back: nothing of it was kept)"
IN_READING = "in the middle of a read"


class PostgresDatabase(Database):
    """One psycopg connection in autocommit mode; a lock serializes its transactions as on SQLite.

    The connection is replaced when it breaks (a restart, a failover, pg_terminate_backend): a broken one is noticed
    before the next block, and a statement that fails because the connection was lost runs once more on a new one
    where nothing of the block ran yet (a reading block's first statement; a transaction's BEGIN, after which the
    caller's whole block runs on the new connection). Anywhere else such a failure raises DatabaseUnavailable, as does
    a server that cannot be reached (attempts back off from 0.25 to 2 s). Why one connection and not a pool: the lock
    lets one block run at a time, so a pool would lend out one connection anyway.

    Parameters are bound on the client (psycopg's ClientCursor): SQLite's loose typing of parameters
    (`? IS NULL`, a number where text is compared) reads the same here. `path` stands in the data directory
    (its parent is where recordings and reports live); there is no file.
    """

    dialect = "postgres"

    def __init__(self, conn: Any, url: str, data_dir: Path) -> None:  # noqa: D107 (the SQLite base has no conn)
        self._pg = conn
        self._lock = asyncio.Lock()
        self.url: str | None = url
        self.server = url  # the same, never None
        self.path = Path(data_dir) / PG_NAME
        self._identity: set[str] | None = None
        self._failures, self._next_try = 0, 0.0  # failed attempts to connect in a row; when the next may start
        self._lost_at: float | None = None  # when the connection was found lost (monotonic), until a new one opened

    @classmethod
    async def connect(cls, url: str, data_dir: Path | str) -> PostgresDatabase:
        """Connect to the server at url (the data directory holds everything else mnemo keeps)."""
        psycopg = _psycopg()
        try:
            conn = await _open(url)
        except psycopg.OperationalError as exc:
            raise DriverUnavailable(f"cannot connect to PostgreSQL at {shown_url(url)}: {exc}".strip()) from exc
        return cls(conn, url, Path(data_dir))

    @property
    def backup_dir(self) -> Path:
        """Backups of a PostgreSQL database are the operator's (pg_dump); mnemo keeps none beside it."""
        return self.path.parent / "backups-none"

    async def checkpoint(self) -> bool:
        """Nothing to empty: PostgreSQL's write-ahead log is the server's."""
        return True

    async def vacuum(self) -> None:
        """VACUUM: dead rows (deleted text among them) become free space the server reuses."""
        async with self._lock:
            await self._again_once(lambda conn: conn.execute("VACUUM"))

    def shown(self) -> str:
        """The server's URL without its password."""
        return shown_url(self.server)

    async def close(self) -> None:
        """Close the connection."""
        await self._pg.close()

    BEGIN = "BEGIN"
    SKIP_LOCKED = " FOR UPDATE SKIP LOCKED"
    FOR_UPDATE = " FOR UPDATE"

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Tx]:
        """Run the block's reads without interleaving with a running transaction (its first one retried once)."""
        async with self._lock:
            identity = await self._identity_tables()
            yield PgTx(self._pg, identity, IN_READING, again=self._again_once)

    async def _run(self, sql: str) -> None:
        """BEGIN (on a new connection when the old one was lost: nothing ran yet), COMMIT or ROLLBACK."""
        if sql == self.BEGIN:
            await self._again_once(lambda conn: conn.execute(sql))
            return
        where = "at COMMIT (whether the transaction was kept is unknown)" if sql == "COMMIT" else f"at {sql}"
        await _mapped(lambda conn: conn.execute(sql), self._pg, where)

    async def _tx(self) -> Tx:
        return PgTx(self._pg, await self._identity_tables(), IN_TRANSACTION)

    async def _identity_tables(self) -> set[str]:
        """The tables whose `id` the server numbers (an INSERT into one returns it, as SQLite's lastrowid)."""
        if self._identity is None or not self._identity:
            query = ("SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema()"
                     " AND column_name = 'id' AND (is_identity = 'YES' OR column_default LIKE 'nextval%%')")

            async def read(conn: Any) -> list[Any]:
                return list(await (await conn.execute(query)).fetchall())

            self._identity = {r[0] for r in await self._again_once(read)}
        return self._identity

    def forget_schema(self) -> None:
        """Read the tables again at the next transaction (after a migration created some)."""
        self._identity = None

    async def _again_once(self, run: Callable[[Any], Awaitable[T]]) -> T:
        """Run on the connection (a new one first when it broke); when it is lost meanwhile, once more on a new one.

        Only for what may run twice: nothing of a block ran before it.
        """
        if lost(self._pg):
            await self._replace()
        conn = self._pg
        try:
            return await run(conn)
        except Exception as exc:
            if not lost(conn):
                raise
            log.warning("lost the connection to PostgreSQL at %s (%s); running the statement again on a new one",
                        self.shown(), str(exc).strip() or repr(exc))
        return await _mapped(run, await self._replace(), "again right after connecting")

    async def _replace(self) -> Any:
        """A new connection in place of the lost one; DatabaseUnavailable while the server cannot be reached."""
        now = time.monotonic()
        if self._lost_at is None:
            self._lost_at = now
        if now < self._next_try:
            raise DatabaseUnavailable(f"PostgreSQL at {self.shown()} cannot be reached; the next attempt to connect"
                                      f" is in {self._next_try - now:.2f} s")
        with contextlib.suppress(Exception):  # a lost connection: closing it only frees what the client holds
            await self._pg.close()
        psycopg = _psycopg()
        try:
            self._pg = await _open(self.server)
        except psycopg.OperationalError as exc:
            self._failures += 1
            self._next_try = time.monotonic() + reconnect_wait(self._failures)
            if self._failures == 1:  # once per outage; each block that fails meanwhile is logged by its caller
                log.warning("cannot connect to PostgreSQL at %s (%s); trying again as blocks come, at most every"
                            " %g s", self.shown(), str(exc).strip(), reconnect_wait(99))
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {self.shown()}: {exc}".strip()) from exc
        log.warning("connected to PostgreSQL at %s again, %.1f s after the connection was found lost (%d failed"
                    " attempts)", self.shown(), time.monotonic() - self._lost_at, self._failures)
        self._failures, self._next_try, self._lost_at = 0, 0.0, None
        return self._pg


class PgTx(Tx):
    """Statements inside a transaction or a read block, in PostgreSQL's dialect.

    `again`: how a read block's first statement runs once more on a new connection when the old one was lost
    (`PostgresDatabase._again_once`); any other statement on a lost connection raises DatabaseUnavailable (`where` says
    where it was lost).
    """

    dialect = "postgres"

    def __init__(self, conn: Any, identity: set[str], where: str = IN_TRANSACTION,  # noqa: D107
                 again: Callable[[Callable[[Any], Awaitable[Any]]], Awaitable[Any]] | None = None) -> None:
        self._pg = conn
        self._identity = identity
        self._rowcount = 0
        self._where, self._again = where, again

    async def _call(self, run: Callable[[Any], Awaitable[T]]) -> T:
        """Run one statement: the first of a read block through `again`, every other one mapped."""
        if self._again is None:
            return await _mapped(run, self._pg, self._where)
        again, self._again = self._again, None

        def on(conn: Any) -> Awaitable[T]:
            self._pg = conn  # the block's next statements run where this one ran
            return run(conn)

        result: T = await again(on)
        return result

    async def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Execute one statement; an INSERT into a numbered table returns the new row's id (else 0)."""
        text = to_postgres(sql)
        target = insert_target(sql)
        wants_id = target is not None and target in self._identity and not returns(sql)
        if wants_id:
            text += " RETURNING id"

        async def run(conn: Any) -> int:
            cursor = await conn.execute(text, _params(params))
            self._rowcount = cursor.rowcount
            if wants_id:
                row = await cursor.fetchone()
                return int(row[0]) if row else 0
            return 0

        return await self._call(run)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Execute one statement for many parameter rows."""
        batch = [_params(r) for r in rows]
        if not batch:
            return

        async def run(conn: Any) -> None:
            async with conn.cursor() as cursor:
                await cursor.executemany(to_postgres(sql), batch)
                self._rowcount = cursor.rowcount

        await self._call(run)

    async def fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """Return all rows of a query."""

        async def run(conn: Any) -> list[Any]:
            cursor = await conn.execute(to_postgres(sql), _params(params))
            self._rowcount = cursor.rowcount
            if cursor.description is None:
                return []
            return list(await cursor.fetchall())

        return await self._call(run)

    async def fetchone(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Return the first row of a query, or None."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def script(self, sql: str) -> None:
        """Run several statements without parameters (a schema)."""
        await self._call(lambda conn: conn.execute(sql.encode()))

    async def changes(self) -> int:
        """Rows changed by the last statement."""
        return max(int(self._rowcount), 0)

    async def table_names(self) -> set[str]:
        """The ordinary tables of this database."""
        # pg_catalog rather than information_schema: the same answer, without its views' cost (the export asks
        # for every table's columns, many times a minute for many people).
        rows = await self.fetchall("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                                   " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')")
        return {r[0] for r in rows}

    async def column_names(self, table: str) -> list[str]:
        """A table's columns, in their order."""
        rows = await self.fetchall("SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
                                   " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
                                   " AND c.relname = ? AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                                   (table,))
        return [r[0] for r in rows]


def _params(params: Sequence[Any] | dict[str, Any]) -> Any:
    """SQLite's parameters as PostgreSQL reads them: a bool is a number there, as in mnemo's columns."""
    if isinstance(params, dict):
        return {k: int(v) if isinstance(v, bool) else v for k, v in params.items()}
    return [int(v) if isinstance(v, bool) else v for v in params]


def _number_loader(psycopg: Any) -> Any:
    """A loader of `numeric` values (what sum() of integers gives) as SQLite gives them: int, or float."""

    class Number(psycopg.adapt.Loader):  # type: ignore[misc]  # psycopg is imported when a URL names it
        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            return int(text) if text.lstrip("-").isdigit() else float(text)

    return Number
