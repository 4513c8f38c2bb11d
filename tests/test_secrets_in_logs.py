"""Secrets: a whole session at DEBUG, wired as in production, leaves no token or key in the log.

The settings carry a Telegram token, model API keys and Matrix credentials; the engine talks to the local fake
model API through the real OpenAI SDK (one answer is an error that echoes the key back), and the Telegram channel
to the local fake Bot API. Logging is installed by `bot.logs.install` at DEBUG into a captured stream, and the
HTTP client loggers are turned up to DEBUG as well, where request URLs (with the bot token in them) are logged.
"""
from __future__ import annotations

import io
import logging
import sys
from pathlib import Path

import pytest

from bot import logs
from bot.app import running_engine, telegram_config
from bot.channels.telegram.channel import TelegramChannel
from bot.commands.runner import Commands
from bot.settings import Settings
from tests.fakes.llm_api import FakeLLM
from tests.fakes.telegram_api import FakeTelegram

TOKEN = "735921:AAH-secret-bot-token-x9Qz"
CHAT_KEY = "sk-secret-chat-key-4f1e2d"
BACKGROUND_KEY = "sk-secret-background-key-77aa"
MATRIX = ("matrix-secret-password-31", "syt_secret_access_token_55")

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def secrets_in(text: str) -> list[str]:
    """Every secret (or the secret half of the bot token) that occurs in the text."""
    return [s for s in (TOKEN, TOKEN.split(":")[1], CHAT_KEY, BACKGROUND_KEY, *MATRIX) if s in text]


async def test_a_session_at_debug_logs_no_token_and_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    async with FakeTelegram(token=TOKEN) as tg, FakeLLM(models=["fake-model"]) as api:
        settings = Settings(
            _env_file=None, data_dir=tmp_path, embedding_model="tests.fakes.embedder:FakeEmbedder",  # type: ignore[call-arg]
            chat_base_url=api.openai_base_url, chat_model="fake-model", chat_api_key=CHAT_KEY,
            background_base_url=api.openai_base_url, background_api_key=BACKGROUND_KEY,
            telegram_token=TOKEN, telegram_base_url=tg.base_url, telegram_allowed_users=["42"],
            matrix_password=MATRIX[0], matrix_access_token=MATRIX[1], extraction="after_reply",
        )
        logs.install("DEBUG", secrets=settings.secrets())
        for chatty in ("httpx", "httpx2", "httpcore", "telegram", "openai"):
            logging.getLogger(chatty).setLevel(logging.DEBUG)
        api.enqueue_error(401, f"Incorrect API key provided: {CHAT_KEY}.")  # a server that echoes the key
        api.responder = lambda body: "Schön, von dir zu hören."
        async with running_engine(settings) as engine:
            channel = TelegramChannel(engine, Commands(engine), telegram_config(settings))
            await channel.start()
            try:
                for text in ("Hallo!", "Wie geht es dir?", "/memories"):
                    before = len(tg.sent)
                    tg.send_text(42, text)
                    await tg.wait_for_sent(before + 1)
                await engine.drain()
            finally:
                await channel.stop()
    log = captured.getvalue()
    assert "getUpdates" in log and "chat/completions" in log and "401" in log  # the session was logged in detail
    assert secrets_in(log) == [], [line for line in log.splitlines() if secrets_in(line)][:3]
