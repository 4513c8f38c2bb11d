"""A real PostgreSQL for the tests: the `pgserver` wheel's server (PostgreSQL 16 with pgvector), started once per
test run in a temporary folder (pytest-xdist's workers share it); each test gets a database of its own, copied from
a migrated template.

`MNEMO_REQUIRE_POSTGRES=1` (set by .ci/run) turns a server that cannot start into a failure instead of a skip.
"""
from __future__ import annotations

import asyncio
import fcntl
import itertools
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.backends import PostgresServer
from memory.migrations import migrate
from memory.storage.postgres import PostgresDatabase

TEMPLATE = "mnemo_template"
_server: PostgresServer | None = None
_names = itertools.count(1)


def _run_folder() -> Path | None:
    """The folder of the run's one server when pytest-xdist's workers run the tests (None: a server of our own)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    return Path(tempfile.gettempdir()) / f"mnemo-test-pg-{run}" if run else None


@contextmanager
def _run_lock() -> Iterator[None]:
    """Held while one worker sets the run's server or its template up (the others wait, then use it)."""
    folder = _run_folder()
    if folder is None:
        yield
        return
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def server() -> PostgresServer:
    """The run's server (the benchmarks' kind, `bench/backends.py`; started on first use, by the first worker)."""
    global _server
    if _server is None:
        try:
            with _run_lock():
                _server = PostgresServer(_run_folder())
        except ImportError as exc:
            if os.environ.get("MNEMO_REQUIRE_POSTGRES"):
                raise
            pytest.skip(f"PostgreSQL tests need the pgserver wheel ({exc})")
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):  # a throwaway server: no waiting on disks
            _admin(f"ALTER SYSTEM SET {setting} = off")
        _admin("SELECT pg_reload_conf()")
    return _server


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(server().url(), autocommit=True) as conn:
        conn.execute(sql)


def url_of(name: str) -> str:
    """The URL of one database on the test server."""
    return server().url(name)


_template_ready = False


async def _template() -> None:
    """Create and migrate the template once per run (under the run's lock: a template still being migrated, with a
    connection open to it, cannot be copied)."""
    global _template_ready
    if _template_ready:
        return
    server()
    with _run_lock():
        await _migrated_template()
    _template_ready = True


async def _migrated_template() -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(server().url(), autocommit=True) as conn:
        cursor = await conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (TEMPLATE,))
        if await cursor.fetchone():
            return
        await conn.execute(f"CREATE DATABASE {TEMPLATE}")
    db = await PostgresDatabase.connect(url_of(TEMPLATE), tempfile.gettempdir())
    try:
        await migrate(db)
    finally:
        await db.close()


async def fresh_database() -> str:
    """A new, migrated, empty database's URL."""
    await _template()
    name = f"mnemo_test_{os.getpid()}_{next(_names)}"
    # FILE_COPY copies the template's files (a checkpoint, cheap with fsync off); the default WAL_LOG writes every
    # block to the WAL: 0.07-0.12 s against 0.29 s a database here.
    await asyncio.to_thread(_admin, f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY FILE_COPY")
    return url_of(name)


def drop(url: str) -> None:
    """Drop a test's database (its connections closed)."""
    name = url.partition("?")[0].rsplit("/", 1)[1]
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
