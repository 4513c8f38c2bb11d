"""Two simulated days end to end through the Telegram fake: the check-in and the diary arrive as real messages."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler import BERLIN, DAY1, Clock, background_model, drive, learnt, on_telegram


async def test_checkin_and_diary_pushed_through_telegram(store: MemoryStore, tmp_path: Path) -> None:
    clock = Clock((DAY1 + timedelta(hours=10)).timestamp())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = lambda call: "Wie war der Zahnarzt?" if "has not written" in call.prompt else "Viel Erfolg!"
    background.responder = background_model(DAY1 + timedelta(days=1, hours=12))  # type: ignore[assignment]
    async with on_telegram(store, tmp_path, clock, chat, background,
                           silence=timedelta(hours=48)) as (tg, engine, scheduler):
        tg.send_text(42, "Morgen um 10 habe ich einen Zahnarzttermin.")
        await tg.wait_for_sent(1)
        await learnt(engine, "tg:42")
        scope = await engine.scope_for("tg:42")
        await store.preferences.set(scope, "diary_push", True)
        await drive(scheduler, clock, DAY1 + timedelta(days=2))
    texts = [m["text"] for m in tg.sent if str(m["chat_id"]) == "42"]
    assert texts[0] == "Viel Erfolg!"
    assert texts[1].startswith("📔 2026-11-24\n")  # the diary, pushed at 23:45 on day one
    assert texts[2:] == ["Wie war der Zahnarzt?"]  # the check-in on day two, nothing else
    assert datetime.fromtimestamp((await store.messages.last_proactive(scope)).created_at.timestamp(),  # type: ignore[union-attr]
                                  BERLIN).hour == 12
