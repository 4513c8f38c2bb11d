"""A small local fake of the Telegram Bot API, good enough for python-telegram-bot in tests."""

from __future__ import annotations

import asyncio
import inspect
import io
import itertools
import json
import re
import time
from collections.abc import Callable
from functools import partial
from http import HTTPStatus
from typing import Any

import aiohttp
from aiohttp import web
from telegram.constants import ReactionEmoji

JSON = dict[str, Any]

# Form fields PTB sends as raw strings; all other values arrive JSON-encoded (ints, bools, objects).
_RAW_FIELDS = frozenset({
    "text", "caption", "parse_mode", "url", "secret_token", "language_code", "callback_query_id",
    "action", "inline_message_id", "ip_address", "business_connection_id", "message_effect_id",
})
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
_BOT_REACTIONS = frozenset(e.value for e in ReactionEmoji)  # what Telegram lets a bot react with
_WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)


class ApiError(Exception):
    """Raised as ApiError(code, description) inside a method handler to answer with an error."""


def _error(code: int, description: str, parameters: JSON | None = None) -> web.Response:
    """Bot API error response; the HTTP status equals error_code, as with Telegram."""
    body = {"ok": False, "error_code": code, "description": description}
    return web.json_response(body | ({"parameters": parameters} if parameters else {}), status=code)


def _commands_key(p: JSON) -> tuple[str, str]:
    """(scope, language_code) key for command lists, e.g. ('default', 'de') or ('chat:42', '')."""
    scope = p.get("scope") or {"type": "default"}
    ids = [str(scope[k]) for k in ("chat_id", "user_id") if k in scope]
    return ":".join([scope["type"], *ids]), p.get("language_code") or ""


