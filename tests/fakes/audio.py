"""Real audio for the tests, made on the machine: speech by espeak-ng, encoded to OGG/Opus by opusenc (the Debian
packages espeak-ng and opus-tools, which .ci/run installs), and a check that an OGG stream is whole.

Nothing is skipped without them: a test that needs a voice note fails and says what to install.
"""
from __future__ import annotations

import functools
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

TOOLS = ("espeak-ng", "opusenc")


@functools.lru_cache(maxsize=64)
def spoken(text: str, voice: str = "de") -> bytes:
    """The text spoken by espeak-ng as an OGG/Opus voice note (as Telegram and Element record them)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(f"the voice tests need {', '.join(missing)}: apt-get install -y espeak-ng opus-tools")
    with tempfile.TemporaryDirectory() as folder:
        wav, ogg = Path(folder) / "said.wav", Path(folder) / "said.ogg"
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(wav), text], check=True, capture_output=True)
        subprocess.run(["opusenc", "--quiet", "--speech", str(wav), str(ogg)], check=True, capture_output=True)
        return ogg.read_bytes()


def wav_silence(seconds: float = 0.5, rate: int = 16_000) -> bytes:
    """A WAV file of silence (16-bit mono), written by hand: another container than OGG."""
    frames = b"\x00\x00" * int(seconds * rate)
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(frames), b"WAVE", b"fmt ", 16, 1, 1, rate, rate * 2,
                         2, 16, b"data", len(frames))
    return header + frames


def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
        table.append(crc & 0xFFFFFFFF)
    return table


_CRC = _crc_table()


def _ogg_crc(page: bytes) -> int:
    crc = 0
    for byte in page:
        crc = ((crc << 8) ^ _CRC[((crc >> 24) & 0xFF) ^ byte]) & 0xFFFFFFFF
    return crc


def ogg_problem(data: bytes) -> str | None:
    """What is wrong with an OGG stream (a page that does not add up, a checksum that fails, no Opus or Vorbis in
    its first page), or None when every page is whole, as a decoder would find it."""
    at, pages = 0, 0
    while at < len(data):
        if data[at:at + 4] != b"OggS" or len(data) < at + 27:
            return f"no page at byte {at}"
        segments = data[at + 26]
        table = data[at + 27:at + 27 + segments]
        end = at + 27 + segments + sum(table)
        if len(table) < segments or end > len(data):
            return f"page {pages} is cut off"
        page = data[at:end]
        expected = struct.unpack_from("<I", page, 22)[0]
        if _ogg_crc(page[:22] + b"\x00\x00\x00\x00" + page[26:]) != expected:
            return f"page {pages} fails its checksum"
        if pages == 0 and not (page[27 + segments:].startswith(b"OpusHead")
                               or page[27 + segments:].startswith(b"\x01vorbis")):
            return "no Opus or Vorbis stream"
        at, pages = end, pages + 1
    return None if pages else "empty"
