"""A long streamed reply in an encrypted Matrix DM, measured on mnemo as a process of its own (issue 52).

Usage: .venv/bin/python bench/long_stream.py --matrix [--chars 30000] [--pieces 7500] [--json]

mnemo runs as in bench/help_first.py (`python -m bot.cli run`, its settings from the environment, streaming on),
against a real Synapse on 127.0.0.1 (tests/fakes/synapse.py) and the fake OpenAI-compatible API
(tests/fakes/llm_api.py). Two people, each in an encrypted direct room, first say hello and get their answers (keys
shared, everything warm). Then the first asks for a long story: the model streams `--chars` characters in `--pieces`
deltas (a 20 ms pause after every hundredth). The moment the stream has been written whole, the second person sends a
message. Measured: mnemo's resident memory (VmRSS from /proc) before the long reply, after it and the second answer,
and its peak (VmHWM); the seconds from the stream's end to each message (bubble) of the long reply reaching the first
person's client, decrypted; and the seconds from the second person's send to mnemo's first answer reaching them.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.help_first import NOTHING_LEARNED, mnemo  # noqa: E402
from tests.fakes.llm_api import FakeLLM, Reply  # noqa: E402
from tests.fakes.synapse import Synapse  # noqa: E402
from tests.test_matrix import PASSWORD, Human  # noqa: E402
from tests.test_matrix_sizes import long_reply  # noqa: E402

ASK_LONG = "Erzähl mir bitte alles, ganz ausführlich."
SHORT = "Schön, dass du da bist."


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {key: int(fields[key].split()[0]) for key in ("VmRSS", "VmHWM")}


def responder(chars: int, pieces: int) -> Callable[[dict[str, Any]], Reply]:
    """The fake model: the long story for ASK_LONG, a short answer otherwise, the background model's JSON at once."""
    story = long_reply(chars)

    def answer(body: dict[str, Any]) -> Reply:
        if body.get("response_format"):
            return Reply(text=NOTHING_LEARNED)
        last = body["messages"][-1]
        if last.get("role") == "user" and ASK_LONG in json.dumps(last, ensure_ascii=False):
            return Reply(text=story, piece=max(1, -(-len(story) // pieces)), pause=0.02)
        return Reply(text=SHORT)
    return answer


class Watcher:
    """A person's client syncing all the time, keeping (arrival time, event) of the bot's messages per room."""

    def __init__(self, human: Human, room: str, bot_id: str) -> None:
        self.human, self.room, self.bot_id = human, room, bot_id
        self.seen: list[tuple[float, Any]] = []
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            for event in await self.human.sync(self.room, 1.0):
                if getattr(event, "sender", None) == self.bot_id and hasattr(event, "body"):
                    self.seen.append((time.monotonic(), event))

    def bubbles(self, since: float) -> list[tuple[float, Any]]:
        """The bot's new messages (not edits) that arrived after `since`."""
        return [(at, e) for at, e in self.seen if at >= since
                and (e.source.get("content", {}).get("m.relates_to") or {}).get("rel_type") != "m.replace"]

    async def until(self, check: Callable[[], bool], seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not check():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            assert not self.task.done(), self.task
            await asyncio.sleep(0.05)


async def run(chars: int = 30_000, pieces: int = 7_500, settle: float = 5.0, extra: dict[str, str] | None = None
              ) -> dict[str, Any]:
    """One mnemo process, two people; the figures (`extra`: more environment for the process)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        async with FakeLLM() as llm, Synapse(folder / "synapse") as syn:
            llm.responder = responder(chars, pieces)
            bot_id, _, _ = await syn.register(syn.fresh_name("mnemo"), PASSWORD)
            anna = await Human.login(syn, syn.fresh_name("anna"), folder / "anna")
            ben = await Human.login(syn, syn.fresh_name("ben"), folder / "ben")
            env = {
                "MNEMO_DATA_DIR": str(folder / "data"), "MNEMO_CHANNELS": "matrix",
                "MNEMO_CHAT_PROVIDER": "openai", "MNEMO_CHAT_BASE_URL": llm.openai_base_url,
                "MNEMO_CHAT_MODEL": "fake-model", "MNEMO_CHAT_API_KEY": "sk-bench", "MNEMO_LLM_TIMEOUT": "120",
                "MNEMO_STREAMING": "true", "MNEMO_MATRIX_HOMESERVER": syn.url, "MNEMO_MATRIX_USER_ID": bot_id,
                "MNEMO_MATRIX_PASSWORD": PASSWORD, "MNEMO_MATRIX_ALLOWED_USERS": f"{anna.user_id},{ben.user_id}",
                **(extra or {}),
            }
            watchers: list[Watcher] = []
            try:
                async with mnemo(env, folder) as child:
                    rooms = [await anna.open_dm(bot_id, encrypted=True), await ben.open_dm(bot_id, encrypted=True)]
                    for human, room in zip((anna, ben), rooms):
                        await human.wait_for(room, lambda e: getattr(e, "state_key", None) == bot_id
                                             and getattr(e, "membership", None) == "join", seconds=180)
                    watchers = [Watcher(anna, rooms[0], bot_id), Watcher(ben, rooms[1], bot_id)]
                    for human, room, watcher in zip((anna, ben), rooms, watchers):
                        start = time.monotonic()
                        for text in ("Hallo!", "Wie geht's dir?"):
                            await human.say(room, text)
                            count = len(watcher.bubbles(start))
                            await watcher.until(lambda w=watcher, c=count, s=start: len(w.bubbles(s)) > c, 180,
                                                f"an answer in {room}")
                    await asyncio.sleep(settle)
                    before = memory_kib(child.pid)
                    ended = len(llm.streams_ended)
                    asked = time.monotonic()
                    await anna.say(rooms[0], ASK_LONG)
                    await watchers[0].until(lambda: len(llm.streams_ended) > ended and any(
                        r.json.get("stream") and ASK_LONG in json.dumps(r.json, ensure_ascii=False)
                        for r in llm.requests), 300, "the long stream")
                    # the first stream that ended after the long one was asked for is the long one
                    stream_end = next(t for t in llm.streams_ended[ended:] if t >= asked)
                    ben_start = time.monotonic()
                    await ben.say(rooms[1], "Hallo, bist du da?")
                    await watchers[1].until(lambda: bool(watchers[1].bubbles(ben_start)), 300, "ben's answer")
                    ben_waited = watchers[1].bubbles(ben_start)[0][0] - ben_start
                    last_text = long_reply(chars)[-40:].strip()
                    await watchers[0].until(lambda: any(last_text in e.body for _, e in watchers[0].seen), 300,
                                            "the long reply's end")
                    await asyncio.sleep(1.0)
                    after = memory_kib(child.pid)
                    await asyncio.sleep(settle)
                    later = memory_kib(child.pid)
                    bubbles = [at - stream_end for at, _ in watchers[0].bubbles(asked)]
                    edits = sum(1 for at, _ in watchers[0].seen if at >= asked) - len(bubbles)
            finally:
                for watcher in watchers:
                    watcher.task.cancel()
                for human in (anna, ben):
                    await human.client.close()
        if extra and "KEEP_LOG" in extra:
            Path(extra["KEEP_LOG"]).write_bytes((folder / "mnemo.log").read_bytes())
    return {"chars": chars, "pieces": pieces, "stream_s": round(stream_end - asked, 2),
            "rss_mb_before": round(before["VmRSS"] / 1024, 1), "rss_mb_after": round(after["VmRSS"] / 1024, 1),
            "rss_mb_settled": round(later["VmRSS"] / 1024, 1), "peak_mb_before": round(before["VmHWM"] / 1024, 1),
            "peak_mb": round(later["VmHWM"] / 1024, 1),
            "bubbles_after_stream_end_s": [round(b, 2) for b in bubbles], "edits_seen": edits,
            "second_person_waited_s": round(ben_waited, 2), "load": [round(x, 2) for x in os.getloadavg()]}


def report(figures: dict[str, Any]) -> str:
    """The figures as two lines."""
    return (f"{figures['chars']} characters in {figures['pieces']} pieces over an encrypted Matrix DM "
            f"(stream {figures['stream_s']} s): RSS {figures['rss_mb_before']} -> {figures['rss_mb_after']} MB "
            f"({figures['rss_mb_settled']} MB settled; peak {figures['peak_mb_before']} -> {figures['peak_mb']} MB)\n"
            f"bubbles after the stream's end: {figures['bubbles_after_stream_end_s']} s ({figures['edits_seen']} "
            f"edits seen); the second person waited {figures['second_person_waited_s']} s; load {figures['load']}")
