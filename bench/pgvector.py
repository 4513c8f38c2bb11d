"""The vector part of the search in process or in PostgreSQL with pgvector: latency, recall, index builds.

Usage: .venv/bin/python bench/pgvector.py [--spread 100000 --users 100] [--one 10000] [--queries 200] [--repeat 1]
                                          [--json]

Two stores built as bench/scale.py builds them, on a PostgreSQL the bench starts itself (pgserver:
PostgreSQL 16 with pgvector 0.6): notes spread evenly over many users, and the notes of one user. For the
same queries (German questions, embedded by the notes' own synthetic embedder, so that they lie where the
notes lie) in the same scopes, each way of finding the 40 nearest notes:

  a   mnemo as it runs today, in process (`SearchIndex.nearest`, k 40, its scope arrays kept warm): float32
      copies of the cached float16 vectors compared all, exactly, in a scope of up to 3,000 documents; above,
      centred bits ranked by Hamming distance and the nearest rescored with the float16 vectors from the
      embedding cache. "a search" is `search_vector` with the word and trigram weights 0 (bench/scale.py's
      "alone: vector"): the same ranking, then the documents read and fused (k 10; timed only).
  b   pgvector, exact within the scope: a table `pgv(id, scope_id, embedding vector(384))` the bench fills
      from the store's own stored vectors (the float16 embedding cache widened to float32: the same numbers
      as a's), a btree on scope_id, `WHERE scope_id = %s ORDER BY embedding <=> %s LIMIT 40`.
  c   the same statement with a vector index over all rows instead of the btree (the planner made to use it):
      HNSW (m 16, ef_construction 64) at several hnsw.ef_search, IVFFlat (lists rows/1000) at several probes;
      and "hnsw+btree, planner's": both indexes there, the planner choosing (hnsw.ef_search 40).
      pgvector 0.6 filters the rows an index scan returns; it has no iterative scan, so a scan may return
      fewer than 40 rows of the scope ("rows": the mean returned).

Recall@k is the share of b's k nearest a way found as near among its k: an id counts when its cosine (float64,
from the stored vector) reaches that of b's k-th less `RECALL_EPS`, so that a note stored twice (the synthetic
notes repeat, and a repeated text has the very same vector) counts whichever copy was returned. "a exact" is
the share of queries whose 40 nearest by a equal b's up to rounding: a ranks by the dot product with the
float16 vector, pgvector by the cosine, and the two differ by at most the float16 rounding of the vector's
length (`TOLERANCE`).
Each statement is timed from the query vector to the ids (its text literal included), the fastest of
--repeat tries, after a pass over all queries that warms the caches; the first WARMUP are dropped.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.backends import PostgresServer, places  # noqa: E402
from bench.scale import WARMUP, TopicEmbedder, analyzed, fill, german_queries, open_store, percentile  # noqa: E402
from memory.search.index import SearchIndex  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

K = 40
DIM = 384
EF_SEARCH = (40, 200, 1000)  # hnsw.ef_search: the default, and up to pgvector's largest
PROBES = (1, 10)  # ivfflat.probes: the default, and ten
# float16 keeps 11 significant bits: each component of a stored vector is within 2^-11 of its own size, so the
# stored vector's length, and its dot product with a unit query against its cosine, within 2^-11 (plus float32
# sums, far smaller). a ranks by the one, pgvector by the other.
TOLERANCE = 2.0**-11 + 1e-6
RECALL_EPS = 1e-5  # pgvector's float32 cosine against the float64 one: far below any gap but a tie's
NEAREST = "SELECT id FROM pgv WHERE scope_id = %s ORDER BY embedding <=> %s::vector LIMIT %s"


@dataclass(frozen=True)
class Way:
    """One way of finding a query's nearest notes, measured on one store."""

    store: str  # "spread" or "one"
    users: int
    notes: int
    way: str  # "a in process", "b exact", "c hnsw ef 40", ...
    p50_ms: float
    p95_ms: float
    recall_at_10: float | None  # against b; None for b itself
    recall_at_40: float | None
    rows: float  # mean rows returned (of K)
    plan: str  # the plan's scan, as EXPLAIN names it (empty for a)
    exact: float | None = None  # a only: share of queries whose K nearest equal b's up to TOLERANCE


@dataclass(frozen=True)
class Build:
    """An index the bench built on one store's pgv table."""

    store: str
    index: str
    seconds: float
    mb: float


@dataclass
class Report:
    """Everything one run measured."""

    server: str
    queries: int
    repeat: int
    ways: list[Way] = field(default_factory=list)
    builds: list[Build] = field(default_factory=list)
    table_mb: dict[str, float] = field(default_factory=dict)  # pgv's heap and TOAST, by store
    load_average: list[list[float]] = field(default_factory=list)  # 1, 5, 15 minutes at the start and the end


