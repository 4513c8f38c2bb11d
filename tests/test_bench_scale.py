"""bench/scale.py on both backends in one run (issue 26): the same notes and questions on SQLite and on a PostgreSQL
the bench starts itself (bench/backends.py), each backend's figures measured on its own store."""
from __future__ import annotations

import asyncio

import pytest

from bench import scale
from bench.backends import parse_backends, places
from bench.spread_copies import copy_users
from memory.search import integrity
from memory.store import MemoryStore

pytestmark = pytest.mark.both_backends("the scale bench's two stores")


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
    # The search keeps the same arrays whichever database holds the notes; on PostgreSQL the texts besides (their
    # word parts are looked up there), a small part of what the vectors take.
    for store in ("one 60", "spread 40"):
        assert sqlite.kept_mb[store] < postgres.kept_mb[store] < 1.5 * sqlite.kept_mb[store], store


async def test_a_copied_user_searches_as_its_origin(tmp_path, database_url) -> None:  # type: ignore[no-untyped-def]
    """--spread-copies: users copied in SQL hold their origin's notes, documents, vectors and full-text entries."""
    store = await MemoryStore.open(tmp_path / "mnemo.sqlite3", scale.TopicEmbedder(), database_url=database_url)
    try:
        scopes = [await store.scope("mnemo", f"user{n}") for n in range(6)]
        await scale.fill(store, scopes[:2], 30, 0, seed=2)
        await copy_users(store, scopes[:2], [scopes[2:4], scopes[4:6]])
        assert await integrity.check(store) == []
        for origin, copy in ((scopes[0], scopes[2]), (scopes[1], scopes[5])):
            assert await store.notes.count(copy) == await store.notes.count(origin) == 30
            assert ([n.text for n in await store.notes.list(copy, limit=100)]
                    == [n.text for n in await store.notes.list(origin, limit=100)])
            found = 0
            for query in scale.german_queries(12):
                qvec = scale.TopicEmbedder().embed([query], "query")[0]
                hits = {s.id: await store.index.search_vector(s.id, qvec, query, ("note",), k=5, include_faded=True)
                        for s in (origin, copy)}
                found += len(hits[origin.id])
                assert ([(h.text, round(h.score, 6)) for h in hits[copy.id]]
                        == [(h.text, round(h.score, 6)) for h in hits[origin.id]])
                copied_ids = {n.id for n in await store.notes.list(copy, limit=100)}
                assert {h.item_id for h in hits[copy.id]} <= copied_ids  # the copy's own notes, not the origin's
            assert found > 12
        # The store goes on writing after the copies (PostgreSQL's id sequences follow the copied ids).
        added = await store.notes.add(scopes[3], "Anna hat heute zum ersten Mal Bouldern ausprobiert.")
        assert added.created and await store.notes.count(scopes[3]) == 31
        async with store.db.reading() as tx:  # the change counts the search compares with what it holds
            counts = dict(await tx.fetchall("SELECT scope_id, added FROM scope_changes"))
        assert [counts[s.id] for s in scopes] == [30, 30, 30, 31, 30, 30]  # the trigger counts again after the copies
        assert await integrity.check(store) == []
    finally:
        await store.close()


def test_scale_says_how_the_spread_store_was_built() -> None:
    report = asyncio.run(scale.run([], 40, 4, 14, 1, None, "sqlite", None, scale.TopicEmbedder(), spread_copies=2))
    assert [(f.store, f.users, f.notes) for f in report.figures] == [("spread", 4, 40)]
    assert set(report.notes_per_second) == {"2 users"} and report.spread_copies == 2 and report.copy_seconds >= 0
    assert report.search_cache_mb == 256
