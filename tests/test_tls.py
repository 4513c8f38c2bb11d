"""One verifying TLS context shared by every HTTP client mnemo makes (building one costs 35-70 ms of CPU)."""
from __future__ import annotations

import ssl

from bot import tls
from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram import make_channel


def test_the_context_is_made_once_and_verifies_certificates_and_host_names() -> None:
    context = tls.context()
    assert context is tls.context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


async def test_the_telegram_channel_and_its_long_polling_use_the_shared_context(tg: FakeTelegram,
                                                                                 engine: Engine) -> None:
    channel: TelegramChannel = make_channel(tg, engine)
    requests = channel.app.bot._request  # (getUpdates' request, every other method's request)
    assert [r._client_kwargs["verify"] for r in requests] == [tls.context(), tls.context()]  # type: ignore[attr-defined]
