"""Time from a crisis message to the help text, with a chat model that takes 8 s to answer (issue 51: p95 <= 0.5 s).

Usage: .venv/bin/python bench/help_first.py [--messages 20] [--people 2] [--delay 8] [--json]

mnemo runs as the product runs (`python -m bot.cli run`, a process of its own, its settings from the environment:
the bundled embedder, the layered crisis detector, the real python-telegram-bot Application and matrix-nio), talking
to the fake Telegram Bot API (tests/fakes/telegram_api.py) and to a real Synapse on 127.0.0.1 (tests/fakes/synapse.py)
in encrypted direct rooms; its chat model is the fake OpenAI-compatible API (tests/fakes/llm_api.py), which holds every
chat answer for `--delay` seconds (the background model's JSON comes at once). `--people` people write at once, each
`--messages / --people` crisis messages one after another (the next once the model's answer came), first one command
(/help) that needs no model, so a Matrix room's keys are shared before the clock runs.

Measured per message, from the send (Telegram: the update queued at the fake Bot API, which mnemo long-polls;
Matrix: the person's client starting its send) to the help text's arrival (Telegram: the fake Bot API receiving its
sendMessage; Matrix: the person's client syncing it, decrypted), and to the model's answer the same way. Printed per
channel: p50, p95 and max of both, in milliseconds.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.conversation.help_lines import crisis_help  # noqa: E402
from tests.fakes.llm_api import FakeLLM, Reply  # noqa: E402
from tests.fakes.synapse import Synapse  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402
from tests.test_matrix import PASSWORD, Human  # noqa: E402

NOTHING_LEARNED = json.dumps({"facts": [], "content": [], "profile": []})
ANSWER = "Ich bin da und lese, was du schreibst. Magst du mir erzählen, was gerade passiert?"
# What people in crisis write (German and English), each found by the fast layers; their help text by language.
CRISIS = {
    "de": ("Ich will nicht mehr leben.", "Ich kann nicht mehr, ich will sterben.",
           "Heute Nacht mache ich Schluss.", "Ich habe die Tabletten schon gesammelt.",
           "Ich will mich umbringen."),
    "en": ("I want to kill myself.", "I don't want to be alive anymore.", "I'm going to end it tonight.",
           "I have been stockpiling my pills.", "Everyone would be better off without me."),
}
BOT_TOKEN = "123:ABC"
FIRST_USER = 4200


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50, p95 and max of seconds, in milliseconds rounded to 0.1."""
    ms = sorted(v * 1000 for v in values)
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94] if len(ms) > 1 else ms[0]
    return {"p50_ms": round(statistics.median(ms), 1), "p95_ms": round(p95, 1), "max_ms": round(ms[-1], 1),
            "n": len(ms)}


@dataclass
class Timed:
    """One crisis message: seconds from its send to the help text and to the model's answer."""

    help: float
    answer: float
    server: float | None = None  # Matrix: the help event's server time minus the message's (the bot's own share)


def responder(delay: float) -> Callable[[dict[str, Any]], Reply]:
    """The fake model: a chat answer after `delay` seconds; the background model's JSON (extraction) at once."""
    def answer(body: dict[str, Any]) -> Reply:
        if body.get("response_format"):
            return Reply(text=NOTHING_LEARNED)
        return Reply(text=ANSWER, delay=delay)
    return answer


