"""What mnemo sends to Matrix rooms: messages and edits that wait out rate limits, live previews, typing, files."""
from __future__ import annotations

import asyncio
import io
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from uuid import uuid4

import aiohttp
from nio import (
    AsyncClient,
    DownloadResponse,
    ErrorResponse,
    LocalProtocolError,
    RoomEncryptedMedia,
    RoomMessageMedia,
    RoomRedactResponse,
    RoomSendResponse,
    SendRetryError,
    UploadResponse,
)
from nio.crypto import decrypt_attachment
from nio.exceptions import EncryptionError

from bot.channels import sending
from bot.channels.matrix.messages import (
    InThread,
    edit_content,
    failure,
    first_message,
    limited,
    message_content,
    relates_to,
    split_message,
    transaction_id,
    voice_content,
)
from bot.channels.matrix.sizes import Fits, fits_in
from bot.channels.sending import Sleep
from bot.channels.shown import Shown, show_parts
from bot.channels.streaming import LivePreview
from bot.errors import MatrixError
from bot.exchange import Document, Voice

log = logging.getLogger(__name__)

R = TypeVar("R")

TYPING_LASTS = 6_000  # milliseconds each notice lasts, a little longer than the renewal (sending.TYPING_EVERY)
DOWNLOAD_SECONDS = 60.0  # nio's downloads wait forever; a voice note of up to 20 MB comes in this time or not
REMEMBER_SENT = 2_000  # own event ids kept to recognise replies to the bot without asking the homeserver


def threaded(thread: InThread | None) -> dict[str, Any]:
    """What puts a file or a voice note into a thread (nothing outside one)."""
    return {"m.relates_to": relates_to(None, thread)} if thread is not None else {}


