"""Importing a generated 2,000-conversation ChatGPT export through the whole pipeline with a fake background model.

Reads the export as a stream, sends the person's words to the fake model in batches, queues the candidates (each
checked against the memory for duplicates and contradictions), approves some of them with their original times,
and takes the whole import back with /undo. Prints time, model calls, tokens (four characters a token, as the
preview counts) and the peak RSS of this process. The embedder is the tests' deterministic one, so the figures
are the pipeline's own, not the embedding model's.

    .venv/bin/python bench/history_import.py [--conversations 2000] [--messages 16] [--approve 200]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.history.approval import approve  # noqa: E402
from bot.history.importer import file_hash, run_import  # noqa: E402
from bot.history.readers import read_history  # noqa: E402
from bot.llm.port import Completion, CompletionRequest, Usage  # noqa: E402
from memory.ledgers.undo import undo_latest  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.fakes.embedder import FakeEmbedder  # noqa: E402
from tests.fakes.history_exports import chatgpt_file  # noqa: E402

LINE = re.compile(r"^\[(\d+)\] user: (.*)$", re.M)


class FakeFinder:
    """A background model that finds a fact in every third line of the person and a person where one is named."""

    model = "fake-finder"

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        system = request.system
        prompt = request.messages[-1].content
        facts, people = [], []
        for number, text in LINE.findall(prompt)[::3]:
            facts.append({"text": "Anna sagt: " + text, "importance": 5, "source_ids": [int(number)]})
            if "Schwester Miriam" in text:
                people.append({"name": "Miriam", "relation": "Schwester", "source_ids": [int(number)]})
        answer = json.dumps({"facts": facts, "content": [], "profile": [], "people": people}, ensure_ascii=False)
        usage = Usage((len(prompt) + sum(len(b.text) for b in system)) // 4, len(answer) // 4)
        self.tokens += usage.input_tokens + usage.output_tokens
        return Completion(answer, (), usage, self.model)


async def bench(conversations: int, messages: int, approve_count: int) -> None:
    """Generate, import, approve, undo; print the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        export = chatgpt_file(Path(tmp) / "conversations.json", conversations, messages)
        print(f"export: {conversations:,} conversations x {messages} messages, "
              f"{export.stat().st_size / 2**20:.1f} MB")
        async with await MemoryStore.open(Path(tmp) / "data", FakeEmbedder()) as store:
            scope = await store.scope("mnemo", "anna")
            model = FakeFinder()
            started = time.perf_counter()
            outcome = await run_import(store, model, scope, read_history(export), digest=file_hash(export),
                                       source="chatgpt", name=export.name)
            took = time.perf_counter() - started
            done = outcome.imported
            print(f"import: {took:.1f} s, {model.calls:,} calls, {model.tokens:,} tokens, "
                  f"{done.conversations_done:,} conversations, {done.messages_read:,} of the person's messages, "
                  f"{done.candidates:,} candidates queued")
            started = time.perf_counter()
            again = await run_import(store, model, scope, read_history(export), digest=file_hash(export),
                                     source="chatgpt", name=export.name)
            print(f"same file again: {again.state}, {time.perf_counter() - started:.2f} s (the hash), "
                  f"{model.calls:,} calls in all")
            started = time.perf_counter()
            approved = 0
            while approved < approve_count and (group := await store.imports.next_group(scope, 4)):
                for candidate in group:
                    approved += await approve(store, scope, candidate, time.time())
            took = time.perf_counter() - started
            print(f"approve: {approved} candidates in {took:.1f} s ({1000 * took / max(approved, 1):.1f} ms each), "
                  f"{await store.notes.count(scope)} notes")
            started = time.perf_counter()
            entries = await undo_latest(store, scope)
            print(f"/undo: {len(entries)} audit entries in {time.perf_counter() - started:.1f} s, "
                  f"{await store.notes.count(scope)} notes and {await store.imports.pending_count(scope)} "
                  f"candidates left")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (goal < 300 MB)")


def main() -> None:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=16)
    parser.add_argument("--approve", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(bench(args.conversations, args.messages, args.approve))


if __name__ == "__main__":
    main()
