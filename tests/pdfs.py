"""Real PDFs for the tests, written by hand (text in Helvetica, one page per string) or with pypdf (encrypted, scanned
pages without text), so no binary file lives in the repository."""
from __future__ import annotations

import io

from pypdf import PdfReader, PdfWriter


def _escaped(line: str) -> bytes:
    """A line as a PDF string in WinAnsi (cp1252), its brackets and backslashes escaped."""
    raw = line.encode("cp1252")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def pdf(*pages: str) -> bytes:
    """A PDF whose pages carry these texts (lines split at '\\n'), with a correct cross-reference table."""
    count = len(pages)
    font = 3 + 2 * count
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(count))
               + b"] /Count %d >>" % count]
    for i, text in enumerate(pages):
        lines = b" T* ".join(b"(" + _escaped(line) + b") Tj" for line in text.split("\n"))
        stream = b"BT /F1 12 Tf 14 TL 72 720 Td " + lines + b" ET"
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (4 + 2 * i, font))
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def encrypted(document: bytes, password: str = "geheim") -> bytes:
    """The PDF locked with a password (RC4, so no extra library is needed to tell)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(document)))
    writer.encrypt(password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def scanned(pages: int = 2) -> bytes:
    """A PDF of empty pages, as a scan without a text layer reads."""
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(595, 842)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