@contextlib.asynccontextmanager
async def mnemo(env: dict[str, str], folder: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    """mnemo as a process of its own (`python -m bot.cli run`), stopped with SIGTERM (its log: folder/mnemo.log)."""
    log = (folder / "mnemo.log").open("wb")
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", cwd=folder, stdout=log, stderr=asyncio.subprocess.STDOUT,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}, "PYTHONPATH": str(ROOT), **env})
    try:
        yield child
    except BaseException:
        log.flush()
        print((folder / "mnemo.log").read_text(errors="replace")[-4000:], file=sys.stderr)
        raise
    finally:
        if child.returncode is None:
            child.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(child.wait(), 30)
            except TimeoutError:
                child.kill()
                await child.wait()
        log.close()


def settings_env(tg: FakeTelegram, llm: FakeLLM, syn: Synapse, bot_id: str, humans: Sequence[Human],
                 people: int, folder: Path) -> dict[str, str]:
    """The environment mnemo reads its settings from: both channels against the fakes, the slow model."""
    return {
        "MNEMO_DATA_DIR": str(folder / "data"), "MNEMO_CHANNELS": "telegram,matrix",
        "MNEMO_CHAT_PROVIDER": "openai", "MNEMO_CHAT_BASE_URL": llm.openai_base_url, "MNEMO_CHAT_MODEL": "fake-model",
        "MNEMO_CHAT_API_KEY": "sk-bench", "MNEMO_LLM_TIMEOUT": "60", "MNEMO_STREAMING": "false",
        "MNEMO_TELEGRAM_TOKEN": BOT_TOKEN, "MNEMO_TELEGRAM_BASE_URL": tg.base_url,
        "MNEMO_TELEGRAM_ALLOWED_USERS": ",".join(str(FIRST_USER + i) for i in range(people)),
        "MNEMO_MATRIX_HOMESERVER": syn.url, "MNEMO_MATRIX_USER_ID": bot_id, "MNEMO_MATRIX_PASSWORD": PASSWORD,
        "MNEMO_MATRIX_ALLOWED_USERS": ",".join(h.user_id for h in humans),
    }


async def telegram_person(tg: FakeTelegram, user: int, lang: str, messages: int) -> list[Timed]:
    """One person on Telegram: /help first, then `messages` crisis messages, each after the last one's answer."""
    said = len(tg.sent)
    tg.send_text(user, "/help", language_code="de" if lang == "de" else "en-US")
    await tg.wait_until(lambda: any(m["chat_id"] == user for m in tg.sent[said:]), 120, "the answer to /help")
    help_text, times = crisis_help("DE", lang), []
    for k in range(messages):
        before = len(tg.sent)
        start = time.monotonic()
        tg.send_text(user, CRISIS[lang][k % len(CRISIS[lang])], language_code="de" if lang == "de" else "en-US")

        def arrived(text: str, before: int = before) -> float | None:
            return next((at for m, at in zip(tg.sent[before:], tg.sent_times[before:])
                         if m["chat_id"] == user and m["text"] == text), None)

        await tg.wait_until(lambda: arrived(help_text) is not None, 30, f"the help text for {user}")
        await tg.wait_until(lambda: arrived(ANSWER) is not None, 60, f"the answer for {user}")
        assert arrived(help_text) <= arrived(ANSWER), "the help text came first"  # type: ignore[operator]
        times.append(Timed(arrived(help_text) - start, arrived(ANSWER) - start))  # type: ignore[operator]
    return times


async def matrix_person(human: Human, room: str, bot_id: str, messages: int) -> list[Timed]:
    """One person on Matrix, in an encrypted direct room: /help first, then `messages` crisis messages."""
    def from_bot(event: Any) -> bool:
        return getattr(event, "sender", None) == bot_id and hasattr(event, "body")

    def joined(event: Any) -> bool:
        return getattr(event, "state_key", None) == bot_id and getattr(event, "membership", None) == "join"

    await human.wait_for(room, joined, seconds=120)
    await human.say(room, "!help")
    await human.wait_for(room, from_bot, seconds=120)
    help_text, times = crisis_help("DE", "de"), []
    for k in range(messages):
        start = time.monotonic()
        said = await human.say(room, CRISIS["de"][k % len(CRISIS["de"])])
        help_at = answer_at = said_ms = help_ms = None
        while answer_at is None:
            assert time.monotonic() - start < 60, f"no answer in {room}"
            for event in await human.sync(room, 2.0):
                if getattr(event, "event_id", None) == said:
                    said_ms = event.server_timestamp
                if not from_bot(event):
                    continue
                if event.body == help_text and help_at is None:
                    help_at, help_ms = time.monotonic(), event.server_timestamp
                elif event.body == ANSWER:
                    answer_at = time.monotonic()
        assert help_at is not None and help_at <= answer_at, "the help text came first"
        server = (help_ms - said_ms) / 1000 if said_ms is not None and help_ms is not None else None
        times.append(Timed(help_at - start, answer_at - start, server))
    return times


@contextlib.asynccontextmanager
async def homeserver(folder: Path, running: Synapse | None) -> AsyncIterator[Synapse]:
    """The Synapse to use: one already running (a test's), else a new one in `folder`."""
    if running is not None:
        yield running
        return
    async with Synapse(folder / "synapse") as syn:
        yield syn


async def run(messages: int = 20, people: int = 2, delay: float = 8.0, synapse: Synapse | None = None
              ) -> dict[str, Any]:
    """Run both channels against one mnemo process; the figures per channel (and each message's seconds) and the
    machine's load."""
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        async with FakeTelegram(token=BOT_TOKEN) as tg, FakeLLM() as llm, homeserver(folder, synapse) as syn:
            llm.responder = responder(delay)
            bot_id, _, _ = await syn.register(syn.fresh_name("mnemo"), PASSWORD)
            humans = [await Human.login(syn, syn.fresh_name(f"person{i}"), folder / f"person{i}")
                      for i in range(people)]
            try:
                async with mnemo(settings_env(tg, llm, syn, bot_id, humans, people, folder), folder) as child:
                    started = time.monotonic()
                    await tg.wait_until(lambda: "getUpdates" in tg.calls or child.returncode is not None, 180,
                                        "mnemo to start")
                    assert child.returncode is None, (folder / "mnemo.log").read_text()[-3000:]
                    startup = time.monotonic() - started
                    share = [messages // people + (i < messages % people) for i in range(people)]
                    langs = ["de" if i % 2 == 0 else "en" for i in range(people)]
                    telegram = await asyncio.gather(*(telegram_person(tg, FIRST_USER + i, langs[i], share[i])
                                                      for i in range(people)))
                    rooms = [await h.open_dm(bot_id, encrypted=True) for h in humans]
                    matrix = await asyncio.gather(*(matrix_person(h, r, bot_id, share[i])
                                                    for i, (h, r) in enumerate(zip(humans, rooms))))
                    chat_calls = sum(1 for r in llm.requests if not r.json.get("response_format"))
            finally:
                for human in humans:
                    await human.client.close()
    load_after = os.getloadavg()
    out: dict[str, Any] = {"startup_s": round(startup, 1), "delay_s": delay, "people": people,
                           "chat_calls": chat_calls,
                           "load_before": [round(x, 2) for x in load_before],
                           "load_after": [round(x, 2) for x in load_after]}
    for name, rows in (("telegram", telegram), ("matrix", matrix)):
        flat = [t for person in rows for t in person]
        out[name] = {"help": percentiles([t.help for t in flat]), "answer": percentiles([t.answer for t in flat]),
                     "each": [(round(t.help, 4), round(t.answer, 4)) for t in flat]}
        if servers := [t.server for t in flat if t.server is not None]:
            out[name]["help_by_server_clock"] = percentiles(servers)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20, help="crisis messages per channel")
    parser.add_argument("--people", type=int, default=2, help="people writing at once (each on both channels)")
    parser.add_argument("--delay", type=float, default=8.0, help="seconds the chat model takes to answer")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = asyncio.run(run(args.messages, args.people, args.delay))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"mnemo started in {figures['startup_s']} s; model delay {figures['delay_s']} s; "
          f"{figures['people']} people at once; load {figures['load_before']} -> {figures['load_after']}")
    print(f"{'channel':10} {'to':20} {'n':>4} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    for name in ("telegram", "matrix"):
        for what in ("help", "answer", "help_by_server_clock"):
            if what not in figures[name]:
                continue
            row = figures[name][what]
            print(f"{name:10} {what:20} {row['n']:>4} {row['p50_ms']:>9} {row['p95_ms']:>9} {row['max_ms']:>9}")


if __name__ == "__main__":
    main()
