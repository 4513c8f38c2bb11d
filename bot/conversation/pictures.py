"""A picture in a message: its checks (size, kind, pixels, damage), the copy the model gets, the description kept.

The limits are read from the file's header before anything is decoded. The model gets the first frame as a JPEG of
at most LONG_EDGE pixels on its longer side (every provider takes that, and a phone's 12-megapixel photo becomes a
few hundred kilobytes). The description the model gives is kept with the message as '(Foto: …) caption', so the
picture is found later by search and time words like any message.
"""
from __future__ import annotations

import io
import logging
import re
import warnings

from PIL import Image as Pillow
from PIL import ImageOps, UnidentifiedImageError

from bot.errors import LLMError, PictureError
from bot.exchange import Attachment
from bot.llm.port import LLM, ChatMessage, CompletionRequest, Image
from bot.texts import t

log = logging.getLogger(__name__)

FORMATS = ("JPEG", "MPO", "PNG", "WEBP", "GIF")  # what Pillow names them (MPO: a camera's JPEG with a second frame)
MOVING = ("video/", "application/x-tgsticker")  # animated stickers and videos: nothing to look at as a picture
LONG_EDGE = 1568  # the longer side the model gets at most (Anthropic's advice; OpenAI scales to the same)
JPEG_QUALITY = 88
DESCRIPTION_CHARS = 200  # the longest description kept with a message

SEEN = ("The person sent a photo with this message; it is attached. Look at it and answer to it and to their words "
        "as a friend would. Begin your answer with [PHOTO: what the picture shows, in at most 15 words, in {language}]:"
        " the program keeps it with the message so the picture can be found later, and removes it before the person "
        "reads your answer.")
UNSEEN = ("The person sent a photo with this message, but you cannot see pictures: answer only their words and never "
          "guess or describe what the picture shows. The program tells them that you could not see it.")
DESCRIBE = ("Describe this picture in one line of at most 15 words, in {language}, as a note to find it again later "
            "(what is on it, no judgement). Answer with the description only.")

_MAGIC = (b"\xff\xd8", b"\x89PNG", b"GIF8")  # how JPEG, PNG and GIF files begin (WebP: 'WEBP' at byte 8)
_BOMB = re.compile(r"\((\d+) pixels\)")  # how Pillow names a picture's size when it refuses it
_NOT_TEXT = re.compile(r"[\[\](){}<>]")
_LEADING_LABEL = re.compile(r"^\s*\[*\s*(?:photo|foto|picture|bild)\s*:\s*", re.IGNORECASE)


def refusal(attachment: Attachment, max_bytes: int) -> str | None:
    """Why a picture is refused before it is opened ('image_undecryptable', 'image_moving', 'image_too_large',
    'image_not_fetched', 'image_type'), or None."""
    if attachment.undecryptable:
        return "image_undecryptable"
    mime = attachment.mime.lower()
    if mime.startswith(MOVING):
        return "image_moving"
    if max(attachment.size, len(attachment.data)) > max_bytes:
        return "image_too_large"  # a channel leaves out the data of a picture over the limit
    if not attachment.data:
        return "image_not_fetched"  # over the messenger's own limit for bots (Telegram: 20 MB)
    if mime and not mime.startswith("image/") and mime != "application/octet-stream":
        return "image_type"
    return None


