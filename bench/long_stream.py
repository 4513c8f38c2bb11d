"""The work a long streamed reply costs: 30,000 characters in 7,500 pieces (goal: at most 1 s of CPU; issue 52).

Usage: .venv/bin/python bench/long_stream.py [--chars 30000] [--pieces 7500] [--matrix] [--json]

The engine (a real SQLite store in a temporary folder, the deterministic test embedder, a scripted chat model whose
stream yields after every piece and pauses 20 ms after every hundredth) hands the reply to a live preview shaped as
the Matrix channel shapes it: commands written with '!', the first message split off, each edit measured for an
encrypted room. Printed: the CPU seconds of the turn, its wall time, how often the visible text was looked at, how
many preview messages or edits were made and how many edit sizes were measured. Before issue 52 every piece was
read whole again (12 s of CPU, 7,462 looks on the 2-core machine of docs/benchmarks.md).

`--matrix` measures the same reply where it was seen: mnemo as a process of its own in an encrypted Matrix DM with a
real Synapse, its memory and how late the reply's bubbles and the next person's answer come
(bench/long_stream_matrix.py says how).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.channels.matrix.channel import bang  # noqa: E402
from bot.channels.matrix.messages import edit_content, first_message  # noqa: E402
from bot.channels.matrix.sizes import fits_in  # noqa: E402
from bot.channels.streaming import PREVIEW_EVERY, LivePreview  # noqa: E402
from bot.conversation.engine import Incoming  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.engine_kit import make_engine  # noqa: E402
from tests.fakes.embedder import FakeEmbedder  # noqa: E402
from tests.test_long_streams import SteadyLLM  # noqa: E402
from tests.test_matrix_sizes import long_reply  # noqa: E402

GOAL_CPU_SECONDS = 1.0
ROOM = "!" + "r" * 43 + ":localhost"


async def run(chars: int, pieces: int) -> dict[str, float]:
    """One streamed turn; its figures."""
    with tempfile.TemporaryDirectory() as folder:
        store = await MemoryStore.open(Path(folder) / "mnemo.sqlite3", FakeEmbedder())
        chat = SteadyLLM()
        engine = make_engine(store, chat)
        chat.enqueue(long_reply(chars).replace("\n\n", " "))
        chat.chunks = pieces
        looks, made, sizes, fits = [0], [0], [0], fits_in(ROOM, True)

        def measured(content: dict[str, object]) -> bool:
            sizes[0] += 1
            return fits(content)

        async def show(text: str) -> str:
            made[0] += 1
            first_message(text)
            return "$preview"

        async def edit(handle: str, text: str) -> None:
            made[0] += 1
            edit_content(handle, first_message(text), measured)

        preview: LivePreview[str] = LivePreview(show, edit, every=PREVIEW_EVERY)

        async def progress(text: str) -> None:
            looks[0] += 1
            await preview.update(bang(text))

        wall, cpu = time.perf_counter(), time.process_time()
        try:
            await engine.handle(Incoming("anna", "Erzähl mir alles."), on_progress=progress)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            await preview.close()
        finally:
            await engine.drain()
            await engine.close()
            await store.close()
    return {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "looks": looks[0], "previews_and_edits": made[0],
            "sizes_measured": sizes[0]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=30_000)
    parser.add_argument("--pieces", type=int, default=7_500)
    parser.add_argument("--matrix", action="store_true", help="mnemo as a process, in an encrypted Matrix DM")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.matrix:
        from bench.long_stream_matrix import report
        from bench.long_stream_matrix import run as run_matrix
        matrix = asyncio.run(run_matrix(args.chars, args.pieces))
        print(json.dumps(matrix) if args.json else report(matrix))
        return
    figures = asyncio.run(run(args.chars, args.pieces))
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{args.chars} characters in {args.pieces} pieces: {figures['cpu_s']:.2f} s CPU "
          f"(goal <= {GOAL_CPU_SECONDS:.0f} s), {figures['wall_s']:.2f} s wall, {figures['looks']} looks, "
          f"{figures['previews_and_edits']} preview messages and edits, {figures['sizes_measured']} sizes measured")


if __name__ == "__main__":
    main()
