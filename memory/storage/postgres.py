"""The PostgreSQL store (MNEMO_DATABASE_URL=postgresql://…): one psycopg connection per process, the same
transactions and statements as the SQLite file (`memory.storage.db`), rewritten where the dialects differ
(`memory.storage.sql_dialect`)."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.errors import DriverUnavailable
from memory.storage.db import Database, Tx
from memory.storage.sql_dialect import insert_target, returns, to_postgres

log = logging.getLogger(__name__)

SCHEMES = ("postgresql://", "postgres://")
PG_NAME = "postgres"  # what stands in the data directory for the database file (never created)


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


class PostgresDatabase(Database):
    """One psycopg connection in autocommit mode; a lock serializes its transactions as on SQLite.

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

    @classmethod
    async def connect(cls, url: str, data_dir: Path | str) -> PostgresDatabase:
        """Connect to the server at url (the data directory holds everything else mnemo keeps)."""
        psycopg = _psycopg()
        try:
            conn = await psycopg.AsyncConnection.connect(url, autocommit=True, cursor_factory=psycopg.AsyncClientCursor)
        except psycopg.OperationalError as exc:
            raise DriverUnavailable(f"cannot connect to PostgreSQL at {shown_url(url)}: {exc}".strip()) from exc
        conn.adapters.register_loader("numeric", _number_loader(psycopg))
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
            await self._pg.execute("VACUUM")

    def shown(self) -> str:
        """The server's URL without its password."""
        return shown_url(self.server)

    async def close(self) -> None:
        """Close the connection."""
        await self._pg.close()

    BEGIN = "BEGIN"
    SKIP_LOCKED = " FOR UPDATE SKIP LOCKED"
    FOR_UPDATE = " FOR UPDATE"

    async def _run(self, sql: str) -> None:
        await self._pg.execute(sql)

    async def _tx(self) -> Tx:
        return PgTx(self._pg, await self._identity_tables())

    async def _identity_tables(self) -> set[str]:
        """The tables whose `id` the server numbers (an INSERT into one returns it, as SQLite's lastrowid)."""
        if self._identity is None or not self._identity:
            cursor = await self._pg.execute(
                "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND column_name = 'id' AND (is_identity = 'YES' OR column_default LIKE 'nextval%%')")
            self._identity = {r[0] for r in await cursor.fetchall()}
        return self._identity

    def forget_schema(self) -> None:
        """Read the tables again at the next transaction (after a migration created some)."""
        self._identity = None


class PgTx(Tx):
    """Statements inside a transaction or a read block, in PostgreSQL's dialect."""

    dialect = "postgres"

    def __init__(self, conn: Any, identity: set[str]) -> None:  # noqa: D107
        self._pg = conn
        self._identity = identity
        self._rowcount = 0

    async def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Execute one statement; an INSERT into a numbered table returns the new row's id (else 0)."""
        text = to_postgres(sql)
        target = insert_target(sql)
        wants_id = target is not None and target in self._identity and not returns(sql)
        if wants_id:
            text += " RETURNING id"
        cursor = await self._pg.execute(text, _params(params))
        self._rowcount = cursor.rowcount
        if wants_id:
            row = await cursor.fetchone()
            return int(row[0]) if row else 0
        return 0

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Execute one statement for many parameter rows."""
        batch = [_params(r) for r in rows]
        if batch:
            async with self._pg.cursor() as cursor:
                await cursor.executemany(to_postgres(sql), batch)
                self._rowcount = cursor.rowcount

    async def fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """Return all rows of a query."""
        cursor = await self._pg.execute(to_postgres(sql), _params(params))
        self._rowcount = cursor.rowcount
        if cursor.description is None:
            return []
        return await cursor.fetchall()

    async def fetchone(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Return the first row of a query, or None."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def script(self, sql: str) -> None:
        """Run several statements without parameters (a schema)."""
        await self._pg.execute(sql.encode())

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
