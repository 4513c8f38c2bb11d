"""The picture of a Matrix m.image, plain or end-to-end encrypted, downloaded from the homeserver.

The size the event names is checked before anything is downloaded: a picture over the engine's limit is handed on
without its bytes, so the engine says it is too large. An encrypted picture (`file` with its key, iv and hash) is
checked against its hash and decrypted with matrix-nio's `decrypt_attachment`.
"""
from __future__ import annotations

from typing import Any, TypeAlias

from nio import AsyncClient, DownloadResponse, RoomEncryptedImage, RoomMessageImage
from nio.crypto.attachments import decrypt_attachment
from nio.exceptions import EncryptionError

from bot.channels.matrix.messages import failure
from bot.errors import MatrixError
from bot.exchange import Attachment

ImageEvent: TypeAlias = RoomMessageImage | RoomEncryptedImage


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

    MatrixError when the homeserver does not hand it out, or an encrypted one does not match its hash.
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
    if isinstance(event, RoomEncryptedImage):
        try:
            data = decrypt_attachment(data, event.key["k"], event.hashes["sha256"], event.iv)
        except (EncryptionError, KeyError, TypeError, ValueError) as exc:
            raise MatrixError(f"the encrypted picture {event.url} cannot be decrypted: {exc}") from exc
    return Attachment("image", data, mime or response.content_type or "", len(data), name)
