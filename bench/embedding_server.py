"""What an embedding server adds to a turn beyond its own time: mnemo's client path (thread hand-off, HTTP, JSON,
checks) measured against a local fake OpenAI-compatible /v1/embeddings.

Usage: bench/embedding_server.py [--turns 300] [--dim 1024] [--server-ms 0] [--notes 500] [--in-process] [--json]

Each turn asks the embedder what a turn asks: the message embedded as a document (the journal) and as a query (the
search of notes and thoughts), through `ServerEmbedder.aembed` as `SearchIndex.embed` calls it. Its added latency is
the time those two awaits took minus the time the server spent answering them (measured inside the fake's handler,
which runs in a process of its own on the same cores); on a busy machine most of it is waiting to be scheduled, so
the CPU time mnemo's thread spent on them (the client's own work) is shown beside it. The turn's whole memory part
(the message logged, both searches) is timed too.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.latency import percentile, synthetic_notes  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedding_server import EmbeddingServer, ServerEmbedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.fakes.embedding_api import FakeEmbeddingServer  # noqa: E402

GOAL_P95_MS = 5.0
WORDS = ("Miriam", "Leipzig", "Garten", "Kino", "Zahnarzt", "Urlaub", "Tomaten", "Cello", "Arbeit", "Hund",
         "tired", "sister", "Boston", "hiking", "dinner", "Termin", "morgen", "gestern", "Geschenk", "Fahrrad")


def message(rng: random.Random, turn: int) -> str:
    return f"Turn {turn}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))


async def serve(dim: int, server_ms: float) -> None:
    """The fake server on its own (another process), its port on the first line of stdout."""
    async with FakeEmbeddingServer(dim=dim) as fake:
        fake.delay = server_ms / 1000
        print(fake.port, flush=True)
        await asyncio.Event().wait()


async def server_process(dim: int, server_ms: float) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve", "--dim", str(dim), "--server-ms", str(server_ms),
        stdout=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    port = int((await process.stdout.readline()).decode())
    return process, f"http://127.0.0.1:{port}/v1"


async def run(turns: int, dim: int, server_ms: float, notes: int, in_process: bool) -> dict[str, float | str]:
    if not in_process:
        process, base_url = await server_process(dim, server_ms)
        try:
            return await measured(turns, dim, server_ms, notes, base_url, "another process")
        finally:
            process.kill()
            await process.wait()
    async with FakeEmbeddingServer(dim=dim) as fake:  # in this event loop: no other process to wait for
        fake.delay = server_ms / 1000
        return await measured(turns, dim, server_ms, notes, fake.base_url, "this process")


async def measured(turns: int, dim: int, server_ms: float, notes: int, base_url: str,
                   where: str) -> dict[str, float | str]:
    rng = random.Random(43)
    embedder = await asyncio.to_thread(ServerEmbedder, EmbeddingServer(base_url, "bge-m3", timeout=10.0))
    waited, whole, spent = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        store = await MemoryStore.open(Path(tmp) / "mnemo.sqlite3", embedder)
        try:
            scope = await store.scope("mnemo", "anna")
            texts = synthetic_notes(notes) if notes else []
            for at in range(0, len(texts), 200):
                await store.notes.add_many(scope, [NewNote(t) for t in texts[at:at + 200]])
            first = len(await seconds(base_url))
            for turn in range(turns):
                text = message(rng, turn)
                started, cpu = time.perf_counter(), time.thread_time()
                await embedder.aembed([text], "document")  # what the journal asks (a new text: one request)
                await embedder.aembed([text], "query")  # what the search asks (one request)
                waited.append(time.perf_counter() - started)
                spent.append((time.thread_time() - cpu) * 1000)
                started = time.perf_counter()  # the turn's memory part as mnemo runs it (two requests more)
                await store.messages.add(scope, "user", text)
                await store.search(scope, text, ("note",), k=5)
                await store.search(scope, text, ("thought",), k=3)
                whole.append((time.perf_counter() - started) * 1000)
            own = (await seconds(base_url))[first:]
        finally:
            await store.close()
            await embedder.aclose()
    if len(own) != 4 * turns:
        raise SystemExit(f"expected {4 * turns} requests, the server saw {len(own)}")
    server = [(own[4 * i] + own[4 * i + 1]) * 1000 for i in range(turns)]
    added = [w * 1000 - s for w, s in zip(waited, server)]
    return {"turns": turns, "dim": dim, "server_ms_set": server_ms, "notes": notes, "server": where,
            "added_p50_ms": statistics.median(added), "added_p95_ms": percentile(added, 95),
            "client_cpu_p50_ms": statistics.median(spent), "client_cpu_p95_ms": percentile(spent, 95),
            "server_p50_ms": statistics.median(server), "turn_memory_p50_ms": statistics.median(whole),
            "turn_memory_p95_ms": percentile(whole, 95), "goal_p95_ms": GOAL_P95_MS,
            "load_average_1min": os.getloadavg()[0]}


async def seconds(base_url: str) -> list[float]:
    """The server's own time per embeddings request so far."""
    async with httpx.AsyncClient() as client:
        return list((await client.get(base_url.removesuffix("/v1") + "/fake/seconds")).json())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--dim", type=int, default=1024, help="vector length (bge-m3: 1024)")
    parser.add_argument("--server-ms", type=float, default=0.0, help="the fake server's own time per request")
    parser.add_argument("--notes", type=int, default=500)
    parser.add_argument("--in-process", action="store_true", help="the fake server in this process's event loop")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.dim, args.server_ms))
        return 0
    result = asyncio.run(run(args.turns, args.dim, args.server_ms, args.notes, args.in_process))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    return 0 if result["added_p95_ms"] <= GOAL_P95_MS else 1


if __name__ == "__main__":
    sys.exit(main())
