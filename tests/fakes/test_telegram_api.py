"""Prove the unmodified python-telegram-bot works against FakeTelegram."""

from __future__ import annotations

import asyncio
import datetime as dtm
import socket
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatAction
from telegram.error import BadRequest, Conflict, EndPointNotFound, InvalidToken, NetworkError, RetryAfter
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from tests.fakes.telegram_api import FakeTelegram

USER = 4242


def _free_port() -> int:
    """A currently unused localhost TCP port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/start: greet with an inline keyboard."""
    assert update.effective_chat is not None and update.effective_message is not None
    await context.bot.send_chat_action(update.effective_chat.id, ChatAction.TYPING)
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="yes")]])
    await update.effective_message.reply_text("Hallo! Ready?", reply_markup=keyboard)


async def _echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Echo text messages."""
    assert update.effective_message is not None and update.effective_message.text is not None
    text = update.effective_message.text
    await update.effective_message.reply_text(f"echo: {text}", parse_mode="HTML")


async def _photo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Acknowledge photos."""
    assert update.effective_message is not None
    await update.effective_message.reply_text(f"photo {update.effective_message.photo[-1].file_id}")


async def _button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer the callback and edit the original message."""
    query = update.callback_query
    assert query is not None
    await query.answer("ok!")
    await query.edit_message_text(f"You said {query.data}")


def _app(tg: FakeTelegram) -> Application:  # type: ignore[type-arg]
    """Real PTB application pointed at the fake."""
    builder = Application.builder().token(tg.token).base_url(tg.base_url)
    app = builder.base_file_url(tg.base_file_url).build()
    app.add_handler(CommandHandler("start", _start))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, _echo))
    app.add_handler(MessageHandler(filters.PHOTO, _photo))
    app.add_handler(CallbackQueryHandler(_button))
    return app


@pytest_asyncio.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    """A running fake server; asserts no asyncio tasks leak past the test."""
    async with FakeTelegram(token="123:ABC", bot_username="mnemo_bot") as fake:
        yield fake
    await asyncio.sleep(0)
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not others, others


@pytest.mark.asyncio
async def test_polling_command_echo_button_and_confirmation(tg: FakeTelegram) -> None:
    app = _app(tg)
    await app.initialize()
    await app.start()
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0.0, timeout=dtm.timedelta(seconds=1))
    try:
        assert app.bot.username == "mnemo_bot"
        tg.send_text(USER, "/start")
        (greeting,) = await tg.wait_for_sent(1)
        assert greeting["chat_id"] == USER and greeting["text"] == "Hallo! Ready?"
        assert greeting["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "yes"
        assert tg.chat_actions == [{"chat_id": USER, "action": "typing"}]

        tg.press_button(USER, greeting["message_id"], "yes")
        await tg.wait_until(lambda: bool(tg.edits), what="edit after button press")
        assert tg.callback_answers[0]["text"] == "ok!"
        assert tg.edits[0]["text"] == "You said yes"
        assert tg.edits[0]["message_id"] == greeting["message_id"]
        assert tg.messages[greeting["message_id"]]["text"] == "You said yes"
        # editMessageText without reply_markup removes the keyboard, like Telegram does
        assert "reply_markup" not in tg.messages[greeting["message_id"]]

        tg.send_text(USER, "hello <there>")
        photo = {"file_id": "PHOTO1", "file_unique_id": "u1", "width": 90, "height": 90}
        tg.send_update({"message": {
            "message_id": 999, "date": int(time.time()), "chat": {"id": USER, "type": "private"},
            "from": {"id": USER, "is_bot": False, "first_name": "Anna"}, "photo": [photo],
        }})
        sent = await tg.wait_for_sent(3)
        assert [m["text"] for m in sent[1:]] == ["echo: hello <there>", "photo PHOTO1"]
        assert sent[1]["parse_mode"] == "HTML"
        assert "reply_parameters" not in sent[1]  # reply_text only quotes in groups by default
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()
    # Updater.stop() does a final getUpdates with the next offset, confirming everything delivered.
    assert tg.pending == []
    assert tg.calls[:2] == ["getMe", "deleteWebhook"] and tg.calls[-1] == "getUpdates"
    assert tg.unknown == []


@pytest.mark.asyncio
async def test_get_updates_offset_limit_and_long_poll(tg: FakeTelegram) -> None:
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        first = tg.send_text(USER, "one")
        second = tg.send_text(USER, "two")
        assert [u.update_id for u in await bot.get_updates()] == [first, second]
        assert [u.update_id for u in await bot.get_updates(limit=1)] == [first]  # not confirmed yet
        assert [u.update_id for u in await bot.get_updates(offset=first + 1)] == [second]
        assert [u.update_id for u in await bot.get_updates(offset=second + 1)] == []
        assert tg.pending == []

        started = time.monotonic()
        poll = asyncio.create_task(bot.get_updates(offset=second + 1, timeout=5))
        await asyncio.sleep(0.05)
        third = tg.send_text(USER, "three")
        (update,) = await poll
        assert update.update_id == third and update.message is not None
        assert update.message.text == "three"
        assert time.monotonic() - started < 1  # woken by the injection, not by the 5 s timeout

        dup = tg.send_update({"update_id": third, "message": update.message.to_dict()})
        assert dup == third and [u.update_id for u in await bot.get_updates()] == [third, third]


@pytest.mark.asyncio
# PTB 22.x's own RetryAfter.__init__ reads .retry_after, which emits a deprecation warning
@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_faults_unknown_methods_commands_and_bad_token(tg: FakeTelegram) -> None:
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        tg.fail_next("sendMessage", status=429, retry_after=3)
        with pytest.raises(RetryAfter, match="Retry in 3"):
            await bot.send_message(USER, "hi")
        tg.fail_next("sendMessage", status=502, count=2)
        for _ in range(2):
            with pytest.raises(NetworkError, match="Bad Gateway"):
                await bot.send_message(USER, "hi")
        msg = await bot.send_message(USER, "finally")
        assert msg.message_id == tg.sent[-1]["message_id"] and len(tg.sent) == 1

        with pytest.raises(EndPointNotFound):
            await bot.do_api_request("fooBar", api_kwargs={"x": 1})
        assert tg.unknown == [("fooBar", {"x": 1})]

        await bot.set_my_commands([("start", "Begin")], language_code="de")
        assert tg.commands == {("default", "de"): [{"command": "start", "description": "Begin"}]}
        assert [c.command for c in await bot.get_my_commands(language_code="de")] == ["start"]
        assert await bot.get_my_commands() == ()
        await bot.delete_my_commands(language_code="de")
        assert tg.commands == {}

    with pytest.raises(InvalidToken):
        async with Bot("999:WRONG", base_url=tg.base_url):
            pass


@pytest.mark.asyncio
async def test_webhook_mode_delivers_with_secret(tg: FakeTelegram) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/tg-hook"
    app = _app(tg)
    await app.initialize()
    await app.start()
    assert app.updater is not None
    await app.updater.start_webhook(listen="127.0.0.1", port=port, url_path="tg-hook",
                                    secret_token="s3cret", webhook_url=url)
    try:
        assert tg.webhook["url"] == url and tg.webhook["secret_token"] == "s3cret"
        assert (await app.bot.get_webhook_info()).url == url
        with pytest.raises(Conflict):
            await app.bot.get_updates()

        tg.send_text(USER, "via webhook")
        assert await tg.deliver_webhook(secret_token="wrong") == [403]
        assert len(tg.pending) == 1  # rejected deliveries stay queued
        assert await tg.deliver_webhook() == [200]
        (reply,) = await tg.wait_for_sent(1)
        assert reply["text"] == "echo: via webhook" and tg.pending == []
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()


@pytest.mark.asyncio
async def test_wait_for_sent_timeout_and_json_bodies(tg: FakeTelegram) -> None:
    with pytest.raises(TimeoutError, match="expected >= 1 sent messages, got 0"):
        await tg.wait_for_sent(1, timeout=0.05)
    url, payload = f"{tg.base_url}{tg.token}/sendMessage", {"chat_id": 7, "text": "x"}
    async with aiohttp.ClientSession() as http, http.post(url, json=payload) as resp:
        body = await resp.json()  # JSON bodies (not just PTB's form bodies) are accepted
    assert body["ok"] and body["result"]["chat"] == {"id": 7, "type": "private"}
    assert tg.sent[0]["chat_id"] == 7


async def test_reactions_both_ways(tg: FakeTelegram) -> None:
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        msg = await bot.send_message(USER, "Hallo")
        assert await bot.set_message_reaction(USER, msg.message_id, reaction="👍")
        assert tg.reactions[-1]["reaction"] == [{"type": "emoji", "emoji": "👍"}]
        with pytest.raises(BadRequest, match="(?i)reaction_invalid"):  # not on Telegram's list for bots
            await bot.set_message_reaction(USER, msg.message_id, reaction="😊")
        with pytest.raises(BadRequest, match="(?i)not found"):
            await bot.set_message_reaction(USER, 999, reaction="👍")
        assert len(tg.reactions) == 1

        tg.send_reaction(USER, msg.message_id, new=("❤", "🔥"), old=("👍",))
        [update] = await bot.get_updates(allowed_updates=["message_reaction"])
        change = update.message_reaction
        assert change is not None and change.message_id == msg.message_id and change.user is not None
        assert change.user.id == USER and update.effective_chat is not None and update.effective_chat.id == USER
        assert [r.emoji for r in change.new_reaction] == ["❤", "🔥"]  # type: ignore[attr-defined]
        assert [r.emoji for r in change.old_reaction] == ["👍"]  # type: ignore[attr-defined]
