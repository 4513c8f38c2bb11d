"""Load: simulated users chatting at once through the engine with a zero-latency model.

Prints messages per second, the longest event-loop stall (embedding and database work must not
block the loop) and the process RSS with the embedding model loaded; then ingest speed and the
database size per 10k notes, one note at a time and in batches (`--batch`, `Notes.add_many`). First, for
comparison, the longest stall of an idle event loop: on a machine whose cores are busy with other work, the
operating system alone delays the loop.
Usage: .venv/bin/python bench/load.py [--users 50] [--messages 20] [--idle 10] [--batch 64] [--ingest-only]
       [--both-models] [--cost] [--side-by-side [--rounds 8]]

--both-models runs it as the product now is with the bundled e5: the second signal (USE multilingual v3) loaded
beside it, a USE vector written with every document, German queries searched with it (memory/search/use_signal.py);
it also prints what USE costs per text, one at a time and in batches.

--side-by-side measures the ingest only, e5 alone and with both bundled models in the same run: four stores open at
once (each mode one note at a time and in batches of `--batch`), the same `--notes` notes into each, in `--rounds`
alternating rounds, so that every mode meets the same load; notes per second of each, the ratio, the load average.

--cost prints what one message costs in CPU instead: the bundled models' CPU time per text (e5 one at a time and in
batches, USE), the CPU time per message of everything else (the same load with an embedder that costs nothing) and
the texts embedded per message, and from them the most messages a second the machine's cores could carry.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.conversation import ScriptedModel, user_line  # noqa: E402
from bot.app import settled_heap  # noqa: E402
from bot.conversation.engine import Engine, EngineConfig, Incoming  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedder import Embedder, make_embedder  # noqa: E402
from memory.search.use_signal import make_use_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402


class StallMeter:
    """Measures how late a 5 ms timer fires: the longest time the event loop was blocked."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - start - 0.005)

    def __enter__(self) -> StallMeter:
        self._task = asyncio.create_task(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task:
            self._task.cancel()


async def idle_stall(seconds: float) -> float:
    """The longest stall of an event loop with nothing to do, in ms: what the machine's scheduling alone costs."""
    with StallMeter() as meter:
        await asyncio.sleep(seconds)
    return round(meter.worst * 1000, 1)


def rss_mb() -> float:
    """Peak resident set size of this process in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def use_cost(second: Embedder, texts: list[str]) -> dict[str, float]:
    """USE's milliseconds per text: one text a call (a message's turn alone), and in calls of 32 (turns batched)."""
    second.embed(texts[:2])  # warm
    start = time.perf_counter()
    for text in texts[:64]:
        second.embed([text])
    alone = (time.perf_counter() - start) / 64
    start = time.perf_counter()
    for at in range(0, len(texts), 32):
        second.embed(texts[at:at + 32])
    batched = (time.perf_counter() - start) / len(texts)
    return {"use_ms_per_text_alone": round(alone * 1000, 2), "use_ms_per_text_batched": round(batched * 1000, 2)}


class FreeEmbedder:
    """Costs nothing: a text's vector from its hash (for the CPU of everything but the embedding)."""

    name, dim = "free-embedder", 384

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        """A unit vector per text, seeded by the text."""
        out = np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim) for t in texts])
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


