"""Log lines: one per event, secrets masked even inside tracebacks."""
from __future__ import annotations

import logging

from bot.logs import LineFormatter
from bot.settings import Settings


def test_secrets_never_reach_a_log_line() -> None:
    settings = Settings(_env_file=None, chat_api_key="sk-secret-123456", telegram_token="987654:TOKEN-abcdef")  # type: ignore[call-arg]
    formatter = LineFormatter(settings.secrets())
    try:
        raise RuntimeError("request to https://api.telegram.org/bot987654:TOKEN-abcdef/getMe failed")
    except RuntimeError:
        record = logging.LogRecord("bot", logging.ERROR, __file__, 1, "key %s rejected", ("sk-secret-123456",),
                                   exc_info=__import__("sys").exc_info())
    line = formatter.format(record)
    assert "sk-secret-123456" not in line and "TOKEN-abcdef" not in line
    assert line.count("***") >= 2 and "\n" not in line
