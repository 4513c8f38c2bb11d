"""The picture of a Matrix m.image, plain or end-to-end encrypted, downloaded from the homeserver.

The size the event names is checked before anything is downloaded: a picture over the engine's limit is handed on
without its bytes, so the engine says it is too large. An encrypted picture (`file` with its key, iv and hash) is
checked against its hash and decrypted with matrix-nio's `decrypt_attachment`; one whose hash does not match, or
whose key turns it into bytes no picture begins with, is handed on as undecryptable, so the engine says so.
An unencrypted event that carries an encrypted file (Element forwards pictures so, in encrypted rooms too) is read
like a decrypted one; a decrypted one that carries a plain url (a forward from an unencrypted room) like an
unencrypted one.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, TypeAlias

from nio import (
    AsyncClient,
    BadEvent,
    DownloadResponse,
    Event,
    RoomEncryptedImage,
    RoomMessage,
    RoomMessageImage,
    UnknownBadEvent,
)
from nio.crypto.attachments import decrypt_attachment
from nio.exceptions import EncryptionError

from bot.channels.matrix.messages import failure
from bot.errors import MatrixError
from bot.exchange import Attachment

log = logging.getLogger(__name__)

ImageEvent: TypeAlias = RoomMessageImage | RoomEncryptedImage
MEDIA = ("m.image", "m.audio", "m.video", "m.file")
# How picture files begin: JPEG, PNG, GIF, BMP, TIFF (both byte orders), Photoshop, JPEG XL, an icon
_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"BM", b"II*\x00", b"MM\x00*", b"8BPS", b"\xff\x0a",
               b"\x00\x00\x00\x0cJXL ", b"\x00\x00\x01\x00")


def looks_like_a_picture(data: bytes) -> bool:
    """Whether bytes begin as a picture file does (WebP, HEIC and AVIF by their brand, SVG as markup); a file
    decrypted with the wrong key begins as none does."""
    return (data.startswith(_SIGNATURES) or data[8:12] == b"WEBP" or data[4:8] == b"ftyp"
            or data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<")


def media_in_the_clear(event: Event | BadEvent | UnknownBadEvent) -> Event | BadEvent | UnknownBadEvent:
    """A media event matrix-nio refused, read as what it carries; any other event as it is.

    An unencrypted event that carries an encrypted file (`file`, no `url`; Element forwards pictures so) is read as
    matrix-nio reads a decrypted one. A decrypted event that carries a plain `url` (no `file` with keys; Element
    forwards media from an unencrypted room into an encrypted one so) is read as unencrypted media: its file is
    downloaded as it is. matrix-nio's own reading refuses both, for the missing `url` or `file`.
    """
    source = event.source if isinstance(event, (BadEvent, UnknownBadEvent)) else {}
    content = source.get("content") if isinstance(source, dict) else None
    if not isinstance(content, dict) or source.get("type") != "m.room.message" or content.get("msgtype") not in MEDIA:
        return event
    if isinstance(content.get("file"), dict):
        return Event.parse_decrypted_event(source)
    if not isinstance(content.get("url"), str):
        return event
    read = RoomMessage.parse_event(source)
    if isinstance(read, Event) and isinstance(event, BadEvent):  # what the decryption said of it goes along
        read.decrypted, read.verified = event.decrypted, event.verified
        read.sender_key, read.session_id = event.sender_key, event.session_id
        read.transaction_id = event.transaction_id
    return read


def caption_of(content: dict[str, Any]) -> str:
    """A picture's caption: its body when a file name is given beside it (MSC2530), else none (the body is the
    file's name)."""
    body, filename = content.get("body"), content.get("filename")
    if isinstance(body, str) and isinstance(filename, str) and filename and body != filename:
        return body
    return ""


def stated(content: dict[str, Any]) -> tuple[str, int]:
    """The mime type and size an event states for its picture ('' and 0 when it states none)."""
    info = content.get("info")
    info = info if isinstance(info, dict) else {}
    mime, size = info.get("mimetype"), info.get("size")
    return (mime if isinstance(mime, str) else "", size if isinstance(size, int) and size > 0 else 0)


async def picture_of(client: AsyncClient, event: ImageEvent, limit: int) -> Attachment:
    """The event's picture, downloaded (and decrypted); without its bytes when it is over `limit`.

    MatrixError when the homeserver does not hand it out; an encrypted one that cannot be decrypted comes back
    without its bytes, marked undecryptable.
    """
    content = event.source.get("content", {})
    mime, size = stated(content)
    name = content.get("filename") or event.body or ""
    if size > limit:
        return Attachment("image", b"", mime, size, name)
    response = await client.download(mxc=event.url)
    if not isinstance(response, DownloadResponse):
        raise MatrixError(f"could not download the picture {event.url}: {failure(response)}")
    data = response.body if isinstance(response.body, bytes) else b""
    if len(data) > limit:  # the event said less (or nothing): it goes no further
        return Attachment("image", b"", mime, len(data), name)
    found = Attachment("image", data, mime or response.content_type or "", len(data), name)
    if isinstance(event, RoomEncryptedImage):
        try:
            found = dataclasses.replace(found, data=decrypt_attachment(data, event.key["k"], event.hashes["sha256"],
                                                                       event.iv))
        except (EncryptionError, KeyError, TypeError, ValueError) as exc:
            log.warning("the encrypted picture %s cannot be decrypted: %s", event.url, exc)
            return dataclasses.replace(found, data=b"", undecryptable=True)
        if not looks_like_a_picture(found.data):
            log.warning("the encrypted picture %s decrypts to no picture: its key is wrong", event.url)
            return dataclasses.replace(found, data=b"", undecryptable=True)
    return found