@dataclass(frozen=True)
class Stored:
    """The store's notes' vectors as it keeps them (float16), in the order of their ids."""

    ids: np.ndarray  # int64
    scopes: np.ndarray  # int64
    halves: np.ndarray  # float16 (n, DIM)


def copy_data(stored: Stored) -> bytes:
    """The rows of pgv in PostgreSQL's binary COPY format (pgvector's binary vector: int16 dim, int16 0, float4s)."""
    row = np.dtype([("fields", ">i2"), ("id_len", ">i4"), ("id", ">i8"), ("scope_len", ">i4"), ("scope", ">i8"),
                    ("vec_len", ">i4"), ("dim", ">i2"), ("unused", ">i2"), ("vec", ">f4", (DIM,))])
    rows = np.zeros(len(stored.ids), dtype=row)
    rows["fields"], rows["id_len"], rows["scope_len"], rows["vec_len"], rows["dim"] = 3, 8, 8, 4 + 4 * DIM, DIM
    rows["id"], rows["scope"], rows["vec"] = stored.ids, stored.scopes, stored.halves.astype(np.float32)
    header = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
    return header + rows.tobytes() + (-1).to_bytes(2, "big", signed=True)


async def stored_vectors(conn: Any, model: str) -> Stored:
    """Every note's vector from the store's embedding cache, with its id and scope."""
    cursor = await conn.execute(
        "SELECT d.id, d.scope_id, e.vector FROM docs d JOIN embedding_cache e ON e.model = %s"
        " AND e.purpose = 'document' AND e.content_hash = d.content_hash WHERE d.source = 'note' ORDER BY d.id",
        (model,))
    rows = await cursor.fetchall()
    halves = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype=np.float16).reshape(len(rows), DIM)
    return Stored(np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64), halves)


async def fill_pgv(conn: Any, stored: Stored) -> None:
    """Create pgv and copy the stored vectors into it."""
    await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    await conn.execute(f"CREATE TABLE pgv (id BIGINT PRIMARY KEY, scope_id BIGINT NOT NULL, embedding vector({DIM})"
                       " NOT NULL)")
    statement = "COPY pgv (id, scope_id, embedding) FROM STDIN (FORMAT BINARY)"
    async with conn.cursor() as cursor, cursor.copy(statement) as copy:
        await copy.write(copy_data(stored))
    await conn.execute("VACUUM ANALYZE pgv")


def literal(vector: np.ndarray) -> str:
    """A float32 vector as pgvector's text (each value's shortest decimal reads back as the same float32)."""
    return "[" + ",".join(map(str, np.asarray(vector, np.float32).tolist())) + "]"


def recall(found: Sequence[list[int]], truth: Sequence[list[int]], k: int,
           cosines: Sequence[dict[int, float]]) -> float:
    """The mean share of found's k first ids as near as truth's k-th (up to RECALL_EPS) among truth's k.

    Args:
        cosines: per query, the cosine of each id found or true.
    """
    shares = [sum(c[i] >= c[t[:k][-1]] - RECALL_EPS for i in dict.fromkeys(f[:k])) / len(t[:k])
              for f, t, c in zip(found, truth, cosines) if t]
    return round(float(np.mean(shares)), 4) if shares else 1.0


def cosines_of(stored: Stored, row_of: dict[int, int], ids: Sequence[int], query: np.ndarray) -> dict[int, float]:
    """The cosine in float64 of the query with each id's stored vector."""
    rows = stored.halves[[row_of[i] for i in ids]].astype(np.float64)
    q = np.asarray(query, np.float64)
    return dict(zip(ids, (rows @ q / np.linalg.norm(rows, axis=1) / np.linalg.norm(q)).tolist()))


def same_up_to_rounding(found: list[int], truth: list[int], score: dict[int, float], tolerance: float) -> bool:
    """Whether found's ids are truth's up to ties within rounding.

    `score` is found's own score of each id; truth's own differs from it by at most tolerance. Found exact, the
    k best by its score, each of truth's ids scores (by found's score) at least found's lowest minus twice the
    tolerance, and each of found's at least truth's lowest. An approximate found that missed a nearer id fails
    the second.
    """
    if len(found) != len(truth):
        return False
    if set(found) == set(truth):
        return True
    return (all(score[i] >= min(score[j] for j in found) - 2 * tolerance for i in truth)
            and all(score[i] >= min(score[j] for j in truth) - 2 * tolerance for i in found))


