"""The latency a voice note adds to a turn, with the fakes: what mnemo itself and the wire cost, not a speech model.

Usage: .venv/bin/python bench/voice.py [--runs 40] [--json]

Three ways through the engine (a real store in a temporary folder, the deterministic embedder, a chat model that
answers at once), each `--runs` times, interleaved so that a busy moment of the machine hits all alike:

- typed:  a typed message answered as text (the baseline);
- heard:  a two-second OGG/Opus voice note (made by espeak-ng and opusenc) sent through the real openai SDK to the
          fake transcription endpoint on 127.0.0.1 (multipart upload; the fake answers at once), then answered;
- spoken: the same, with /voice auto: the reply also goes through the fake speech endpoint (which answers at once
          with a voice note made beforehand), its length read from the OGG.

And the same two on Telegram, end to end through python-telegram-bot and the fake Bot API: from the update queued to
the last message the fake received (a typed message and its reply; a voice note fetched by getFile, heard, answered,
and its spoken reply uploaded by sendVoice). The added latency is each median and 95th percentile minus the typed
turn's. A real transcription or speech model adds its own time on top (hundreds of milliseconds to seconds).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig  # noqa: E402
from bot.commands.runner import Commands  # noqa: E402
from bot.conversation.engine import Engine, EngineConfig  # noqa: E402
from bot.exchange import Attachment, Incoming  # noqa: E402
from bot.voice.openai_audio import OpenAISpeaker, OpenAITranscriber  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.fakes.audio import spoken  # noqa: E402
from tests.fakes.embedder import FakeEmbedder  # noqa: E402
from tests.fakes.llm import ScriptedLLM  # noqa: E402
from tests.fakes.openai_audio import FakeAudioAPI  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402

SAID = "Ich habe heute einen Kuchen gebacken, mit Kirschen und Sahne."
ANSWER = "Oh, das klingt lecker! Was für ein Anlass war es denn?"


def percentile(values: list[float], q: int) -> float:
    """The q-th percentile (1..99) by linear interpolation, in milliseconds rounded to 0.1."""
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 1)


def figures(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """p50 and p95 of each way, and what a voice way adds to the typed one."""
    out: dict[str, dict[str, float]] = {}
    for name, values in times.items():
        ms = [v * 1000 for v in values]
        out[name] = {"p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "runs": len(ms)}
    for prefix in ("engine", "telegram"):
        base = out.get(f"{prefix} typed")
        for name, row in out.items():
            if base is not None and name.startswith(prefix) and not name.endswith("typed"):
                row["added_p50_ms"] = round(row["p50_ms"] - base["p50_ms"], 1)
                row["added_p95_ms"] = round(row["p95_ms"] - base["p95_ms"], 1)
    return out


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def voice_engine(path: Path, api: FakeAudioAPI) -> Engine:
    """An engine on its own store that hears and speaks through the fake audio API; the model answers at once."""
    store = await MemoryStore.open(path, FakeEmbedder())
    chat, background = ScriptedLLM(), ScriptedLLM()
    chat.responder = lambda call: ANSWER
    background.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    return Engine(store, chat, background, EngineConfig(relevance_floor=0.0, extraction="when_quiet",
                                                        extraction_quiet_seconds=3600),
                  transcriber=OpenAITranscriber("whisper-1", api.base_url, None),
                  speaker=OpenAISpeaker("tts-1", "alloy", api.base_url, None))


async def close(engine: Engine) -> None:
    """Close the engine, its audio clients and its store."""
    await engine.close()
    for client in (engine.voice.transcriber, engine.voice.speaker):
        await client.aclose()  # type: ignore[union-attr]
    await engine.store.close()


async def engine_runs(folder: Path, api: FakeAudioAPI, voice: bytes, reply_voice: bytes, runs: int,
                      times: dict[str, list[float]]) -> None:
    """The three ways through the engine, interleaved."""
    engine = await voice_engine(folder / "engine.sqlite3", api)
    attachment = Attachment("voice", voice, "audio/ogg", len(voice), seconds=2.0)
    try:
        spoken_scope = await engine.scope_for("spoken")
        await engine.voice.set_mode(spoken_scope, "auto")
        for run in range(runs + 2):  # the first two warm up (connections, caches) and are not counted
            for name, user in (("engine typed", "typed"), ("engine heard", "heard"), ("engine spoken", "spoken")):
                if user == "typed":
                    incoming = Incoming(user, SAID, channel_message_id=f"{run}")
                else:
                    api.hear(SAID)
                    if user == "spoken":
                        api.say(audio=reply_voice)
                    incoming = Incoming(user, "", channel_message_id=f"{run}", attachment=attachment)
                took = await timed(lambda incoming=incoming: engine.handle(incoming))  # type: ignore[misc]
                if run >= 2:
                    times.setdefault(name, []).append(took)
        assert len(api.speech_requests) == runs + 2, "the spoken way did not speak every time"
    finally:
        await close(engine)


async def telegram_runs(folder: Path, api: FakeAudioAPI, voice: bytes, reply_voice: bytes, runs: int,
                        times: dict[str, list[float]]) -> None:
    """A typed message and a voice note (heard and answered spoken) through PTB and the fake Bot API."""
    engine = await voice_engine(folder / "telegram.sqlite3", api)
    async with FakeTelegram() as tg:
        config = TelegramConfig(token=tg.token, base_url=tg.base_url, allowed_users=frozenset({"42"}),
                                streaming=False)
        channel = TelegramChannel(engine, Commands(engine), config)
        await channel.start()
        try:
            await engine.voice.set_mode(await engine.scope_for("tg:42"), "auto")
            for run in range(runs + 2):
                sent, voices = len(tg.sent), len(tg.voices)
                start = time.perf_counter()
                tg.send_text(42, SAID)
                await tg.wait_until(lambda sent=sent: len(tg.sent) > sent, timeout=10)  # type: ignore[misc]
                typed = time.perf_counter() - start
                api.hear(SAID)
                api.say(audio=reply_voice)
                start = time.perf_counter()
                tg.send_media(42, "voice", voice, duration=2)
                await tg.wait_until(lambda voices=voices: len(tg.voices) > voices, timeout=10)  # type: ignore[misc]
                heard = time.perf_counter() - start
                if run >= 2:
                    times.setdefault("telegram typed", []).append(typed)
                    times.setdefault("telegram voice (heard and spoken)", []).append(heard)
            assert tg.voices[-1]["voice"]["content"] == reply_voice
        finally:
            await channel.stop()
    await close(engine)


async def main(runs: int) -> dict[str, dict[str, float]]:
    voice, reply_voice = spoken(SAID), spoken(ANSWER)
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        async with FakeAudioAPI() as api:
            await engine_runs(Path(folder), api, voice, reply_voice, runs, times)
            await telegram_runs(Path(folder), api, voice, reply_voice, runs, times)
    return figures(times)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(main(args.runs))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"voice turns with the fakes, {args.runs} runs each (milliseconds)")
        for name, row in result.items():
            added = (f"   adds p50 {row['added_p50_ms']:>6.1f}  p95 {row['added_p95_ms']:>6.1f}"
                     if "added_p50_ms" in row else "")
            print(f"{name:<36} p50 {row['p50_ms']:>7.1f}  p95 {row['p95_ms']:>7.1f}{added}")
