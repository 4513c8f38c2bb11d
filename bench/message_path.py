"""One plain text message's way through mnemo's code: the files it visits, in order, and how often a call
crosses from one file into another and back, traced with `sys.setprofile` (figures for docs/ARCHITECTURE.md).

The message goes to `Engine.handle` on an SQLite store with the tests' fake embedder and a scripted chat model that
answers at once, after one warm-up message (so start-up, migrations and first imports are not counted). Learning
after the reply is drained before the trace starts and after it ends, and is not part of the way counted.

Usage: .venv/bin/python bench/message_path.py [--files]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.conversation.engine import Engine  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.engine_kit import make_engine  # noqa: E402
from tests.fakes.embedder import FakeEmbedder  # noqa: E402
from tests.fakes.llm import ScriptedLLM  # noqa: E402

try:  # the channel <-> engine types moved from bot/conversation/replies.py to bot/exchange.py (issue 41)
    from bot.exchange import Incoming  # type: ignore[import-not-found, unused-ignore]
except ImportError:
    from bot.conversation.replies import Incoming  # type: ignore[import-not-found, no-redef, unused-ignore]

PACKAGES = ("bot", "memory", "scheduler")


class Trace:
    """The files of our packages a call enters, in order, and the calls that cross from one file into another."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.crossings: Counter[tuple[str, str]] = Counter()

    def ours(self, frame: FrameType | None) -> str | None:
        if frame is None:
            return None
        path = Path(frame.f_code.co_filename)
        try:
            rel = path.resolve().relative_to(ROOT)
        except ValueError:
            return None
        return str(rel) if rel.parts[0] in PACKAGES else None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        here = self.ours(frame)
        if here is None:
            return
        if not self.order or self.order[-1] != here:
            self.order.append(here)
        caller = self.ours(frame.f_back)
        if caller is not None and caller != here:
            self.crossings[(caller, here)] += 1


async def traced_turn(engine: Engine) -> Trace:
    await engine.handle(Incoming("anna", "Hallo, wie geht's dir heute?"))  # warm-up
    await engine.drain()
    trace = Trace()
    sys.setprofile(trace)
    try:
        await engine.handle(Incoming("anna", "Ich war heute im Garten und habe Tomaten gepflanzt."))
    finally:
        sys.setprofile(None)
    await engine.drain()
    return trace


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list the files in the order they were first entered")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = await MemoryStore.open(Path(tmp) / "mnemo.db", FakeEmbedder())
        chat = ScriptedLLM("chat")
        chat.responder = lambda call: "Schön, erzähl mir mehr von deinen Tomaten!"
        engine = make_engine(store, chat)
        try:
            trace = await traced_turn(engine)
        finally:
            await engine.close()
            await store.close()
    files = list(dict.fromkeys(trace.order))
    layers = Counter(f.split("/")[0] for f in files)
    back_and_forth = sum(min(n, trace.crossings[(b, a)]) for (a, b), n in trace.crossings.items() if a < b)
    print(f"files entered: {len(files)} ({', '.join(f'{k} {v}' for k, v in sorted(layers.items()))})")
    print(f"file changes along the way: {len(trace.order) - 1}")
    print(f"calls crossing into another file: {sum(trace.crossings.values())}, "
          f"between {len(trace.crossings)} pairs of files; pairs calling each other both ways: "
          f"{sum(1 for (a, b) in trace.crossings if a < b and (b, a) in trace.crossings)} "
          f"({back_and_forth} calls back and forth)")
    for a, b in sorted(pair for pair in trace.crossings if pair[0] < pair[1] and pair[::-1] in trace.crossings):
        print(f"  both ways: {a} ({trace.crossings[(a, b)]}) <-> {b} ({trace.crossings[(b, a)]})")
    if args.files:
        for f in files:
            print("  " + f)


if __name__ == "__main__":
    asyncio.run(main())
