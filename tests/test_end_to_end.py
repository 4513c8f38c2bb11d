"""End to end: the real OpenAI SDK against a local fake API, the real store and embedder, a restart."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

from bot.app import running_engine
from bot.channels.console import ConsoleChannel
from bot.settings import Settings
from tests.engine_kit import settings_for
from tests.fakes.llm_api import FakeLLM, prompt_text


def answer(body: dict) -> str:
    """Extraction requests (JSON asked for) get notes about the user's message; chat gets a greeting."""
    text = prompt_text(body)
    if "response_format" in body:
        ids = [int(i) for i in re.findall(r"^\[(\d+)\] user:", text, re.M)]
        return json.dumps({
            "facts": [{"text": "Anna mag kurze Antworten.", "importance": 7, "source_ids": ids[:1]}],
            "content": [],
            "profile": [{"category": "facts", "key": "name", "value": "Anna", "source_ids": ids[:1]}],
        })
    return "Schön, dich kennenzulernen!"


async def chat_once(settings: Settings, line: str) -> str:
    out = io.StringIO()
    async with running_engine(settings) as engine:
        await ConsoleChannel(engine, stdin=io.StringIO(line + "\n"), stdout=out).run()
    return out.getvalue()


async def test_a_fact_survives_a_restart_and_reaches_the_next_prompt(tmp_path: Path) -> None:
    async with FakeLLM(models=("fake-model",)) as llm:
        llm.responder = answer
        settings = settings_for(tmp_path / "data", chat_base_url=llm.openai_base_url, chat_model="fake-model",
                                chat_api_key="test-key", llm_timeout=5)
        first = await chat_once(settings, "Ich heiße Anna und mag kurze Antworten")
        assert "Schön, dich kennenzulernen!" in first

        second = await chat_once(settings, "Wie soll ich dir am liebsten antworten?")
        assert "Schön, dich kennenzulernen!" in second
        chat_requests = [r for r in llm.requests
                         if r.path.endswith("/chat/completions") and "response_format" not in r.json]
        system = chat_requests[-1].json["messages"][0]["content"]
        assert "name: Anna" in system, system
        assert "Anna mag kurze Antworten." in system, system
        assert chat_requests[-1].headers["authorization"] == "Bearer test-key"


async def test_user_message_is_kept_when_the_model_is_down(tmp_path: Path) -> None:
    async with FakeLLM() as llm:
        settings = settings_for(tmp_path / "data", chat_base_url=llm.openai_base_url, chat_model="fake-model",
                                chat_api_key="test-key", llm_timeout=5)
        for _ in range(8):
            llm.enqueue_error(503)
        out = await chat_once(settings, "Hallo, hörst du mich?")
    assert "Sprachmodell ist nicht erreichbar" in out
    from memory.search.embedder import make_embedder
    from memory.store import MemoryStore

    async with await MemoryStore.open(settings.data_dir, make_embedder(settings.embedding_model)) as store:
        scope = await store.scope(settings.companion_id, "console:local")
        assert [m.text for m in await store.messages.recent(scope)] == ["Hallo, hörst du mich?"]