async def chat_load(users: int, per_user: int, both_models: bool = False, free: bool = False,
                    keep_heap: bool = False) -> dict[str, float]:
    """All users send their messages concurrently; each user's messages in order."""
    rng = random.Random(3)
    model = ScriptedModel(rng)
    second = make_use_embedder() if both_models else None
    with tempfile.TemporaryDirectory() as tmp:
        store = await MemoryStore.open(Path(tmp), FreeEmbedder() if free else make_embedder(), second=second)
        engine = Engine(store, model, model, EngineConfig(extraction="when_quiet"))
        settle = contextlib.nullcontext() if keep_heap else settled_heap()  # as `mnemo` runs once started

        async def user(n: int) -> None:
            for i in range(per_user):
                await engine.handle(Incoming(f"user{n}", user_line(rng, i)))

        with settle, StallMeter() as meter:
            start, cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(user(n) for n in range(users)))
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            await engine.drain()
        batcher = store.index.batcher
        used = store.index.second.batcher if store.index.second is not None else None
        async with store.db.reading() as tx:
            vectors = (await tx.fetchone("SELECT count(*) FROM use_vectors"))[0]
        await engine.close()
        await store.close()
    total = users * per_user
    extra = {} if used is None else {"use_calls_per_message": round(used.calls / total, 2),
                                     "use_texts_per_message": round(used.texts / total, 2),
                                     "use_texts_per_call": round(used.texts / max(used.calls, 1), 1),
                                     "use_vectors": vectors, **use_cost(second, note_texts(256))}  # type: ignore[arg-type]
    return extra | {"users": users, "messages": total, "seconds": round(elapsed, 2),
            "messages_per_second": round(total / elapsed, 1), "worst_stall_ms": round(meter.worst * 1000, 1),
            "rss_mb": round(rss_mb()), "cpu_ms_per_message": round(cpu / total * 1000, 1),
            "texts_per_message": round(batcher.texts / total, 2),
            "embedder_calls_per_message": round(batcher.calls / total, 2),
            "texts_per_call": round(batcher.texts / max(batcher.calls, 1), 1)}


def model_cost(texts: int = 96) -> dict[str, float]:
    """CPU milliseconds per text of the bundled model, one text at a time and in batches of 16 (the process's CPU
    time: every thread the model runs on counts)."""
    embedder = make_embedder()
    rng = random.Random(1)
    lines = [user_line(rng, i) for i in range(texts)]
    embedder.embed(lines[:4], "query")
    out = {}
    for size in (1, 16):
        cpu = time.process_time()
        for at in range(0, texts, size):
            embedder.embed(lines[at:at + size], "query")
        out[f"cpu_ms_per_text_batch_{size}"] = round((time.process_time() - cpu) / texts * 1000, 1)
    return out


def cost(users: int, per_user: int) -> dict[str, float]:
    """What a message costs in CPU, and the ceiling of messages a second that follows on this machine's cores."""
    per_text = model_cost()
    free = asyncio.run(chat_load(users, per_user, free=True))
    real = asyncio.run(chat_load(users, per_user, both_models=True))  # the product as it is: e5 and USE
    model = min(per_text.values())
    need = (real["texts_per_message"] * model + free["cpu_ms_per_message"]
            + real["use_texts_per_message"] * real["use_ms_per_text_batched"])
    cores = os.cpu_count() or 1
    return {**per_text, "cpu_ms_per_message_without_model": free["cpu_ms_per_message"],
            "texts_per_message": real["texts_per_message"], "cpu_ms_per_message": real["cpu_ms_per_message"],
            "use_texts_per_message": real["use_texts_per_message"],
            "use_ms_per_text_batched": real["use_ms_per_text_batched"],
            "messages_per_second": real["messages_per_second"], "cores": cores,
            "ceiling_messages_per_second": round(cores * 1000 / need, 1)}


GOAL_NOTES_PER_SECOND = 200  # issue 27, in batches


def note_texts(notes: int) -> list[str]:
    """Short distinct German notes."""
    rng = random.Random(5)
    return [f"Anna erzählte am Tag {i} von {rng.choice(['Garten', 'Arbeit', 'Cello'])} und {rng.randint(0, 10**6)}."
            for i in range(notes)]


async def ingest(notes: int, batch: int = 1, both_models: bool = False) -> dict[str, float]:
    """Notes per second through the store API (embedding included) and database size per 10k notes.

    batch 1: one `Notes.add` (no dedupe) per note, one embedding each; more: `Notes.add_many` per batch,
    one embedding call and one transaction for the batch. both_models: each note gets its USE vector too.
    """
    with tempfile.TemporaryDirectory() as tmp:
        store = await MemoryStore.open(Path(tmp), make_embedder(), second=make_use_embedder() if both_models else None)
        scope = await store.scope("mnemo", "anna")
        texts = note_texts(notes)
        start = time.perf_counter()
        if batch == 1:
            for text in texts:
                await store.notes.add(scope, text, dedupe=False)
        else:
            for offset in range(0, notes, batch):
                await store.notes.add_many(scope, [NewNote(t) for t in texts[offset:offset + batch]])
        elapsed = time.perf_counter() - start
        await store.close()
        size = sum(f.stat().st_size for f in Path(tmp).glob("mnemo.sqlite3*"))
    return {"notes": notes, "batch": batch, "notes_per_second": round(notes / elapsed, 1),
            "mb_per_10k_notes": round(size / 1e6 * 10_000 / notes, 1)}


