"""A document's limits hold for real (issue 52, the smaller ones): reading a PDF stops at MNEMO_DOCUMENT_MAX_SECONDS
(nothing keeps reading it after the refusal: no thread in pypdf, no process left), and a PDF whose stream inflates to
gigabytes is refused by pypdf's inflate cap (pypdf>=6.10.2) as damaged, quickly."""
from __future__ import annotations

import asyncio
import io
import sys
import threading
import time
import zlib

import pytest
from pypdf import PdfReader
from pypdf.errors import LimitReachedError

from bot.conversation.documents import DocumentLimits, read_document
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.errors import DocumentError
from bot.exchange import Attachment
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.pdfs import pdf


def in_pypdf() -> list[str]:
    """The threads of this process whose stack is inside pypdf just now."""
    frames = sys._current_frames()
    return [thread.name for thread in threading.enumerate() if thread.ident in frames
            and any("pypdf" in (f.f_code.co_filename or "") for f in _stack(frames[thread.ident]))]


def _stack(frame: object) -> list:  # type: ignore[type-arg]
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back  # type: ignore[attr-defined]
    return out


def flate_bomb(megabytes: int = 400) -> bytes:
    """A one-page PDF whose content stream is `megabytes` MB of spaces, deflated to a few hundred KB."""
    stream = zlib.compress(b" " * (megabytes << 20), 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 5\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def test_the_inflate_cap_stops_a_flate_bomb() -> None:
    bomb = flate_bomb()
    assert len(bomb) < 2_000_000
    with pytest.raises(LimitReachedError):  # pypdf stops inflating at its cap (75 MB), not at 400 MB
        PdfReader(io.BytesIO(bomb)).pages[0].get_contents().get_data()  # type: ignore[union-attr]
    started = time.monotonic()
    with pytest.raises(DocumentError) as refused:  # its text extraction gives up on the stream: nothing to read
        read_document(bomb, "application/pdf", "bombe.pdf", len(bomb), DocumentLimits())
    assert refused.value.reason == "document_no_text" and time.monotonic() - started < 10


async def test_reading_a_document_stops_at_its_time_limit(
        store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM) -> None:
    heavy = pdf("\n".join(f"Zeile {i} mit etwas Text darin" for i in range(40_000)))  # many seconds of pypdf's work
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, document_max_seconds=0.5))
    try:
        started = time.monotonic()
        reply = await engine.handle(Incoming("anna", "Was steht drin?", attachment=Attachment(
            "document", heavy, "application/pdf", len(heavy), "dick.pdf")))
        assert time.monotonic() - started < 3.0
        assert reply is not None and reply.failed and reply.bubbles == (t("de", "document_too_slow", seconds="0.5"),)
        await asyncio.sleep(0.3)
        assert in_pypdf() == [], "a thread kept reading the document after the refusal"
        assert chat.calls == []
    finally:
        await engine.close()

    chat.enqueue("Da steht: Miete 850 Euro.")  # a document within its time is read as before
    quick = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, document_max_seconds=20))
    try:
        lease = pdf("Miete: 850 Euro im Monat")
        reply = await quick.handle(Incoming("anna", "Was steht drin?", attachment=Attachment(
            "document", lease, "application/pdf", len(lease), "miete.pdf")))
        assert reply is not None and reply.bubbles == ("Da steht: Miete 850 Euro.",)
        assert "Miete: 850 Euro im Monat" in chat.calls[-1].prompt
    finally:
        await quick.close()