async def timed(targets: Sequence[int], vectors: np.ndarray, repeat: int,
                nearest: Callable[[int, np.ndarray], Awaitable[list[int]]]) -> tuple[list[float], list[list[int]]]:
    """Milliseconds per query (the fastest of repeat tries; the first WARMUP dropped) and each query's ids, after
    one untimed pass over all queries."""
    for scope_id, qvec in zip(targets, vectors):
        await nearest(scope_id, qvec)
    ms, ids = [], []
    for scope_id, qvec in zip(targets, vectors):
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            found = await nearest(scope_id, qvec)
            best = min(best, (time.perf_counter() - t0) * 1000)
        ms.append(best)
        ids.append(found)
    return ms[WARMUP:], ids


async def plan(conn: Any, scope_id: int, qvec: np.ndarray) -> str:
    """The scan the planner chose for one query, as EXPLAIN names it."""
    cursor = await conn.execute("EXPLAIN (COSTS OFF) " + NEAREST, (scope_id, literal(qvec), K))
    lines = [str(r[0]).strip(" ->") for r in await cursor.fetchall()]
    return next((line for line in lines if "Scan" in line), lines[-1] if lines else "")


async def measure_store(
    report: Report, store: MemoryStore, label: str, scopes: Sequence[int], queries: Sequence[str], repeat: int,
) -> None:
    """Measure a, b and c on one filled store."""
    import psycopg

    notes = 0
    rng = random.Random(13)
    targets = [rng.choice(scopes) for _ in queries]
    vectors = TopicEmbedder().embed(list(queries), "query")
    assert store.db.url is not None
    async with await psycopg.AsyncConnection.connect(store.db.url, autocommit=True,
                                                     cursor_factory=psycopg.AsyncClientCursor) as conn:
        stored = await stored_vectors(conn, store.index.embedder.name)
        notes = len(stored.ids)
        await fill_pgv(conn, stored)
        cursor = await conn.execute("SELECT pg_table_size('pgv')")
        report.table_mb[label] = round(((await cursor.fetchone()) or (0,))[0] / 1e6, 1)
        row_of = {int(i): n for n, i in enumerate(stored.ids)}

        def way(name: str, ms: list[float], ids: list[list[int]], truth: list[list[int]] | None, scan: str,
                exact: float | None = None) -> None:
            cosines = [cosines_of(stored, row_of, list(dict.fromkeys(f + t)), q)
                       for f, t, q in zip(ids, truth or [], vectors)]
            report.ways.append(Way(label, len(scopes), notes, name, percentile(ms, 50), percentile(ms, 95),
                                   None if truth is None else recall(ids, truth, 10, cosines),
                                   None if truth is None else recall(ids, truth, K, cosines),
                                   round(float(np.mean([len(i) for i in ids])), 1), scan, exact))
            print(_row(report.ways[-1]), flush=True)

        async def pgvector_nearest(scope_id: int, qvec: np.ndarray) -> list[int]:
            cursor = await conn.execute(NEAREST, (scope_id, literal(qvec), K))
            return [r[0] for r in await cursor.fetchall()]

        # b first: the btree on scope_id alone.
        await conn.execute("CREATE INDEX pgv_scope ON pgv (scope_id)")
        await conn.execute("ANALYZE pgv")
        b_ms, truth = await timed(targets, vectors, repeat, pgvector_nearest)
        b_scan = await plan(conn, targets[0], vectors[0])

        # a: the in-process ranking on the same store, vector weight alone.
        alone = SearchIndex(store.db, store.index.embedder, replace(store.index.weights, words=0.0, trigram=0.0))

        async def mnemo_nearest(scope_id: int, qvec: np.ndarray) -> list[int]:
            return [doc for doc, _item, _cosine in await alone.nearest(scope_id, qvec, "note", k=K)]

        async def mnemo_search(scope_id: int, qvec: np.ndarray) -> list[int]:
            return [hit.item_id for hit in await alone.search_vector(scope_id, qvec, "", ("note",), k=10,
                                                                           include_faded=True)]

        a_ms, a_ids = await timed(targets, vectors, repeat, mnemo_nearest)
        exact = [same_up_to_rounding(found, want, {i: float(stored.halves[row_of[i]].astype(np.float32) @ q)
                                                   for i in found + want}, TOLERANCE)
                 for found, want, q in zip(a_ids, truth, vectors)]
        way("a in process (nearest)", a_ms, a_ids, truth, "", round(float(np.mean(exact)), 4))
        search_ms, search_ids = await timed(targets, vectors, repeat, mnemo_search)
        way("a search, vector alone", search_ms, search_ids, None, "")  # hits name notes, not documents: no recall
        way("b exact in scope", b_ms, truth, None, b_scan)

        # c: the vector index (HNSW first beside the btree: which of the two the planner takes by itself), then
        # instead of the btree, the planner kept from a sequential scan.
        await conn.execute("SET maintenance_work_mem = '1GB'")
        lists = max(1, notes // 1000)
        for index, using, settings in (
                ("hnsw", "hnsw (embedding vector_cosine_ops)", [("hnsw.ef_search", ef) for ef in EF_SEARCH]),
                (f"ivfflat lists {lists}", f"ivfflat (embedding vector_cosine_ops) WITH (lists = {lists})",
                 [("ivfflat.probes", p) for p in PROBES if p <= lists])):
            t0 = time.perf_counter()
            await conn.execute(f"CREATE INDEX pgv_vec ON pgv USING {using}")
            seconds = time.perf_counter() - t0
            cursor = await conn.execute("SELECT pg_relation_size('pgv_vec')")
            report.builds.append(Build(label, index, seconds, ((await cursor.fetchone()) or (0,))[0] / 1e6))
            if index == "hnsw":
                ms, ids = await timed(targets, vectors, repeat, pgvector_nearest)
                way("c hnsw+btree, planner's", ms, ids, truth, await plan(conn, targets[0], vectors[0]))
                await conn.execute("DROP INDEX pgv_scope")
                await conn.execute("SET enable_seqscan = off")
            for setting, value in settings:
                await conn.execute(f"SET {setting} = {value}")
                ms, ids = await timed(targets, vectors, repeat, pgvector_nearest)
                way(f"c {index.split()[0]} {setting.split('.')[1]} {value}", ms, ids, truth,
                    await plan(conn, targets[0], vectors[0]))
            await conn.execute("DROP INDEX pgv_vec")


async def run(spread: int, users: int, one: int, n_queries: int, repeat: int, server: PostgresServer) -> Report:
    """Build the stores (spread over users, then one user's), measure each, and drop their databases."""
    import psycopg

    queries = german_queries(n_queries)
    report = Report(server.version(), n_queries, repeat, load_average=[_load()])
    with tempfile.TemporaryDirectory(prefix="mnemo-pgvector-") as tmp:
        for label, count, per_scope in (("spread", users, spread // max(users, 1)), ("one", 1, one)):
            if not per_scope:
                continue
            store = await open_store(Path(tmp), label, server)
            name = psycopg.conninfo.conninfo_to_dict(str(store.db.url))["dbname"]
            try:
                scopes = [await store.scope("mnemo", f"user{n}") for n in range(count)]
                await fill(store, scopes, per_scope, 0, seed=2 if label == "spread" else 1)
                await analyzed(store)
                await measure_store(report, store, label, [s.id for s in scopes], queries, repeat)
            finally:
                await store.close()
            with psycopg.connect(server.url(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {name}")
    report.load_average.append(_load())
    return report


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


HEADER = (f"{'store':<8} {'users':>5} {'notes':>7}  {'way':<26} {'p50 ms':>7} {'p95 ms':>7} {'rec@10':>7}"
          f" {'rec@40':>7} {'rows':>5} {'a exact':>7}  plan")


def _row(w: Way) -> str:
    """One table line."""
    def share(x: float | None) -> str:
        return "" if x is None else f"{x:.3f}"

    return (f"{w.store:<8} {w.users:>5} {w.notes:>7}  {w.way:<26} {w.p50_ms:>7.2f} {w.p95_ms:>7.2f}"
            f" {share(w.recall_at_10):>7} {share(w.recall_at_40):>7} {w.rows:>5.1f} {share(w.exact):>7}  {w.plan}")


def summary(report: Report) -> None:
    """The index builds, the table sizes and the load beside the table."""
    for b in report.builds:
        print(f"{b.store}: index {b.index} built in {b.seconds:.2f} s, {b.mb:.1f} MB")  # a tiny one rounds to 0
    print("pgv table (heap and TOAST), MB: " + ", ".join(f"{k} {v}" for k, v in report.table_mb.items()))
    print(f"load average (1, 5, 15 min) at the start and the end: {report.load_average}")


def main() -> None:
    """Print the table (and JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spread", type=int, default=100_000, help="notes spread over --users users (0 for none)")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--one", type=int, default=10_000, help="notes of one user (0 for none)")
    parser.add_argument("--queries", type=int, default=200, help=f"queries per store (the first {WARMUP} warm up)")
    parser.add_argument("--repeat", type=int, default=1, help="time each query this often and keep the fastest")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    args = parser.parse_args()
    with places(["postgres"]) as servers:
        server = servers["postgres"]
        assert server is not None
        print(f"postgres: {server.version()} (pgserver, started by the bench)", flush=True)
        print(HEADER, flush=True)
        report = asyncio.run(run(args.spread, args.users, args.one, args.queries, args.repeat, server))
    summary(report)
    if args.json:
        print(json.dumps(asdict(report)))


if __name__ == "__main__":
    main()
