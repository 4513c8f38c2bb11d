"""The picture (a photo, an image file, a sticker), the voice note (a voice message, an audio file, a video note) or
the document (a PDF, a text file) a Telegram message brings, downloaded through getFile.

Nothing larger than the engine's limit is downloaded: the size Telegram names (in the message, else in getFile's
answer) is checked first, and a picture over it is handed on without its bytes, so the engine says it is too large;
a voice note longer than the limit (the duration the message states) is not downloaded either.
A photo comes in several sizes; the largest that fits is taken. Bots can download at most 20 MB from Telegram.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from telegram import Document, Message, PhotoSize, Sticker, TelegramObject
from telegram.error import BadRequest

from bot.conversation.documents import kind_of
from bot.exchange import Attachment

log = logging.getLogger(__name__)

BOT_DOWNLOADS = 20 * 1024 * 1024  # the Bot API's getFile limit
ANIMATED, VIDEO = "application/x-tgsticker", "video/webm"  # what an animated or a video sticker is
DOWNLOAD_SECONDS = 60.0  # a voice note of up to 20 MB may take a while to come down


def brings_picture(message: Message) -> bool:
    """Whether a message brings a photo, an image file or a sticker."""
    document = message.document
    return bool(message.photo) or message.sticker is not None or (
        document is not None and (document.mime_type or "").startswith("image/"))


def largest_fitting(sizes: tuple[PhotoSize, ...], limit: int) -> PhotoSize:
    """The largest size of a photo whose file fits the limit (one without a stated size counts as fitting); the
    smallest when none fits."""
    ordered = sorted(sizes, key=lambda size: (size.width * size.height, size.file_size or 0))
    fitting = [size for size in ordered if (size.file_size or 0) <= limit]
    return fitting[-1] if fitting else ordered[0]


async def picture_of(message: Message, limit: int) -> Attachment | None:
    """The message's picture, downloaded; without its bytes when it is over `limit` (or moving); None without one."""
    limit = min(limit, BOT_DOWNLOADS)
    if message.photo:
        return await _download(largest_fitting(message.photo, limit), "image/jpeg", "", limit)
    if message.sticker is not None:
        return await _sticker(message.sticker, limit)
    document = message.document
    if document is not None and (document.mime_type or "").startswith("image/"):
        return await _download(document, document.mime_type or "", document.file_name or "", limit)
    return None


async def _sticker(sticker: Sticker, limit: int) -> Attachment:
    """A static sticker is a WebP picture; an animated or a video one is not looked at (nothing is downloaded)."""
    if sticker.is_animated or sticker.is_video:
        return Attachment("image", b"", ANIMATED if sticker.is_animated else VIDEO, sticker.file_size or 0)
    return await _download(sticker, "image/webp", "", limit)


async def _download(media: PhotoSize | Document | Sticker, mime: str, name: str, limit: int) -> Attachment:
    """Fetch a file unless its stated size is over the limit (then: the attachment without bytes)."""
    size = media.file_size or 0
    if size > limit:
        return Attachment("image", b"", mime, size, name)
    try:
        file = await media.get_file()
    except BadRequest as exc:  # 'file is too big': over the Bot API's own limit, which the message did not say
        if "too big" not in str(exc).lower():
            raise
        log.info("telegram refused to hand out a picture: %s", exc)
        return Attachment("image", b"", mime, max(size, BOT_DOWNLOADS + 1), name)
    if (file.file_size or 0) > limit:
        return Attachment("image", b"", mime, file.file_size or 0, name)
    data = bytes(await file.download_as_bytearray())
    return Attachment("image", data, mime, len(data), name)


@dataclass(frozen=True)
class VoiceFile:
    """The voice note a message carries, as Telegram describes it (before it is downloaded)."""

    file_id: str
    mime: str
    size: int | None  # bytes, when Telegram says
    seconds: float | None
    name: str = ""


def seconds(media: TelegramObject) -> float | None:
    """A voice note's duration in seconds, as the Bot API sent it (PTB's attribute warns while it changes type)."""
    duration = media.to_dict().get("duration")
    return float(duration) if isinstance(duration, (int, float)) else None


def voice_file(message: Message) -> VoiceFile | None:
    """A message's voice note: a voice message, an audio file, a video note or a document of audio; else None."""
    if message.voice is not None:
        voice = message.voice
        return VoiceFile(voice.file_id, voice.mime_type or "audio/ogg", voice.file_size, seconds(voice))
    if message.audio is not None:
        audio = message.audio
        return VoiceFile(audio.file_id, audio.mime_type or "audio/mpeg", audio.file_size, seconds(audio),
                         audio.file_name or "")
    if message.video_note is not None:
        note = message.video_note
        return VoiceFile(note.file_id, "video/mp4", note.file_size, seconds(note))
    document = message.document
    if document is not None and (document.mime_type or "").startswith("audio/"):
        return VoiceFile(document.file_id, document.mime_type or "", document.file_size, None, document.file_name or "")
    return None


async def voice_of(message: Message, hears: Callable[[int | None, float | None], bool]) -> Attachment | None:
    """The message's voice note, downloaded unless `hears` says its stated size or duration is too much; None without
    one."""
    found = voice_file(message)
    if found is None:
        return None
    data = b""
    if hears(found.size, found.seconds):
        file = await message.get_bot().get_file(found.file_id)
        data = bytes(await file.download_as_bytearray(read_timeout=DOWNLOAD_SECONDS))
    return Attachment("voice", data, found.mime, found.size if found.size is not None else len(data), found.name,
                      found.seconds)


async def document_of(message: Message, limit: int) -> Attachment:
    """The message's document (neither picture nor audio), downloaded unless it is over `limit` or of a kind mnemo
    does not read: then without its bytes, and the engine says why."""
    document = message.document
    assert document is not None  # ensured by the handler's filter
    mime, name, size = document.mime_type or "", document.file_name or "", document.file_size or 0
    if size > min(limit, BOT_DOWNLOADS) or kind_of(mime, name) is None:
        return Attachment("document", b"", mime, size, name)
    try:
        file = await document.get_file()
    except BadRequest as exc:  # 'file is too big': over the Bot API's own limit, which the message did not say
        if "too big" not in str(exc).lower():
            raise
        return Attachment("document", b"", mime, max(size, BOT_DOWNLOADS + 1), name)
    if (file.file_size or 0) > limit:
        return Attachment("document", b"", mime, file.file_size or 0, name)
    data = bytes(await file.download_as_bytearray(read_timeout=DOWNLOAD_SECONDS))
    return Attachment("document", data if len(data) <= limit else b"", mime, len(data), name)
