"""bench/scale.py on both backends in one run (issue 26): the same notes and questions on SQLite and on a PostgreSQL
the bench starts itself (bench/backends.py), each backend's figures measured on its own store."""
from __future__ import annotations

import asyncio

import pytest

from bench import scale
from bench.backends import parse_backends, places


def test_backends_are_named_as_the_issue_names_them() -> None:
    assert parse_backends("both") == ["sqlite", "postgres"]
    assert parse_backends("postgres, sqlite") == ["postgres", "sqlite"]
    with pytest.raises(SystemExit, match="mysql"):
        parse_backends("sqlite,mysql")
    with pytest.raises(SystemExit):
        parse_backends(" , ")


def test_scale_measures_the_same_stores_on_sqlite_and_postgres() -> None:
    pytest.importorskip("pgserver")
    embedder = scale.TopicEmbedder()  # the queries' embedder too: no model to load
    reports = []
    with places(["sqlite", "postgres"]) as servers:
        for backend, server in servers.items():
            reports.append(asyncio.run(scale.run([60], 40, 2, 14, 1, None, backend, server, embedder)))
    sqlite, postgres = reports
    assert (sqlite.backend, postgres.backend) == ("sqlite", "postgres")
    for report in reports:
        assert [(f.backend, f.store, f.users, f.notes, f.queries) for f in report.figures] == [
            (report.backend, "one", 1, 60, 4), (report.backend, "spread", 2, 40, 4)]
        assert all(f.search_p50_ms > 0 and set(f.alone_p50_ms) == {"vector", "words", "trigram"}
                   for f in report.figures)
        assert set(report.db_mb) == {"one 60", "spread 40"} and all(mb > 0 for mb in report.db_mb.values())
        assert set(report.notes_per_second) == {"one user", "2 users"}
    # The search keeps the same arrays whichever database holds the notes.
    assert sqlite.kept_mb == postgres.kept_mb and sqlite.kept_mb["one 60"] > 0
