"""Real pictures for the tests, made with Pillow: photos, a screenshot, a sticker, a GIF, broken and huge ones."""
from __future__ import annotations

import functools
import io

from PIL import Image, ImageDraw


def picture(width: int = 640, height: int = 480, kind: str = "JPEG", mode: str = "RGB", **options: object) -> bytes:
    """A picture with a little drawing on it (so it is no single colour), encoded as `kind`."""
    image = Image.new(mode, (width, height), (250, 240, 230, 255) if mode == "RGBA" else (250, 240, 230))
    draw = ImageDraw.Draw(image)
    draw.ellipse((width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill=(200, 40, 60))
    draw.rectangle((0, 0, width // 8, height // 8), fill=(20, 120, 40))
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def jpeg(width: int = 640, height: int = 480) -> bytes:
    """A JPEG photo."""
    return picture(width, height, "JPEG", quality=90)


def png(width: int = 400, height: int = 300) -> bytes:
    """A PNG, as a screenshot would be."""
    return picture(width, height, "PNG")


def sticker() -> bytes:
    """A static Telegram sticker: a 512x512 WebP with transparency."""
    return picture(512, 512, "WEBP", mode="RGBA")


def gif() -> bytes:
    """An animated GIF of three frames (its first frame is looked at)."""
    frames = [Image.new("P", (120, 90), colour) for colour in (1, 2, 3)]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    return out.getvalue()


@functools.cache
def forty_megapixels() -> bytes:
    """A real 8000x5000 JPEG (40 megapixels), a few hundred kilobytes because it is mostly one colour."""
    return jpeg(8000, 5000)


def corrupt_jpeg() -> bytes:
    """A JPEG whose header is fine and whose picture data breaks off half-way."""
    whole = jpeg(800, 600)
    return whole[: len(whole) // 2]


def bmp() -> bytes:
    """A Windows bitmap: a picture, but of a kind the providers do not take."""
    return picture(64, 64, "BMP")


def size_of(data: bytes) -> tuple[int, int]:
    """The width and height of an encoded picture."""
    with Image.open(io.BytesIO(data)) as opened:
        return opened.size
