"""What an audio file is, read from its first bytes, and how long an OGG/Opus voice note lasts (pure)."""
from __future__ import annotations

import struct

# The containers the OpenAI-compatible transcription endpoints take, by the bytes they open with.
FORMATS = ("ogg", "mp3", "mp4", "wav", "flac", "webm")
OPUS_RATE = 48_000  # an Ogg Opus stream's granule positions count samples at 48 kHz, whatever was recorded


def audio_format(data: bytes) -> str | None:
    """The container the bytes are in ('ogg', 'mp3', 'mp4' (also m4a), 'wav', 'flac', 'webm'); None for others.

    The messenger's MIME type is not trusted: a voice note is sent on under the extension its bytes show.
    """
    if data.startswith(b"OggS"):
        return "ogg"
    if data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "mp3"
    if data[4:8] == b"ftyp":
        return "mp4"
    if data.startswith(b"RIFF") and data[8:12] == b"WAVE":
        return "wav"
    if data.startswith(b"fLaC"):
        return "flac"
    if data.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    return None


def ogg_seconds(data: bytes) -> float | None:
    """How long an Ogg Opus stream plays (its last granule position less the pre-skip); None when it is no such."""
    if not data.startswith(b"OggS") or b"OpusHead" not in data[:200]:
        return None
    head = data.index(b"OpusHead")
    if len(data) < head + 12:
        return None
    pre_skip = struct.unpack_from("<H", data, head + 10)[0]
    last = data.rfind(b"OggS")
    if last < 0 or len(data) < last + 14:
        return None
    granule = struct.unpack_from("<q", data, last + 6)[0]
    if granule <= 0:
        return None
    return max(0.0, (granule - pre_skip) / OPUS_RATE)