class Outgoing:
    """Sends, edits, reactions and typing notices in Matrix rooms.

    Every send waits out M_LIMIT_EXCEEDED as long as the homeserver says (retry_after_ms) and repeats
    the same request with the same transaction id, so a message arrives once. A send in answer to an
    event carries a transaction id derived from that event and the part of the reply (`txn`), so even a
    send repeated after a crash is dropped by the homeserver. Preview edits are the exception: while a
    room is rate limited they are skipped, since the finalized text comes anyway.
    """

    def __init__(self, client: AsyncClient, sleep: Sleep = asyncio.sleep) -> None:
        self.client = client
        self.sleep = sleep
        self._sent: OrderedDict[str, None] = OrderedDict()
        self._shown: dict[str, str] = {}  # preview event id -> the text it shows
        self._paused: dict[str, float] = {}  # room id -> loop time before which previews are not edited

    def is_mine(self, event_id: str) -> bool:
        """Whether the bot sent this event in this run (recently)."""
        return event_id in self._sent

    async def patiently(self, call: Callable[[], Awaitable[R]], what: str) -> R:
        """Run a request; while the homeserver answers M_LIMIT_EXCEEDED, wait as told and run it again."""
        return await sending.patiently(call, limited, f"Matrix rate limit ({what})", sleep=self.sleep)

    async def text(self, room_id: str, text: str, reply_to: str | None = None, txn: str | None = None,
                   thread: InThread | None = None) -> str:
        """Send one formatted message (a reply to `reply_to` when given, into `thread` when given); its event id."""
        return await self.event(room_id, "m.room.message", message_content(text, reply_to, self.fits(room_id), thread),
                                txn)

    def fits(self, room_id: str) -> Fits:
        """What fits into one event in this room (less where it is encrypted: the ciphertext is a third larger)."""
        room = self.client.rooms.get(room_id)
        return fits_in(room_id, bool(room is not None and room.encrypted and self.client.olm is not None))

    async def event(self, room_id: str, event_type: str, content: dict[str, Any], txn: str | None = None) -> str:
        """Send an event (encrypted where the room is), waiting out rate limits; MatrixError when it fails.

        `txn` is the transaction id (random when None): sent again with the same id, the homeserver
        gives back the first event instead of a second one.
        """
        tx_id = txn or str(uuid4())  # the same id on every attempt: the homeserver keeps one event
        response = await self.patiently(lambda: self._send_once(room_id, event_type, content, tx_id),
                                        f"sending to {room_id}")
        if not isinstance(response, RoomSendResponse):
            raise MatrixError(f"could not send to {room_id}: {failure(response)}")
        self._sent[response.event_id] = None
        while len(self._sent) > REMEMBER_SENT:
            self._sent.popitem(last=False)
        return str(response.event_id)

    async def _send_once(self, room_id: str, event_type: str, content: dict[str, Any], tx_id: str) -> object:
        room = self.client.rooms.get(room_id)
        if room is not None and room.encrypted and self.client.olm is None:
            raise MatrixError(f"room {room_id} is encrypted and end-to-end encryption is off; nothing sent")
        try:
            return await self.client.room_send(room_id, event_type, content, tx_id=tx_id,
                                               ignore_unverified_devices=True)
        except (TimeoutError, LocalProtocolError, SendRetryError, aiohttp.ClientError) as exc:
            raise MatrixError(f"could not send to {room_id}: {exc or type(exc).__name__}") from exc

    async def parts(self, room_id: str, chunks: Sequence[str], *, shown: Shown[str] | None = None,
                    reply_to: str | None = None, answering: str | None = None,
                    thread: InThread | None = None) -> list[str]:
        """Send a reply's chunks in order, the first as a reply to `reply_to`; their event ids.

        A chunk already shown (the preview, or a message sent before a crash) is edited into place instead of
        sent again, and each new message is recorded in `shown` as soon as it is sent. In answer to an event
        (`answering`), each chunk goes with a transaction id derived from the event, the part and its text. In a
        thread, every chunk goes into it.
        """
        def txn(part: str, chunk: str) -> str | None:
            return transaction_id(answering, part, chunk) if answering else None

        async def edit(part: int, earlier: str) -> bool:
            return await self.finalize(room_id, earlier, chunks[part], txn(f"edit{part}", chunks[part]))

        async def send(part: int) -> str:
            return await self.text(room_id, chunks[part], reply_to if part == 0 else None, txn(str(part), chunks[part]),
                                   thread)

        return await show_parts(len(chunks), shown, edit, send)

    # --- streamed replies -------------------------------------------------------------------------

    def preview(self, room_id: str, reply_to: str | None, group: bool, shown: Shown[str],
                thread: InThread | None = None) -> LivePreview[str]:
        """A message in the room that shows the reply while the model writes, edited in place.

        It is the preview shown before a crash, when there was one (recorded, or given back by the
        homeserver for the same transaction id when the crash came before it was recorded).
        """
        async def show(text: str) -> str:
            first = first_message(text)
            event_id = await self.text(room_id, first, reply_to, transaction_id(shown.event_id, "preview"), thread)
            self._shown[event_id] = first
            await shown.put(0, event_id, first)
            return event_id

        async def edit(event_id: str, text: str) -> None:
            first = first_message(text)
            await shown.put(0, event_id, first)  # before the edit: a replay never goes back to fewer words
            await self._edit_preview(room_id, event_id, first)

        return LivePreview.resumed(shown, show, edit, group)

    async def _edit_preview(self, room_id: str, event_id: str, text: str) -> None:
        """Edit a preview, unless it shows this already or the room is rate limited (then skip it)."""
        now = asyncio.get_running_loop().time()
        if self._shown.get(event_id) == text or now < self._paused.get(room_id, 0.0):
            return
        content = edit_content(event_id, text, self.fits(room_id))
        response = await self._send_once(room_id, "m.room.message", content, str(uuid4()))
        wait = limited(response)
        if wait is not None:
            log.info("Matrix rate limit: no preview edits in %s for %.1f s", room_id, wait)
            self._paused[room_id] = now + wait
            return
        if not isinstance(response, RoomSendResponse):
            raise MatrixError(f"could not edit the preview in {room_id}: {failure(response)}")
        self._shown[event_id] = text

    async def finalize(self, room_id: str, event_id: str, text: str, txn: str | None = None) -> bool:
        """Edit a preview (or a message shown before a crash) into its final text; False when that failed."""
        if self._shown.pop(event_id, None) == text:
            return True
        try:
            await self.event(room_id, "m.room.message", edit_content(event_id, text, self.fits(room_id)), txn)
        except MatrixError as exc:
            log.warning("could not finalize the preview %s (%s); sending the reply anew", event_id, exc)
            return False
        return True

    async def redact(self, room_id: str, event_id: str) -> bool:
        """Take back one of the bot's events (a reaction offered as a button); False (logged) when that failed."""
        client = self.client
        try:
            response = await self.patiently(lambda: client.room_redact(
                room_id, event_id, tx_id=transaction_id(event_id, "redact")), f"redacting in {room_id}")
        except (TimeoutError, aiohttp.ClientError) as exc:
            response = exc
        if not isinstance(response, RoomRedactResponse):
            log.warning("could not take back %s in %s: %s", event_id, room_id, failure(response))
            return False
        return True

    # --- typing -----------------------------------------------------------------------------------------

    async def indicate(self, room_id: str, on: bool) -> None:
        """Show the bot as typing for a few seconds (or no longer); a failure is only logged."""
        try:
            response = await self.client.room_typing(room_id, typing_state=on, timeout=TYPING_LASTS)
        except (TimeoutError, aiohttp.ClientError) as exc:
            log.warning("typing notice in %s failed: %s", room_id, exc or type(exc).__name__)
            return
        if isinstance(response, ErrorResponse):
            log.warning("typing notice in %s failed: %s", room_id, failure(response))

    # --- files ------------------------------------------------------------------------------------------

    async def file(self, room_id: str, document: Document, heading: str, txn: str | None = None,
                   thread: InThread | None = None) -> str:
        """Post a reply's file, or its text (what fits in one message, under `heading`) when the upload fails."""
        posted = await self.document(room_id, document, txn, thread)
        if posted is None:
            text = document.content.decode("utf-8", errors="replace")
            posted = await self.text(room_id, f"{heading}\n\n{split_message(text)[0]}", txn=txn and f"{txn}.text",
                                     thread=thread)
        return posted

    async def document(self, room_id: str, document: Document, txn: str | None = None,
                       thread: InThread | None = None) -> str | None:
        """Upload a file and post it as m.file (into `thread` when given); its event id, or None when the upload
        failed (nothing posted)."""
        content: dict[str, Any] = {
            "msgtype": "m.file", "body": document.filename, "filename": document.filename,
            "info": {"mimetype": "application/json", "size": len(document.content)}, **threaded(thread),
        }
        posted = await self._upload(room_id, document.content, "application/json", document.filename, content)
        return None if posted is None else await self.event(room_id, "m.room.message", posted, txn)

    async def voice(self, room_id: str, voice: Voice, body: str, txn: str | None = None,
                    thread: InThread | None = None) -> str:
        """Upload a spoken reply and post it as a voice message (m.audio, MSC3245; into `thread` when given); its
        event id.

        Raises MatrixError when the upload or the send failed.
        """
        content = {**voice_content(body, voice.mime, len(voice.data), voice.seconds), **threaded(thread)}
        posted = await self._upload(room_id, voice.data, voice.mime, "voice.ogg", content)
        if posted is None:
            raise MatrixError(f"could not upload a voice note to {room_id}")
        return await self.event(room_id, "m.room.message", posted, txn)

    async def _upload(self, room_id: str, data: bytes, mime: str, filename: str,
                      content: dict[str, Any]) -> dict[str, Any] | None:
        """Upload a file (encrypted where the room is) and return the event's content pointing at it; None (logged)
        when the upload failed."""
        room = self.client.rooms.get(room_id)
        encrypt = bool(room and room.encrypted and self.client.olm is not None)
        try:
            response, keys = await self.client.upload(io.BytesIO(data), content_type=mime, filename=filename,
                                                      encrypt=encrypt, filesize=len(data))
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            response, keys = exc, None
        if not isinstance(response, UploadResponse):
            log.warning("uploading %s to %s failed: %s", filename, room_id, failure(response))
            return None
        if keys:
            return {**content, "file": {**keys, "url": response.content_uri}}
        return {**content, "url": response.content_uri}

    async def download(self, event: RoomMessageMedia | RoomEncryptedMedia) -> bytes:
        """A media event's file, decrypted when it is encrypted; MatrixError when it cannot be had."""
        try:
            response = await asyncio.wait_for(self.client.download(mxc=event.url), DOWNLOAD_SECONDS)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise MatrixError(f"could not download {event.url}: {exc or type(exc).__name__}") from exc
        if not isinstance(response, DownloadResponse) or not isinstance(response.body, bytes):
            raise MatrixError(f"could not download {event.url}: {failure(response)}")
        if not isinstance(event, RoomEncryptedMedia):
            return response.body
        try:
            return bytes(decrypt_attachment(response.body, event.key["k"], event.hashes["sha256"], event.iv))
        except (EncryptionError, KeyError, TypeError) as exc:
            raise MatrixError(f"could not decrypt {event.url}: {exc}") from exc