class FakeTelegram:
    """Fake Bot API on 127.0.0.1:<free port>; use as `async with FakeTelegram() as tg`."""

    def __init__(self, token: str = "123:ABC", bot_username: str = "mnemo_bot") -> None:
        self.token = token
        self.bot_user: JSON = {"id": int(token.split(":")[0]), "is_bot": True,
                               "first_name": "Mnemo", "username": bot_username}
        self.sent: list[JSON] = []  # sendMessage params + message_id, reply_markup parsed
        self.sent_times: list[float] = []  # time.monotonic() of each sendMessage received, parallel to `sent`
        self.edits: list[JSON] = []  # successful edit params + "kind" ("text" / "reply_markup")
        self.edit_times: list[float] = []  # time.monotonic() of each successful edit, parallel to `edits`
        self.callback_answers: list[JSON] = []
        self.chat_actions: list[JSON] = []
        self.commands: dict[tuple[str, str], list[JSON]] = {}  # (scope, language_code) -> list
        self.calls: list[str] = []  # every method name, in order
        self.unknown: list[tuple[str, JSON]] = []  # unknown methods with their params
        self.webhook: JSON = {}  # last setWebhook params; empty when no webhook is set
        self.pending: list[JSON] = []  # unconfirmed updates, oldest first
        self.messages: dict[int, JSON] = {}  # message_id -> current Message (bot's and users')
        self.port = 0
        self._users: dict[int, JSON] = {}
        self._chats: dict[Any, JSON] = {}
        self._failures: dict[str, list[tuple[int, str, JSON | None] | None]] = {}  # None: let one call pass
        self._next_update_id = 1
        self._message_ids, self._callback_ids = itertools.count(1), itertools.count(1)
        self.documents: list[JSON] = []
        self.reactions: list[JSON] = []  # accepted setMessageReaction params (chat_id, message_id, reaction)
        self.voices: list[JSON] = []  # sendVoice params (voice = {"filename", "content"}) + message_id
        self.files: dict[str, bytes] = {}  # file_id -> the bytes behind it (a user's upload)
        self.file_sizes: dict[str, int] = {}  # file_id -> the size Telegram says it has (may be more than stored)
        self.downloads: list[str] = []  # the file_ids downloaded from the file URL, in order
        self._update_event = asyncio.Event()
        self._released = asyncio.Event()  # set on close: lets hanging getUpdates calls end
        self.hang_updates = 0  # the next n getUpdates calls hang until the client gives up (or close)
        self.drops: dict[str, int] = {}  # method -> how many of its next calls lose the connection (no answer)
        self.hangs: dict[str, int] = {}  # method -> how many of its next calls hang unanswered (until close)
        self._closing = False
        self._runner: web.AppRunner | None = None
        self._methods: dict[str, Callable[[JSON], Any]] = {  # sync, or async (getUpdates)
            "getme": self._get_me, "getupdates": self._get_updates,
            "sendmessage": self._send_message, "senddocument": self._send_document,
            "getfile": self._get_file, "sendvoice": self._send_voice,
            "editmessagetext": partial(self._edit, kind="text"),
            "editmessagereplymarkup": partial(self._edit, kind="reply_markup"),
            "answercallbackquery": partial(self._record, self.callback_answers),
            "setmessagereaction": self._set_reaction,
            "sendchataction": partial(self._record, self.chat_actions),
            "setmycommands": partial(self._my_commands, op="set"),
            "getmycommands": partial(self._my_commands, op="get"),
            "deletemycommands": partial(self._my_commands, op="delete"),
            "getwebhookinfo": self._webhook_info,
            "setwebhook": self._set_webhook, "deletewebhook": self._set_webhook,
        }

    async def __aenter__(self) -> FakeTelegram:  # noqa: PYI034
        """Start the HTTP server on a free port."""
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._dispatch)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0,
                                     access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Release long-pollers and stop the server."""
        self._closing = True
        self._released.set()
        self._wake_pollers()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """Value for PTB's `base_url` (PTB appends the token itself)."""
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        """Value for PTB's `base_file_url` (files a user sent are served there after getFile)."""
        return f"http://127.0.0.1:{self.port}/file/bot"

    def add_file(self, content: bytes) -> str:
        """Keep a user's upload; its file_id (getFile and the file URL then give these bytes)."""
        return str(self.keep_file(content, prefix="voice")["file_id"])

    def send_media(self, user_id: int, kind: str, content: bytes | None = None, *, size: int | None = None,
                   duration: int = 3, mime: str | None = None, caption: str | None = None, file_name: str = "",
                   chat_id: int | None = None, chat_type: str = "private", first_name: str = "Anna",
                   reply_to: int | None = None, language_code: str = "de") -> int:
        """Queue a message with a file from a user: kind 'voice', 'audio', 'video_note' or 'document'.

        `content` is served by getFile (else the file_id is unknown to the fake); `size` is the file_size Telegram
        tells (default: the content's length). A caption may carry an @mention.
        """
        file_id = self.add_file(content) if content is not None else "MISSING"
        media: JSON = {"file_id": file_id, "file_unique_id": f"u{file_id}"}
        known = size if size is not None else (len(content) if content is not None else None)
        if known is not None:
            media["file_size"] = known
        if kind in ("voice", "audio", "video_note"):
            media["duration"] = duration
        if kind == "video_note":
            media["length"] = 240
        else:
            media["mime_type"] = mime or {"voice": "audio/ogg", "audio": "audio/mpeg"}.get(kind, "application/pdf")
        if file_name:
            media["file_name"] = file_name
        return self._send_media(user_id, {kind: media}, caption, chat_id=chat_id, first_name=first_name,
                                chat_type=chat_type, reply_to=reply_to, language_code=language_code)

    def send_text(self, user_id: int, text: str, chat_id: int | None = None,
                  first_name: str = "Anna", language_code: str = "de",
                  chat_type: str = "private", reply_to: int | None = None, date: int | None = None,
                  title: str = "Chat", forwarded_from: str | None = None) -> int:
        """Queue a message update from a user; `/cmd` gets a bot_command entity, `@name` a mention.

        `reply_to` is the id of a message (the bot's or a user's) this one replies to; `date` when it was sent
        (Unix seconds; now when not given); `title` is a group's name; `forwarded_from` makes it a forward of that
        person's message (a forward_origin of a user who hides their account, as Telegram sends it).
        """
        user = self._users[user_id] = {"id": user_id, "is_bot": False, "first_name": first_name,
                                       "language_code": language_code}
        cid = user_id if chat_id is None else chat_id
        chat: JSON = {"id": cid, "type": chat_type}
        chat.update({"first_name": first_name} if chat_type == "private" else {"title": title})
        self._chats[cid] = chat
        msg: JSON = {"message_id": next(self._message_ids), "from": user, "chat": chat,
                     "date": int(time.time()) if date is None else date, "text": text}
        entities = []
        if text.startswith("/"):  # e.g. "/start" or "/start@mnemo_bot"; length in UTF-16 units
            length = len(text.split(maxsplit=1)[0].encode("utf-16-le")) // 2
            entities.append({"type": "bot_command", "offset": 0, "length": length})
        for found in re.finditer(r"(?<!\S)@[A-Za-z0-9_]{5,32}", text):  # as Telegram marks @username
            offset = len(text[: found.start()].encode("utf-16-le")) // 2
            entities.append({"type": "mention", "offset": offset, "length": len(found.group(0))})
        if entities:
            msg["entities"] = entities
        if reply_to is not None:
            msg["reply_to_message"] = {k: v for k, v in self.messages[reply_to].items() if k != "reply_to_message"}
        if forwarded_from is not None:
            msg["forward_origin"] = {"type": "hidden_user", "date": msg["date"] - 3600,
                                     "sender_user_name": forwarded_from}
        self.messages[msg["message_id"]] = msg
        return self.send_update({"message": msg})

    def press_button(self, user_id: int, message_id: int, data: str) -> int:
        """Queue a callback_query for an inline button on a message the bot sent earlier."""
        if message_id not in self.messages:
            raise KeyError(f"no message {message_id}; known ids: {sorted(self.messages)}")
        msg = self.messages[message_id]
        user = self._users.get(user_id, {"id": user_id, "is_bot": False, "first_name": "Anna"})
        query = {"id": str(next(self._callback_ids)), "from": user, "message": dict(msg),
                 "chat_instance": str(msg["chat"]["id"]), "data": data}
        return self.send_update({"callback_query": query})

    def send_reaction(self, user_id: int, message_id: int, new: tuple[str, ...] = (), old: tuple[str, ...] = (),
                      first_name: str = "Anna") -> int:
        """Queue a message_reaction update: a user's emoji on a message (the bot's or a user's) changed from `old`
        to `new`, in the message's chat, as Telegram sends it (to bots that asked for it, in groups only as admin)."""
        if message_id not in self.messages:
            raise KeyError(f"no message {message_id}; known ids: {sorted(self.messages)}")
        chat = self.messages[message_id]["chat"]
        user = self._users.get(user_id, {"id": user_id, "is_bot": False, "first_name": first_name})
        return self.send_update({"message_reaction": {
            "chat": chat, "message_id": message_id, "user": user, "date": int(time.time()),
            "old_reaction": [{"type": "emoji", "emoji": e} for e in old],
            "new_reaction": [{"type": "emoji", "emoji": e} for e in new]}})

    def send_update(self, update: JSON) -> int:
        """Queue an arbitrary update; an explicit update_id is kept (to fake duplicates)."""
        update = dict(update)
        update.setdefault("update_id", self._next_update_id)
        self._next_update_id = max(self._next_update_id, update["update_id"] + 1)
        self.pending.append(update)
        self._wake_pollers()
        return int(update["update_id"])

    async def deliver_webhook(self, url: str | None = None,
                              secret_token: str | None = None) -> list[int]:
        """POST each pending update to the webhook (default: from setWebhook); HTTP statuses."""
        url = url or self.webhook.get("url")
        if not url:
            raise RuntimeError("no webhook url: pass one or let the bot call setWebhook first")
        secret = self.webhook.get("secret_token") if secret_token is None else secret_token
        headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret else {}
        statuses = []
        async with aiohttp.ClientSession() as session:
            for update in list(self.pending):
                async with session.post(url, json=update, headers=headers) as resp:
                    statuses.append(resp.status)
                if resp.status < 300:  # Telegram retries undelivered updates, so keep them
                    self.pending.remove(update)
        return statuses

    def fail_next(self, method: str, status: int = 429, retry_after: int = 1, count: int = 1,
                  description: str | None = None, after: int = 0) -> None:
        """Make the next `count` calls of `method` fail with a Bot API error (after `after` calls that succeed)."""
        params = {"retry_after": retry_after} if status == 429 else None
        if description is None:
            description = HTTPStatus(status).phrase
            description += f": retry after {retry_after}" if status == 429 else ""
        failure = (status, description, params)
        self._failures.setdefault(method.lower(), []).extend([None] * after + [failure] * count)

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 5,
                         what: str | Callable[[], str] = "condition") -> None:
        """Poll `predicate` until true, else TimeoutError describing `what` and recent calls."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate():
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"{what() if callable(what) else what} (waited {timeout}s); "
                                   f"recent calls: {self.calls[-20:]}")
            await asyncio.sleep(0.005)

    async def wait_for_sent(self, n: int, timeout: float = 5) -> list[JSON]:
        """Wait until at least n messages were sent; returns `sent`."""
        def what() -> str:
            got = [(m["chat_id"], m["text"]) for m in self.sent]
            return f"expected >= {n} sent messages, got {len(got)}: {got}"
        await self.wait_until(lambda: len(self.sent) >= n, timeout, what)
        return self.sent

    def _wake_pollers(self) -> None:
        """Release everyone currently waiting in getUpdates."""
        self._update_event.set()
        self._update_event = asyncio.Event()

    @staticmethod
    async def _params(request: web.Request) -> JSON:
        """Merge query string and JSON / form / multipart body into one dict of decoded values."""
        params: JSON = dict(request.query)
        if request.content_type == "application/json":
            body: JSON = await request.json()
            return params | body
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                params[key] = {"filename": value.filename, "content": value.file.read()}
            elif key in _RAW_FIELDS:
                params[key] = value
            else:
                try:
                    params[key] = json.loads(value)
                except ValueError:
                    params[key] = value
        return params

    async def _dispatch(self, request: web.Request) -> web.Response:
        """Route /bot<token>/<method>, applying the token check and injected faults."""
        method = request.match_info["method"]
        self.calls.append(method)
        if request.match_info["token"] != self.token:
            return _error(401, "Unauthorized")
        params = await self._params(request)
        if isinstance(cid := params.get("chat_id"), str) and cid.lstrip("-").isdigit():
            params["chat_id"] = int(cid)  # else an int already, or "@channelusername"
        if (failures := self._failures.get(method.lower())) and (failure := failures.pop(0)) is not None:
            return _error(*failure)
        if self.drops.get(method.lower(), 0) > 0:  # a network error: the connection breaks, nothing was done
            self.drops[method.lower()] -= 1
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=HTTPStatus.SERVICE_UNAVAILABLE)
        if self.hangs.get(method.lower(), 0) > 0:  # a stuck call: nothing is done, no answer comes
            self.hangs[method.lower()] -= 1
            await self._released.wait()
            return web.Response(status=HTTPStatus.SERVICE_UNAVAILABLE)
        handler = self._methods.get(method.lower())
        if handler is None:
            self.unknown.append((method, params))
            return _error(404, "Not Found: method not found")
        try:
            result = handler(params)
            result = await result if inspect.isawaitable(result) else result
        except ApiError as exc:
            return _error(*exc.args)
        return web.json_response({"ok": True, "result": result})

    def _get_me(self, p: JSON) -> JSON:
        """getMe."""
        return self.bot_user | {"can_join_groups": True, "can_read_all_group_messages": False,
                                "supports_inline_queries": False, "has_main_web_app": False}

    async def _get_updates(self, p: JSON) -> list[JSON]:
        """getUpdates: confirm everything below offset, then long-poll up to `timeout` s."""
        if self.webhook.get("url"):
            raise ApiError(409, _WEBHOOK_CONFLICT)
        if self.hang_updates > 0:  # a stuck connection: no answer at all
            self.hang_updates -= 1
            await self._released.wait()
            return []
        offset, limit = int(p.get("offset") or 0), min(max(int(p.get("limit") or 100), 1), 100)
        if offset < 0:  # "-n": keep only the last n updates
            self.pending = self.pending[offset:]
        elif offset > 0:
            self.pending = [u for u in self.pending if u["update_id"] >= offset]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(p.get("timeout") or 0)
        while not self.pending and not self._closing and loop.time() < deadline:
            try:
                await asyncio.wait_for(self._update_event.wait(), deadline - loop.time())
            except TimeoutError:
                break
        return self.pending[:limit]

    @staticmethod
    def _apply_markup(msg: JSON, markup: JSON | None) -> None:
        """Messages only carry inline keyboards; reply keyboards etc. are not echoed back."""
        msg.pop("reply_markup", None)
        if markup and "inline_keyboard" in markup:
            msg["reply_markup"] = markup

    def _send_message(self, p: JSON) -> JSON:
        """sendMessage: store, record and return a Message."""
        if not p.get("text"):
            raise ApiError(400, "Bad Request: message text is empty")
        chat = self._chats.get(p["chat_id"], {"id": p["chat_id"], "type": "private"})
        msg: JSON = {"message_id": next(self._message_ids), "from": self.bot_user, "chat": chat,
                     "date": int(time.time()), "text": p["text"]}
        if p.get("entities"):
            msg["entities"] = p["entities"]
        self._apply_markup(msg, p.get("reply_markup"))
        self.messages[msg["message_id"]] = msg
        self.sent.append(p | {"message_id": msg["message_id"], "parse_mode": p.get("parse_mode"),
                              "reply_markup": p.get("reply_markup")})
        self.sent_times.append(time.monotonic())
        return msg

    def _send_document(self, p: JSON) -> JSON:
        """sendDocument: record params (document = {"filename", "content"}) and return a Message."""
        self.documents.append(p)
        chat = self._chats.get(p["chat_id"], {"id": p["chat_id"], "type": "private"})
        msg: JSON = {"message_id": next(self._message_ids), "from": self.bot_user, "chat": chat,
                     "date": int(time.time()),
                     "document": {"file_id": "DOC1", "file_unique_id": "d1", "file_name": p["document"]["filename"]}}
        self.messages[msg["message_id"]] = msg
        return msg

    def _send_voice(self, p: JSON) -> JSON:
        """sendVoice: record params (voice = {"filename", "content"}) and return a Message with the voice."""
        chat = self._chats.get(p["chat_id"], {"id": p["chat_id"], "type": "private"})
        voice = p.get("voice")
        if not isinstance(voice, dict) or not voice.get("content"):
            raise ApiError(400, "Bad Request: there is no voice in the request")
        msg: JSON = {"message_id": next(self._message_ids), "from": self.bot_user, "chat": chat,
                     "date": int(time.time()),
                     "voice": {"file_id": f"V{len(self.voices) + 1}", "file_unique_id": f"v{len(self.voices) + 1}",
                               "duration": int(p.get("duration") or 0), "mime_type": "audio/ogg",
                               "file_size": len(voice["content"])}}
        self.messages[msg["message_id"]] = msg
        self.voices.append(p | {"message_id": msg["message_id"]})
        return msg

    def _edit(self, p: JSON, kind: str) -> JSON | bool:
        """Shared edit logic: find the message, reject no-op edits, record, return it."""
        if p.get("inline_message_id"):
            self.edits.append(p | {"kind": kind})
            self.edit_times.append(time.monotonic())
            return True
        msg = self.messages.get(int(p.get("message_id") or 0))
        if msg is None or msg["chat"]["id"] != p.get("chat_id"):
            raise ApiError(400, "Bad Request: message to edit not found")
        old = {k: v for k, v in msg.items() if k != "edit_date"}
        new = old | ({"text": p.get("text", "")} if kind == "text" else {})
        self._apply_markup(new, p.get("reply_markup"))  # omitting reply_markup removes it
        if new == old:
            raise ApiError(400, _NOT_MODIFIED)
        msg.clear()
        msg.update(new | {"edit_date": int(time.time())})
        self.edits.append(p | {"kind": kind})
        self.edit_times.append(time.monotonic())
        return msg

    def _set_reaction(self, p: JSON) -> bool:
        """setMessageReaction: only on a message of the chat, only with emojis of Telegram's list for bots."""
        msg = self.messages.get(int(p.get("message_id") or 0))
        if msg is None or msg["chat"]["id"] != p.get("chat_id"):
            raise ApiError(400, "Bad Request: message to react not found")
        reaction = p.get("reaction") or []
        if isinstance(reaction, str):
            reaction = json.loads(reaction)
        if any(r.get("type") != "emoji" or r.get("emoji") not in _BOT_REACTIONS for r in reaction):
            raise ApiError(400, "Bad Request: REACTION_INVALID")
        self.reactions.append(p | {"reaction": reaction})
        return True

    @staticmethod
    def _record(log: list[JSON], p: JSON) -> bool:
        """answerCallbackQuery / sendChatAction: just record the params."""
        log.append(p)
        return True

    def _my_commands(self, p: JSON, op: str) -> bool | list[JSON]:
        """set/get/deleteMyCommands for exactly one (scope, language_code), no fallback."""
        key = _commands_key(p)
        if op == "set":
            self.commands[key] = p.get("commands") or []
        elif op == "delete":
            self.commands.pop(key, None)
        return self.commands.get(key, []) if op == "get" else True

    def _set_webhook(self, p: JSON) -> bool:
        """setWebhook / deleteWebhook (= no url): remember url, secret_token and the rest."""
        self.webhook = dict(p) if p.get("url") else {}
        if p.get("drop_pending_updates"):
            self.pending.clear()
        return True

    def _webhook_info(self, p: JSON) -> JSON:
        """getWebhookInfo."""
        info: JSON = {"url": self.webhook.get("url", ""), "has_custom_certificate": False,
                      "pending_update_count": len(self.pending)}
        keys = ("max_connections", "allowed_updates", "ip_address")
        return info | {k: self.webhook[k] for k in keys if self.webhook.get(k) is not None}


    # --- files a user sends (pictures, voice notes): kept here, getFile, and their download ---------------

    def keep_file(self, data: bytes, size: int | None = None, prefix: str = "file") -> JSON:
        """Keep a file as Telegram does; its file fields (file_id, file_unique_id, file_size) for a message.

        `size` is what Telegram says the file has (a file said to be 60 MB need not be stored as one).
        """
        number = len(self.files) + 1
        file_id = f"{prefix}_{number}"
        self.files[file_id] = data
        self.file_sizes[file_id] = len(data) if size is None else size
        return {"file_id": file_id, "file_unique_id": f"u{number}", "file_size": self.file_sizes[file_id]}

    def send_photo(self, user_id: int, data: bytes, caption: str | None = None, *, sizes: JSON | None = None,
                   **where: Any) -> int:
        """Queue a photo as Telegram sends it: the picture in several sizes (its own and smaller ones, made with
        Pillow), largest last. `sizes` maps a long edge to the file size Telegram should say it has."""
        from PIL import Image

        with Image.open(io.BytesIO(data)) as original:
            width, height = original.size
            versions: list[JSON] = []
            for edge in (90, 320, 800, 1280):
                if edge < max(width, height):
                    smaller = original.convert("RGB")
                    smaller.thumbnail((edge, edge))
                    out = io.BytesIO()
                    smaller.save(out, "JPEG", quality=80)
                    versions.append({"bytes": out.getvalue(), "width": smaller.width, "height": smaller.height})
        versions.append({"bytes": data, "width": width, "height": height})
        photo = [self.keep_file(v["bytes"], (sizes or {}).get(max(v["width"], v["height"])), "photo")
                 | {"width": v["width"], "height": v["height"]} for v in versions]
        return self._send_media(user_id, {"photo": photo}, caption, **where)

    def send_image_file(self, user_id: int, data: bytes, mime: str, file_name: str = "bild",
                        caption: str | None = None, size: int | None = None, **where: Any) -> int:
        """Queue a picture sent as a file (a document with its mime type)."""
        document = self.keep_file(data, size, "document") | {"mime_type": mime, "file_name": file_name}
        return self._send_media(user_id, {"document": document}, caption, **where)

    def send_sticker(self, user_id: int, data: bytes, emoji: str = "😂", animated: bool = False,
                     video: bool = False, **where: Any) -> int:
        """Queue a sticker: static (a WebP), animated (TGS) or a video sticker (WebM)."""
        sticker = self.keep_file(data, None, "sticker") | {
            "width": 512, "height": 512, "is_animated": animated, "is_video": video, "type": "regular", "emoji": emoji}
        return self._send_media(user_id, {"sticker": sticker}, None, **where)

    def _send_media(self, user_id: int, media: JSON, caption: str | None, chat_id: int | None = None,
                    first_name: str = "Anna", chat_type: str = "private", reply_to: int | None = None,
                    language_code: str = "de") -> int:
        """Queue a message with a picture and maybe a caption (an '@name' in it marked as a mention)."""
        user = self._users[user_id] = {"id": user_id, "is_bot": False, "first_name": first_name,
                                       "language_code": language_code}
        cid = user_id if chat_id is None else chat_id
        chat: JSON = {"id": cid, "type": chat_type}
        chat.update({"first_name": first_name} if chat_type == "private" else {"title": "Chat"})
        self._chats[cid] = chat
        msg: JSON = {"message_id": next(self._message_ids), "from": user, "chat": chat, "date": int(time.time()),
                     **media}
        if caption is not None:
            msg["caption"] = caption
            mentions = [{"type": "mention", "offset": len(caption[: m.start()].encode("utf-16-le")) // 2,
                         "length": len(m.group(0))} for m in re.finditer(r"(?<!\S)@[A-Za-z0-9_]{5,32}", caption)]
            if mentions:
                msg["caption_entities"] = mentions
        if reply_to is not None:
            msg["reply_to_message"] = {k: v for k, v in self.messages[reply_to].items() if k != "reply_to_message"}
        self.messages[msg["message_id"]] = msg
        return self.send_update({"message": msg})

    def _get_file(self, p: JSON) -> JSON:
        """getFile: a file's path for its download; over 20 MB, Telegram's 'file is too big'."""
        file_id = str(p.get("file_id"))
        if file_id not in self.files:
            raise ApiError(400, "Bad Request: invalid file_id")
        if self.file_sizes[file_id] > 20 * 1024 * 1024:
            raise ApiError(400, "Bad Request: file is too big")
        return {"file_id": file_id, "file_unique_id": f"u-{file_id}", "file_size": self.file_sizes[file_id],
                "file_path": f"files/{file_id}"}

    async def _download(self, request: web.Request) -> web.Response:
        """GET /file/bot<token>/<file_path>: the file's bytes."""
        if request.match_info["token"] != self.token:
            return web.Response(status=HTTPStatus.UNAUTHORIZED)
        file_id = request.match_info["path"].removeprefix("files/")
        if file_id not in self.files:
            return web.Response(status=HTTPStatus.NOT_FOUND)
        self.downloads.append(file_id)
        return web.Response(body=self.files[file_id], content_type="application/octet-stream")