def prepare(data: bytes, max_pixels: int, decode: bool = True) -> Image | None:
    """The picture as the model gets it (first frame, upright, at most LONG_EDGE, JPEG); PictureError when refused.

    Its kind and size come from the header before anything is decoded. Without `decode`, only they are checked
    (the model does not see pictures) and None comes back.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Pillow.DecompressionBombWarning)  # far over any limit: refused below
            with Pillow.open(io.BytesIO(data)) as picture:
                _check(picture, max_pixels)
                if not decode:
                    return None
                picture.draft("RGB", _target(picture.size))  # a JPEG is decoded at a smaller scale: fast and small
                picture.load()
                frame = _flat(ImageOps.exif_transpose(picture) or picture)
    except PictureError:
        raise
    except (Pillow.DecompressionBombError, Pillow.DecompressionBombWarning) as exc:  # Pillow's own limit, far over ours
        found = _BOMB.search(str(exc))
        raise PictureError("image_too_many_pixels", str(exc),
                           megapixels=_millions(int(found.group(1))) if found else "?") from exc
    except UnidentifiedImageError as exc:  # a known kind whose header is broken is damaged, anything else another kind
        raise PictureError("image_unreadable" if data.startswith(_MAGIC) or data[8:12] == b"WEBP" else "image_type",
                           "not a picture Pillow can open") from exc
    except (OSError, SyntaxError, ValueError, EOFError, IndexError) as exc:  # how Pillow says a file is damaged
        raise PictureError("image_unreadable", f"{type(exc).__name__}: {exc}") from exc
    frame.thumbnail((LONG_EDGE, LONG_EDGE))
    out = io.BytesIO()
    frame.save(out, "JPEG", quality=JPEG_QUALITY)
    return Image(out.getvalue(), "image/jpeg")


def refused(error: PictureError, size: int, max_bytes: int, max_pixels: int, lang: str) -> str:
    """The short sentence a refused picture gets, with its size and the limit it broke."""
    return t(lang, error.reason, size=megabytes(size), limit=megabytes(max_bytes),
             megapixels=error.values.get("megapixels", "?"), max_megapixels=_millions(max_pixels))


def _check(picture: Pillow.Image, max_pixels: int) -> None:
    """Refuse a picture by its header: a kind the providers do not take, or more pixels than allowed."""
    if picture.format not in FORMATS:
        raise PictureError("image_type", f"format {picture.format}")
    width, height = picture.size
    if width * height > max_pixels:
        raise PictureError("image_too_many_pixels", f"{width}x{height}", megapixels=_millions(width * height))


def _target(size: tuple[int, int]) -> tuple[int, int]:
    """The size the model's copy gets: the longer side at most LONG_EDGE, the shape kept."""
    width, height = size
    scale = min(1.0, LONG_EDGE / max(width, height, 1))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _flat(picture: Pillow.Image) -> Pillow.Image:
    """The first frame in RGB; transparent parts (a sticker's) on white."""
    if picture.mode in ("RGBA", "LA", "PA") or (picture.mode == "P" and "transparency" in picture.info):
        rgba = picture.convert("RGBA")
        background = Pillow.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return picture.convert("RGB")


def _millions(pixels: int) -> str:
    return f"{pixels / 1_000_000:.0f}"


def megabytes(size: int) -> str:
    """A size in megabytes as a person reads it ('60 MB', '2.5 MB')."""
    value = size / 1_000_000
    return f"{value:.0f} MB" if value >= 10 else f"{value:.1f} MB".replace(".0 ", " ")


def clean_description(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """A model's description of a picture as it is kept: one line without brackets (so never a marker), at most
    `limit` characters, cut at a word; '' when nothing usable is left."""
    flat = " ".join(_NOT_TEXT.sub(" ", _LEADING_LABEL.sub("", text)).split()).strip(" .,;:-–")
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0] if " " in flat[: limit - 1] else flat[: limit - 1]
    return cut.rstrip(" .,;:-–") + "…"


def photo_text(label: str, description: str, text: str, group: bool = False) -> str:
    """A photo's message as logged: '(Foto: description) caption', '(Foto) caption', or '(Foto)' alone; in a group
    after the sender's name ('Anna: (Foto) caption')."""
    who, caption = text.split(": ", 1) if group and ": " in text else ("", text)
    head = f"({label}: {description})" if description else f"({label})"
    said = f"{head} {caption.strip()}" if caption.strip() else head
    return f"{who}: {said}" if who else said


async def ask_description(chat: LLM, picture: Image, language: str) -> str:
    """One small call for a picture's description, when the answer did not give one; '' when the model fails."""
    try:
        asked = ChatMessage("user", DESCRIBE.format(language=language), images=(picture,))
        completion = await chat.complete(CompletionRequest([asked], max_tokens=80))
    except LLMError as exc:
        log.warning("no description of the picture: %s", exc)
        return ""
    return clean_description(completion.text)