async def side_by_side(notes: int, batch: int, rounds: int) -> dict[str, dict[str, float]]:
    """Ingest e5 only and with both bundled models in one run: two stores open at once (one e5 model and one USE
    model shared), the same notes into each, in alternating rounds so that both meet the same machine state; each
    mode one at a time (`Notes.add`) and in batches (`Notes.add_many`). Notes per second per mode, and the USE
    vectors stored at the end (every document of the store with both models must have one)."""
    e5, use = make_embedder(), make_use_embedder()
    per_round = max(batch, -(-notes // rounds) // batch * batch)  # whole batches in every round
    notes = -(-notes // per_round) * per_round
    texts = note_texts(notes)
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {}
        for mode in ("e5_only", "both_models"):
            for size in (1, batch):
                folder = Path(tmp) / f"{mode}-{size}"
                store = await MemoryStore.open(folder, e5, second=use if mode == "both_models" else None)
                stores[(mode, size)] = (store, await store.scope("mnemo", "anna"))
        for store, scope in stores.values():  # warm: the first call of each model pays its start
            await store.notes.add(scope, "Anna mag Tee.", dedupe=False)
        spent, cpu = dict.fromkeys(stores, 0.0), dict.fromkeys(stores, 0.0)
        for at in range(0, notes, per_round):
            part = texts[at:at + per_round]
            order = list(stores) if at // per_round % 2 == 0 else list(reversed(stores))
            for key in order:
                store, scope = stores[key]
                start, used = time.perf_counter(), time.process_time()
                if key[1] == 1:
                    for text in part:
                        await store.notes.add(scope, text, dedupe=False)
                else:
                    for offset in range(0, len(part), batch):
                        await store.notes.add_many(scope, [NewNote(t) for t in part[offset:offset + batch]])
                spent[key] += time.perf_counter() - start
                cpu[key] += time.process_time() - used
        for (mode, size), (store, _scope) in stores.items():
            async with store.db.reading() as tx:
                row = await tx.fetchone("SELECT (SELECT count(*) FROM use_vectors), (SELECT count(*) FROM docs)")
            figures = out.setdefault(mode, {})
            figures[f"notes_per_second_batch_{size}"] = round(notes / spent[(mode, size)], 1)
            figures[f"cpu_ms_per_note_batch_{size}"] = round(cpu[(mode, size)] / notes * 1000, 1)
            figures["notes"] = notes
            figures[f"use_vectors_batch_{size}"], figures[f"docs_batch_{size}"] = row[0], row[1]
            await store.close()
    return out


def print_side_by_side(args: argparse.Namespace) -> dict[str, object]:
    """Run `side_by_side` and print notes/s for each mode with the load average and the ratio both/e5 only."""
    before = os.getloadavg()
    figures = asyncio.run(side_by_side(args.notes, args.batch, args.rounds))
    after = os.getloadavg()
    e5, both = figures["e5_only"], figures["both_models"]
    for size in (1, args.batch):
        how = "one at a time" if size == 1 else f"in batches of {size}"
        key = f"notes_per_second_batch_{size}"
        used = f"cpu_ms_per_note_batch_{size}"
        print(f"ingest {how}: e5 only {e5[key]} notes/s, both models {both[key]} notes/s "
              f"(ratio {both[key] / e5[key]:.2f}); CPU per note {e5[used]} / {both[used]} ms; USE vectors "
              f"{both[f'use_vectors_batch_{size}']} of {both[f'docs_batch_{size}']} documents")
    print(f"{e5['notes']} notes per mode in alternating rounds; 1-minute load average "
          f"{before[0]:.2f} at the start, {after[0]:.2f} at the end")
    return {"load_average": [round(before[0], 2), round(after[0], 2)], **figures}


def main() -> None:
    """Print the load and ingest figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20, help="messages per user")
    parser.add_argument("--notes", type=int, default=2000, help="notes for the ingest figure")
    parser.add_argument("--batch", type=int, default=64, help="notes per embedding call in the batched ingest")
    parser.add_argument("--ingest-only", action="store_true", help="measure the ingest only")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds to measure an idle loop's stalls first")
    parser.add_argument("--both-models", action="store_true",
                        help="also load the second bundled model (USE multilingual v3) for the RSS figure")
    parser.add_argument("--keep-heap", action="store_true",
                        help="leave the start's objects to the garbage collector (as before `settled_heap`)")
    parser.add_argument("--cost", action="store_true", help="what a message costs in CPU, and the ceiling it sets")
    parser.add_argument("--side-by-side", action="store_true",
                        help="ingest e5 only and with both bundled models in one run, alternating (`--rounds`)")
    parser.add_argument("--rounds", type=int, default=8, help="alternating rounds of the side-by-side ingest")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.side_by_side:
        side = print_side_by_side(args)
        if args.json:
            print(json.dumps(side))
        return
    if args.cost:
        figures = cost(args.users, args.messages)
        print(f"bundled model: {figures['cpu_ms_per_text_batch_1']} ms CPU per text one at a time, "
              f"{figures['cpu_ms_per_text_batch_16']} in batches of 16; everything else: "
              f"{figures['cpu_ms_per_message_without_model']} ms CPU per message; {figures['texts_per_message']} "
              f"e5 texts per message, {figures['use_texts_per_message']} USE texts at "
              f"{figures['use_ms_per_text_batched']} ms; with the models {figures['cpu_ms_per_message']} ms CPU "
              "per message, "
              f"{figures['messages_per_second']} msg/s; ceiling on {figures['cores']} cores: "
              f"{figures['ceiling_messages_per_second']} msg/s; 1-minute load average {os.getloadavg()[0]:.2f}")
        if args.json:
            print(json.dumps(figures))
        return
    idle, load = None, {}
    if not args.ingest_only:
        idle = asyncio.run(idle_stall(args.idle)) if args.idle > 0 else None
        print(f"idle event loop, {args.idle:.0f} s, nothing running in this process: worst stall {idle} ms; "
              f"1-minute load average {os.getloadavg()[0]:.2f}")
        load = asyncio.run(chat_load(args.users, args.messages, args.both_models, keep_heap=args.keep_heap))
        print(f"load: {load['users']} users, {load['messages']} messages in {load['seconds']} s = "
              f"{load['messages_per_second']} msg/s; worst event-loop stall {load['worst_stall_ms']} ms; "
              f"peak RSS {load['rss_mb']} MB{' (both bundled models)' if args.both_models else ''}; "
              f"{load['embedder_calls_per_message']} embedder calls per message, {load['texts_per_call']} texts each")
        if args.both_models:
            print(f"second signal: {load['use_calls_per_message']} USE calls per message, {load['use_texts_per_call']}"
                  f" texts each, {load['use_vectors']} USE vectors stored; USE {load['use_ms_per_text_alone']} ms per"
                  f" text alone, {load['use_ms_per_text_batched']} ms in calls of 32")
    fills = [asyncio.run(ingest(args.notes, 1, args.both_models)),
             asyncio.run(ingest(args.notes, args.batch, args.both_models))]
    for fill in fills:
        how = "one at a time" if fill["batch"] == 1 else f"in batches of {fill['batch']}"
        goal = "" if fill["batch"] == 1 else f" (goal >= {GOAL_NOTES_PER_SECOND}: " + (
            "met)" if fill["notes_per_second"] >= GOAL_NOTES_PER_SECOND else "MISSED)")
        print(f"ingest {how}: {fill['notes']} notes at {fill['notes_per_second']} notes/s{goal}; "
              f"{fill['mb_per_10k_notes']} MB per 10k notes")
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f}")
    if args.json:
        print(json.dumps({"idle_stall_ms": idle, "load": load, "ingest": fills}))


if __name__ == "__main__":
    main()
