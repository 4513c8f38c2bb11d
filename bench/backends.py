"""Where a benchmark's stores live: SQLite files in a folder, or databases on a PostgreSQL server the benchmark
starts itself from the `pgserver` wheel (PostgreSQL 16 with pgvector) in a temporary folder, deleted at the end.

`--backend sqlite` (the default), `postgres`, `sqlite,postgres` or `both`: the same corpus and questions on each.
"""
from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BACKENDS = ("sqlite", "postgres")


def parse_backends(spec: str) -> list[str]:
    """The backends named by a `--backend` value, in the order given ("both" is sqlite, then postgres)."""
    names = list(BACKENDS) if spec.strip() == "both" else [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in BACKENDS]
    if unknown or not names:
        raise SystemExit(f"--backend: {', '.join(unknown) or 'nothing'} is not one of sqlite, postgres, both")
    return names


class PostgresServer:
    """A pgserver PostgreSQL in a temporary folder; each store gets a fresh database of its own."""

    def __init__(self, folder: Path | None = None) -> None:
        """A server in a new temporary folder, or in `folder`, where processes that name the same one share one
        server (pgserver counts its users; the last one to leave stops it and deletes the folder)."""
        import pgserver  # only the PostgreSQL runs need the wheel

        self._folder = folder or Path(tempfile.mkdtemp(prefix="mnemo-bench-pg-"))
        self._folder.mkdir(exist_ok=True)
        self._folder.chmod(0o755)  # pgserver runs the server as its own user when started as root
        self._server: Any = pgserver.get_server(self._folder / "data", cleanup_mode="delete")
        self._names = itertools.count(1)

    def url(self, name: str | None = None) -> str:
        """The URL of the server's own database, or of the database `name` on it."""
        return str(self._server.get_uri(name) if name else self._server.get_uri())

    def fresh_url(self, label: str) -> str:
        """The URL of a new, empty database (mnemo's migrations fill it when a store opens it)."""
        import psycopg

        name = f"bench_{''.join(c if c.isalnum() else '_' for c in label.lower())}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def version(self) -> str:
        """The server's version and pgvector's."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            row = conn.execute("SELECT current_setting('server_version'), (SELECT default_version"
                               " FROM pg_available_extensions WHERE name = 'vector')").fetchone()
        return f"PostgreSQL {row[0]}, pgvector {row[1]}" if row else "PostgreSQL"

    def restart(self) -> None:
        """`pg_ctl restart -m fast`, as a minor update of a managed server does: every connection is cut, the server
        comes back with the same settings and socket (also when it was stopped: pg_ctl then only starts it)."""
        self._pg_ctl("restart", "-m", "fast")

    def halt(self) -> None:
        """`pg_ctl stop -m fast`: every connection is cut and nothing answers until `restart`."""
        self._pg_ctl("stop", "-m", "fast")

    def _pg_ctl(self, *args: str) -> None:
        from pgserver._commands import pg_ctl  # the wheel's own pg_ctl, run as the user the server runs as

        pg_ctl(["-w", "-t", "60", *args], pgdata=self._server.pgdata, user=self._server.system_user, timeout=90)

    def stop(self) -> None:
        """Stop the server and delete its folder."""
        self._server.cleanup()
        shutil.rmtree(self._folder, ignore_errors=True)


@contextmanager
def places(backends: list[str]) -> Iterator[dict[str, PostgresServer | None]]:
    """For each backend, the server its stores go to (None for SQLite); a PostgreSQL one is stopped at the end."""
    server = PostgresServer() if "postgres" in backends else None
    try:
        yield {name: (server if name == "postgres" else None) for name in backends}
    finally:
        if server is not None:
            server.stop()


def database_url(server: PostgresServer | None, label: str) -> str | None:
    """A fresh database's URL on server, or None for an SQLite store (`MemoryStore.open(..., database_url=...)`)."""
    return None if server is None else server.fresh_url(label)
